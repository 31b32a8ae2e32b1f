import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// The panel's side of tiles: the admin's tile server settings, the frame editor's estimate, and the package's own map
/// on the review page and the phone preview.
@Suite(.scratch) struct TilesPagesTests {
    @Test("admin settings: only admins; OpenStreetMap's servers refused when saved; the saved server reaches the pages and the CSP")
    func settings() async throws {
        let env = try await TestEnv.tiles()
        try await env.app.test { client in
            let author = try await client.signIn("author@test.org")
            #expect(try await client.get("/admin/tiles", session: author).status == .forbidden)
            #expect(
                try await client.post(
                    "/admin/tiles",
                    form: [
                        "urlTemplate": "https://tiles.example.org/{z}/{x}/{y}.png", "attribution": "x",
                        "tileCap": "100",
                    ],
                    session: author
                ).status == .forbidden
            )
            let admin = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/tiles", session: admin)
            #expect(page.status == .ok && page.text.contains("tile-settings-form") && page.text.contains("20000"))
            for template in [
                "https://tile.openstreetmap.org/{z}/{x}/{y}.png", "https://{s}.tile.osm.org/{z}/{x}/{y}.png",
                "https://b.tile.openstreetmap.org/{z}/{x}/{y}.png",
            ] {
                let refused = try await client.post(
                    "/admin/tiles",
                    form: [
                        "urlTemplate": template, "attribution": "© OpenStreetMap contributors",
                        "tileCap": "20000",
                    ],
                    session: admin
                )
                #expect(refused.status == .unprocessableContent, "\(template)")
                #expect(refused.text.contains("forbid bulk downloads"), "\(template)")
            }
            await #expect(try env.database.savedTileSettings() == nil, "nothing was saved")
            let badCap = try await client.post(
                "/admin/tiles",
                form: [
                    "urlTemplate": "https://tiles.example.org/{z}/{x}/{y}.png",
                    "attribution": "© Example", "tileCap": "0",
                ],
                session: admin
            )
            #expect(badCap.status == .unprocessableContent)
            let saved = try await client.post(
                "/admin/tiles",
                form: [
                    "urlTemplate": "https://{s}.maps.example.org/{z}/{x}/{y}.png",
                    "attribution": "© Example Mapping", "tileCap": "30",
                ],
                session: admin
            )
            #expect(saved.status == .seeOther)
            await #expect(
                try env.database.savedTileSettings()
                    == TileSettings(
                        urlTemplate: "https://{s}.maps.example.org/{z}/{x}/{y}.png",
                        attribution: "© Example Mapping",
                        tileCap: 30
                    )
            )
            let tour = try await client.get("/tours/\(env.seed.tourId)", session: author)
            #expect(tour.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: blob: https://*.maps.example.org;") == true)
            #expect(tour.text.contains("maps.example.org"), "the map loads the saved tile server")
            // The seeded frame at zoom 11–15 needs 417 tiles: over the cap of 30.
            #expect(tour.text.contains("417 tiles at zoom 11–15"))
            #expect(tour.text.contains("id=\"tile-estimate-warning\">"), "the warning is shown (not hidden)")
            #expect(tour.text.contains("The frame exceeds the tile cap"))
            let audits = try await env.database.read {
                try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM auditEvent WHERE action = 'tiles.settings'")
            }
            #expect(audits == 1)
            // Cleared: no tile server, no outside origin.
            #expect(
                try await client.post("/admin/tiles", form: ["urlTemplate": "", "attribution": "", "tileCap": "20000"], session: admin).status
                    == .seeOther
            )
            let plain = try await client.get("/tours/\(env.seed.tourId)", session: author)
            #expect(plain.headers[.contentSecurityPolicy]?.contains("example.org") == false)
            #expect(plain.text.contains("No tile server is set up"))
        }
    }

    @Test("the frame editor shows the tile count and size of the saved frame, and the data the live estimate needs")
    func estimate() async throws {
        let env = try await TestEnv.tiles { $0.tileURLTemplate = "https://tiles.example.org/{z}/{x}/{y}.png" }
        try await env.setZooms(10...13)
        try await env.app.test { client in
            let page = try await client.get("/tours/\(env.seed.tourId)", session: try await client.signIn("author@test.org"))
            #expect(page.text.contains("39 tiles at zoom 10–13, about 780.0 KiB"), "the estimate of the saved frame")
            #expect(page.text.contains("data-cap=\"20000\""))
            #expect(page.text.contains("id=\"tile-estimate-warning\" hidden"))
            #expect(page.text.contains("tiles.example.org"))
            #expect(try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).isEmpty)
        }
    }

    @Test("the review page and the phone preview draw the map from the package's own MBTiles; released versions too")
    func packageMap() async throws {
        let env = try await TestEnv.tiles()
        let fixture = env.folder.appendingPathComponent("topo.mbtiles")
        try MBTilesFixture.write(.raster, to: fixture)
        try await env.app.test { client in
            let upload = try await client.tilesUpload(
                "/api/v1/manage/tours/\(env.seed.tourId)/tiles",
                data: try Data(contentsOf: fixture),
                token: try env.token("author@test.org")
            )
            #expect(upload.status == .created)
        }
        #expect(await env.scans.drain() == 1)
        let request = try await env.submitAndBuild()
        try #require(request.state == .pending, "\(request.failureReason ?? "")")
        let inside = try #require(TileMath.tiles(TestEnv.frame, zooms: 12...12).first)
        try await env.app.test { client in
            let reviewer = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/requests/\(request.id)", session: reviewer)
            #expect(page.text.contains("/requests/\(request.id)/tiles/{z}/{x}/{y}"), "the review map uses the package's tiles")
            #expect(page.text.contains("PNG tiles, zoom 10–12"))
            #expect(page.text.contains("/requests/\(request.id)/preview"))
            let tile = try await client.get("/requests/\(request.id)/tiles/\(inside.z)/\(inside.x)/\(inside.y)", session: reviewer)
            #expect(tile.status == .ok)
            #expect(tile.headers[.contentType] == "image/png")
            #expect(Data(buffer: tile.body) == TileImages.png(inside), "the tile as the package holds it")
            let etag = try #require(tile.headers[.eTag])
            let again = try await client.get(
                "/requests/\(request.id)/tiles/\(inside.z)/\(inside.x)/\(inside.y)",
                session: reviewer,
                headers: [.ifNoneMatch: etag]
            )
            #expect(again.status == .notModified && again.body.readableBytes == 0, "the review map's tiles answer 304 the same way")
            // Outside the frame the package has no tile (the file had one there: it was cut away).
            #expect(try await client.get("/requests/\(request.id)/tiles/12/0/0", session: reviewer).status == .notFound)
            #expect(try await client.get("/requests/\(request.id)/tiles/9/\(inside.x >> 3)/\(inside.y >> 3)", session: reviewer).status == .notFound)
            let preview = try await client.get("/requests/\(request.id)/preview", session: reviewer)
            #expect(preview.status == .ok)
            #expect(preview.text.contains("phone-frame") && preview.text.contains("Fish Lake") && preview.text.contains("© Test Agency"))
            #expect(preview.text.contains("/static/js/package-preview.js"))
            // Only the site's people: the outsider learns nothing, anonymous visitors must sign in.
            let outsider = try await client.signIn("outsider@test.org")
            #expect(try await client.get("/requests/\(request.id)/tiles/\(inside.z)/\(inside.x)/\(inside.y)", session: outsider).status == .notFound)
            #expect(try await client.get("/requests/\(request.id)/preview", session: outsider).status == .notFound)
            #expect(try await client.get("/requests/\(request.id)/preview", session: nil).status == .seeOther)
        }
        // Released: the version's own zip serves the same map.
        for email in ["reviewer@test.org"] {
            _ = try await env.database.approve(
                requestId: request.id,
                reviewer: AuthenticatedUser(try #require(try await env.database.user(email: email))),
                comment: "",
                actor: try env.actor(email)
            )
        }
        try await env.app.test { client in
            let author = try await client.signIn("author@test.org")
            let pushed = try await client.post("/requests/\(request.id)/push", form: [:], session: author)
            #expect(pushed.status == .seeOther, "\(pushed.text)")
            let package = try await client.get("/packages/\(request.packageId)", session: author)
            #expect(package.text.contains("/packages/\(request.packageId)/versions/1/preview"))
            let preview = try await client.get("/packages/\(request.packageId)/versions/1/preview", session: author)
            #expect(preview.status == .ok && preview.text.contains("/packages/\(request.packageId)/versions/1/tiles/{z}/{x}/{y}"))
            let tile = try await client.get("/packages/\(request.packageId)/versions/1/tiles/\(inside.z)/\(inside.x)/\(inside.y)", session: author)
            #expect(tile.status == .ok && Data(buffer: tile.body) == TileImages.png(inside))
            #expect(try await client.get("/packages/\(request.packageId)/versions/2/preview", session: author).status == .notFound)
            // The request's own tiles now come from the released zip.
            #expect(try await client.get("/requests/\(request.id)/tiles/\(inside.z)/\(inside.x)/\(inside.y)", session: author).status == .ok)
        }
        // A restart keeps the previews of released versions and removes stray ones.
        try FileManager.default.createDirectory(at: env.paths.tilePreviews, withIntermediateDirectories: true)
        try Data("stray".utf8).write(to: env.paths.tilePreviews.appendingPathComponent("\(String(repeating: "0", count: 64)).mbtiles"))
        let strayName = "\(String(repeating: "0", count: 64)).mbtiles"
        // While one stored manifest cannot be read, it might name any preview: nothing is removed, and the report says why.
        let manifest = try #require(
            try await env.database.read {
                try String.fetchOne($0, sql: "SELECT manifestJSON FROM packageVersion WHERE packageId = ?", arguments: [request.packageId])
            }
        )
        try await env.database.write {
            try $0.execute(sql: "UPDATE packageVersion SET manifestJSON = '{\"tiles\": 7}' WHERE packageId = ?", arguments: [request.packageId])
        }
        let cautious = try await TilesRecovery.run(database: env.database, paths: env.paths)
        #expect(cautious.unreadableManifests == 1 && cautious.stalePreviews == 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: env.paths.tilePreviews.path)) ?? []).sorted().count == 2)
        try await env.database.write {
            try $0.execute(sql: "UPDATE packageVersion SET manifestJSON = ? WHERE packageId = ?", arguments: [manifest, request.packageId])
        }
        let report = try await TilesRecovery.run(database: env.database, paths: env.paths)
        #expect(report.stalePreviews == 1 && report.unreadableManifests == 0)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: env.paths.tilePreviews.path)) ?? []
        #expect(left.count == 1 && !left.contains(strayName), "the released version's preview stays, the stray one goes")
    }
}
