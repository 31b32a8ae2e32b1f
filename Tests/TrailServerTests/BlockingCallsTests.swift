import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// Handlers and middleware reach SQLite through `AppDatabase.perform`, so requests waiting for the write
/// lock wait without a thread. Otherwise each would hold one of Swift's cooperative threads (one per core) for up to
/// the busy time-out, and a few of them would stop every other request of the server.
@Suite(.scratch) struct BlockingCallsTests {
    @Test("requests waiting behind a long write leave the server answering others; the waiting writes then succeed")
    func waitingWritesDoNotStopTheServer() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        // Another connection holds SQLite's write lock (as a long backup step or a migration would) until told, at most
        // 40 s. The probes below must be answered while it holds: judged by order, not by a time, so a busy machine cannot
        // fail the test, and a blocked server cannot pass it. (Held past the 10 s busy time-out, which only a very busy
        // machine needs, the first waiting writes give up with an error and change nothing.)
        final class Holder: @unchecked Sendable {
            let release = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            var releasedAt = 0.0
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
                _ = holder.release.wait(timeout: .now() + 40)
                holder.releasedAt = Date().timeIntervalSince1970
                try db.execute(sql: "ROLLBACK")
            }
            holder.done.signal()
        }
        holder.held.wait()
        let startedAt = Date().timeIntervalSince1970

        try await env.app.application.testLive { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            // More waiting writes than the machine has cooperative threads, each on its own connection.
            let writers = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
            let writes = (0..<writers).map { index in
                Task {
                    try await ChildProcess.run(
                        "curl",
                        [
                            "-s", "-o", "/dev/null", "-m", "60", "-w", "%{http_code}", "-X", "PATCH",
                            "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                            "--data", #"{"name":"Fish Lake Loop \#(index)"}"#,
                            "\(base)/api/v1/manage/tours/\(env.seed.tourId)",
                        ],
                        timeout: .seconds(90)
                    )
                }
            }
            // Meanwhile (after half a second, so the writes are waiting), side by side: a health check and a signed-in read
            // of the tour (the token lookup only reads), each noting when its answer came.
            let probes = try await ChildProcess.run(
                "/bin/sh",
                [
                    "-c",
                    """
                    sleep 0.5
                    (echo "healthz $(curl -s -o /dev/null -m 30 -w '%{http_code}' \(base)/healthz) $(date +%s.%N)") &
                    (echo "tour $(curl -s -o /dev/null -m 30 -w '%{http_code}' -H 'Authorization: Bearer \(token)' \(base)/api/v1/manage/tours/\(env.seed.tourId)) $(date +%s.%N)") &
                    wait
                    """,
                ],
                timeout: .seconds(120)
            )
            holder.release.signal()
            holder.done.wait()
            let answers = probes.stdout.split(separator: "\n").map { $0.split(separator: " ") }
            #expect(answers.count == 2, "\(probes.stdout)")
            for answer in answers {
                #expect(answer.count == 3 && answer[1] == "200", "\(probes.stdout)")
                let answeredAt = try #require(Double(answer.last ?? ""))
                #expect(
                    answeredAt < holder.releasedAt,
                    "\(answer[0]) was answered only \(answeredAt - holder.releasedAt) s after the lock was let go"
                )
            }
            // Nothing is lost: the waiting writes went through once the lock was free (or, past the busy time-out, ended
            // with an error and changed nothing).
            var saved = 0
            for write in writes {
                let output = try await write.value
                let status = Int(output.stdout) ?? 0
                #expect(status == 200 || (status >= 500 && holder.releasedAt - startedAt > 10), "\(output.stdout) \(output.stderr)")
                if status == 200 { saved += 1 }
            }
            let name = try #require(try await env.database.tour(id: env.seed.tourId)?.name)
            #expect(saved > 0 ? name.hasPrefix("Fish Lake Loop ") : !name.hasPrefix("Fish Lake Loop "), "\(name)")
        }
    }
}
