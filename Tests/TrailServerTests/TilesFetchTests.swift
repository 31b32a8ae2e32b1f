import Foundation
import GRDB
import Hummingbird
import PackageFormat
import Testing

@testable import TrailServer

/// Package builds that fetch their tiles from a tile server started by the test (a Hummingbird app on a free port
/// serving generated PNG tiles), read back with Python's zipfile and sqlite3.
@Suite(.serialized, .scratch) struct TilesFetchTests {
    static let zooms = 10...13

    @Test("a normal build: the package's MBTiles as MBTiles 1.3 readers expect, every tile as the server sent it")
    func normalBuild() async throws {
        let env = try await TestEnv.tiles()
        try await env.setZooms(Self.zooms)
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            try await env.useTileServer(template, attribution: "© Test Tiles, CC BY 4.0")
            let request = try await env.submitAndBuild()
            try #require(request.state == .pending, "build failed: \(request.failureReason ?? "")")
            let expectedCount = TileMath.count(TestEnv.frame, zooms: Self.zooms)
            #expect(state.requests == expectedCount, "one request per tile: \(state.requests) for \(expectedCount) tiles")
            #expect(state.userAgents == ["TrailCompanion/1.0 (+\(env.config.effectivePublicURL))"], "\(state.userAgents)")

            let zip = env.stagingFolder(request.id).appendingPathComponent("package.zip")
            // The zip against its manifest (Python's zipfile): the tiles entry is listed with its size and SHA-256.
            let listing = try await expectPackageMatchesManifest(zip)
            let tilesEntry = try #require(listing.manifest["tiles"] as? [String: Any], "the manifest has no tiles")
            #expect(tilesEntry["path"] as? String == "tiles/map.mbtiles")
            #expect(tilesEntry["format"] as? String == "png")
            #expect(tilesEntry["minZoom"] as? Int == 10 && tilesEntry["maxZoom"] as? Int == 13)
            #expect(tilesEntry["tileCount"] as? Int == expectedCount)

            let mbtiles = try await PythonMBTiles.read(zip, frame: TestEnv.frame)
            #expect(mbtiles.fileSHA256 == tilesEntry["sha256"] as? String)
            #expect(mbtiles.fileSize == (tilesEntry["size"] as? NSNumber)?.int64Value)
            // The package size counts the tiles (deflated in the zip).
            let tilesInZip = try #require(listing.entries.first { $0.name == "tiles/map.mbtiles" })
            #expect(tilesInZip.size == mbtiles.fileSize && tilesInZip.compressedSize > 0)
            #expect(request.zipSize ?? 0 > tilesInZip.compressedSize)

            // Metadata keys and values.
            let metadata = mbtiles.metadata
            #expect(metadata["name"] == "Ridge Walk")
            #expect(metadata["format"] == "png")
            #expect(metadata["minzoom"] == "10" && metadata["maxzoom"] == "13")
            #expect(metadata["bounds"] == "-122.28,44.36,-121.97,44.43")
            let center = (metadata["center"] ?? "").split(separator: ",").map(String.init)
            #expect(center.count == 3 && Double(center[0]) == -122.125 && Double(center[1]) == 44.395, "center \(metadata["center"] ?? "")")
            #expect(center.count == 3 && Int(center[2]).map { (10...13).contains($0) } == true)
            #expect(metadata["attribution"] == "© Test Tiles, CC BY 4.0")

            // The deduplicating schema: map + images tables, tiles a view; identical tiles stored once; vacuumed.
            #expect(mbtiles.schema["map"] == "table" && mbtiles.schema["images"] == "table" && mbtiles.schema["tiles"] == "view")
            #expect(mbtiles.json["mapCount"] as? Int == expectedCount)
            let distinct = Set(TileMath.tiles(TestEnv.frame, zooms: Self.zooms).map { MediaFixtures.sha256(TileImages.png($0)) }).count
            #expect(mbtiles.json["imagesCount"] as? Int == distinct)
            #expect(distinct < expectedCount, "the fixture has repeated tiles, so deduplication is exercised")
            #expect(mbtiles.json["integrity"] as? String == "ok")
            #expect(mbtiles.json["freelist"] as? Int == 0, "VACUUM leaves no free pages")

            // Only the tiles that intersect the frame (mercantile's list), each under its TMS row, bytes as served.
            let rows = mbtiles.rows
            #expect(rows.count == expectedCount)
            var found = Set<TileID>()
            for row in rows {
                let tile = TileID(z: row.z, x: row.column, y: (1 << row.z) - 1 - row.row)
                found.insert(tile)
                #expect(row.sha256 == MediaFixtures.sha256(TileImages.png(tile)), "tile \(tile) (TMS row \(row.row)) is not what the server sent")
            }
            #expect(found == mbtiles.expected, "tiles in the package differ from mercantile's tiles of the frame")
            #expect(found.count == expectedCount)

            // The shared cache: a second build of the same frame asks the server for nothing.
            _ = try await env.database.withdraw(
                requestId: request.id,
                user: AuthenticatedUser(try #require(try await env.database.user(email: "author@test.org"))),
                actor: try env.actor("author@test.org")
            )
            let before = state.requests
            let second = try await env.submitAndBuild()
            #expect(second.state == .pending, "\(second.failureReason ?? "")")
            #expect(state.requests == before, "tiles came from the cache")
            let cached = try #require(second.manifestJSON.flatMap { try? Manifest.decode(Data($0.utf8)) }?.tiles)
            #expect(cached.sha256 == tilesEntry["sha256"] as? String, "the same tiles give the same MBTiles bytes")
            let cacheFiles =
                FileManager.default.enumerator(atPath: env.config.tileCacheFolder.path)?.allObjects.compactMap { $0 as? String }
                .filter { $0.hasSuffix(".png") } ?? []
            #expect(cacheFiles.count == expectedCount, "cache: tile-cache/<template>/<z>/<x>/<y>.png")
        }
    }

    @Test("a server failing 30 % of requests: retries with back-off still complete the build")
    func flakyServer() async throws {
        let env = try await TestEnv.tiles()
        try await env.setZooms(Self.zooms)
        let state = TileServerState(mode: .flaky(percent: 30))
        try await TestTileServer.with(state) { template in
            try await env.useTileServer(template)
            let request = try await env.submitAndBuild()
            #expect(request.state == .pending, "build failed: \(request.failureReason ?? "")")
            let count = TileMath.count(TestEnv.frame, zooms: Self.zooms)
            #expect(state.failed >= count / 5, "the server failed \(state.failed) of \(state.requests) requests")
            #expect(state.requests == count + state.failed, "every failed request was retried")
            let zip = env.stagingFolder(request.id).appendingPathComponent("package.zip")
            let mbtiles = try await PythonMBTiles.read(zip, frame: TestEnv.frame)
            #expect(mbtiles.rows.count == count)
            for row in mbtiles.rows {
                let tile = TileID(z: row.z, x: row.column, y: (1 << row.z) - 1 - row.row)
                #expect(row.sha256 == MediaFixtures.sha256(TileImages.png(tile)), "tile \(tile)")
            }
        }
    }

    @Test("a server that stops answering: the build fails with a clear message and leaves no package behind")
    func serverStopsAnswering() async throws {
        let env = try await TestEnv.tiles()
        try await env.setZooms(Self.zooms)
        let state = TileServerState(mode: .stopsAnswering(after: 10))
        let fetch = {
            var options = TestEnv.fastFetch()
            options.requestTimeout = 1
            options.attempts = 3
            return options
        }()
        try await TestTileServer.with(state) { template in
            try await env.useTileServer(template)
            let started = ContinuousClock.now
            let request = try await env.submitAndBuild(using: env.buildService(fetch: fetch))
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(request.state == .failed)
            let reason = request.failureReason ?? ""
            #expect(reason.contains("did not deliver tile") && reason.contains("127.0.0.1") && reason.contains("No package was made"), "\(reason)")
            #expect(reason.contains("no answer within"), "the reason says the server did not answer: \(reason)")
            #expect(state.hung >= 3, "the fetcher tried again before giving up")
            // No half package: no staging folder, no zip, no MBTiles, nothing released; the tour is editable again.
            #expect(env.packageFiles().isEmpty, "left behind: \(env.packageFiles())")
            #expect(!FileManager.default.fileExists(atPath: env.stagingFolder(request.id).path))
            #expect(try await env.database.tour(id: env.seed.tourId)?.state == .draft)
            #expect(try await env.database.packageVersions(packageId: request.packageId).isEmpty)
            // What was fetched before the server stopped is in the cache, complete (no temporary files).
            let cached = FileManager.default.enumerator(atPath: env.config.tileCacheFolder.path)?.allObjects.compactMap { $0 as? String } ?? []
            #expect(!cached.contains { $0.hasSuffix(".tmp") })
            // At most the 10 the server sent; fewer when the 1 s time-out ran out on an answer that a busy test machine
            // was slow to read (its bytes then never reach the cache). Never none: the first tiles came back at once.
            let cachedTiles = cached.filter { $0.hasSuffix(".png") }.count
            #expect((1...10).contains(cachedTiles), "\(cachedTiles) tiles cached")
        }
    }

    @Test("a frame over the tile cap is refused before any tile is fetched")
    func capExceeded() async throws {
        let env = try await TestEnv.tiles()
        try await env.setZooms(Self.zooms)
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            let count = TileMath.count(TestEnv.frame, zooms: Self.zooms)
            try await env.useTileServer(template, cap: count - 1)
            // The checklist refuses the submission, with the numbers.
            let checklist = try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            let line = try #require(checklist.first { $0.contains("tile cap") }, "\(checklist)")
            #expect(line.contains("\(count)") && line.contains("\(count - 1)"), "\(line)")
            await #expect(throws: NotReadyToPublish.self) {
                try await env.database.startPublish(
                    tourId: env.seed.tourId,
                    actor: try env.actor("author@test.org"),
                    tiles: env.app.dependencies.tileSettings.current
                )
            }
            // And the build itself refuses a snapshot over its cap (e.g. one frozen before the cap was lowered).
            var snapshot = try await env.database.read { db in
                let tour = try #require(try Tour.fetchOne(db, id: env.seed.tourId))
                return try AppDatabase.snapshot(
                    db,
                    tour: tour,
                    frame: try #require(tour.frame),
                    site: try #require(try Site.fetchOne(db, id: env.seed.alphaId))
                )
            }
            snapshot.tiles = TileSourceSnapshot(kind: .server, minZoom: 10, maxZoom: 13, attribution: "", urlTemplate: template, tileCap: count - 1)
            let packager = TilePackager(paths: env.paths, cacheRoot: env.config.tileCacheFolder, options: TestEnv.fastFetch(), userAgent: "test")
            let staging = env.paths.staging.appendingPathComponent("cap-test")
            await #expect(throws: TileBuildFailure.self) {
                _ = try await packager.build(snapshot, scanner: env.scans.scanner, staging: staging)
            }
            do {
                _ = try await packager.build(snapshot, scanner: env.scans.scanner, staging: staging)
            } catch let failure as TileBuildFailure {
                #expect(failure.message.contains("cap") && failure.message.contains("no tile was fetched"), "\(failure.message)")
            }
            #expect(!FileManager.default.fileExists(atPath: staging.appendingPathComponent("tiles").path))
            #expect(state.requests == 0, "no tile was fetched")
        }
    }
}
