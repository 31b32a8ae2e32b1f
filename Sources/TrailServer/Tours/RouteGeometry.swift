import Foundation

/// A position on the route: longitude, latitude and, from GPS tracks, elevation in metres.
struct RoutePoint: Sendable, Equatable {
    var longitude: Double
    var latitude: Double
    var elevation: Double?

    init(longitude: Double, latitude: Double, elevation: Double? = nil) {
        self.longitude = longitude
        self.latitude = latitude
        self.elevation = elevation
    }
}

/// The trail line of a tour, stored as JSON `[[lon, lat(, ele)], ...]` (GeoJSON position order): the tour's `route`
/// column and the `route` of a publish request's snapshot are this type, read and written by GRDB as JSON.
struct RoutePath: Sendable, Equatable {
    static let maxPoints = 50_000
    var points: [RoutePoint]

    init(points: [RoutePoint]) { self.points = points }

    init(json: String) throws {
        guard let array = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[Double]] else {
            throw ValidationErrors(["route": "The route must be a list of [longitude, latitude] positions."])
        }
        try self.init(positions: array)
    }

    init(positions: [[Double]]) throws {
        guard positions.count <= Self.maxPoints else {
            throw ValidationErrors(["route": "The route has \(positions.count) points; at most \(Self.maxPoints) are allowed."])
        }
        points = try positions.enumerated().map { index, position in
            guard position.count == 2 || position.count == 3 else {
                throw ValidationErrors(["route": "Route point \(index + 1) must be [longitude, latitude] or [longitude, latitude, elevation]."])
            }
            guard position[0].isFinite, position[1].isFinite, (-180...180).contains(position[0]), (-90...90).contains(position[1]) else {
                throw ValidationErrors(["route": "Route point \(index + 1) has coordinates out of range."])
            }
            return RoutePoint(
                longitude: position[0],
                latitude: position[1],
                elevation: position.count == 3 && position[2].isFinite ? position[2] : nil
            )
        }
        guard points.count != 1 else { throw ValidationErrors(["route": "A route needs at least two points."]) }
    }

    /// `[[lon, lat(, ele)], ...]` as stored: coordinates to 7 decimals (about 1 cm), elevations to 1.
    var positions: [[Double]] {
        func rounded(_ value: Double, _ digits: Double) -> Double { (value * digits).rounded() / digits }
        return points.map { point in
            [rounded(point.longitude, 1e7), rounded(point.latitude, 1e7)] + (point.elevation.map { [rounded($0, 10)] } ?? [])
        }
    }

    var lengthMeters: Double {
        zip(points, points.dropFirst()).reduce(0) { $0 + Geo.distance($1.0, $1.1) }
    }

    /// Total climb, counting only rises (Naismith's rule uses ascent, not net height).
    var ascentMeters: Double? {
        let elevations = points.compactMap(\.elevation)
        guard elevations.count == points.count, elevations.count >= 2 else { return nil }
        return zip(elevations, elevations.dropFirst()).reduce(0) { $0 + max(0, $1.1 - $1.0) }
    }

    /// Distance along the route from its start to the vertex nearest to `point`.
    func distanceAlong(toNearest point: RoutePoint) -> Double {
        var best = (distance: Double.infinity, along: 0.0)
        var along = 0.0
        for (index, vertex) in points.enumerated() {
            if index > 0 { along += Geo.distance(points[index - 1], vertex) }
            let distance = Geo.distance(vertex, point)
            if distance < best.distance { best = (distance, along) }
        }
        return best.along
    }
}

enum Geo {
    /// Mean Earth radius (IUGG), metres.
    static let earthRadius = 6_371_008.8

    /// Great-circle distance by the haversine formula.
    static func distance(_ a: RoutePoint, _ b: RoutePoint) -> Double {
        // Haversine: latitudes and their differences in radians.
        let latitude1 = a.latitude * .pi / 180
        let latitude2 = b.latitude * .pi / 180
        let dLatitude = latitude2 - latitude1
        let dLongitude = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dLatitude / 2) * sin(dLatitude / 2) + cos(latitude1) * cos(latitude2) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }
}

/// Walking time for a tour: distance at the pace, Naismith's minute per 10 m of ascent, and time at each waypoint.
struct DurationEstimate: Sendable, Equatable {
    let walkingMeters: Double
    let ascentMeters: Double?
    let walkingMinutes: Double
    let climbMinutes: Double
    let dwellMinutes: Double
    /// Per waypoint in tour order: metres from the previous waypoint (0 for the first).
    let distancesFromPrevious: [Double]

    var totalMinutes: Int { Int((walkingMinutes + climbMinutes + dwellMinutes).rounded()) }

    /// Without media durations a stop counts two minutes.
    static let defaultDwellSeconds = 120.0

    /// - Parameters:
    ///   - waypoints: positions in tour order.
    ///   - dwellSeconds: per waypoint, the sum of its audio and video play times, or nil when unknown.
    ///   - ascentMeters: the climb from the trail facts (the route's heights or the terrain model); nil: none known.
    static func estimate(
        waypoints: [RoutePoint],
        route: RoutePath?,
        ascentMeters: Double?,
        paceKmh: Double,
        dwellSeconds: [Double?]
    ) -> DurationEstimate {
        var distances: [Double] = []
        let walking: Double
        if let route, route.points.count >= 2 {
            let marks = waypoints.map { route.distanceAlong(toNearest: $0) }
            distances = marks.enumerated().map { index, mark in index == 0 ? 0 : abs(mark - marks[index - 1]) }
            walking = route.lengthMeters
        } else {
            distances = waypoints.enumerated().map { index, point in index == 0 ? 0 : Geo.distance(waypoints[index - 1], point) }
            walking = distances.reduce(0, +)
        }
        let ascent = ascentMeters
        let dwell = dwellSeconds.reduce(0) { $0 + (($1 ?? 0) > 0 ? $1! : defaultDwellSeconds) } / 60
        return DurationEstimate(
            walkingMeters: walking,
            ascentMeters: ascent,
            walkingMinutes: walking / 1000 / paceKmh * 60,
            climbMinutes: (ascent ?? 0) / 10,
            dwellMinutes: dwell,
            distancesFromPrevious: distances
        )
    }
}

extension RoutePath: Codable {
    /// Reads the position array, checked like any route a ranger sends (a damaged one is a `DecodingError`, never a
    /// missing route). Snapshots frozen before the column was typed hold the same array as a JSON *string*; both
    /// shapes read back, so old publish requests still build.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        do {
            if let legacyText = try? container.decode(String.self) {
                try self.init(json: legacyText)
            } else {
                try self.init(positions: container.decode([[Double]].self))
            }
        } catch let errors as ValidationErrors {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: errors.fields.values.sorted().joined(separator: " "))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(positions)
    }
}
