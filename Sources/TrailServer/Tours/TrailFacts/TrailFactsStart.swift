import Foundation

/// At start: says which terrain model the trail facts use (or why none), then works out again, in the background, the
/// facts of every tour worked out from another model (a new `--dem`, a changed tile, an upgrade), and says how many
/// routes the model does not cover. A model GDAL cannot read never stops the server: the facts hold length and time.
enum TrailFactsStart {
    static func run(database: AppDatabase, print: @escaping @Sendable (String) -> Void) async throws {
        let terrain = database.terrain
        if let model = terrain.model {
            let area = model.coverage
            print(
                "Terrain model: \(model.path), \(model.files.count) file\(model.files.count == 1 ? "" : "s") covering "
                    + String(format: "%.3f..%.3f° E, %.3f..%.3f° N", area.west, area.east, area.south, area.north)
                    + "; trail facts take their heights from it where a route has none."
            )
        } else if let problem = terrain.problem {
            print("\(problem) Trail facts will hold length and walking time only, and tour pages say why.")
        }
        Task {
            do {
                let (refreshed, uncovered) = try await database.refreshTrailFactsForTerrain()
                if refreshed > 0 { print("Trail facts: worked out again for \(refreshed) tour\(refreshed == 1 ? "" : "s").") }
                if uncovered > 0, terrain.model != nil {
                    print(
                        "Trail facts: the terrain model does not cover the route of \(uncovered) tour\(uncovered == 1 ? "" : "s"); "
                            + "their pages say so. Add tiles for those areas to the --dem folder."
                    )
                }
            } catch {
                print("Trail facts could not be worked out at start (\(error)); each tour's facts are worked out at its next change.")
            }
        }
    }
}
