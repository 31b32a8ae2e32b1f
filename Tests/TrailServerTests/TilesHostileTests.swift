import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// Uploaded MBTiles files are SQLite databases, and an SQLite file can carry code: views, triggers, virtual tables,
/// generated columns. Each crafted file is refused at upload with a message naming the problem, leaves nothing behind,
/// and never makes the server build a large value in memory.
@Suite(.scratch) struct TilesHostileTests {
    enum Hostile: String, CaseIterable {
        /// `tiles` is a view whose one tile is a 500 MB "PNG" made by `zeroblob`.
        case viewBomb
        /// A real `tiles` table plus a trigger.
        case trigger
        /// A real `tiles` table plus a view that counts for ever (recursive CTE).
        case recursiveView
        /// A 50 MB tile that starts like a PNG.
        case hugeTile
        /// A tile that is an HTML page.
        case htmlTile
        /// A 50 MB tile stored as text (`length()` of text would have to read it).
        case textTile
        /// `tile_data` as a generated column: code that runs on every read.
        case generatedColumn
        /// A virtual table (full-text search) next to the real tables.
        case virtualTable
    }

    static let bombBytes = 500_000_000

    /// A valid raster file (the ordinary fixture) with one hostile change.
    static func write(_ kind: Hostile, to url: URL) throws {
        try MBTilesFixture.write(.raster, to: url)
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        try queue.write { db in
            let png = "x'89504E470D0A1A0A'"
            switch kind {
            case .viewBomb:
                try db.execute(
                    sql: """
                        DROP TABLE tiles;
                        CREATE VIEW tiles AS SELECT 10 AS zoom_level, 163 AS tile_column, 654 AS tile_row,
                          CAST(\(png) || zeroblob(\(bombBytes)) AS BLOB) AS tile_data;
                        """
                )
            case .trigger:
                try db.execute(sql: "CREATE TRIGGER grow AFTER INSERT ON metadata BEGIN INSERT INTO metadata VALUES ('x', 'y'); END")
            case .recursiveView:
                try db.execute(
                    sql: """
                        CREATE VIEW forever AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n
                        """
                )
            case .hugeTile:
                try db.execute(
                    sql: "UPDATE tiles SET tile_data = CAST(\(png) || zeroblob(50000000) AS BLOB) WHERE rowid = (SELECT MIN(rowid) FROM tiles)"
                )
            case .textTile:
                // `||` makes text.
                try db.execute(sql: "UPDATE tiles SET tile_data = \(png) || zeroblob(50000000) WHERE rowid = (SELECT MIN(rowid) FROM tiles)")
            case .htmlTile:
                try db.execute(
                    sql:
                        "UPDATE tiles SET tile_data = CAST('<html><script>alert(1)</script></html>' AS BLOB) WHERE rowid = (SELECT MAX(rowid) FROM tiles)"
                )
            case .generatedColumn:
                try db.execute(
                    sql: """
                        ALTER TABLE tiles RENAME TO stored;
                        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER,
                          tile_data BLOB GENERATED ALWAYS AS (CAST(\(png) || zeroblob(zoom_level) AS BLOB)) VIRTUAL);
                        INSERT INTO tiles (zoom_level, tile_column, tile_row) SELECT zoom_level, tile_column, tile_row FROM stored;
                        DROP TABLE stored;
                        """
                )
            case .virtualTable:
                try db.execute(sql: "CREATE VIRTUAL TABLE notes USING fts4(body)")
            }
        }
    }

    static func expected(_ kind: Hostile) -> String {
        switch kind {
        case .viewBomb: "its “tiles” is a view, not a table"
        case .trigger: "it defines a trigger (“grow”)"
        case .recursiveView: "it defines a view (“forever”)"
        case .hugeTile: "is 47.7 MiB; a map tile may be at most 2.0 MiB"
        case .htmlTile, .textTile: "is not a PNG image"
        case .generatedColumn: "its “tiles” table has a generated column (“tile_data”)"
        case .virtualTable: "it defines a virtual table (“notes”)"
        }
    }

    @Test(
        "a view bomb, a trigger, a recursive view, a 50 MB tile, an HTML tile, a generated column, a virtual table: each refused at upload, nothing kept"
    )
    func hostileFilesAreRefused() async throws {
        let env = try await TestEnv.tiles()
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            for kind in Hostile.allCases {
                let url = env.folder.appendingPathComponent("\(kind).mbtiles")
                try Self.write(kind, to: url)
                let response = try await client.tilesUpload(
                    "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                    data: try Data(contentsOf: url),
                    fileName: "\(kind).mbtiles",
                    token: token
                )
                try? FileManager.default.removeItem(at: url)
                #expect(response.status == .unprocessableContent, "\(kind): \(response.status) \(response.text)")
                #expect(response.tilesErrorMessage.contains(Self.expected(kind)), "\(kind): \(response.tilesErrorMessage)")
                #expect(response.tilesErrorMessage.contains("\(kind).mbtiles"), "the message names the file: \(response.tilesErrorMessage)")
            }
            #expect(try await env.database.tileset(tourId: env.seed.tourId) == nil)
            for folder in ["uploads", "tilesets/pending"] {
                let left = (try? FileManager.default.contentsOfDirectory(atPath: env.paths.absolute(folder).path)) ?? []
                #expect(left.isEmpty, "\(folder): \(left)")
            }
        }
    }

    @Test("the reader itself refuses a view bomb, whoever calls it (the package build does too)")
    func readerRefusesTheBomb() throws {
        let folder = TestScratch.folder("trail-bomb")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bomb = folder.appendingPathComponent("bomb.mbtiles")
        try Self.write(.viewBomb, to: bomb)
        #expect(try Data(contentsOf: bomb).count < 1 << 20, "the bomb itself is small")
        #expect(throws: MBTilesError.untrustedSchema("its “tiles” is a view, not a table")) { _ = try MBTilesReader(url: bomb) }
        // The peak memory of the real server process under this file is measured by Tests/e2e/test_hostile_tiles.py.
    }

    @Test("the map + images schema the builder writes is accepted, read through our own join, not the file's view")
    func builderSchemaIsAccepted() async throws {
        let env = try await TestEnv.tiles()
        let url = env.folder.appendingPathComponent("built.mbtiles")
        let tiles = TileMath.tiles(TestEnv.frame, zooms: 10...11).sorted()
        let writer = try MBTilesWriter(url: url)
        try writer.add(tiles.map { ($0, TileImages.png($0)) })
        try writer.finish(
            metadata: MBTilesWriter.metadata(
                name: "Built",
                description: "",
                format: "png",
                frame: TestEnv.frame,
                zooms: 10...11,
                attribution: "© Us"
            )
        )
        let reader = try MBTilesReader(url: url)
        defer { reader.close() }
        #expect(reader.tileSource != "tiles", "the join, not the file's view")
        let info = try reader.info()
        #expect(info.tileCount == tiles.count && info.format == "png" && info.minZoom == 10 && info.maxZoom == 11)
        #expect(try reader.tile(tiles[0]) == TileImages.png(tiles[0]))
        var read: [TileID] = []
        try reader.tiles(in: TestEnv.frame, zoom: 11) { id, data in
            #expect(data == TileImages.png(id))
            read.append(id)
        }
        #expect(read == tiles.filter { $0.z == 11 }, "in (x, y) order, each once")

        // A file with map + images whose `tiles` view lies: we never read the view.
        let queue = try DatabaseQueue(path: url.path)
        try await queue.write { db in
            try db.execute(
                sql:
                    "DROP VIEW tiles; CREATE VIEW tiles AS SELECT 10 AS zoom_level, 0 AS tile_column, 0 AS tile_row, zeroblob(\(Self.bombBytes)) AS tile_data"
            )
        }
        try queue.close()
        let again = try MBTilesReader(url: url)
        defer { again.close() }
        #expect(try again.info().tileCount == tiles.count)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.tilesUpload(
                "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                data: try Data(contentsOf: url),
                fileName: "built.mbtiles",
                token: token
            )
            #expect(response.status == .created, "\(response.text)")
        }
    }
}

/// Delta updates count on it: the same tiles give the same `map.mbtiles`, byte for byte, so a release that does not
/// change the map costs an app no map bytes.
@Suite(.scratch) struct TilesDeterminismTests {
    @Test("the same uploaded tiles cut to the same frame twice, a second apart: byte-identical MBTiles")
    func sameTilesSameBytes() async throws {
        let folder = TestScratch.folder("trail-tiles-determinism")
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.mbtiles")
        try MBTilesFixture.write(.raster, to: source)
        func cut(_ name: String) throws -> Data {
            let reader = try MBTilesReader(url: source)
            defer { reader.close() }
            let info = try reader.info()
            let output = folder.appendingPathComponent(name)
            let writer = try MBTilesWriter(url: output)
            for zoom in info.minZoom...info.maxZoom {
                var batch: [(TileID, Data)] = []
                try reader.tiles(in: TestEnv.frame, zoom: zoom) { batch.append(($0, $1)) }
                try writer.add(batch)
            }
            try writer.finish(
                metadata: MBTilesWriter.metadata(
                    name: "Tour",
                    description: "Offline map of Tour",
                    format: info.format,
                    frame: TestEnv.frame,
                    zooms: info.minZoom...info.maxZoom,
                    attribution: info.attribution
                )
            )
            return try Data(contentsOf: output)
        }
        let first = try cut("first.mbtiles")
        try await Task.sleep(for: .milliseconds(1100))
        let second = try cut("second.mbtiles")
        #expect(first.count > 4096)
        #expect(first == second, "\(first.count) vs \(second.count) bytes")
    }
}
