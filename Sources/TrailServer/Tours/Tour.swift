import Foundation
import GRDB

public struct Tour: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var siteId: Int64
    public var name: String
    public var description: String
    public var mapName: String
    public var frameNorth: Double?
    public var frameSouth: Double?
    public var frameEast: Double?
    public var frameWest: Double?
    public var minZoom: Int
    public var maxZoom: Int
    public var state: TourState
    /// The last reviewer's denial comment, shown on the tour page until the next submission.
    public var reviewComment: String?
    public var createdBy: Int64?
    public var createdAt: Date
    public var updatedAt: Date
    /// The trail line, stored as JSON `[[lon, lat(, ele)], ...]`; a damaged one is an error when the tour is read.
    public var route: RoutePath? = nil
    public var paceKmh: Double = 4
    /// BCP 47 tags; the first is the default language, whose texts are `name` and `description` (stored as JSON).
    public var languages: [String] = ["en"]
    /// The name and description in each further language (stored as a JSON object).
    public var localized: [String: LocalizedText] = [:]

    public static let databaseTableName = "tour"

    public var defaultLanguage: String { languages.first ?? "en" }
    public var furtherLanguages: [String] { Array(languages.dropFirst()) }

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let siteId = Column(CodingKeys.siteId)
        static let name = Column(CodingKeys.name)
        static let state = Column(CodingKeys.state)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public var frame: Frame? {
        guard let n = frameNorth, let s = frameSouth, let e = frameEast, let w = frameWest else { return nil }
        return Frame(north: n, south: s, east: e, west: w)
    }

    /// While a publish request is open the working copy is read-only, so reviewers see what will ship.
    public var isLocked: Bool { state == .inReview }
}

public enum TourState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case draft
    case inReview
    case published

    public var label: String {
        switch self {
        case .draft: "Draft"
        case .inReview: "In review"
        case .published: "Published"
        }
    }

    /// Bootstrap badge colour.
    public var badge: String {
        switch self {
        case .draft: "secondary"
        case .inReview: "warning"
        case .published: "success"
        }
    }
}

/// A tour's map frame in WGS84 degrees. No antimeridian crossing in this version (east > west).
public struct Frame: Codable, Sendable, Equatable {
    public var north: Double
    public var south: Double
    public var east: Double
    public var west: Double

    public init(north: Double, south: Double, east: Double, west: Double) {
        self.north = north
        self.south = south
        self.east = east
        self.west = west
    }

    public func contains(latitude: Double, longitude: Double) -> Bool {
        latitude <= north && latitude >= south && longitude <= east && longitude >= west
    }

    /// Area on a sphere of the Earth's mean radius: R² · Δλ · (sin φn − sin φs).
    public var areaKm2: Double {
        let radius = 6371.0088
        let deltaLongitude = (east - west) * .pi / 180
        return radius * radius * deltaLongitude * (sin(north * .pi / 180) - sin(south * .pi / 180))
    }

    /// The smallest frame accepted: about 100 m × 100 m, below which a map is of no use.
    public static let minimumAreaKm2 = 0.01
}

public struct Waypoint: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var tourId: Int64
    public var name: String
    /// The waypoint's place in the tour, 1...n, contiguous ("order" in the API and the manifest).
    public var position: Int
    public var latitude: Double
    public var longitude: Double
    public var description: String
    public var createdAt: Date
    public var updatedAt: Date
    /// The trigger zone: an app plays the stop's media within this many metres of it.
    public var triggerRadiusMeters: Int = TriggerZone.defaultRadius
    /// The name and description in each of the tour's further languages (stored as a JSON object).
    public var localized: [String: LocalizedText] = [:]

    public static let databaseTableName = "waypoint"

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let position = Column(CodingKeys.position)
        static let name = Column(CodingKeys.name)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
