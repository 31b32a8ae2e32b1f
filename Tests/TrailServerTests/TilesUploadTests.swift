import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// A tour's own MBTiles file: streamed and scanned like any upload, checked (SQLite, MBTiles schema, raster, bounds),
/// and cut to the frame into the package.
@Suite(.scratch) struct TilesUploadTests {
    func fixture(_ kind: MBTilesFixture.Kind, _ env: TestEnv) throws -> Data {
        let url = env.folder.appendingPathComponent("fixture-\(UUID().uuidString.prefix(6)).mbtiles")
        try MBTilesFixture.write(kind, to: url)
        return try Data(contentsOf: url)
    }

    @Test("an MBTiles file that is not SQLite, lacks the tables, lies outside the frame or holds vector tiles: a clear error each")
    func refusedFiles() async throws {
        let env = try await TestEnv.tiles()
        let token = try await env.token("author@test.org")
        let uri = "/api/v1/manage/tours/\(env.seed.tourId)/tiles"
        let cases: [(MBTilesFixture.Kind, Int, String)] = [
            (.notSQLite, 415, "not an SQLite database"),
            (.noTables, 422, "has no “metadata” table"),
            (.boundsOutside, 422, "does not overlap the tour's frame"),
            (.vector, 422, "vector tiles (pbf)"),
            (.noMetadataFormat, 422, "no “format” entry"),
        ]
        try await env.app.test { client in
            for (kind, status, words) in cases {
                let response = try await client.tilesUpload(uri, data: try fixture(kind, env), fileName: "\(kind).mbtiles", token: token)
                #expect(response.status.code == status, "\(kind): \(response.status) \(response.text)")
                #expect(response.tilesErrorMessage.contains(words), "\(kind): \(response.tilesErrorMessage)")
                #expect(response.tilesErrorMessage.contains("\(kind).mbtiles"), "the message names the file: \(response.tilesErrorMessage)")
            }
            // Nothing was kept: no row, no file in uploads/ or tilesets/.
            #expect(try await env.database.tileset(tourId: env.seed.tourId) == nil)
            for folder in ["uploads", "tilesets/pending"] {
                let left = (try? FileManager.default.contentsOfDirectory(atPath: env.paths.absolute(folder).path)) ?? []
                #expect(left.isEmpty, "\(folder): \(left)")
            }
            // The panel says the same on its error page.
            let browser = try await client.signIn("author@test.org")
            let page = try await client.tilesUpload("/tours/\(env.seed.tourId)/tiles", data: try fixture(.vector, env), session: browser)
            #expect(page.status == .unprocessableContent)
            #expect(page.text.contains("vector tiles (pbf)"))
        }
    }

    @Test("a raster MBTiles: scanned, then the package holds exactly its tiles that touch the frame, byte for byte")
    func uploadedTilesReachThePackage() async throws {
        let env = try await TestEnv.tiles()
        // A tile server is configured too: the uploaded file takes precedence over it.
        try await env.useTileServer("http://127.0.0.1:9/{z}/{x}/{y}.png")
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.tilesUpload(
                "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                data: try fixture(.raster, env),
                fileName: "agency topo.mbtiles",
                token: token
            )
            #expect(response.status == .created, "\(response.text)")
            let body = response.tilesJSON
            #expect(body["scanStatus"] as? String == "pending")
            #expect(body["format"] as? String == "png")
            #expect(body["minZoom"] as? Int == 10 && body["maxZoom"] as? Int == 12)
            #expect(body["originalName"] as? String == "agency topo.mbtiles")
            // Not clean yet: the checklist says so.
            #expect(
                try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).contains {
                    $0.contains("agency topo.mbtiles") && $0.contains("pending")
                }
            )
            #expect(await env.scans.drain() == 1)
            let tileset = try #require(try await env.database.tileset(tourId: env.seed.tourId))
            #expect(tileset.scanStatus == .clean, "\(tileset.scanDetail)")
            #expect(tileset.storedPath == "tilesets/\(tileset.sha256).mbtiles")
            #expect(try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).isEmpty)
            let fetched = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/tiles", token: token)
            #expect(fetched.tilesJSON["scanStatus"] as? String == "clean")
        }
        let request = try await env.submitAndBuild()
        try #require(request.state == .pending, "build failed: \(request.failureReason ?? "")")
        let zip = env.stagingFolder(request.id).appendingPathComponent("package.zip")
        let listing = try await expectPackageMatchesManifest(zip)
        let tilesEntry = try #require(listing.manifest["tiles"] as? [String: Any])
        let mbtiles = try await PythonMBTiles.read(zip, frame: TestEnv.frame)
        #expect(mbtiles.fileSHA256 == tilesEntry["sha256"] as? String)
        #expect(mbtiles.metadata["format"] == "png" && mbtiles.metadata["minzoom"] == "10" && mbtiles.metadata["maxzoom"] == "12")
        #expect(mbtiles.metadata["attribution"] == "© Test Agency")
        #expect(mbtiles.metadata["bounds"] == "-122.28,44.36,-121.97,44.43")
        let expected = MBTilesFixture.expectedTiles()
        #expect(mbtiles.rows.count == expected.count, "only the tiles touching the frame, of the file's larger area")
        #expect(tilesEntry["tileCount"] as? Int == expected.count)
        var found = Set<TileID>()
        for row in mbtiles.rows {
            let tile = TileID(z: row.z, x: row.column, y: (1 << row.z) - 1 - row.row)
            found.insert(tile)
            #expect(row.sha256 == expected[tile], "tile \(tile) differs from the uploaded file's")
        }
        #expect(found == mbtiles.expected)
        // The build's scan report lists the tiles file.
        #expect(request.scanReport?.contains { $0.file.contains("agency topo.mbtiles") } == true, "\(String(describing: request.scanReport))")
    }

    @Test("an MBTiles file with a virus in a tile is quarantined and blocks publishing")
    func infectedFile() async throws {
        let env = try await TestEnv.tiles()
        try await env.app.test { client in
            let response = try await client.tilesUpload(
                "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                data: try fixture(.infected, env),
                token: try env.token("author@test.org")
            )
            #expect(response.status == .created, "\(response.text)")
        }
        #expect(await env.scans.drain() == 1)
        let tileset = try #require(try await env.database.tileset(tourId: env.seed.tourId))
        #expect(tileset.scanStatus == .infected)
        #expect(tileset.storedPath.hasPrefix("tilesets/quarantine/"))
        #expect(
            try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).contains {
                $0.contains("infected, not clean")
            }
        )
        await #expect(throws: NotReadyToPublish.self) {
            try await env.database.startPublish(
                tourId: env.seed.tourId,
                actor: try env.actor("author@test.org"),
                tiles: env.app.dependencies.tileSettings.current
            )
        }
    }

    @Test("upload, replace and delete need an editor of the tour; others cannot even see it; without tiles GET and DELETE answer 204")
    func permissions() async throws {
        let env = try await TestEnv.tiles()
        let uri = "/api/v1/manage/tours/\(env.seed.tourId)/tiles"
        try await env.app.test { client in
            let data = try fixture(.raster, env)
            #expect(try await client.tilesUpload(uri, data: data, token: try env.token("reviewer@test.org")).status == .forbidden)
            #expect(try await client.tilesUpload(uri, data: data, token: try env.token("outsider@test.org")).status == .notFound)
            #expect(try await client.tilesUpload(uri, data: data).status == .unauthorized)
            #expect(try await client.api(.get, uri, token: try env.token("outsider@test.org")).status == .notFound)
            let browser = try await client.signIn("author@test.org")
            let created = try await client.tilesUpload("/tours/\(env.seed.tourId)/tiles", data: data, session: browser)
            #expect(created.status == .seeOther, "\(created.status) \(created.text)")
            // The tour page shows the file and the upload form; the panel form needs the CSRF token.
            let page = try await client.get("/tours/\(env.seed.tourId)", session: browser)
            #expect(page.text.contains("id=\"tileset\"") && page.text.contains("map.mbtiles"))
            var forged = browser
            forged.csrf = "forged"
            #expect(try await client.tilesUpload("/tours/\(env.seed.tourId)/tiles", data: data, session: forged).status == .forbidden)
            #expect(try await client.api(.delete, uri, token: try env.token("reviewer@test.org")).status == .forbidden)
            #expect(try await client.api(.delete, uri, token: try env.token("author@test.org")).status == .noContent)
            #expect(try await env.database.tileset(tourId: env.seed.tourId) == nil)
            // No tiles: the tour is still there (204, not 404), and deleting again changes nothing and records nothing.
            #expect(try await client.api(.get, uri, token: try env.token("author@test.org")).status == .noContent)
            let author = try await env.token("author@test.org")
            let before = try await env.database.snapshot()
            #expect(try await client.api(.delete, uri, token: author).status == .noContent)
            try await env.database.expectUnchanged(since: before)
        }
    }

    @Test("an MBTiles upload counts in the site's storage quota: over it, 413 and nothing kept; a replacement gives its old size back")
    func tilesCountInTheQuota() async throws {
        let env = try await TestEnv.tiles()
        let token = try await env.token("author@test.org")
        let data = try fixture(.raster, env)
        let site = try #require(try await env.database.site(id: env.seed.alphaId))
        @Sendable func setQuota(_ bytes: Int64) async throws {
            _ = try await env.database.updateSite(
                id: site.id,
                SiteInput(
                    slug: site.slug,
                    name: site.name,
                    description: site.description,
                    requiredApprovals: site.requiredApprovals,
                    storageQuotaBytes: bytes
                ),
                actor: .system
            )
        }
        try await env.app.test { client in
            try await setQuota(Int64(data.count) - 1)
            let refused = try await client.tilesUpload(
                "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                data: data,
                fileName: "big.mbtiles",
                token: token
            )
            #expect(refused.status == .contentTooLarge, "\(refused.text)")
            #expect(refused.text.contains("storage quota"))
            #expect(try await env.database.tileset(tourId: env.seed.tourId) == nil)
            let pending = env.app.dependencies.paths.tilesets.appendingPathComponent("pending")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: pending.path)) ?? []).isEmpty, "the refused file is removed")

            // Room for one file: the first fits, and replacing it fits too (its own size is given back).
            try await setQuota(Int64(data.count) + 10)
            let first = try await client.tilesUpload("/api/v1/manage/tours/\(env.seed.tourId)/tiles", data: data, fileName: "a.mbtiles", token: token)
            #expect(first.status == .created, "\(first.text)")
            #expect(try await env.database.storedBytes(siteId: site.id) == Int64(data.count), "the file counts in the site's storage")
            let again = try await client.tilesUpload("/api/v1/manage/tours/\(env.seed.tourId)/tiles", data: data, fileName: "b.mbtiles", token: token)
            #expect(again.status == .created, "\(again.text)")
        }
    }
}
