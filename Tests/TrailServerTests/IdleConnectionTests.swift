import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// The HTTP/1 idle time-out of the real server (`buildApplication`, the channel `serve` runs): a silent connection is
/// closed, an upload whose bytes keep coming is not, however long it takes in all.
@Suite struct IdleConnectionTests {
    static let script = projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/slow_client.py")

    @Test("a connection that sends nothing is closed after the idle time-out; a tus PATCH trickling for twice that long completes")
    func idleConnectionsCloseMovingUploadsDoNot() async throws {
        let folder = TestScratch.folder("idle")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data")
        try DataFolder.prepare(data)
        let database = try AppDatabase.openFile(
            at: data.appendingPathComponent("trail.sqlite").path,
            migrationsFolder: projectRoot.appendingPathComponent("migrations")
        )
        let seeding = try await TestApp.make(database: database) { $0.dataFolder = data }
        let seed = try await seeding.seed()
        let token = try await seeding.token(for: "author@test.org")
        var config = seeding.config
        config.idleConnectionTimeout = .seconds(2)
        config.clamavDatabaseFolders = [folder.appendingPathComponent("no-signatures").path]
        config.minFreeSpace = 0
        config.port = 0
        let app = try await buildApplication(config: config)
        try await app.testLive { client in
            let port = try #require(client.port)
            // Everything over fresh connections of child processes: the test client's own connection may already have
            // been closed as idle if the machine was slow to get here.
            let metadata = TestClientTus.metadata(tour: seed.tourId, waypoint: seed.waypointId, fileName: "notes.txt")
            let created = try await ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-sS", "-i", "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 30000",
                    "-H", "Upload-Metadata: \(metadata)", "http://127.0.0.1:\(port)/api/v1/manage/uploads",
                ],
                timeout: .seconds(60)
            )
            let location = try #require(GracefulStopTests.header("Location", in: created.stdout), "\(created.stdout) \(created.stderr)")
            let idle = try await ChildProcess.run("python3", [Self.script.path, "idle", "\(port)"], timeout: .seconds(60))
            let closedAfter = try #require(idle.lastLineJSON["closedAfter"] as? Double, "never closed: \(idle.stdout) \(idle.stderr)")
            #expect(closedAfter >= 1.9 && closedAfter < 30, "closed after \(closedAfter) s")
            // 30 chunks of 1000 bytes, one every 0.15 s: 4.5 s in all, never 2 s without a byte.
            let slow = try await ChildProcess.run(
                "python3",
                [Self.script.path, "patch", "\(port)", location, token, "30000", "1000", "0.15"],
                timeout: .seconds(60)
            )
            #expect(slow.lastLineJSON["status"] as? Int == 204, "\(slow.stdout) \(slow.stderr)")
            #expect((slow.lastLineJSON["seconds"] as? Double ?? 0) > 4, "it really took twice the time-out")
        }
    }

    /// The tests' own live client (`testLive`): a test that works for longer than the idle time-out between two requests
    /// gets its answer on a new connection, as from a browser, instead of "I/O on closed channel".
    @Test("the live test client opens a new connection when the server has closed its idle one")
    func theLiveTestClientReconnects() async throws {
        let app = try await TestApp.make { $0.idleConnectionTimeout = .seconds(2) }
        try await app.test(.live) { client in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            // Three times the idle time-out: the server has closed the connection the first request used.
            try await Task.sleep(for: .seconds(6))
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
        }
    }
}
