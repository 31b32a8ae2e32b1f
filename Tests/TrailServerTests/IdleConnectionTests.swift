import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import TrailServer

/// The HTTP/1 idle time-out of the real server (`buildApplication`, the channel `serve` runs): a silent connection is
/// closed, an upload whose bytes keep coming is not, however long it takes in all.
@Suite struct IdleConnectionTests {
    static let script = projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/slow_client.py")

    @Test("a connection that sends nothing is closed after the idle time-out; a tus PATCH trickling for 3x that long completes")
    func idleConnectionsCloseMovingUploadsDoNot() async throws {
        let folder = TestScratch.folder("idle")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data")
        try DataFolder.prepare(data)
        let database = try AppDatabase.openFile(at: data.appendingPathComponent("trail.sqlite").path,
                                                migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let seeding = try await TestApp.make(database: database) { $0.dataFolder = data }
        let seed = try seeding.seed()
        let token = try seeding.token(for: "author@test.org")
        var config = seeding.config
        config.idleConnectionTimeout = .seconds(1)
        config.clamavDatabaseFolders = [folder.appendingPathComponent("no-signatures").path]
        config.minFreeSpace = 0
        config.port = 0
        let app = try await buildApplication(config: config)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let created = try await client.execute(
                uri: "/api/v1/manage/uploads", method: .post,
                headers: [.authorization: "Bearer \(token)", .tusResumable: "1.0.0", .uploadLength: "30000",
                          .uploadMetadata: TestClientTus.metadata(tour: seed.tourId, waypoint: seed.waypointId, fileName: "notes.txt")])
            let location = try #require(created.headers[.location], "\(created.status)")
            // From here on the test client's own connection sits idle too (and is closed): only the scripts talk.
            let idle = try await PublishingProcess.run("python3", [Self.script.path, "idle", "\(port)"], timeout: .seconds(60))
            let closedAfter = try #require(idle.lastLineJSON["closedAfter"] as? Double, "never closed: \(idle.stdout) \(idle.stderr)")
            #expect(closedAfter >= 0.9 && closedAfter < 20, "closed after \(closedAfter) s")
            // 30 chunks of 1000 bytes, one every 0.1 s: 3 s in all, never 1 s without a byte.
            let slow = try await PublishingProcess.run("python3", [Self.script.path, "patch", "\(port)", location, token, "30000", "1000", "0.1"],
                                                       timeout: .seconds(60))
            #expect(slow.lastLineJSON["status"] as? Int == 204, "\(slow.stdout) \(slow.stderr)")
            #expect((slow.lastLineJSON["seconds"] as? Double ?? 0) > 2, "it really took longer than the time-out")
        }
    }
}
