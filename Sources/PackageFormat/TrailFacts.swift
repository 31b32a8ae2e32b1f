import Foundation

/// What a visitor asks before setting out, in the manifest as `trail` (an addition to format version 1): how long,
/// how steep, and can I do it. Heights come from the route's own elevations, or the agency's terrain model; with
/// neither, the facts hold the length and the walking time only (`elevationSource` is null).
public struct TrailFacts: Codable, Sendable, Hashable {
    public var lengthMeters: Double
    public var ascentMeters: Double?
    public var descentMeters: Double?
    public var minElevationMeters: Double?
    public var maxElevationMeters: Double?
    /// The tour's pace over the length, a minute per 10 m of ascent, and the time at the stops.
    public var walkingMinutes: Int
    /// `"route"` (the route's own elevations), `"dem"` (the terrain model) or nil (no heights).
    public var elevationSource: String?
    /// `[distanceMeters, elevationMeters]` along the route, at most 500 points; empty without heights.
    public var profile: [[Double]]
    /// Shares of the length (0…1) in each grade band; nil without heights.
    public var grades: Grades?
    /// The steepest 25 m of the route, in percent.
    public var maxGradePercent: Double?
    public var accessibility: Accessibility?

    public init(
        lengthMeters: Double,
        ascentMeters: Double? = nil,
        descentMeters: Double? = nil,
        minElevationMeters: Double? = nil,
        maxElevationMeters: Double? = nil,
        walkingMinutes: Int,
        elevationSource: String? = nil,
        profile: [[Double]] = [],
        grades: Grades? = nil,
        maxGradePercent: Double? = nil,
        accessibility: Accessibility? = nil
    ) {
        self.lengthMeters = lengthMeters
        self.ascentMeters = ascentMeters
        self.descentMeters = descentMeters
        self.minElevationMeters = minElevationMeters
        self.maxElevationMeters = maxElevationMeters
        self.walkingMinutes = walkingMinutes
        self.elevationSource = elevationSource
        self.profile = profile
        self.grades = grades
        self.maxGradePercent = maxGradePercent
        self.accessibility = accessibility
    }

    /// Grade bands as the accessibility guidelines draw them: ≤ 1 % (flat), ≤ 5 % (gentle), ≤ 8.33 % (a ramp's
    /// 1:12, moderate), ≤ 12 % (steep), above (very steep).
    public struct Grades: Codable, Sendable, Hashable {
        public var flat: Double
        public var gentle: Double
        public var moderate: Double
        public var steep: Double
        public var verySteep: Double

        public init(flat: Double, gentle: Double, moderate: Double, steep: Double, verySteep: Double) {
            self.flat = flat
            self.gentle = gentle
            self.moderate = moderate
            self.steep = steep
            self.verySteep = verySteep
        }

        /// The band's upper limits in percent, flat to steep (very steep is everything above the last).
        public static let limits = [1.0, 5.0, 100.0 / 12.0, 12.0]
    }

    /// The ranger's account of the way: what is underfoot, the narrowest place, steps or not, and anything else.
    public struct Accessibility: Codable, Sendable, Hashable {
        /// `paved`, `boardwalk`, `compacted`, `natural` or `mixed`.
        public var surface: String?
        public var minWidthCm: Int?
        public var stepFree: Bool?
        public var notes: String?

        public init(surface: String? = nil, minWidthCm: Int? = nil, stepFree: Bool? = nil, notes: String? = nil) {
            self.surface = surface
            self.minWidthCm = minWidthCm
            self.stepFree = stepFree
            self.notes = notes
        }

        public static let surfaces = ["paved", "boardwalk", "compacted", "natural", "mixed"]
    }

    private enum CodingKeys: String, CodingKey {
        case lengthMeters, ascentMeters, descentMeters, minElevationMeters, maxElevationMeters, walkingMinutes
        case elevationSource, profile, grades, maxGradePercent, accessibility
    }

    /// `elevationSource` is written as null when there are no heights, so a reader sees "none" rather than "unknown".
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lengthMeters, forKey: .lengthMeters)
        try container.encodeIfPresent(ascentMeters, forKey: .ascentMeters)
        try container.encodeIfPresent(descentMeters, forKey: .descentMeters)
        try container.encodeIfPresent(minElevationMeters, forKey: .minElevationMeters)
        try container.encodeIfPresent(maxElevationMeters, forKey: .maxElevationMeters)
        try container.encode(walkingMinutes, forKey: .walkingMinutes)
        try container.encode(elevationSource, forKey: .elevationSource)
        try container.encode(profile, forKey: .profile)
        try container.encodeIfPresent(grades, forKey: .grades)
        try container.encodeIfPresent(maxGradePercent, forKey: .maxGradePercent)
        try container.encodeIfPresent(accessibility, forKey: .accessibility)
    }
}
