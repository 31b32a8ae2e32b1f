import Foundation
import OpenMap
import PackageFormat
import Terrain
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

/// The drawn map through the whole server: `--osm-extract` indexed at start, `map/basemap.geojson` in the released
/// package (listed, verified by the CLI and TrailClient, read back by Python's zipfile), and the bad cases.
@Suite struct DrawnMapTests {
    /// Around the seed tour's frame (N 44.43, S 44.36, E −121.97, W −122.28): a peak, a trail crossing the frame's
    /// west edge, a lake, and a road outside.
    static let ridge = OSMXML { osm in
        osm.node(1, -122.10, 44.40, ["natural": "peak", "name": "Ridge Top", "ele": "1400"])
        osm.way(10, [(-122.35, 44.39), (-122.20, 44.395), (-122.05, 44.40)], ["highway": "path", "name": "Ridge Trail"])
        osm.ring(11, [(-122.02, 44.39), (-121.99, 44.39), (-121.99, 44.41), (-122.02, 44.41)], ["natural": "water", "name": "Fish Lake"])
        osm.way(12, [(-121.50, 44.90), (-121.40, 44.95)], ["highway": "secondary", "name": "Far Road"])
    }

    /// An extract of somewhere else entirely (the Alps).
    static let elsewhere = OSMXML { osm in
        osm.node(1, 7.65, 45.97, ["natural": "peak", "name": "Matterhorn", "ele": "4478"])
    }

    static func env(
        extract: OSMXML?,
        badExtract: Data? = nil,
        terrain: TerrainSource = TerrainSource(),
        configure: @escaping (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestEnv {
        let scratch = TestScratch.folder("trail-osm")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var path: String?
        if let extract {
            path = try await extract.pbf(to: scratch.appendingPathComponent("region.osm.pbf")).path
        } else if let badExtract {
            let file = scratch.appendingPathComponent("region.osm.pbf")
            try badExtract.write(to: file)
            path = file.path
        }
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: terrain) {
            $0.osmExtractPath = path
            configure(&$0)
        }
        await env.app.dependencies.openMap.prepare()
        return env
    }

    static func release(_ env: TestEnv) async throws -> ReleasedPackage {
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        return try #require(box.released)
    }

    static func basemap(in zip: URL) async throws -> [[String: Any]]? {
        let listing = try await expectPackageMatchesManifest(zip)
        guard listing.entries.contains(where: { $0.name == PackageLayout.basemapPath }) else { return nil }
        let unzipped = try await ChildProcess.run("unzip", ["-p", zip.path, PackageLayout.basemapPath])
        #expect(unzipped.status == 0, "unzip -p: \(unzipped.stderr)")
        let bytes = Data(unzipped.stdout.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        return object["features"] as? [[String: Any]]
    }

    static func names(_ features: [[String: Any]]) -> Set<String> {
        Set(features.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String })
    }

    @Test("an extract and a model: the package carries the drawn map, listed, credited, verified by the CLI and TrailClient")
    func packageCarriesTheMap() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await Self.env(extract: Self.ridge, terrain: TerrainSource(model: try TerrainModel(path: dem.path)))
        guard case .ready(let index) = env.app.dependencies.openMap.indexState else {
            Issue.record("the extract was not indexed: \(env.app.dependencies.openMap.indexState)")
            return
        }
        #expect(index.metadata.features == 4)
        let released = try await Self.release(env)
        let features = try #require(try await Self.basemap(in: released.zip))
        #expect(Self.names(features) == ["Ridge Top", "Ridge Trail", "Fish Lake"])
        let contours = features.filter { ($0["properties"] as? [String: Any])?["kind"] as? String == "contour" }
        #expect(contours.count > 5, "the terrain model's contours are drawn")
        // The trailhead sign draws the same map beneath the route: its names and the credit are on it.
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let sign = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/print/sign.pdf?draft=1", token: author)
            #expect(sign.status == .ok)
            let pdf = env.folder.appendingPathComponent("sign.pdf")
            try Data(sign.body.readableBytesView).write(to: pdf)
            let text = try await ChildProcess.run("pdftotext", [pdf.path, "-"])
            #expect(text.stdout.contains("Ridge Top") && text.stdout.contains("OpenStreetMap contributors"), "\(text.stdout.prefix(600))")
        }
        try await env.app.application.testLive { client in
            let trail = TrailClient(baseURL: URL(string: "http://localhost:\(try #require(client.port))")!)
            let manifest = try await trail.package(id: released.packageId).manifest
            let basemap = try #require(manifest.basemap)
            #expect(basemap.path == "map/basemap.geojson" && basemap.attribution == "© OpenStreetMap contributors")
            #expect(Set(basemap.layers) == ["peak", "path", "water", "contour"])
            let file = env.folder.appendingPathComponent("downloaded.zip")
            _ = try await trail.downloadPackage(id: released.packageId, to: file)
            func verify(_ zip: URL) async throws -> ChildProcess.Output {
                try await ChildProcess.run(CLI.binary.path, ["package", "verify", zip.path, "--key", env.publicKey], timeout: .seconds(60))
            }
            let verified = try await verify(file)
            #expect(verified.status == 0 && verified.stdout.contains("Result: VALID"), "\(verified.stdout) \(verified.stderr)")
            // The verifier checks the map like every listed file: one byte changed in it fails the package.
            let tampered = env.folder.appendingPathComponent("tampered.zip")
            try ZipTamper.flipByte(of: file, at: try ZipTamper.dataOffset(in: file, entrySuffix: "basemap.geojson") + 20, to: tampered)
            let refused = try await verify(tampered)
            #expect(refused.status != 0 && refused.stdout.contains("map/basemap.geojson"), "\(refused.stdout) \(refused.stderr)")
        }
    }

    @Test("a new extract and nothing else: the next release's update plan fetches the drawn map alone")
    func updateWithTheMapAlone() async throws {
        let env = try await Self.env(extract: Self.ridge)
        let extract = try #require(env.app.dependencies.openMap.extractPath)
        try await env.app.test { client in
            let first = try await env.releaseThroughAPI(client)
            // The agency downloads a newer extract (a shelter was mapped); the server indexes it again.
            var newer = Self.ridge
            newer.node(2, -122.15, 44.41, ["amenity": "shelter", "name": "New Hut"])
            _ = try await newer.pbf(to: URL(fileURLWithPath: extract))
            await env.app.dependencies.openMap.prepare()
            guard case .ready(let index) = env.app.dependencies.openMap.indexState else {
                Issue.record("the newer extract was not indexed: \(env.app.dependencies.openMap.indexState)")
                return
            }
            #expect(index.metadata.features == 5)
            let second = try await env.releaseThroughAPI(client, media: false)
            #expect(second.packageId == first.packageId && second.version == first.version + 1)
            let features = try #require(try await Self.basemap(in: second.zip))
            #expect(Self.names(features).contains("New Hut"))

            let plan = try await client.execute(uri: "/api/v1/packages/\(first.packageId)/updates?from=\(first.version)", method: .get)
            #expect(plan.status == .ok, "\(plan.text)")
            let files = try #require(plan.jsonObject["files"] as? [[String: Any]])
            #expect(files.map { $0["path"] as? String ?? "" } == [PackageLayout.basemapPath], "\(plan.text)")
            #expect((plan.jsonObject["removed"] as? [String])?.isEmpty == true)
            // What the phone fetches is the new map itself: its hash is the one the new manifest lists.
            let manifest = try Manifest.decode(try DeltaUpdateTests.manifestBytes(second.zip))
            #expect(files.first?["sha256"] as? String == manifest.basemap?.sha256)
            let downloaded = try await client.execute(uri: "/api/v1/files/\(manifest.basemap?.sha256 ?? "")", method: .get)
            #expect(downloaded.status == .ok && String(decoding: downloaded.data, as: UTF8.self).contains("New Hut"))
        }
    }

    @Test("neither extract nor model: no drawn map in the package")
    func noOpenData() async throws {
        let env = try await Self.env(extract: nil)
        guard case .off = env.app.dependencies.openMap.indexState else {
            Issue.record("no extract should leave the map off")
            return
        }
        let released = try await Self.release(env)
        #expect(try await Self.basemap(in: released.zip) == nil)
    }

    @Test("a corrupt extract: said at start, the build goes on with the model's contours alone")
    func corruptExtract() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await Self.env(
            extract: nil,
            badExtract: Data(repeating: 0x5a, count: 10_000),
            terrain: TerrainSource(model: try TerrainModel(path: dem.path))
        )
        guard case .failed(let reason) = env.app.dependencies.openMap.indexState else {
            Issue.record("a corrupt extract must fail its indexing: \(env.app.dependencies.openMap.indexState)")
            return
        }
        #expect(reason.contains("cannot be read"), "\(reason)")
        #expect(FileManager.default.contentsOfDirectoryOrEmpty(env.config.osmIndexFolder).isEmpty, "no half-written index stays")
        let released = try await Self.release(env)
        let features = try #require(try await Self.basemap(in: released.zip))
        #expect(Self.names(features).isEmpty && !features.isEmpty, "contours only")
    }

    @Test("an extract far from the frame: no features from it, and the reason is given")
    func extractFarAway() async throws {
        let env = try await Self.env(extract: Self.elsewhere)
        let frame = Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28)
        guard case .nothing(let reason) = await env.app.dependencies.openMap.basemap(frame: frame, maxZoom: 15) else {
            Issue.record("an extract of the Alps draws nothing in Oregon")
            return
        }
        #expect(reason.contains("does not cover this tour's frame"), "\(reason)")
        let released = try await Self.release(env)
        #expect(try await Self.basemap(in: released.zip) == nil)
    }

    @Test("a terrain model that cannot be read: no contours, and the reason is given")
    func unreadableModel() async throws {
        let scratch = TestScratch.folder("trail-bad-dem")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let file = scratch.appendingPathComponent("dem.tif")
        try Data("not a raster".utf8).write(to: file)
        let source = TerrainSource.open(path: file.path)
        let map = OpenDataMap(extractPath: nil, indexRoot: scratch.appendingPathComponent("osm"), terrain: source)
        guard case .nothing(let reason) = await map.basemap(frame: Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28), maxZoom: 15)
        else {
            Issue.record("an unreadable model draws nothing")
            return
        }
        #expect(reason.contains("The terrain model (--dem) cannot be used"), "\(reason)")
    }

    @Test("the publishing card says which map visitors get: the drawn map, tiles, both, or none with what an admin can do")
    func publishingCardSaysWhichMap() async throws {
        let cases: [(OSMXML?, String?, String, String)] = [
            (Self.ridge, nil, "drawn", "Visitors get a map drawn from OpenStreetMap data, offline with the tour."),
            (nil, "https://tiles.example.org/{z}/{x}/{y}.png", "tiles", "Visitors get map tiles (from the tile server)."),
            (Self.ridge, "https://tiles.example.org/{z}/{x}/{y}.png", "both", "with a map drawn over them from OpenStreetMap data"),
            (nil, nil, "none", "Visitors will see no map"),
            (Self.elsewhere, nil, "none", "does not cover this tour"),
        ]
        for (extract, tiles, kind, words) in cases {
            let env = try await Self.env(extract: extract, configure: { $0.tileURLTemplate = tiles })
            try await env.app.test { client in
                let session = try await client.signIn("author@test.org")
                let page = try await client.get("/tours/\(env.seed.tourId)", session: session).text
                #expect(page.contains(#"data-visitor-map="\#(kind)""#), "\(kind): \(tiles ?? "no tiles")")
                #expect(page.contains(words), "\(kind): \(words)")
                // No map at all is flagged among the warnings before submission, with the three ways out.
                let flagged = page.contains(#"id="publish-warnings""#) && page.contains("An admin can give visitors a map in one of three ways")
                #expect(flagged == (kind == "none"), "\(kind)")
            }
        }
    }

    @Test("the review page says what the built package gives visitors: the drawn map and its layers, or none")
    func reviewPageSaysWhichMap() async throws {
        for (extract, kind, words) in [(Self.ridge, "drawn", "No tiles: a drawn map of"), (nil, "none", "None: visitors will see no map")] {
            let env = try await Self.env(extract: extract)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            try await env.app.test { client in
                let session = try await client.signIn("reviewer@test.org")
                let page = try await client.get("/requests/\(request.id)", session: session).text
                #expect(page.contains(#"data-visitor-map="\#(kind)""#) && page.contains(words), "\(kind)")
                if kind == "drawn" { #expect(page.contains("water, paths and peaks") && page.contains("“© OpenStreetMap contributors”")) }
                // The review map and the phone preview draw the file that will ship, read from the package itself.
                let shipped = try await client.get("/requests/\(request.id)/basemap.geojson", session: session)
                #expect(shipped.status == (kind == "drawn" ? .ok : .notFound))
                if kind == "drawn" {
                    #expect(shipped.text.contains("Ridge Trail") && page.contains("basemap.geojson"))
                    let preview = try await client.get("/requests/\(request.id)/preview", session: session).text
                    #expect(preview.contains("/requests/\(request.id)/basemap.geojson"))
                }
            }
        }
    }

    @Test("the editor's basemap and the place search: drawn for those who may see the tour, names from the extract")
    func editorRoutes() async throws {
        let env = try await Self.env(extract: Self.ridge)
        let author = try await env.token("author@test.org")
        let outsider = try await env.token("outsider@test.org")
        try await env.app.test { client in
            let drawn = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/basemap.geojson", token: author)
            #expect(drawn.status == .ok && drawn.headers[.contentType] == "application/geo+json")
            #expect(drawn.text.contains("Ridge Trail") && drawn.text.contains(#""attribution":"© OpenStreetMap contributors""#))
            let hidden = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/basemap.geojson", token: outsider)
            #expect(hidden.status == .notFound && !hidden.text.contains("Ridge"))
            let found = try await client.api(.get, "/api/v1/manage/places?q=fish", token: author).jsonObject
            let places = try #require(found["places"] as? [[String: Any]])
            #expect(places.map { $0["name"] as? String } == ["Fish Lake"] && found["searched"] as? Bool == true)
            #expect(places.first?["kind"] as? String == "water")
            let short = try await client.api(.get, "/api/v1/manage/places?q=f", token: author)
            #expect(short.status == .unprocessableContent)
            let long = try await client.api(.get, "/api/v1/manage/places?q=\(String(repeating: "a", count: 101))", token: author)
            #expect(long.status == .unprocessableContent)
            // A tour with no frame yet has no map to draw: 409, saying what to do.
            let unframed = try await env.database.createTour(
                siteId: env.seed.alphaId,
                TourInput(name: "Not framed", description: ""),
                actor: .system
            )
            let noFrame = try await client.api(.get, "/api/v1/manage/tours/\(unframed.id)/basemap.geojson", token: author)
            #expect(noFrame.status == .conflict && noFrame.text.contains("set the frame"), "\(noFrame.text)")
        }
        // Without an extract the search says it searched nothing, so the page can say why.
        let bare = try await Self.env(extract: nil)
        let token = try await bare.token("author@test.org")
        try await bare.app.test { client in
            let answer = try await client.api(.get, "/api/v1/manage/places?q=fish", token: token).jsonObject
            #expect(answer["searched"] as? Bool == false && (answer["places"] as? [Any])?.isEmpty == true)
            let none = try await client.api(.get, "/api/v1/manage/tours/\(bare.seed.tourId)/basemap.geojson", token: token)
            #expect(none.status == .notFound && none.text.contains("no OpenStreetMap extract (--osm-extract) and no terrain model"))
        }
    }

    @Test("the admin's Map tiles page names the three ways to a map, and the open data the server has")
    func adminPageNamesTheWays() async throws {
        let env = try await Self.env(extract: Self.ridge)
        try await env.app.test { client in
            let session = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/tiles", session: session).text
            #expect(page.contains("There are three ways to give visitors a map"))
            #expect(page.contains("OpenStreetMap extract: region.osm.pbf, 4 features, indexed."))
            #expect(page.contains("No terrain model is set (--dem)."))
        }
    }
}

extension FileManager {
    func contentsOfDirectoryOrEmpty(_ url: URL) -> [String] { (try? contentsOfDirectory(atPath: url.path)) ?? [] }
}
