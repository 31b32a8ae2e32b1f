import Foundation
import PackageFormat
import Terrain

/// The part of a tour's trail facts that the ground decides: length, heights, profile and grades, and each stop's
/// elevation. Worked out when the route, the stops or the terrain model change (``AppDatabase/refreshTrailFacts``),
/// stored as JSON in `trail_facts`, never per request. The walking time and the ranger's accessibility fields are
/// added when the facts are shown, because they change with the pace and the media, not with the ground.
package struct TerrainFacts: Codable, Sendable, Equatable {
    package var lengthMeters: Double
    var ascentMeters: Double?
    var descentMeters: Double?
    var minElevationMeters: Double?
    var maxElevationMeters: Double?
    /// `"route"` or `"dem"`; nil without heights.
    package var elevationSource: String?
    package var profile: [[Double]] = []
    var grades: TrailFacts.Grades?
    var maxGradePercent: Double?
    /// The terrain model's height at each vertex of the route, for the exports and the package's route (nil unless the
    /// heights came from the model and the tour has a drawn route).
    package var routeElevations: [Double]? = nil
    /// Waypoint id (as text: a JSON object's keys) to its elevation in metres.
    var waypointElevations: [String: Double] = [:]
    /// Why there are no heights, in the ranger's words; nil when there are.
    var note: String?

    static let sampleSpacingMeters = 25.0
    static let profileLimit = 500

    var hasHeights: Bool { elevationSource != nil }

    func elevation(ofWaypoint id: Int64) -> Double? { waypointElevations[String(id)] }

    /// The heights' source in a sentence.
    var sourceText: String {
        switch elevationSource {
        case "route": "Heights from the route's own elevations."
        case "dem": "Heights from the terrain model, sampled every 25 m."
        default: note ?? "No heights."
        }
    }
}

/// The terrain model the server was started with (`--dem`), or why it has none; shared by every copy of the
/// database's handle, so that the facts worked out in any write use the same model.
package final class TerrainSource: Sendable {
    package let model: TerrainModel?
    /// Set when `--dem` was given and could not be used: shown at start and on every tour page.
    package let problem: String?

    init(model: TerrainModel? = nil, problem: String? = nil) {
        self.model = model
        self.problem = problem
    }

    /// Opens `path` (nil: no model); a model GDAL cannot read becomes a `problem`, never a failed start.
    package static func open(path: String?) -> TerrainSource {
        guard let path else { return TerrainSource() }
        do { return TerrainSource(model: try TerrainModel(path: path)) } catch {
            return TerrainSource(problem: "The terrain model (--dem) cannot be used: \(error.description)")
        }
    }

    /// Stored with the facts: facts from another model (or from none) are worked out again.
    var fingerprint: String { model?.fingerprint ?? "" }
}

extension TerrainFacts {
    /// - Parameters:
    ///   - route: the drawn or imported route; without one (or with one point) the line from stop to stop.
    ///   - waypoints: the stops in order, with their ids.
    static func compute(route: RoutePath?, waypoints: [(id: Int64, point: RoutePoint)], terrain: TerrainSource) -> TerrainFacts {
        let line: [RoutePoint] =
            if let route, route.points.count >= 2 { route.points } else { waypoints.map(\.point) }
        var along = [0.0]
        var length = 0.0
        for (a, b) in zip(line, line.dropFirst()) {
            length += Geo.distance(a, b)
            along.append(length)
        }
        var facts = TerrainFacts(lengthMeters: (length * 10).rounded() / 10)
        guard line.count >= 2, length > 0 else {
            facts.note = "Draw a route, or place two stops, for the length and the heights."
            return facts
        }
        // Every vertex, and a point every 25 m between two vertices further apart.
        var samples: [(distance: Double, point: RoutePoint)] = []
        var vertexSamples: [Int] = []
        for index in line.indices {
            vertexSamples.append(samples.count)
            samples.append((along[index], line[index]))
            guard index + 1 < line.count else { break }
            let span = along[index + 1] - along[index]
            let steps = Int((span / sampleSpacingMeters).rounded(.up))
            guard steps > 1 else { continue }
            for step in 1..<steps {
                let t = Double(step) / Double(steps)
                let a = line[index]
                let b = line[index + 1]
                samples.append(
                    (
                        along[index] + span * t,
                        RoutePoint(
                            longitude: a.longitude + (b.longitude - a.longitude) * t,
                            latitude: a.latitude + (b.latitude - a.latitude) * t,
                            elevation: a.elevation.flatMap { ea in b.elevation.map { ea + ($0 - ea) * t } }
                        )
                    )
                )
            }
        }
        let heights: [Double]
        let routeHeights = samples.compactMap(\.point.elevation)
        if let route, route.points.count >= 2, route.points.allSatisfy({ $0.elevation != nil }), routeHeights.count == samples.count {
            // The route's own heights win: a surveyed or GPS track knows the trail better than a 30 m grid.
            heights = routeHeights
            facts.elevationSource = "route"
        } else if let model = terrain.model {
            let sampled = model.elevations(samples.map { ($0.point.longitude, $0.point.latitude) })
            let known = sampled.compactMap { $0 }
            guard known.count == sampled.count else {
                let missing = sampled.count - known.count
                facts.note =
                    "The terrain model does not cover this tour's route (\(missing) of \(sampled.count) points along it have no height): "
                    + "the server's --dem needs tiles for this area."
                return facts
            }
            heights = known
            facts.elevationSource = "dem"
            if let route, route.points.count >= 2 { facts.routeElevations = vertexSamples.map { (heights[$0] * 10).rounded() / 10 } }
        } else {
            facts.note =
                terrain.problem
                ?? "No heights: the route has no elevations and the server has no terrain model (--dem)."
            return facts
        }

        var ascent = 0.0
        var descent = 0.0
        for (a, b) in zip(heights, heights.dropFirst()) {
            if b > a { ascent += b - a } else { descent += a - b }
        }
        facts.ascentMeters = (ascent * 10).rounded() / 10
        facts.descentMeters = (descent * 10).rounded() / 10
        guard let lowest = heights.min(), let highest = heights.max(), let lastHeight = heights.last else { return facts }
        facts.minElevationMeters = (lowest * 10).rounded() / 10
        facts.maxElevationMeters = (highest * 10).rounded() / 10

        let distances = samples.map(\.distance)
        func height(at distance: Double) -> Double { interpolate(distance, distances, heights) }

        // Grades over 25 m steps, whatever the spacing of the route's vertices (two GPS fixes a metre apart would make
        // any noise a cliff).
        var bands = [Double](repeating: 0, count: 5)
        var steepest = 0.0
        var start = 0.0
        while start < length {
            let end = min(start + sampleSpacingMeters, length)
            let run = end - start
            let grade = abs(height(at: end) - height(at: start)) / run * 100
            let band = TrailFacts.Grades.limits.firstIndex { grade <= $0 } ?? 4
            bands[band] += run
            // A last step of a few metres says little about the slope.
            if run >= sampleSpacingMeters / 2 || length < sampleSpacingMeters { steepest = max(steepest, grade) }
            start = end
        }
        func share(_ value: Double) -> Double { (value / length * 1000).rounded() / 1000 }
        facts.grades = TrailFacts.Grades(
            flat: share(bands[0]),
            gentle: share(bands[1]),
            moderate: share(bands[2]),
            steep: share(bands[3]),
            verySteep: share(bands[4])
        )
        facts.maxGradePercent = (steepest * 10).rounded() / 10

        // At most 500 points, evenly spaced, ending at the route's end.
        let step = max(sampleSpacingMeters, length / Double(profileLimit - 1))
        var profile: [[Double]] = []
        var distance = 0.0
        while distance < length - 0.5, profile.count < profileLimit - 1 {
            profile.append([distance.rounded(), (height(at: distance) * 10).rounded() / 10])
            distance += step
        }
        profile.append([length.rounded(), (lastHeight * 10).rounded() / 10])
        facts.profile = profile

        for waypoint in waypoints {
            let elevation: Double?
            if facts.elevationSource == "dem" {
                elevation = terrain.model?.elevation(longitude: waypoint.point.longitude, latitude: waypoint.point.latitude)
            } else {
                elevation = height(at: nearestDistance(of: waypoint.point, on: line, along: along))
            }
            if let elevation { facts.waypointElevations[String(waypoint.id)] = (elevation * 10).rounded() / 10 }
        }
        return facts
    }

    /// The value at `x` on the polyline (xs ascending, ys), by linear interpolation.
    private static func interpolate(_ x: Double, _ xs: [Double], _ ys: [Double]) -> Double {
        var low = 0
        var high = xs.count - 1
        if x <= xs[low] { return ys[low] }
        if x >= xs[high] { return ys[high] }
        while high - low > 1 {
            let middle = (low + high) / 2
            if xs[middle] <= x { low = middle } else { high = middle }
        }
        let span = xs[high] - xs[low]
        return span > 0 ? ys[low] + (ys[high] - ys[low]) * (x - xs[low]) / span : ys[low]
    }

    /// The distance along the line to its vertex nearest to `point`.
    private static func nearestDistance(of point: RoutePoint, on line: [RoutePoint], along: [Double]) -> Double {
        var best = (distance: Double.infinity, along: 0.0)
        for (index, vertex) in line.enumerated() {
            let distance = Geo.distance(vertex, point)
            if distance < best.distance { best = (distance, along[index]) }
        }
        return best.along
    }
}
