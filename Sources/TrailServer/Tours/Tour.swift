import Foundation
import GRDB

struct Tour: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var siteId: Int64
    var name: String
    var description: String
    var mapName: String
    var frameNorth: Double?
    var frameSouth: Double?
    var frameEast: Double?
    var frameWest: Double?
    var minZoom: Int
    var maxZoom: Int
    var state: TourState
    /// The last reviewer's denial comment, shown on the tour page until the next submission.
    var reviewComment: String?
    var createdBy: Int64?
    var createdAt: Date
    var updatedAt: Date
    /// The trail line, stored as JSON `[[lon, lat(, ele)], ...]`; a damaged one is an error when the tour is read.
    var route: RoutePath? = nil
    var paceKmh: Double = Tour.defaultPaceKmh
    /// BCP 47 tags; the first is the default language, whose texts are `name` and `description` (stored as JSON).
    var languages: [String] = ["en"]
    /// The name and description in each further language (stored as a JSON object).
    var localized: [String: LocalizedText] = [:]
    /// The ranger's account of the way (each nil or empty: not known).
    var accessSurface: TrailSurface? = nil
    var accessMinWidthCm: Int? = nil
    var accessStepFree: Bool? = nil
    var accessNotes: String = ""

    static let databaseTableName = "tour"

    var defaultLanguage: String { languages.first ?? "en" }
    var furtherLanguages: [String] { Array(languages.dropFirst()) }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let siteId = Column(CodingKeys.siteId)
        static let name = Column(CodingKeys.name)
        static let state = Column(CodingKeys.state)
    }

    /// A walker's pace, for the tour's estimated duration, until the ranger sets one.
    static let defaultPaceKmh = 4.0

    /// A tour as its creator starts it: a draft with no frame, route or further languages yet.
    struct New: NewRecord {
        typealias Stored = Tour
        var siteId: Int64
        var name: String
        var description: String
        var mapName: String
        var minZoom: Int
        var maxZoom: Int
        var state: TourState
        var createdBy: Int64?
        var createdAt: Date
        var updatedAt: Date
        var paceKmh: Double
    }

    var frame: Frame? {
        guard let n = frameNorth, let s = frameSouth, let e = frameEast, let w = frameWest else { return nil }
        return Frame(north: n, south: s, east: e, west: w)
    }

    /// While a publish request is open the working copy is read-only, so reviewers see what will ship.
    var isLocked: Bool { state == .inReview }
}

enum TourState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case draft
    case inReview
    case published

    var label: String {
        switch self {
        case .draft: "Draft"
        case .inReview: "In review"
        case .published: "Published"
        }
    }

    /// Bootstrap badge colour.
    var badge: String {
        switch self {
        case .draft: "secondary"
        case .inReview: "warning"
        case .published: "success"
        }
    }
}

/// A tour's map frame in WGS84 degrees. No antimeridian crossing in this version (east > west).
package struct Frame: Codable, Sendable, Equatable {
    var north: Double
    var south: Double
    var east: Double
    var west: Double

    package init(north: Double, south: Double, east: Double, west: Double) {
        self.north = north
        self.south = south
        self.east = east
        self.west = west
    }

    func contains(latitude: Double, longitude: Double) -> Bool {
        latitude <= north && latitude >= south && longitude <= east && longitude >= west
    }

    /// Area on a sphere of the Earth's mean radius: R² · Δλ · (sin φn − sin φs).
    var areaKm2: Double {
        let radius = 6371.0088
        let deltaLongitude = (east - west) * .pi / 180
        return radius * radius * deltaLongitude * (sin(north * .pi / 180) - sin(south * .pi / 180))
    }

    /// The smallest frame accepted: about 100 m × 100 m, below which a map is of no use.
    static let minimumAreaKm2 = 0.01
}

struct Waypoint: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var tourId: Int64
    var name: String
    /// The waypoint's place in the tour, 1...n, contiguous ("order" in the API and the manifest).
    var position: Int
    var latitude: Double
    var longitude: Double
    var description: String
    var createdAt: Date
    var updatedAt: Date
    /// The trigger zone: an app plays the stop's media within this many metres of it.
    var triggerRadiusMeters: Int = TriggerZone.defaultRadius
    /// The name and description in each of the tour's further languages (stored as a JSON object).
    var localized: [String: LocalizedText] = [:]

    static let databaseTableName = "waypoint"

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let position = Column(CodingKeys.position)
        static let name = Column(CodingKeys.name)
    }

    /// A waypoint as it is placed: a name, a spot and a text; the schema's defaults give it the rest.
    struct New: NewRecord {
        typealias Stored = Waypoint
        var tourId: Int64
        var name: String
        var position: Int
        var latitude: Double
        var longitude: Double
        var description: String
        var createdAt: Date
        var updatedAt: Date
        var triggerRadiusMeters: Int = TriggerZone.defaultRadius
        var localized: [String: LocalizedText] = [:]
    }
}
