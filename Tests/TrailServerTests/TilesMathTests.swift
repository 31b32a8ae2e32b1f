import Foundation
import Testing

@testable import TrailServer

/// Web Mercator tile math, cross-checked against Python's `mercantile` (Scripts/tile_math.py).
@Suite struct TilesMathTests {
    /// Points at several zooms: the seeded tour, tile corners (where rounding matters), the antimeridian, the poles'
    /// cut-off, the equator and the prime meridian, and a spread of pseudo-random places.
    static let points: [(Double, Double, Int)] = {
        var points: [(Double, Double, Int)] = [
            (44.40, -122.0, 0), (44.40, -122.0, 1), (44.40, -122.0, 10), (44.40, -122.0, 15), (44.40, -122.0, 20),
            (44.43, -122.28, 13), (44.36, -121.97, 13), (0, 0, 1), (0, 0, 12), (-0.000001, -0.000001, 12),
            (85.051129, -180, 5), (-85.051129, 179.999999, 5), (85.1, 180, 7), (-85.1, -180, 7), (51.5074, -0.1278, 18),
            (-33.8688, 151.2093, 14), (64.1466, -21.9426, 9), (-54.8019, -68.303, 11), (27.9881, 86.925, 16), (1e-9, 1e-9, 20),
        ]
        // Exact tile corners at zoom 12 and 16 (mercantile.bounds → tile must give the same tile back).
        for (x, y, z) in [(655, 1465, 12), (10_486, 23_450, 16), (0, 0, 3), (7, 7, 3)] {
            let corner = TileMath.bounds(TileID(z: z, x: x, y: y))
            points.append((corner.north, corner.west, z))
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Double {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Double(state % 1_000_000_007) / 1_000_000_007
        }
        for _ in 0..<200 { points.append((next() * 170 - 85, next() * 360 - 180, Int(next() * 21))) }
        return points
    }()

    /// Frames (west, south, east, north) and zoom ranges, from the seeded tour to a single tile's bounds.
    static let frames: [(Frame, ClosedRange<Int>)] = [
        (Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28), 11...15),
        (Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28), 10...13),
        (Frame(north: 44.5, south: 44.4, east: -121.9, west: -122.1), 0...16),
        (Frame(north: 51.52, south: 51.49, east: -0.08, west: -0.16), 14...17),
        (Frame(north: -33.85, south: -33.88, east: 151.22, west: 151.19), 15...18),
        (Frame(north: 0.01, south: -0.01, east: 0.01, west: -0.01), 10...14),
        (TileMath.bounds(TileID(z: 12, x: 655, y: 1465)), 12...14),
        (Frame(north: 89, south: 80, east: 20, west: 10), 3...6),
    ]

    @Test("latitude/longitude → tile x/y, tile counts and tiles of frames, tile bounds: the same as mercantile")
    func matchesMercantile() async throws {
        let request: [String: Any] = [
            "points": Self.points.map { [$0.0, $0.1, $0.2] as [Any] },
            "frames": Self.frames.map { [$0.0.west, $0.0.south, $0.0.east, $0.0.north, $0.1.lowerBound, $0.1.upperBound] as [Any] },
            "bounds": [[655, 1465, 12], [0, 0, 0], [10_486, 23_450, 16], [1, 0, 1]],
        ]
        let output = try await TestScripts.python("tile_math.py", [], input: try JSONSerialization.data(withJSONObject: request))
        try #require(output.status == 0, "tile_math.py: \(output.stderr)")
        let json = output.json
        #expect((json["version"] as? String)?.isEmpty == false, "mercantile answered")

        let points = try #require(json["points"] as? [[Int]])
        try #require(points.count == Self.points.count)
        for (index, (latitude, longitude, zoom)) in Self.points.enumerated() {
            let tile = try #require(TileMath.tile(latitude: latitude, longitude: longitude, zoom: zoom))
            #expect([tile.x, tile.y] == points[index], "(\(latitude), \(longitude)) at zoom \(zoom): \(tile) but mercantile says \(points[index])")
        }

        let frames = try #require(json["frames"] as? [[Any]])
        try #require(frames.count == Self.frames.count)
        for (index, (frame, zooms)) in Self.frames.enumerated() {
            let count = frames[index][0] as? Int ?? -1
            let tiles = Set((frames[index][1] as? [[Int]] ?? []).map { TileID(z: $0[2], x: $0[0], y: $0[1]) })
            #expect(TileMath.count(frame, zooms: zooms) == count, "frame \(index): count \(TileMath.count(frame, zooms: zooms)), mercantile \(count)")
            #expect(Set(TileMath.tiles(frame, zooms: zooms)) == tiles, "frame \(index): the tiles differ from mercantile's")
            #expect(TileMath.tiles(frame, zooms: zooms).count == count)
        }
        // The seeded tour needs 417 tiles at zoom 11–15 (a number people see in the frame editor).
        #expect(frames[0][0] as? Int == 417)

        let bounds = try #require(json["bounds"] as? [[Double]])
        for (index, tile) in [
            TileID(z: 12, x: 655, y: 1465), TileID(z: 0, x: 0, y: 0), TileID(z: 16, x: 10_486, y: 23_450), TileID(z: 1, x: 1, y: 0),
        ].enumerated() {
            let mine = TileMath.bounds(tile)
            for (a, b) in zip([mine.west, mine.south, mine.east, mine.north], bounds[index]) {
                #expect(abs(a - b) < 1e-9, "bounds of \(tile): \(mine) vs mercantile \(bounds[index])")
            }
        }
    }

    @Test func tmsRowFlipsTheYAxis() {
        #expect(TileID(z: 0, x: 0, y: 0).tmsRow == 0)
        #expect(TileID(z: 3, x: 2, y: 0).tmsRow == 7)
        #expect(TileID(z: 3, x: 2, y: 7).tmsRow == 0)
        #expect(TileID(z: 12, x: 655, y: 1465).tmsRow == 4095 - 1465)
        #expect(TileID.fromTMS(z: 12, column: 655, row: 2630) == TileID(z: 12, x: 655, y: 1465))
    }

    @Test func intersectionAndCenterZoom() {
        let frame = TestEnv.frame
        for tile in TileMath.tiles(frame, zooms: 10...13) { #expect(TileMath.intersects(tile, frame)) }
        #expect(!TileMath.intersects(TileID(z: 10, x: 0, y: 0), frame))
        // The frame spans at most 2 × 2 tiles up to zoom 10 only.
        #expect(TileMath.centerZoom(frame, zooms: 8...15) == 10)
    }

    @Test("URL templates: placeholders expanded; the public OpenStreetMap servers refused")
    func templates() {
        #expect(
            TileURLTemplate.expand("https://{s}.tiles.example.org/{z}/{x}/{y}.png", TileID(z: 3, x: 2, y: 1))
                == "https://a.tiles.example.org/3/2/1.png"
        )
        #expect(TileURLTemplate.expand("https://tms.example.org/{z}/{x}/{-y}.jpg", TileID(z: 3, x: 2, y: 1)) == "https://tms.example.org/3/2/6.jpg")
        #expect(TileURLTemplate.problem("https://tiles.example.org/{z}/{x}/{y}.png") == nil)
        #expect(TileURLTemplate.problem("https://{s}.tile.example.org/{z}/{x}/{y}.png") == nil)
        #expect(TileURLTemplate.problem("http://127.0.0.1:8081/{z}/{x}/{y}.png") == nil)
        for refused in [
            "https://tile.openstreetmap.org/{z}/{x}/{y}.png", "https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png",
            "https://a.tile.openstreetmap.org/{z}/{x}/{y}.png", "http://{s}.tile.osm.org/{z}/{x}/{y}.png",
            "https://TILE.OpenStreetMap.ORG./{z}/{x}/{y}.png", "https://tile.osm.org/{z}/{x}/{y}.png",
        ] {
            let problem = TileURLTemplate.problem(refused)
            #expect(problem?.contains("OpenStreetMap") == true, "\(refused) must be refused: \(problem ?? "accepted")")
        }
        #expect(TileURLTemplate.problem("https://tiles.example.org/{z}/{x}.png")?.contains("{y}") == true)
        #expect(TileURLTemplate.problem("ftp://tiles.example.org/{z}/{x}/{y}.png") != nil)
        #expect(TileURLTemplate.problem("https://user:pw@tiles.example.org/{z}/{x}/{y}.png") != nil)
        // A look-alike is not OpenStreetMap's.
        #expect(TileURLTemplate.problem("https://tile.openstreetmap.org.example.com/{z}/{x}/{y}.png") == nil)
    }
}
