import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// The visitor web player's routes: the public list and player pages (published packages only), the player's
/// immutable files and service worker, one tile of a released version's map (checked against the signed tile
/// index), and the QR code of a tour's player for the panel.
@Suite struct VisitPlayerTests {
    /// The manifest's companion roles are described once, in `Public/js/companion-roles.json`: the server's roles and the
    /// player's (checked by `Tests/js/companion-roles.test.mjs`) both match it, so a new role cannot be skipped by one side.
    @Test func companionRolesMatchTheSharedDescription() throws {
        struct Description: Decodable { let roles: [String] }
        let data = try Data(contentsOf: projectRoot.appendingPathComponent("Public/js/companion-roles.json"))
        let shared = try JSONDecoder().decode(Description.self, from: data)
        #expect(shared.roles == CompanionRole.allCases.map(\.rawValue))
    }

    @Test("/visit lists published tours with their facts, and neither unpublished nor never-released ones")
    func listShowsOnlyPublishedTours() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            let response = try await client.get("/visit", session: nil)
            #expect(response.status == .ok)
            let html = response.text
            #expect(html.contains("href=\"/visit/\(seed.packageId)\""), "the published package is listed")
            #expect(html.contains("Lake Loop"))
            #expect(!html.contains(seed.hiddenPackageId), "an unpublished package is not listed")
            #expect(!html.contains("Crater Rim"))
            let size = try #require(try await app.database.packageVersion(packageId: seed.packageId, version: 2)).size
            #expect(html.contains(ByteFormat.string(size)), "the download size of the served version is shown")
            #expect(html.contains("data-fact=\"languages\""))
        }
    }

    @Test("/visit/{id}: 200 and installable for a published tour, 410 once unpublished, 404 for an unknown id")
    func playerPageOnlyForPublishedTours() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            let page = try await client.get("/visit/\(seed.packageId)", session: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains("data-offline-state=\"checking\""), "nothing is claimed before the script has checked the signature")
            #expect(page.text.contains("rel=\"manifest\" href=\"/visit/\(seed.packageId)/app.webmanifest\""))
            #expect(page.text.contains("id=\"visit-map\""))
            #expect(try await client.get("/visit/\(seed.hiddenPackageId)", session: nil).status == .gone)
            #expect(try await client.get("/visit/no-such-package", session: nil).status == .notFound)
            #expect(try await client.get("/visit/\(seed.hiddenPackageId)/app.webmanifest", session: nil).status == .notFound)

            let manifest = try #require(try await client.get("/visit/\(seed.packageId)/app.webmanifest", session: nil).json as? [String: Any])
            #expect(manifest["scope"] as? String == "/visit/")
            #expect(manifest["start_url"] as? String == "/visit/\(seed.packageId)")
            // Installable on Android (PNG of 192 and 512 px) and iOS (a PNG touch icon on the page): each icon is
            // served immutable, and each PNG is as large as it says.
            let icons = try #require(manifest["icons"] as? [[String: Any]])
            #expect(icons.compactMap { $0["sizes"] as? String }.sorted() == ["192x192", "512x512", "any"])
            for icon in icons {
                let src = try #require(icon["src"] as? String)
                let served = try await client.get(src, session: nil)
                #expect(served.status == .ok && served.headers[.contentType] == icon["type"] as? String, "\(src)")
                #expect(served.headers[.cacheControl] == "public, max-age=31536000, immutable")
                guard let sizes = icon["sizes"] as? String, sizes != "any" else { continue }
                let png = Array(served.body.readableBytesView)
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(src) is a PNG")
                let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
                let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
                #expect("\(width)x\(height)" == sizes, "\(src)")
            }
            #expect(page.text.contains("rel=\"apple-touch-icon\" href=\"/visit/assets/"))

            // The service worker is served from /visit/ (so its scope may be /visit/) and names the player's files.
            let worker = try await client.get("/visit/sw.js", session: nil)
            #expect(worker.status == .ok)
            #expect(worker.headers[.contentType]?.hasPrefix("text/javascript") == true)
            let version = try #require(worker.text.firstMatch(of: /PLAYER_VERSION = "([0-9a-f]+)"/)?.1)
            let script = try await client.get("/visit/assets/\(version)/visit-player.js", session: nil)
            #expect(script.status == .ok)
            #expect(script.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(try await client.get("/visit/assets/0123456789abcdef0123/visit-player.js", session: nil).status == .notFound)
        }
    }

    @Test("a tile of a released version: 200, immutable, listed in the signed tile index; a missing tile is 404")
    func tileRoute() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let version = try #require(try await app.database.packageVersion(packageId: seed.packageId, version: 2))
        let manifest = try version.decodedManifest()
        let tiles = try #require(manifest.tiles)
        let indexRef = try #require(tiles.index, "packages with tiles list tiles/index.json in the manifest")
        #expect(manifest.listedFiles.contains { $0.path == PackageLayout.tilesIndexPath && $0.sha256 == indexRef.sha256 })
        try await app.test { client in
            let index = try await client.get("/api/v1/files/\(indexRef.sha256)", session: nil)
            #expect(index.status == .ok)
            let indexData = Data(buffer: index.body)
            #expect(SHA256.hash(data: indexData).hexString == indexRef.sha256)
            let hashes = try #require((try JSONSerialization.jsonObject(with: indexData) as? [String: Any])?["tiles"] as? [String: String])
            #expect(hashes.count == tiles.tileCount)

            let response = try await client.get("/api/v1/packages/\(seed.packageId)/versions/2/tiles/\(seed.tile)", session: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(response.headers[.contentType] == TileImageFormat.mimeType(tiles.format))
            #expect(SHA256.hash(data: Data(buffer: response.body)).hexString == hashes[seed.tile], "the tile is the one the index vouches for")
            // The player (and a CDN) asking again with the tile's ETag gets 304 and no body.
            let etag = try #require(response.headers[.eTag])
            let again = try await client.get(
                "/api/v1/packages/\(seed.packageId)/versions/2/tiles/\(seed.tile)",
                session: nil,
                headers: [.ifNoneMatch: etag]
            )
            #expect(again.status == .notModified && again.body.readableBytes == 0 && again.headers[.eTag] == etag)

            let parts = seed.tile.split(separator: "/").compactMap { Int($0) }
            let outside = "\(parts[0])/\(parts[1] + 500)/\(parts[2])"
            #expect(hashes[outside] == nil)
            #expect(try await client.get("/api/v1/packages/\(seed.packageId)/versions/2/tiles/\(outside)", session: nil).status == .notFound)
            #expect(try await client.get("/api/v1/packages/\(seed.packageId)/versions/9/tiles/\(seed.tile)", session: nil).status == .notFound)
            #expect(
                try await client.get("/api/v1/packages/\(seed.hiddenPackageId)/versions/1/tiles/\(seed.tile)", session: nil).status == .notFound,
                "an unpublished package's tiles are not served"
            )
        }
    }

    @Test("QR codes: sign-in required; the SVG and the PNG decode (zbarimg) to the player's public URL; 409 before a release")
    func qrCodes() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let expected = "\(app.config.effectivePublicURL)/visit/\(seed.packageId)"
        try await app.test { client in
            let anonymous = try await client.get("/manage/tours/\(seed.publishedTourId)/qr.png", session: nil)
            #expect(anonymous.status == .seeOther, "the panel route sends strangers to sign in")
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/qr.svg", token: nil).status == .unauthorized)

            let browser = try await client.signIn("reviewer@test.org")
            let png = try await client.get("/manage/tours/\(seed.publishedTourId)/qr.png", session: browser)
            #expect(png.status == .ok)
            #expect(png.headers[.contentType] == "image/png")
            let bytes = [UInt8](Data(buffer: png.body))
            #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(Array(bytes[12..<16]) == Array("IHDR".utf8))
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            #expect(width >= 21 * 8 && width % 8 == 0, "a QR code of at least 21 modules, 8 pixels each")

            let svg = try await client.get("/manage/tours/\(seed.publishedTourId)/qr.svg", session: browser)
            #expect(svg.status == .ok)
            #expect(svg.text.hasPrefix("<svg") && svg.text.contains("<path"))

            // An independent reader: ZBar (Debian's zbar-tools) reads the PNG back.
            let folder = TestScratch.folder("qr")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("code.png")
            try Data(bytes).write(to: file)
            let decoded = try await ChildProcess.run("zbarimg", ["--quiet", "--raw", file.path], timeout: .seconds(60))
            #expect(decoded.status == 0, "zbarimg: \(decoded.stderr)")
            #expect(decoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == expected)

            // The tour's page in the panel shows the player's address and its QR code once a version is released.
            let tourPage = try await client.get("/tours/\(seed.publishedTourId)", session: browser)
            #expect(tourPage.text.contains("href=\"\(expected)\""))
            #expect(tourPage.text.contains("src=\"/manage/tours/\(seed.publishedTourId)/qr.svg\""))
            #expect(!(try await client.get("/tours/\(seed.tourId)", session: browser)).text.contains("id=\"visitor-player\""))

            // A tour that was never released has no player address yet: 409 (the tour is there; its address is not).
            let unreleased = try await client.get("/manage/tours/\(seed.tourId)/qr.svg", session: browser)
            #expect(unreleased.status == .conflict)
            #expect(unreleased.text.contains("no released version yet"))
            let outsider = try await client.signIn("outsider@test.org")
            #expect(try await client.get("/manage/tours/\(seed.publishedTourId)/qr.svg", session: outsider).status == .notFound)
        }
    }

    @Test("the QR encoder is not a check that cannot fail: different addresses give different codes")
    func qrCodesDiffer() throws {
        let one = try QRCode("https://parks.example/visit/a")
        let two = try QRCode("https://parks.example/visit/b")
        #expect(one.width == two.width)
        #expect(one.modules != two.modules)
    }
}
