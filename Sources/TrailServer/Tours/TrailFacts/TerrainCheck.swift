import Foundation
import TourFormats

/// `trail-companion dem check`: what an operator asks before pointing the server at a terrain model. Does GDAL read it,
/// what does it cover, and what would the trail facts of a given track be (and how long working them out takes).
package enum TerrainCheck {
    package struct Outcome: Sendable {
        package let facts: TerrainFacts
        /// The facts' computation alone, the sampling of the model included (the file's reading is not).
        package let computeTime: Duration
        package let points: Int
    }

    /// The facts of the track (or route) in a GPX, KML or GeoJSON file, with the stops it holds; with
    /// `ignoringTrackHeights`, from the model even where the track has heights of its own.
    package static func facts(forTrackAt url: URL, terrain: TerrainSource, ignoringTrackHeights: Bool) throws -> Outcome {
        let imported = try TourImport.parse(fileAt: url)
        guard var route = imported.routePath else {
            throw TerrainCheckError("\(url.lastPathComponent) holds no track or line to work the facts out along.")
        }
        if ignoringTrackHeights { route.points = route.points.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) } }
        let stops = imported.points.enumerated().map {
            (Int64($0.offset + 1), RoutePoint(longitude: $0.element.longitude, latitude: $0.element.latitude))
        }
        let clock = ContinuousClock()
        var facts: TerrainFacts?
        let elapsed = clock.measure { facts = TerrainFacts.compute(route: route, waypoints: stops, terrain: terrain) }
        return Outcome(facts: facts!, computeTime: elapsed, points: route.points.count)
    }
}

struct TerrainCheckError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
