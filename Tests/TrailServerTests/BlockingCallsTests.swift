import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Testing
@testable import TrailServer

/// #15 item 6: handlers and middleware reach SQLite through `AppDatabase.perform`, so requests waiting for the write
/// lock wait without a thread. Before, each held one of Swift's cooperative threads (one per core) for up to the busy
/// time-out, and a few of them stopped every other request of the server.
@Suite struct BlockingCallsTests {
    @Test("requests waiting behind a long write leave the server answering others; the waiting writes then succeed")
    func waitingWritesDoNotStopTheServer() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        let token = try env.token("author@test.org")
        // Another connection holds SQLite's write lock (as a long backup step or a migration would) until told, at most 8 s.
        final class Holder: @unchecked Sendable {
            let release = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        }
        let holder = Holder()
        // The token's first use notes its time; later uses within a minute only read.
        try await env.app.test { client in
            let first = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)", token: token)
            #expect(first.status == .ok)
        }
        let lock = try DatabaseQueue(path: env.databasePath)
        Thread.detachNewThread {
            try? lock.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                holder.held.signal()
                _ = holder.release.wait(timeout: .now() + 8)
                try db.execute(sql: "ROLLBACK")
            }
            holder.done.signal()
        }
        holder.held.wait()

        try await env.app.application.test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            // More waiting writes than the machine has cooperative threads, each on its own connection.
            let writers = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
            let writes = (0..<writers).map { index in
                Task {
                    try await PublishingProcess.run("curl", ["-s", "-o", "/dev/null", "-m", "60", "-w", "%{http_code}", "-X", "PATCH",
                                                             "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                                             "--data", #"{"name":"Fish Lake Loop \#(index)"}"#,
                                                             "\(base)/api/v1/manage/tours/\(env.seed.tourId)"], timeout: .seconds(90))
                }
            }
            // Meanwhile (after half a second, so the writes are waiting): health checks and a signed-in read of the tour
            // (the token lookup only reads), each timed by curl itself.
            let probes = try await PublishingProcess.run("/bin/sh", ["-c", """
                sleep 0.5; for i in 1 2 3; do
                  curl -s -o /dev/null -m 30 -w 'healthz %{http_code} %{time_total}\\n' \(base)/healthz
                  curl -s -o /dev/null -m 30 -w 'tour %{http_code} %{time_total}\\n' -H 'Authorization: Bearer \(token)' \(base)/api/v1/manage/tours/\(env.seed.tourId)
                  sleep 0.2
                done
                """], timeout: .seconds(120))
            holder.release.signal()
            let answers = probes.stdout.split(separator: "\n").map { $0.split(separator: " ") }
            #expect(answers.count == 6, "\(probes.stdout)")
            for answer in answers {
                #expect(answer.count == 3 && answer[1] == "200", "\(probes.stdout)")
                let seconds = try #require(Double(answer.last ?? ""))
                #expect(seconds < 4, "\(answer[0]) took \(seconds) s while writes waited for the lock")
            }
            // Nothing is lost: every waiting write went through once the lock was free.
            for write in writes {
                let output = try await write.value
                #expect(output.stdout == "200", "\(output.stdout) \(output.stderr)")
            }
            let name = try #require(try env.database.tour(id: env.seed.tourId)?.name)
            #expect(name.hasPrefix("Fish Lake Loop "))
        }
        holder.done.wait()
    }
}
