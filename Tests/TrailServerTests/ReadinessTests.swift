import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import Testing

@testable import TrailServer

/// `/readyz` and the free-space floor (`--min-free-space`): a load balancer learns when the server cannot do its work,
/// and uploads stop before they fill the disk.
@Suite(.scratch) struct ReadinessTests {
    /// `/readyz` as an admin sees it (with a token), or as anyone does.
    static func readyz(_ client: some TestClientProtocol, token: String? = nil) async throws -> (HTTPResponse.Status, [String: Any]) {
        let response = try await client.execute(uri: "/readyz", method: .get, headers: token.map { [.authorization: "Bearer \($0)"] } ?? [:])
        #expect(response.headers[.cacheControl] == "no-store")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        return (response.status, json)
    }

    @Test("ready with signatures and room; 503 with a reason once the signature folder is emptied; ready again when they return")
    func signaturesDecideReadiness() async throws {
        let env = try await TestEnv.media()
        let admin = try await env.token("admin@test.org")
        try await env.app.test { client in
            await env.scans.scanner.reloadIfChanged()
            let (status, json) = try await Self.readyz(client, token: admin)
            #expect(status == .ok, "\(json)")
            #expect(json["status"] as? String == "ready" && (json["reasons"] as? [String])?.isEmpty == true)
            #expect((json["signatures"] as? Int ?? 0) >= 1)

            for file in try FileManager.default.contentsOfDirectory(atPath: env.signatures.path) {
                try FileManager.default.removeItem(at: env.signatures.appendingPathComponent(file))
            }
            await env.scans.scanner.reloadIfChanged()  // what the scan service's 30 s watch does
            let (emptied, reasons) = try await Self.readyz(client, token: admin)
            #expect(emptied == .serviceUnavailable)
            #expect(reasons["status"] as? String == "not ready")
            let listed = reasons["reasons"] as? [String] ?? []
            #expect(listed.count == 1 && listed[0].contains("no malware signature database"), "\(listed)")
            // Liveness is another question: the process still answers.
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)

            try EICAR.writeTestSignatures(to: env.signatures)
            await env.scans.scanner.reloadIfChanged()
            #expect(try await Self.readyz(client, token: admin).0 == .ok)
        }
    }

    @Test("below the free-space floor: /readyz is 503, every kind of upload gets 507 and stores nothing, small forms still work")
    func freeSpaceFloor() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let admin = try await env.token("admin@test.org")
        // An upload begun while there was room: its chunks are refused once the disk is below the floor.
        final class Box: @unchecked Sendable { var location = "" }
        let box = Box()
        try await env.app.test { client in
            let created = try await client.tusCreate(env, token: token, length: 100_000)
            #expect(created.status == .created)
            box.location = try #require(created.location)
        }
        let begun = box.location
        let free = try #require(FreeSpace.available(at: env.dataFolder))
        let crowded = try await TestApp.make(database: env.database, scanner: env.scans.scanner) { config in
            config.dataFolder = env.dataFolder
            config.minFreeSpace = free + 1 << 40  // a terabyte more than there is
        }
        try await crowded.test { client in
            await env.scans.scanner.reloadIfChanged()
            let (status, json) = try await Self.readyz(client, token: admin)
            #expect(status == .serviceUnavailable)
            let reasons = json["reasons"] as? [String] ?? []
            #expect(reasons.count == 1 && reasons[0].contains("below the floor") && reasons[0].contains("--min-free-space"), "\(reasons)")

            let uploadsBefore = env.files(in: "uploads")
            let assetsBefore = try await env.database.scalar("SELECT COUNT(*) FROM asset") as Int?
            let multipart = try await client.execute(
                uri: env.assetsURI,
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=floorboundary"],
                body: MediaMultipart.encode([MediaMultipart.file(MediaFixtures.png(size: 50_000), fileName: "view.png")], boundary: "floorboundary")
            )
            #expect(multipart.status == .insufficientStorage507)
            let message = String(buffer: multipart.body)
            #expect(message.contains("disk is almost full") && message.contains("Nothing was stored"), "\(message)")
            let created = try await client.tusCreate(env, token: token, length: 100_000)
            #expect(created.status == .insufficientStorage507)
            let chunk = try await client.tus(.patch, begun, token: token, offset: 0, body: MediaFixtures.png(size: 100_000))
            #expect(chunk.status == .insufficientStorage507)
            #expect(try await client.tus(.head, begun, token: token).headers[.uploadOffset] == "0", "the begun upload is kept, at its offset")
            #expect(env.files(in: "uploads") == uploadsBefore)
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM asset") as Int? == assetsBefore)

            // Editing text goes on: a waypoint's description is saved.
            let saved = try await client.execute(
                uri: "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)",
                method: .patch,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"description": "Still editable while the disk is full."}"#)
            )
            #expect(saved.status == .ok, "\(String(buffer: saved.body))")
        }
    }

    @Test(
        "anonymous /readyz: only the status, no path or free bytes, and repeated calls write nothing; an admin and a loopback caller get the details"
    )
    func anonymousReadinessIsCheap() async throws {
        let folder = TestScratch.folder("trail-readyz")
        try DataFolder.prepare(folder)
        let path = folder.appendingPathComponent("trail.sqlite").path
        let database = try AppDatabase.openFile(at: path, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let app = try await TestApp.make(database: database) { config in
            config.dataFolder = folder
            config.minFreeSpace = 0
            // Longer than the test takes on a loaded machine, so every call below falls inside one reuse window.
            config.readinessWriteCheckInterval = .seconds(3600)
        }
        try await app.seed()
        // Another connection sees every commit of the app's writer as a change of data_version.
        let observer = try DatabaseQueue(path: path)
        @Sendable func dataVersion() throws -> Int { try observer.read { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 } }
        try await app.test { client in
            let (first, json) = try await Self.readyz(client)
            #expect(json.keys.sorted() == ["status"], "\(json)")
            #expect(first == .ok || first == .serviceUnavailable)
            let text = String(buffer: try await client.execute(uri: "/readyz", method: .get).body)
            #expect(!text.contains(folder.path) && !text.contains("freeBytes") && !text.contains("reasons"), "\(text)")
            let before = try dataVersion()
            for _ in 0..<20 { _ = try await client.execute(uri: "/readyz", method: .get) }
            #expect(try dataVersion() == before, "no write for repeated anonymous calls")
            // A signed-in admin sees the reasons and numbers.
            let admin = try #require(try await app.database.user(email: "admin@test.org"))
            let (token, _) = try await app.database.createAPIToken(userId: admin.id, name: "monitor", actor: .system)
            let (_, details) = try await Self.readyz(client, token: token)
            #expect(details["reasons"] != nil && details["freeBytes"] != nil && details["signatures"] != nil, "\(details)")
            // An author does not.
            let author = try #require(try await app.database.user(email: "author@test.org"))
            let (authorToken, _) = try await app.database.createAPIToken(userId: author.id, name: "x", actor: .system)
            #expect(try await Self.readyz(client, token: authorToken).1.keys.sorted() == ["status"])
        }
        try await app.application.testLive { client in
            // Over a real socket from this machine: details. Through a proxy (X-Forwarded-For): a stranger's request.
            let local = try await client.execute(uri: "/readyz", method: .get)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: local.body)) as? [String: Any])
            #expect(json["reasons"] != nil, "\(json)")
            let proxied = try await client.execute(uri: "/readyz", method: .get, headers: [.xForwardedFor: "203.0.113.7"])
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(buffer: proxied.body)) as? [String: Any])
            #expect(summary.keys.sorted() == ["status"], "\(summary)")
        }
    }

    @Test("--min-free-space sizes: bytes, K/M/G/T with or without B or iB; nonsense refused")
    func sizesParse() {
        #expect(FreeSpace.parse("0") == 0)
        #expect(FreeSpace.parse("1048576") == 1 << 20)
        #expect(FreeSpace.parse("512M") == 512 << 20)
        #expect(FreeSpace.parse("2G") == 2 << 30)
        #expect(FreeSpace.parse("2 GiB") == 2 << 30)
        #expect(FreeSpace.parse("1.5gb") == 3 << 29)
        #expect(FreeSpace.parse("1T") == 1 << 40)
        #expect(FreeSpace.parse("lots") == nil)
        #expect(FreeSpace.parse("-1G") == nil)
    }
}
