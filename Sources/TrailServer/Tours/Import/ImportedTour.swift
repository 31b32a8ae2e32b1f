import Foundation
import HTTPTypes

/// What an import file holds, before it is compared with the tour.
struct ImportedTour: Sendable {
    struct Point: Sendable, Equatable {
        let name: String
        let description: String
        let latitude: Double
        let longitude: Double
        /// GeoJSON property `triggerRadiusMeters` (GPX has none: the waypoint keeps its own, a new one gets the default).
        var triggerRadiusMeters: Int? = nil
        /// GeoJSON properties `name:<tag>` and `description:<tag>`: texts in further languages.
        var localized: [String: LocalizedText] = [:]
        /// KMZ: pictures the placemark refers to (its description's `<img>`, its icon), read from the archive.
        var images: [Image] = []
    }
    /// A file from a KMZ, attached to its waypoint on apply (as an upload: scanned, typed, counted against the quota).
    struct Image: Sendable, Equatable {
        /// The entry's path inside the archive, as the KML names it.
        let path: String
        let data: Data
    }
    /// Something in the file that the import does not take, and why (the preview lists them).
    struct LeftOut: Sendable, Equatable {
        let kind: String
        let name: String
        let reason: String
    }
    /// What is left out, kept to its first ``limit`` entries and a count of the rest. A file of a million rows without
    /// coordinates made a million entries: about 80 times the file's size in memory, and a 34 MB JSON answer for a
    /// 2 MiB file. A person reads the first hundred; "and 12,345 more" says the rest.
    struct LeftOutList: Sendable, Equatable {
        static let limit = 100
        private(set) var entries: [LeftOut] = []
        /// Entries beyond the first ``limit``: counted, not kept.
        private(set) var more = 0

        mutating func append(_ entry: LeftOut) {
            if entries.count < Self.limit { entries.append(entry) } else { more += 1 }
        }

        mutating func append(contentsOf list: LeftOutList) {
            for entry in list.entries { append(entry) }
            more += list.more
        }
    }
    /// The format the bytes were read as (nil until they are).
    var format: ImportFormat?
    var points: [Point] = []
    var route: RoutePath?
    var leftOutList = LeftOutList()
    /// The first ``LeftOutList/limit`` things left out.
    var leftOut: [LeftOut] { leftOutList.entries }
    /// How many more are left out than ``leftOut`` lists.
    var leftOutMore: Int { leftOutList.more }
    /// KML folders, in document order (flattened: their placemarks are imported as if they stood at the top).
    var folders: [String] = []
    /// CSV: which column was read for what ("latitude" → "Lat").
    var columns: [String: String] = [:]
    /// Remarks for the preview (altitudes not kept, a second line not used, ...).
    var notes: [String] = []
}

/// The formats an import reads, told apart by their bytes. The raw value is the name the preview, the API
/// (`ImportResult.plan.format`) and the audit log use.
enum ImportFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case geoJSON = "GeoJSON"
    case gpx = "GPX"
    case kml = "KML"
    case kmz = "KMZ"
    case csv = "CSV"

    var description: String { rawValue }
}

/// What applying an import does with one waypoint of the file; the raw value is the preview's and the API's word.
enum ImportAction: String, Sendable, CaseIterable, CustomStringConvertible {
    case add, change, skip

    var description: String { rawValue }
}

/// The preview: what would be added, changed or skipped, and why.
struct ImportPlan: Sendable {
    struct Item: Sendable {
        let action: ImportAction
        let name: String
        let latitude: Double
        let longitude: Double
        let reason: String?
    }
    /// A KMZ picture that applying attaches to a waypoint.
    struct Image: Sendable {
        let waypoint: String
        let file: String
        let bytes: Int
    }
    var format: ImportFormat?
    var waypoints: [Item] = []
    var routePoints: Int = 0
    var routeLengthMeters: Double?
    var frame: Frame?
    var setsFrame = false
    /// Points that fall outside the tour's frame, and the frame around all of them (with a margin) that would take them.
    var outsideFrame = 0
    var fittedFrame: Frame?
    var leftOut: [ImportedTour.LeftOut] = []
    /// Left out beyond the list (``ImportedTour/LeftOutList``): the preview and the API say "and N more".
    var leftOutMore = 0
    var folders: [String] = []
    var columns: [String: String] = [:]
    var images: [Image] = []
    var notes: [String] = []
    var added: Int { waypoints.filter { $0.action == .add }.count }
    var changed: Int { waypoints.filter { $0.action == .change }.count }
    var skipped: Int { waypoints.filter { $0.action == .skip }.count }
}

/// A file that cannot be imported: the message names the feature or line at fault.
/// Answered as a form error on the `file` field (422).
struct ImportRefused: AppError {
    let message: String
    var status: HTTPResponse.Status { .unprocessableContent }
    var fieldMessages: [String: String]? { ["file": message] }
}
