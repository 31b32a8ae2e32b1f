import Foundation
import GRDB

package struct Tour: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var siteId: Int64
    package var name: String
    package var description: String
    package var mapName: String
    package var frameNorth: Double?
    package var frameSouth: Double?
    package var frameEast: Double?
    package var frameWest: Double?
    package var minZoom: Int
    package var maxZoom: Int
    package var state: TourState
    /// The last reviewer's denial comment, shown on the tour page until the next submission.
    package var reviewComment: String?
    package var createdBy: Int64?
    package var createdAt: Date
    package var updatedAt: Date
    /// The trail line, stored as JSON `[[lon, lat(, ele)], ...]`; a damaged one is an error when the tour is read.
    package var route: RoutePath? = nil
    package var paceKmh: Double = Tour.defaultPaceKmh
    /// BCP 47 tags; the first is the default language, whose texts are `name` and `description` (stored as JSON).
    package var languages: [String] = ["en"]
    /// The name and description in each further language (stored as a JSON object).
    package var localized: [String: LocalizedText] = [:]
    /// The ranger's account of the way (each nil or empty: not known).
    package var accessSurface: TrailSurface? = nil
    package var accessMinWidthCm: Int? = nil
    package var accessStepFree: Bool? = nil
    package var accessNotes: String = ""

    package static let databaseTableName = "tour"

    package var defaultLanguage: String { languages.first ?? "en" }
    package var furtherLanguages: [String] { Array(languages.dropFirst()) }

    package enum Columns {
        static let id = Column(CodingKeys.id)
        static let siteId = Column(CodingKeys.siteId)
        static let name = Column(CodingKeys.name)
        static let state = Column(CodingKeys.state)
    }

    /// A walker's pace, for the tour's estimated duration, until the ranger sets one.
    package static let defaultPaceKmh = 4.0

    /// A tour as its creator starts it: a draft with no frame, route or further languages yet.
    package struct New: NewRecord {
        package typealias Stored = Tour
        package var siteId: Int64
        package var name: String
        package var description: String
        package var mapName: String
        package var minZoom: Int
        package var maxZoom: Int
        package var state: TourState
        package var createdBy: Int64?
        package var createdAt: Date
        package var updatedAt: Date
        package var paceKmh: Double
    }

    package var frame: Frame? {
        guard let n = frameNorth, let s = frameSouth, let e = frameEast, let w = frameWest else { return nil }
        return Frame(north: n, south: s, east: e, west: w)
    }

    /// While a publish request is open the working copy is read-only, so reviewers see what will ship.
    package var isLocked: Bool { state == .inReview }
}

package enum TourState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case draft
    case inReview
    case published

    package var label: String {
        switch self {
        case .draft: "Draft"
        case .inReview: "In review"
        case .published: "Published"
        }
    }

    /// Bootstrap badge colour.
    package var badge: String {
        switch self {
        case .draft: "secondary"
        case .inReview: "warning"
        case .published: "success"
        }
    }
}

/// A tour's map frame in WGS84 degrees. No antimeridian crossing in this version (east > west).
package struct Frame: Codable, Sendable, Equatable {
    package var north: Double
    package var south: Double
    package var east: Double
    package var west: Double

    package init(north: Double, south: Double, east: Double, west: Double) {
        self.north = north
        self.south = south
        self.east = east
        self.west = west
    }

    package func contains(latitude: Double, longitude: Double) -> Bool {
        latitude <= north && latitude >= south && longitude <= east && longitude >= west
    }

    /// Area on a sphere of the Earth's mean radius: R² · Δλ · (sin φn − sin φs).
    package var areaKm2: Double {
        let radius = 6371.0088
        let deltaLongitude = (east - west) * .pi / 180
        return radius * radius * deltaLongitude * (sin(north * .pi / 180) - sin(south * .pi / 180))
    }

    /// The smallest frame accepted: about 100 m × 100 m, below which a map is of no use.
    package static let minimumAreaKm2 = 0.01
}

package struct Waypoint: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var tourId: Int64
    package var name: String
    /// The waypoint's place in the tour, 1...n, contiguous ("order" in the API and the manifest).
    package var position: Int
    package var latitude: Double
    package var longitude: Double
    package var description: String
    package var createdAt: Date
    package var updatedAt: Date
    /// The trigger zone: an app plays the stop's media within this many metres of it.
    package var triggerRadiusMeters: Int = TriggerZone.defaultRadius
    /// The name and description in each of the tour's further languages (stored as a JSON object).
    package var localized: [String: LocalizedText] = [:]

    package static let databaseTableName = "waypoint"

    package enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let position = Column(CodingKeys.position)
        static let name = Column(CodingKeys.name)
    }

    /// A waypoint as it is placed: a name, a spot and a text; the schema's defaults give it the rest.
    package struct New: NewRecord {
        package typealias Stored = Waypoint
        package var tourId: Int64
        package var name: String
        package var position: Int
        package var latitude: Double
        package var longitude: Double
        package var description: String
        package var createdAt: Date
        package var updatedAt: Date
        package var triggerRadiusMeters: Int = TriggerZone.defaultRadius
        package var localized: [String: LocalizedText] = [:]
    }
}
