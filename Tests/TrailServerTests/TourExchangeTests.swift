import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

@testable import TrailServer

/// GeoJSON and GPX in and out, the route, and duration estimates.
@Suite(.scratch) struct TourExchangeTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts")

    static func multipart(_ data: Data, fileName: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString(
            "--exchange-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        buffer.writeBytes(data)
        buffer.writeString("\r\n--exchange-boundary--\r\n")
        return buffer
    }

    static func importFile(
        _ client: some TestClientProtocol,
        tourId: Int64,
        token: String,
        data: Data,
        name: String,
        dryRun: Bool
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/v1/manage/tours/\(tourId)/import\(dryRun ? "?dryRun=true" : "")",
            method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=exchange-boundary"],
            body: multipart(data, fileName: name)
        )
    }

    static func python(_ script: String, _ arguments: [String]) async throws -> [String: Any] {
        let output = try await ChildProcess.run("python3", [scripts.appendingPathComponent(script).path] + arguments, timeout: .seconds(60))
        #expect(output.status == 0, "python \(script) failed: \(output.stderr)")
        let line = output.stdout.split(separator: "\n").last.map(String.init) ?? "{}"
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func exportFollowsRFC7946AndRoundTripsThroughImport() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        _ = try await app.database.createWaypoint(
            tourId: seed.tourId,
            WaypointInput(
                name: "Ridge <b>Top</b>",
                description: "Line one\nand “quotes”",
                latitude: 44.41234567891,
                longitude: -122.1
            ),
            actor: .system
        )
        try await app.database.setRoute(
            tourId: seed.tourId,
            route: RoutePath(positions: [[-122.2, 44.37], [-122.1, 44.41], [-122.0, 44.40]]),
            actor: .system
        )
        let alpha = try #require(try await app.database.site(slug: "alpha"))
        let copy = try await app.database.createTour(siteId: alpha.id, TourInput(name: "Copy", description: ""), actor: .system)
        try await app.test { client in
            let export = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)/export.geojson", token: token)
            #expect(export.status == .ok)
            #expect(export.headers[.contentType] == "application/geo+json")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID()).geojson")
            try Data(buffer: export.body).write(to: file)
            let report = try await Self.python("geojson_check.py", [file.path])
            #expect((report["problems"] as? [String]) == [], "\(report)")
            let kinds = try #require(report["kinds"] as? [String: Int])
            #expect(kinds["Point"] == 2 && kinds["Polygon"] == 1 && kinds["LineString"] == 1)

            // Into a tour without a frame: the import sets one around the points and keeps everything.
            let applied = try await Self.importFile(
                client,
                tourId: copy.id,
                token: token,
                data: Data(buffer: export.body),
                name: "x.geojson",
                dryRun: false
            )
            #expect(applied.status == .ok, "\(applied.text)")
        }
        let original = try await app.database.waypoints(tourId: seed.tourId)
        let imported = try await app.database.waypoints(tourId: copy.id)
        #expect(imported.map(\.name) == original.map(\.name))
        #expect(imported.map(\.description) == original.map(\.description))
        for (a, b) in zip(imported, original) {
            #expect(abs(a.latitude - b.latitude) < 1e-7 && abs(a.longitude - b.longitude) < 1e-7)
        }
        let copied = try #require(try await app.database.tour(id: copy.id))
        let source = try #require(try await app.database.tour(id: seed.tourId))
        // The route point for point; the new frame encloses every imported point and the whole route.
        let route = try #require(copied.route?.points)
        let sourceRoute = try #require(source.route?.points)
        #expect(route.count == sourceRoute.count)
        for (a, b) in zip(route, sourceRoute) {
            #expect(abs(a.latitude - b.latitude) < 1e-7 && abs(a.longitude - b.longitude) < 1e-7)
        }
        let frame = try #require(copied.frame)
        for point in route + imported.map({ RoutePoint(longitude: $0.longitude, latitude: $0.latitude) }) {
            #expect(frame.contains(latitude: point.latitude, longitude: point.longitude))
        }
        #expect(copied.name == "Copy", "an import brings waypoints and the route, not the tour's own texts")
    }

    @Test(arguments: ["waypoints", "track", "both"])
    func gpxFixturesFromGpxpyImportWithPreview(mode: String) async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fixture-\(UUID()).gpx")
        let reference = try await Self.python("make_gpx.py", [file.path, mode])
        let data = try Data(contentsOf: file)
        let before = try await app.database.waypoints(tourId: seed.tourId).count
        try await app.test { client in
            let preview = try await Self.importFile(client, tourId: seed.tourId, token: token, data: data, name: "trail.gpx", dryRun: true)
            #expect(preview.status == .ok, "\(preview.text)")
            let plan = try #require((preview.json as? [String: Any])?["plan"] as? [String: Any])
            let expectedAdds = mode == "track" ? 0 : 3
            #expect(plan["added"] as? Int == expectedAdds)
            #expect(plan["routePoints"] as? Int == (mode == "waypoints" ? 0 : 50))
            #expect(try await app.database.waypoints(tourId: seed.tourId).count == before, "a dry run saves nothing")
            let applied = try await Self.importFile(client, tourId: seed.tourId, token: token, data: data, name: "trail.gpx", dryRun: false)
            #expect(applied.status == .ok)
        }
        #expect(try await app.database.waypoints(tourId: seed.tourId).count == before + (mode == "track" ? 0 : 3))
        if mode != "waypoints" {
            let tour = try #require(try await app.database.tour(id: seed.tourId))
            let route = try #require(tour.route)
            let length = try #require(reference["length"] as? Double)
            let ascent = try #require(reference["ascent"] as? Double)
            #expect(abs(route.lengthMeters - length) / length < 0.005, "length \(route.lengthMeters) vs \(length)")
            #expect(abs((route.ascentMeters ?? -1) - ascent) < 0.5)
            let estimate = try await app.database.durationEstimate(tour: tour)
            #expect(abs(estimate.climbMinutes - ascent / 10) < 0.1, "Naismith: a minute per 10 m of ascent")
        }
    }

    @Test func hostileFilesAreRefusedQuicklyAndTheServerStaysHealthy() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let xxe =
            #"<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><gpx version="1.1"><wpt lat="44.4" lon="-122"><name>&xxe;</name></wpt></gpx>"#
        var laughs = #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">"#
        for level in 1...9 { laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : "\(level - 1)");", count: 10) + "\">" }
        laughs += #"]><gpx version="1.1"><wpt lat="44.4" lon="-122"><name>&lol9;</name></wpt></gpx>"#
        let outOfRange =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-122,44.4]},"properties":{"name":"ok"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[44.4,-122]},"properties":{"name":"swapped"}}]}"#
        var many = #"{"type":"FeatureCollection","features":["#
        many += (0..<100_000).map { #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.1,44.4]},"properties":{"name":"p\#($0)"}}"# }
            .joined(separator: ",")
        many += "]}"
        struct Case: Sendable {
            let name: String
            let data: Data
            let status: HTTPResponse.Status
            let message: String
        }
        let malformed = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\">\n<wpt lat=\"44.4\" lon=\"-122\">\n<name>x</wpt>\n</gpx>"
        let cases: [Case] = [
            Case(name: "malformed.gpx", data: Data(malformed.utf8), status: .unprocessableContent, message: "Line 4"),
            Case(name: "xxe.gpx", data: Data(xxe.utf8), status: .unprocessableContent, message: "DOCTYPE"),
            Case(name: "laughs.gpx", data: Data(laughs.utf8), status: .unprocessableContent, message: "DOCTYPE"),
            Case(name: "swapped.geojson", data: Data(outOfRange.utf8), status: .unprocessableContent, message: "Feature 2"),
            Case(name: "many.geojson", data: Data(many.utf8), status: .unprocessableContent, message: "100000 points"),
            Case(name: "huge.gpx", data: Data(count: 100 * 1024 * 1024), status: .contentTooLarge, message: "20 MB"),
            // A processing instruction without data crashed the server inside Foundation's XMLParser (scripts/fuzz.sh
            // importer found it; the second is its input); any instruction but the leading declaration is refused.
            Case(
                name: "stylesheet.gpx",
                data: Data("<?xml version=\"1.0\"?><?xml-stylesheet?><gpx version=\"1.1\"/>".utf8),
                status: .unprocessableContent,
                message: "processing instructions"
            ),
            Case(
                name: "fuzz.gpx",
                data: Data("<?xrTF-8?>8\n?TF->\n<FepF->\n<Fep".utf8),
                status: .unprocessableContent,
                message: "processing instructions"
            ),
        ]
        try await app.test { client in
            for item in cases {
                let (name, data, status, message) = (item.name, item.data, item.status, item.message)
                let started = ContinuousClock.now
                let response = try await Self.importFile(client, tourId: seed.tourId, token: token, data: data, name: name, dryRun: true)
                #expect(response.status == status, "\(name): \(response.status) \(response.text.prefix(300))")
                #expect(response.text.contains(message), "\(name): \(response.text.prefix(300))")
                // A guard against a hang or an expansion, not a speed test: a full parallel test run on two cores can
                // hold even a tiny request for many seconds (speed lives in scripts/bench/bench-*.sh).
                #expect(ContinuousClock.now - started < .seconds(120), "\(name) took too long")
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
            }
        }
        #expect(try await app.database.waypoints(tourId: seed.tourId).count == 1, "nothing was imported")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: app.dependencies.paths.uploads.path)
        #expect(leftovers.isEmpty, "no import file stays behind: \(leftovers)")
    }

    @Test func routeLengthMatchesHaversineReference() async throws {
        let positions: [[Double]] = [
            [-122.2449, 44.3927], [-122.2, 44.395], [-122.1558, 44.4023], [-122.1419, 44.3963],
            [-122.0882, 44.399], [-122.0623, 44.4036], [-121.9948, 44.4012],
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: positions), as: UTF8.self)
        let reference = try #require(try await Self.python("haversine.py", [json])["length"] as? Double)
        let route = try RoutePath(positions: positions)
        #expect(abs(route.lengthMeters - reference) / reference < 0.005)
        // Without a route, straight lines between waypoints in order.
        let straight = DurationEstimate.estimate(
            waypoints: route.points,
            route: nil,
            ascentMeters: nil,
            paceKmh: 4,
            dwellSeconds: Array(repeating: nil, count: 7)
        )
        #expect(abs(straight.walkingMeters - reference) / reference < 0.005)
        #expect(abs(straight.walkingMinutes - reference / 1000 / 4 * 60) < 0.01)
        #expect(straight.dwellMinutes == 14, "two minutes at each of 7 waypoints without media")
        #expect(straight.distancesFromPrevious.first == 0)
    }

    @Test func routeIsSavedFromThePanelAndRefusedWhenInvalid() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        try await app.test { client in
            let session = try await client.signIn("author@test.org")
            let saved = try await client.post("/tours/\(seed.tourId)/route", form: ["route": "[[-122.2,44.37],[-122.1,44.41]]"], session: session)
            #expect(saved.status == .seeOther)
            let bad = try await client.post("/tours/\(seed.tourId)/route", form: ["route": "[[-222.2,44.37],[-122.1,44.41]]"], session: session)
            #expect(bad.status == .unprocessableContent)
            let page = try await client.get("/tours/\(seed.tourId)", session: session)
            #expect(page.text.contains("2 points"))
            #expect(page.text.contains("id=\"duration-estimate\""))
        }
        #expect(try await app.database.tour(id: seed.tourId)?.route?.points.count == 2)
    }

    @Test func wavDurationIsReadFromItsHeader() throws {
        // 8 kHz, mono, 16 bit: 16,000 bytes a second; 3 seconds of silence.
        var header = Data("RIFF".utf8)
        let dataSize: UInt32 = 48_000
        func le32(_ v: UInt32) -> Data { withUnsafeBytes(of: v.littleEndian) { Data($0) } }
        func le16(_ v: UInt16) -> Data { withUnsafeBytes(of: v.littleEndian) { Data($0) } }
        header += le32(36 + dataSize) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(8000) + le32(16000) + le16(2) + le16(16)
        header += Data("data".utf8) + le32(dataSize) + Data(count: Int(dataSize))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tone-\(UUID()).wav")
        try header.write(to: file)
        #expect(MediaDuration.seconds(of: file, mimeType: "audio/wav") == 3)
        #expect(MediaDuration.seconds(of: file, mimeType: "text/plain") == nil)
    }
}

@Suite(.scratch) struct ManifestRouteTests {
    @Test func manifestCarriesRouteDurationAndDistances() throws {
        let waypoints = [
            TourSnapshot.WaypointEntry(
                name: "A",
                order: 1,
                latitude: 44.39,
                longitude: -122.24,
                description: "",
                assets: [
                    .init(
                        assetId: 1,
                        kind: "audio",
                        mimeType: "audio/wav",
                        size: 10,
                        sha256: String(repeating: "a", count: 64),
                        originalName: "a.wav",
                        storedPath: "assets/x",
                        durationSeconds: 300
                    )
                ]
            ),
            TourSnapshot.WaypointEntry(name: "B", order: 2, latitude: 44.40, longitude: -122.14, description: "", assets: []),
        ]
        let snapshot = TourSnapshot(
            tourId: 1,
            name: "T",
            description: "",
            mapName: "t",
            siteName: "S",
            siteSlug: "s",
            frame: Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28),
            minZoom: 11,
            maxZoom: 15,
            waypoints: waypoints,
            route: try RoutePath(json: "[[-122.24,44.39],[-122.19,44.395],[-122.14,44.40]]"),
            paceKmh: 5
        )
        let request = PublishRequest(
            id: "r",
            tourId: 1,
            siteId: 1,
            packageId: "p",
            version: 1,
            authorId: nil,
            state: .building,
            snapshot: snapshot,
            requiredApprovals: 1,
            filesDone: 0,
            filesTotal: 0,
            bytesDone: 0,
            bytesTotal: 0,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000),
            updatedAt: Date(timeIntervalSince1970: 1_800_000_000)
        )
        let manifest = ManifestMaker.manifest(for: request, snapshot: snapshot)
        let route = try #require(manifest.route)
        #expect(route.count == 3 && route[0].longitude == -122.24)
        let walking = try #require(snapshot.route).lengthMeters
        let expected = Int((walking / 1000 / 5 * 60 + 5 + 2).rounded())
        #expect(manifest.estimatedDurationMinutes == expected, "walk at 5 km/h + 5 min of audio + 2 min default stop")
        #expect(manifest.waypoints[0].distanceFromPreviousMeters == 0)
        let second = try #require(manifest.waypoints[1].distanceFromPreviousMeters)
        #expect(abs(second - walking) < 1)
    }
}

/// The parts of tour exchange that settings and the package touch: the walking pace, the import limits, the export
/// being the package's own `waypoints.geojson`, and the route on the review and preview maps.
@Suite(.scratch) struct TourExchangeSettingsTests {
    @Test("the walking pace: set through the API and the tour form, refused out of range, and used by the estimate")
    func paceIsConfigurable() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        _ = try await app.database.createWaypoint(
            tourId: seed.tourId,
            WaypointInput(name: "Far", description: "", latitude: 44.41, longitude: -122.1),
            actor: .system
        )
        let atDefault = try await app.database.durationEstimate(tour: try #require(try await app.database.tour(id: seed.tourId)))
        try await app.test { client in
            let patched = try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: #"{"paceKmh": 2}"#)
            #expect(patched.status == .ok, "\(patched.text)")
            #expect(patched.jsonObject["paceKmh"] as? Double == 2)
            let refused = try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: #"{"paceKmh": 0}"#)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.errorFields["paceKmh"] != nil, "\(refused.text)")

            let browser = try await client.signIn("author@test.org")
            let edit = try await client.get("/tours/\(seed.tourId)/edit", session: browser)
            #expect(edit.text.contains(#"id="paceKmh""#) && edit.text.contains(#"value="2""#), "the form shows the pace")
            let bad = try await client.post(
                "/tours/\(seed.tourId)/edit",
                form: [
                    "name": "Ridge Walk", "description": "A walk.", "mapName": "ridge-walk",
                    "paceKmh": "fast",
                ],
                session: browser
            )
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains("Enter a walking pace between 0.5 and 20 km/h."))
        }
        let tour = try #require(try await app.database.tour(id: seed.tourId))
        #expect(tour.paceKmh == 2, "the refused edits changed nothing")
        let slower = try await app.database.durationEstimate(tour: tour)
        #expect(abs(slower.walkingMinutes - atDefault.walkingMinutes * 2) < 0.01, "half the pace, twice the walking time")
    }

    @Test("imports: a UTF-16 file is refused (its DTD could hide from the check); the size limit is configurable")
    func importLimits() async throws {
        let app = try await TestApp.make { $0.importMaxSize = 4096 }
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let gpx =
            #"<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE gpx [<!ENTITY x SYSTEM "file:///etc/passwd">]><gpx version="1.1"><wpt lat="44.4" lon="-122"><name>&x;</name></wpt></gpx>"#
        let utf16 = Data([0xFF, 0xFE]) + gpx.data(using: .utf16LittleEndian)!
        try await app.test { client in
            let wide = try await TourExchangeTests.importFile(client, tourId: seed.tourId, token: token, data: utf16, name: "wide.gpx", dryRun: true)
            #expect(wide.status == .unprocessableContent)
            #expect(wide.text.contains("UTF-8"), "\(wide.text)")
            let big = Data(("{\"type\":\"FeatureCollection\",\"features\":[]}" + String(repeating: " ", count: 5000)).utf8)
            let tooBig = try await TourExchangeTests.importFile(
                client,
                tourId: seed.tourId,
                token: token,
                data: big,
                name: "big.geojson",
                dryRun: true
            )
            #expect(tooBig.status == .contentTooLarge)
            #expect(tooBig.text.contains("4096 bytes"), "\(tooBig.text)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.dependencies.paths.uploads.path).isEmpty)
    }

    @Test("the tour's GeoJSON export is byte for byte the built package's waypoints.geojson; review and preview maps draw the route")
    func exportIsThePackageDocument() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        let route = [[-122.2, 44.37], [-122.1, 44.41], [-122.0, 44.40]]
        try await env.database.setRoute(tourId: env.seed.tourId, route: RoutePath(positions: route), actor: .system)
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            let export = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/export.geojson", token: token)
            #expect(export.status == .ok)
            let rid = try await client.publishSubmit(env, token: token)
            #expect(await env.buildAll() == 1)
            await #expect(try env.request(rid).state == .pending)
            // Read back by Python's zipfile: the entry's SHA-256 is the export's.
            let listing = try await PythonZipListing.read(env.stagedZip(rid))
            let packaged = try #require(listing.entries.first { $0.name == "waypoints.geojson" }, "the zip has no waypoints.geojson")
            let exported = Data(buffer: export.body)
            #expect(
                packaged.sha256 == MediaFixtures.sha256(exported),
                "the export differs from the package's document:\n\(String(decoding: exported, as: UTF8.self))"
            )
            #expect(String(decoding: exported, as: UTF8.self).contains("\"assets\":[{"), "the export lists the files the package will hold")

            let reviewer = try await client.signIn("reviewer@test.org")
            let review = try await client.get("/requests/\(rid)", session: reviewer)
            #expect(review.status == .ok)
            #expect(review.text.contains("&quot;route&quot;:[[-122.2,44.37],[-122.1,44.41],[-122,44.4]]"), "the review map gets the route")
            let preview = try await client.get("/requests/\(rid)/preview", session: reviewer)
            #expect(preview.status == .ok)
            #expect(preview.text.contains("&quot;route&quot;:[[-122.2,44.37],[-122.1,44.41],[-122,44.4]]"), "the phone preview gets the route")
        }
    }
}
