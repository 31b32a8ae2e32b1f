import Foundation

/// What an import file holds, before it is compared with the tour.
package struct ImportedTour: Sendable {
    package struct Point: Sendable, Equatable {
        package let name: String
        package let description: String
        package let latitude: Double
        package let longitude: Double
        /// GeoJSON property `triggerRadiusMeters` (GPX has none: the waypoint keeps its own, a new one gets the default).
        package var triggerRadiusMeters: Int? = nil
        /// GeoJSON properties `name:<tag>` and `description:<tag>`: texts in further languages, by the tag as the
        /// rules' ``ImportRules/languageTag`` writes it.
        package var localized: [String: Text] = [:]
        /// KMZ: pictures the placemark refers to (its description's `<img>`, its icon), read from the archive.
        package var images: [Image] = []

        package init(
            name: String,
            description: String,
            latitude: Double,
            longitude: Double,
            triggerRadiusMeters: Int? = nil,
            localized: [String: Text] = [:],
            images: [Image] = []
        ) {
            self.name = name
            self.description = description
            self.latitude = latitude
            self.longitude = longitude
            self.triggerRadiusMeters = triggerRadiusMeters
            self.localized = localized
            self.images = images
        }
    }
    /// A name and description in a further language.
    package struct Text: Sendable, Equatable {
        package var name: String
        package var description: String

        package init(name: String = "", description: String = "") {
            self.name = name
            self.description = description
        }
    }
    /// A file from a KMZ, attached to its waypoint on apply (as an upload: scanned, typed, counted against the quota).
    package struct Image: Sendable, Equatable {
        /// The entry's path inside the archive, as the KML names it.
        package let path: String
        package let data: Data
    }
    /// Something in the file that the import does not take, and why (the preview lists them).
    package struct LeftOut: Sendable, Equatable {
        package let kind: String
        package let name: String
        package let reason: String

        package init(kind: String, name: String, reason: String) {
            self.kind = kind
            self.name = name
            self.reason = reason
        }
    }
    /// What is left out, kept to its first ``limit`` entries and a count of the rest. A file of a million rows without
    /// coordinates made a million entries: about 80 times the file's size in memory, and a 34 MB JSON answer for a
    /// 2 MiB file. A person reads the first hundred; "and 12,345 more" says the rest.
    package struct LeftOutList: Sendable, Equatable {
        package static let limit = 100
        package private(set) var entries: [LeftOut] = []
        /// Entries beyond the first ``limit``: counted, not kept.
        package private(set) var more = 0

        package init() {}

        package mutating func append(_ entry: LeftOut) {
            if entries.count < Self.limit { entries.append(entry) } else { more += 1 }
        }

        package mutating func append(contentsOf list: LeftOutList) {
            for entry in list.entries { append(entry) }
            more += list.more
        }
    }
    /// The format the bytes were read as (nil until they are).
    package var format: ImportFormat?
    package var points: [Point] = []
    /// The route's positions, `[longitude, latitude(, elevation)]`, as the rules' ``ImportRules/refuseRoute`` took them.
    package var route: [[Double]]?
    package var leftOutList = LeftOutList()
    /// The first ``LeftOutList/limit`` things left out.
    package var leftOut: [LeftOut] { leftOutList.entries }
    /// How many more are left out than ``leftOut`` lists.
    package var leftOutMore: Int { leftOutList.more }
    /// KML folders, in document order (flattened: their placemarks are imported as if they stood at the top).
    package var folders: [String] = []
    /// CSV: which column was read for what ("latitude" → "Lat").
    package var columns: [String: String] = [:]
    /// Remarks for the preview (altitudes not kept, a second line not used, ...).
    package var notes: [String] = []

    package init(format: ImportFormat? = nil, points: [Point] = []) {
        self.format = format
        self.points = points
    }
}

/// The formats an import reads, told apart by their bytes. The raw value is the name the preview, the API
/// (`ImportResult.plan.format`) and the audit log use.
package enum ImportFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case geoJSON = "GeoJSON"
    case gpx = "GPX"
    case kml = "KML"
    case kmz = "KMZ"
    case csv = "CSV"

    package var description: String { rawValue }
}

/// A file that cannot be imported: the message names the feature or line at fault. (The server answers it as a form
/// error on the `file` field.)
package struct ImportRefused: Error, Sendable {
    package let message: String

    package init(message: String) { self.message = message }
}
