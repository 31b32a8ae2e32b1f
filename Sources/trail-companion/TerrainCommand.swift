import ArgumentParser
import Foundation
import TrailServer

/// `dem check --dem PATH [--track FILE]`: whether GDAL reads a terrain model, the area it covers, and the trail facts
/// of a track worked out from it, with the time the working out took.
struct TerrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dem",
        abstract: "Check a terrain model before the server uses it.",
        subcommands: [Check.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say whether GDAL reads the model and what it covers; with --track, the trail facts of that track.",
            discussion:
                "The track is a GPX, KML or GeoJSON file; its heights are ignored, so the facts come from the model. Prints the facts as JSON and the milliseconds their working out took. Exit status: 0 usable, 1 not."
        )
        @Option(help: "A GeoTIFF or SRTM .hgt file, or a folder of them.") var dem: String
        @Option(help: "A GPX, KML or GeoJSON file with a track or line.") var track: String?

        func run() async throws {
            let terrain = TerrainSource.open(path: dem)
            guard let model = terrain.model else {
                print(terrain.problem ?? "The terrain model cannot be used.")
                throw ExitCode.failure
            }
            let area = model.coverage
            print("\(model.files.count) file(s); covers \(area.west)..\(area.east) E, \(area.south)..\(area.north) N.")
            guard let track else { return }
            let outcome = try TerrainCheck.facts(forTrackAt: URL(fileURLWithPath: track), terrain: terrain, ignoringTrackHeights: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var shown = outcome.facts
            shown.profile = []
            shown.routeElevations = nil
            print(String(decoding: try encoder.encode(shown), as: UTF8.self))
            let milliseconds = Double(outcome.computeTime.components.attoseconds) / 1e15 + Double(outcome.computeTime.components.seconds) * 1000
            print(String(format: "computeMilliseconds %.2f points %d length %.0f m", milliseconds, outcome.points, outcome.facts.lengthMeters))
            if outcome.facts.elevationSource == nil { throw ExitCode.failure }
        }
    }
}
