import Foundation
import TestSupport
import Testing

@testable import TrailServer

/// Terrain models whose answers are known exactly: planes (a bilinear interpolation of a plane is the plane), written
/// as Esri ASCII grids and turned into GeoTIFF or SRTM `.hgt` by GDAL's own `gdal_translate`, so that the server reads
/// files made by the tool agencies use, not by our code. Made once per test process and shared.
actor TerrainFixtures {
    static let shared = TerrainFixtures()
    /// One making per file, shared by every test that asks while it is under way (an actor alone would let two tests
    /// that await inside `make` both write the same file).
    private var made: [String: Task<URL, any Error>] = [:]
    /// Outside any test case's scope (a case's folder goes when it ends, and the models are shared): removed when the
    /// test process exits.
    private let folder = TestScratch.$scope.withValue(nil) { TestScratch.folder("trail-dem") }

    /// z = 500 + 2000·(lon + 122.3) + 1000·(lat − 44.35), 1 arc-second pixels over lon −122.30…−121.95, lat 44.35…44.45.
    static func plane4326(longitude: Double, latitude: Double) -> Double {
        500 + 2000 * (longitude + 122.3) + 1000 * (latitude - 44.35)
    }

    /// The EPSG:4326 GeoTIFF of ``plane4326(longitude:latitude:)``.
    func geographic() async throws -> URL {
        try await make("plane-4326.tif") { target in
            let cell = 1.0 / 3600
            let (columns, rows) = (1260, 360)
            try await Self.translate(
                grid: Self.grid(columns: columns, rows: rows, west: -122.30, south: 44.35, cell: cell) { x, y in
                    Self.plane4326(longitude: x, latitude: y)
                },
                srs: "EPSG:4326",
                to: target
            )
        }
    }

    /// The same plane split into two GeoTIFF tiles side by side (west and east of lon −122.125), in one folder.
    func twoTiles() async throws -> URL {
        try await make("two-tiles") { target in
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            let whole = try await self.geographic()
            for (name, window) in [("west.tif", ["0", "0", "630", "360"]), ("east.tif", ["630", "0", "630", "360"])] {
                let output = try await ChildProcess.run(
                    "gdal_translate",
                    ["-q", "-srcwin"] + window + [whole.path, target.appendingPathComponent(name).path]
                )
                #expect(output.status == 0, "gdal_translate -srcwin: \(output.stderr)")
            }
        }
    }

    /// UTM zone 10N (EPSG:32610), 30 m pixels: z = 300 + 0.02·(x − 550000) + 0.01·(y − 4900000).
    static func planeUTM(x: Double, y: Double) -> Double { 300 + 0.02 * (x - 550_000) + 0.01 * (y - 4_900_000) }

    func projected() async throws -> URL {
        try await make("plane-32610.tif") { target in
            try await Self.translate(
                grid: Self.grid(columns: 1300, rows: 700, west: 550_000, south: 4_905_000, cell: 30) { x, y in Self.planeUTM(x: x, y: y) },
                srs: "EPSG:32610",
                to: target
            )
        }
    }

    /// Two SRTM tiles, N44W123.hgt and N44W122.hgt (3 arc-seconds, 1201 × 1201 each), of z = 200 + 1500·(lon + 123), in
    /// one folder. Each pixel is 1.25 m above its western neighbour, more than the whole metres the tiles round to, so
    /// heights still only rise eastwards after rounding.
    static func planeHGT(longitude: Double, latitude: Double) -> Double { 200 + 1500 * (longitude + 123) }

    func srtmTiles() async throws -> URL {
        try await make("srtm") { target in
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            let cell = 1.0 / 1200
            for (name, west) in [("N44W123.hgt", -123.0), ("N44W122.hgt", -122.0)] {
                // SRTM pixels are centred on whole seconds: the grid's edge is half a pixel outside the degree.
                let grid = Self.grid(columns: 1201, rows: 1201, west: west - cell / 2, south: 44 - cell / 2, cell: cell) { x, y in
                    Self.planeHGT(longitude: x, latitude: y)
                }
                try await Self.translate(grid: grid, srs: "EPSG:4326", to: target.appendingPathComponent(name), format: "SRTMHGT")
            }
        }
    }

    /// What `gdallocationinfo` reads at a longitude and latitude (the pixel's value, GDAL's own reading).
    static func locationInfo(_ dem: URL, longitude: Double, latitude: Double) async throws -> Double {
        let output = try await ChildProcess.run(
            "gdallocationinfo",
            ["-valonly", "-wgs84", dem.path, String(longitude), String(latitude)]
        )
        return try #require(
            Double(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
            "gdallocationinfo: \(output.stdout) \(output.stderr)"
        )
    }

    /// Longitude/latitude to UTM 10N with GDAL's `gdaltransform`, to work out a plane's exact heights independently.
    static func toUTM(_ points: [(Double, Double)]) async throws -> [(x: Double, y: Double)] {
        let input = points.map { "\($0.0) \($0.1)" }.joined(separator: "\n") + "\n"
        let output = try await ChildProcess.run("gdaltransform", ["-s_srs", "EPSG:4326", "-t_srs", "EPSG:32610"], input: Data(input.utf8))
        return output.stdout.split(separator: "\n").map { line in
            let values = line.split(separator: " ").compactMap { Double($0) }
            return (values[0], values[1])
        }
    }

    private func make(_ name: String, _ body: @escaping @Sendable (URL) async throws -> Void) async throws -> URL {
        if let task = made[name] { return try await task.value }
        let url = folder.appendingPathComponent(name)
        let folder = self.folder
        let task = Task {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await body(url)
            return url
        }
        made[name] = task
        return try await task.value
    }

    /// An Esri ASCII grid whose pixel centres hold `value(x, y)`.
    private static func grid(columns: Int, rows: Int, west: Double, south: Double, cell: Double, value: (Double, Double) -> Double) -> String {
        var text = "ncols \(columns)\nnrows \(rows)\nxllcorner \(west)\nyllcorner \(south)\ncellsize \(cell)\nNODATA_value -9999\n"
        text.reserveCapacity(columns * rows * 9)
        for row in 0..<rows {
            let y = south + (Double(rows - row) - 0.5) * cell
            for column in 0..<columns {
                let x = west + (Double(column) + 0.5) * cell
                text += String(format: "%.3f ", value(x, y))
            }
            text += "\n"
        }
        return text
    }

    private static func translate(grid: String, srs: String, to target: URL, format: String = "GTiff") async throws {
        let source = target.deletingPathExtension().appendingPathExtension("asc")
        try grid.write(to: source, atomically: true, encoding: .utf8)
        let output = try await ChildProcess.run(
            "gdal_translate",
            // SRTM tiles hold whole metres (Int16), as the real ones do.
            ["-q", "-of", format, "-a_srs", srs, "-ot", format == "SRTMHGT" ? "Int16" : "Float32", source.path, target.path]
        )
        #expect(output.status == 0, "gdal_translate \(format): \(output.stderr)")
        try? FileManager.default.removeItem(at: source)
    }
}
