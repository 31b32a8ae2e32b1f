import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// Files the route table sends.
enum RouteFixtures {
    /// A real 8 × 8 PNG.
    static let png = TileImages.png(red: 40, green: 120, blue: 60, marker: 1)
    /// Another one (the bytes of the seeded tus upload).
    static let tusPNG = TileImages.png(red: 200, green: 80, blue: 20, marker: 2)
    static let text = Data("Fish Lake: the old remount depot is to the east.\n".utf8)
    static let captions = Data("WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nWind over Fish Lake.\n".utf8)
    /// One waypoint inside the seeded frame.
    static let geoJSON = Data(
        #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.2,44.38]},"properties":{"name":"Lookout","description":"Imported"}}]}"#
            .utf8
    )
    /// A raster MBTiles file covering the seeded frame at zoom 10–12.
    static let mbtiles: Data = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trail-route-\(UUID().uuidString.prefix(8)).mbtiles")
        defer { try? FileManager.default.removeItem(at: url) }
        try! MBTilesFixture.write(.raster, to: url)
        return try! Data(contentsOf: url)
    }()

    static func multipart(fields: [(String, String)], file: RouteCase.FilePart?, boundary: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        for (name, value) in fields {
            buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n")
        }
        if let file {
            buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(file.fileName)\"\r\n")
            buffer.writeString("Content-Type: \(file.contentType)\r\n\r\n")
            buffer.writeBytes(file.data)
            buffer.writeString("\r\n")
        }
        buffer.writeString("--\(boundary)--\r\n")
        return buffer
    }

    /// `key base64,…` of tus.
    static func tusMetadata(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }
}

/// The database and data folder behind `TestApp.routeSeeded()`, made once per test run through the real routes and
/// services (uploads, the scanner with the EICAR test signature, builds, approvals, releases).
enum RouteTemplate {
    // Detached: the template outlives the test that first asks for it, so it takes no test's scratch scope.
    static let database = Task.detached { () throws -> (DatabaseQueue, RichSeed, URL) in
        let folder = TestScratch.folder("trail-routes")
        let signatures = folder.appendingPathComponent("signatures")
        try EICAR.writeTestSignatures(to: signatures)
        let dataFolder = folder.appendingPathComponent("data")
        try DataFolder.prepare(dataFolder)
        let scanner = ClamAVEngineScanner(
            configuration: ClamAVEngineConfiguration(
                databaseDirectories: [signatures.path],
                maxFileSize: AppConfig().maxUploadSize,
                maxConcurrentScans: 1
            )
        )
        let app = try await TestApp.make(scanner: scanner) { config in
            config.dataFolder = dataFolder
            config.clamavDatabaseFolders = [signatures.path]
        }
        await scanner.reloadIfChanged()
        let box = await SeedBox(try app.richSeed())
        let database = app.database
        let author = try #require(try await database.user(email: "author@test.org"))
        let reviewer = AuthenticatedUser(try #require(try await database.user(email: "reviewer@test.org")))
        let authorActor = AuditActor(userId: author.id, ipAddress: "127.0.0.1")
        let reviewerActor = AuditActor(userId: reviewer.id, ipAddress: "127.0.0.1")
        let frame = FrameInput(north: 44.43, south: 44.36, east: -121.97, west: -122.28, minZoom: 11, maxZoom: 12)
        func tour(_ name: String) async throws -> (Int64, Int64) {
            let tour = try await database.createTour(
                siteId: box.seed.alphaId,
                TourInput(name: name, description: "For the route table."),
                actor: .system
            )
            _ = try await database.setFrame(tourId: tour.id, frame, maxAreaKm2: 2500, actor: .system)
            let waypoint = try await database.createWaypoint(
                tourId: tour.id,
                WaypointInput(name: "Rim", description: "", latitude: 44.39, longitude: -122.1),
                actor: .system
            )
            return (tour.id, waypoint.id)
        }
        let (lakeLoop, lakeStop) = try await tour("Lake Loop")
        let (craterRim, craterStop) = try await tour("Crater Rim")
        box.seed.publishedTourId = lakeLoop
        box.seed.readyTourId = craterRim
        let token = try await app.token(for: "author@test.org")

        try await app.test { client in
            func upload(_ uri: String, _ data: Data, _ name: String) async throws -> TestResponse {
                let boundary = "route-\(UUID().uuidString)"
                let response = try await client.execute(
                    uri: uri,
                    method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                    body: RouteFixtures.multipart(
                        fields: [],
                        file: .init(fileName: name, contentType: "application/octet-stream", data: data),
                        boundary: boundary
                    )
                )
                guard response.status == .created else { throw FixtureFailure("template upload \(uri): \(response.status) \(response.text)") }
                return response
            }
            func asset(_ tourId: Int64, _ waypointId: Int64, _ data: Data, _ name: String) async throws -> Int64 {
                let response = try await upload("/api/v1/manage/tours/\(tourId)/waypoints/\(waypointId)/assets", data, name)
                guard let id = (response.jsonObject["id"] as? NSNumber)?.int64Value else { throw FixtureFailure("no id in \(response.text)") }
                if response.jsonObject["kind"] as? String == "image" {  // the site requires alt text before submitting
                    let described = try await client.api(.patch, "/api/v1/manage/assets/\(id)", token: token, json: #"{"altText":"A picture."}"#)
                    guard described.status == .ok else { throw FixtureFailure("alt text: \(described.text)") }
                }
                return id
            }
            // The tour is in English and Spanish, so the per-language routes have a language to write.
            let languages = try await client.api(.patch, "/api/v1/manage/tours/\(box.seed.tourId)", token: token, json: #"{"languages":["en","es"]}"#)
            guard languages.status == .ok else { throw FixtureFailure("languages: \(languages.text)") }
            box.seed.assetId = try await asset(box.seed.tourId, box.seed.waypointId, RouteFixtures.png, "lake.png")
            box.seed.secondAssetId = try await asset(box.seed.tourId, box.seed.waypointId, RouteFixtures.text, "notes.txt")
            box.seed.videoAssetId = try await asset(box.seed.tourId, box.seed.waypointId, MediaFixtures.mp4(), "lake.mp4")
            // The site requires captions on videos before submitting: the fixture's video has them.
            _ = try await upload("/api/v1/manage/assets/\(box.seed.videoAssetId)/captions", RouteFixtures.captions, "lake.vtt")
            _ = try await asset(lakeLoop, lakeStop, RouteFixtures.png, "rim.png")
            let rimVideo = try await asset(lakeLoop, lakeStop, MediaFixtures.mp4(seed: 3), "rim.mp4")
            _ = try await upload("/api/v1/manage/assets/\(rimVideo)/captions", RouteFixtures.captions, "rim.vtt")
            _ = try await asset(craterRim, craterStop, RouteFixtures.text, "crater.txt")
            _ = try await upload("/api/v1/manage/tours/\(box.seed.tourId)/tiles", RouteFixtures.mbtiles, "topo.mbtiles")
            _ = try await upload("/api/v1/manage/tours/\(lakeLoop)/tiles", RouteFixtures.mbtiles, "topo.mbtiles")
            _ = await app.dependencies.scans.drain()

            /// Submitted by alpha's author, built, and (unless `approve` is false) approved by alpha's reviewer.
            func request(_ tourId: Int64, approve: Bool = true) async throws -> PublishRequest {
                let request = try await database.startPublish(tourId: tourId, actor: authorActor, tiles: app.dependencies.tileSettings.current)
                _ = await app.dependencies.builds.drain()
                let built = try #require(try await database.publishRequest(id: request.id))
                try #require(built.state == .pending, "template build failed: \(built.failureReason ?? "")")
                if approve { _ = try await database.approve(requestId: request.id, reviewer: reviewer, comment: "", actor: reviewerActor) }
                return built
            }
            func release(_ tourId: Int64) async throws -> PublishRequest {
                let ready = try await request(tourId)
                let response = try await client.api(.post, "/api/v1/manage/publish-requests/\(ready.id)/push", token: token)
                guard response.status == .ok else { throw FixtureFailure("template release: \(response.status) \(response.text)") }
                return ready
            }
            box.seed.packageId = try await release(lakeLoop).packageId
            _ = try await release(lakeLoop)
            box.seed.pendingRequestId = try await request(lakeLoop, approve: false).id
            box.seed.hiddenPackageId = try await release(craterRim).packageId
            try await database.setPackageVisible(id: box.seed.hiddenPackageId, visible: false, actor: .system)
            box.seed.readyRequestId = try await request(craterRim).id

            let create = try await client.execute(
                uri: "/api/v1/manage/uploads",
                method: .post,
                headers: [
                    .authorization: "Bearer \(token)", .tusResumable: TusController.version, .uploadLength: "\(RouteFixtures.tusPNG.count)",
                    .uploadMetadata: RouteFixtures.tusMetadata([
                        ("tour", "\(box.seed.tourId)"), ("waypoint", "\(box.seed.waypointId)"), ("filename", "clip.png"),
                    ]),
                ]
            )
            try #require(create.status == .created, "template tus upload: \(create.status) \(create.text)")
            box.seed.uploadId = String(try #require(create.location).split(separator: "/").last!)
        }
        box.seed.importId = "import-\(UUID().uuidString.lowercased())"
        // A preview belongs to the person who made it: each role in the table opens its own (same id, same file).
        let userIds: [Int64] = try await app.database.read { try Int64.fetchAll($0, sql: "SELECT id FROM user") }
        for userId in userIds {
            let name = TourExchangeController.previewName(box.seed.importId, userId: userId, tourId: box.seed.tourId)
            try RouteFixtures.geoJSON.write(to: app.dependencies.paths.uploads.appendingPathComponent(name))
        }
        let tile = try #require(TileMath.tiles(Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28), zooms: 11...11).first)
        box.seed.tile = "\(tile.z)/\(tile.x)/\(tile.y)"

        let queue = try #require(app.database.writer as? DatabaseQueue)
        return (queue, box.seed, dataFolder)
    }

    /// The seed being filled in, shared with the test client's closure.
    final class SeedBox: @unchecked Sendable {
        var seed: RichSeed
        init(_ seed: RichSeed) { self.seed = seed }
    }
}

/// A fixture that could not be built (the test then fails with this message).
struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
