import ArgumentParser
import Foundation
import OpenMap
import TrailServer

/// `map check --osm-extract PATH [--dem PATH] [--frame W,S,E,N]`: whether osmium reads an extract (it is indexed, as
/// the server would, into a folder of its own), how long that took, and, with a frame, the drawn map a tour there
/// would carry: its size, features and layers, and how long drawing it took.
struct MapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Check an OpenStreetMap extract for the drawn map.",
        subcommands: [Check.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Index the extract and say what it holds; with --frame, draw that frame's map and say what it holds.",
            discussion:
                "The index is written into --index (default: a folder under the system's temporary folder, removed after), as the server writes it into data/osm/. With --out the frame's GeoJSON is written there. Exit status: 0 usable, 1 not."
        )
        @Option(name: .customLong("osm-extract"), help: "An .osm.pbf or .osm file, or a folder of them.") var osmExtract: String
        @Option(help: "A GeoTIFF or SRTM .hgt file, or a folder of them, for contour lines.") var dem: String?
        @Option(help: "A frame to draw: west,south,east,north in degrees.") var frame: String?
        @Option(name: .customLong("max-zoom"), help: "The tour's highest zoom, which sets the simplification.") var maxZoom = 16
        @Option(help: "Where the index goes (kept); by default a temporary folder, removed after.") var index: String?
        @Option(help: "Where the frame's GeoJSON goes.") var out: String?

        func run() async throws {
            let root =
                index.map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("trail-map-check-\(UUID().uuidString.prefix(8))")
            defer { if index == nil { try? FileManager.default.removeItem(at: root) } }
            let clock = ContinuousClock()
            let started = clock.now
            let made: OSMIndex
            do {
                made = try OSMIndexer.index(extract: osmExtract, root: root).0
            } catch {
                print(error.description)
                throw ExitCode.failure
            }
            let indexSeconds = Self.seconds(clock.now - started)
            let metadata = made.metadata
            let megabytes = Double(metadata.bytes) / 1_000_000
            print(
                String(
                    format: "indexed %@: %.1f MB in %.2f s (%.1f MB/s), %d features, %d names",
                    metadata.files.joined(separator: ", "),
                    megabytes,
                    indexSeconds,
                    megabytes / max(indexSeconds, 1e-9),
                    metadata.features,
                    metadata.names
                )
            )
            guard let frame else { return }
            let parts = frame.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 4, parts[0] < parts[2], parts[1] < parts[3] else {
                print("--frame is west,south,east,north in degrees, west < east and south < north.")
                throw ExitCode.failure
            }
            let terrain = TerrainSource.open(path: dem)
            if let problem = terrain.problem { print(problem) }
            let drawnAt = clock.now
            let map = OpenDataMap.draw(
                index: made,
                terrain: terrain,
                frame: Frame(north: parts[3], south: parts[1], east: parts[2], west: parts[0]),
                maxZoom: maxZoom
            )
            let drawSeconds = Self.seconds(clock.now - drawnAt)
            switch map {
            case .drawn(let basemap, let notes):
                for note in notes { print(note) }
                if let out { try basemap.data.write(to: URL(fileURLWithPath: out)) }
                let leftOut = basemap.leftOut.isEmpty ? "" : "; left out to fit: " + basemap.leftOut.joined(separator: ", ")
                let size = basemap.data.count
                print(
                    String(format: "drawn in %.3f s: %d bytes (%.2f MiB), ", drawSeconds, size, Double(size) / 1_048_576)
                        + "\(basemap.featureCount) features, layers \(basemap.layers.joined(separator: ","))\(leftOut)"
                )
            case .nothing(let reason):
                print(reason)
                throw ExitCode.failure
            }
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
    }
}
