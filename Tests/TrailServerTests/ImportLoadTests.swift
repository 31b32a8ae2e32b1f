import Foundation
import Hummingbird
import TestSupport
import Testing

@testable import TrailServer

/// Big imports are read on their own pool, a few at a time: the server keeps answering while they run.
@Suite struct ImportLoadTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/import_load.py")

    @Test func slotsRefuseBeyondTheirLimitAndFreeTheirPlace() async throws {
        let slots = ImportSlots(limit: 2, maxFileSize: 1_000)
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await slots.run {
                        enteredContinuation.yield()
                        for await _ in release { break }
                    }
                }
            }
            var count = 0
            for await _ in entered {
                count += 1
                if count == 2 { break }
            }
            #expect(slots.taken == slots.budget)
            await #expect(throws: TooBusy.self) { try await slots.run(bytes: 1) { 1 } }
            let refusal = await #expect(throws: TooBusy.self) { try await slots.run { 1 } }
            #expect(refusal?.status == .tooManyRequests && refusal?.retryAfterSeconds == ImportSlots.retryAfterSeconds)
            releaseContinuation.yield()
            releaseContinuation.yield()
            releaseContinuation.finish()
            try await group.waitForAll()
        }
        #expect(slots.taken == 0)
        #expect(try await slots.run { 7 } == 7)
    }

    @Test("slots weigh imports by size: one at the size limit leaves room for small ones, each small one takes at least a quarter")
    func slotsWeighImportsBySize() async throws {
        let slots = ImportSlots(limit: 2, maxFileSize: 1_000)
        #expect(slots.budget == 2_000)
        #expect(slots.weight(ofBytes: 10) == 250 && slots.weight(ofBytes: 600) == 600 && slots.weight(ofBytes: 5_000) == 1_000)
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // One at the size limit and four small ones fill the budget: 1,000 + 4 × 250.
            for bytes in [1_000, 10, 10, 10, 10] {
                group.addTask {
                    try await slots.run(bytes: bytes) {
                        enteredContinuation.yield()
                        for await _ in release { break }
                    }
                }
            }
            var count = 0
            for await _ in entered {
                count += 1
                if count == 5 { break }
            }
            #expect(slots.taken == 2_000)
            await #expect(throws: TooBusy.self) { try await slots.run(bytes: 1) { 1 } }
            releaseContinuation.finish()
            try await group.waitForAll()
        }
        #expect(slots.taken == 0)
    }

    @Test(
        "with the import budget taken an import gets 429 with Retry-After; four big imports at once all answer, and /healthz answers while they are read"
    )
    func bigImportsLeaveTheServerAnswering() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        defer { try? FileManager.default.removeItem(at: app.config.dataFolder) }
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let megabytes = ProcessInfo.processInfo.environment["TRAIL_IMPORT_LOAD_MB"] ?? "19"
        let slots = app.dependencies.importSlots
        let small = Data("latitude,longitude,name\n44.4,-122.1,One\n".utf8)
        try await app.application.testLive { client in
            let port = try #require(client.port)
            // The whole budget held, as by four imports at the size limit being read: the next one is refused.
            let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<ImportSlots.defaultLimit {
                    group.addTask {
                        try await slots.run {
                            enteredContinuation.yield()
                            for await _ in release { break }
                        }
                    }
                }
                var count = 0
                for await _ in entered {
                    count += 1
                    if count == ImportSlots.defaultLimit { break }
                }
                let refused = try await TourExchangeTests.importFile(
                    client,
                    tourId: seed.tourId,
                    token: token,
                    data: small,
                    name: "a.csv",
                    dryRun: true
                )
                #expect(refused.status == .tooManyRequests, "\(refused.status) \(refused.text.prefix(300))")
                #expect(refused.headers[.retryAfter] == "\(ImportSlots.retryAfterSeconds)")
                #expect(refused.text.contains("too_many_requests"), "\(refused.text.prefix(300))")
                releaseContinuation.finish()
                try await group.waitForAll()
            }
            #expect(slots.taken == 0)
            let output = try await ChildProcess.run(
                "python3",
                [Self.script.path, "\(port)", token, "\(seed.tourId)", megabytes, "\(ImportSlots.defaultLimit)"],
                timeout: .seconds(900)
            )
            let result = output.lastLineJSON
            #expect(result["imports"] as? [Int] == Array(repeating: 200, count: ImportSlots.defaultLimit), "\(output.stdout) \(output.stderr)")
            let healthz = try #require(result["healthz"] as? [Any], "\(output.stdout) \(output.stderr)")
            let during = try #require(result["healthzDuringParse"] as? Int)
            #expect(during >= 3, "the imports were read before /healthz was asked a few times: \(output.stdout)")
            let seconds = healthz.compactMap { $0 as? Double }
            #expect(seconds.count == healthz.count, "a /healthz failed: \(healthz)")
            // How fast /healthz answers meanwhile is a figure, not a test (a timed assertion on a shared two-core
            // machine measures the neighbours): scripts/bench/bench-import-load.sh measures it against the idle server.
            #expect(result["after"] as? Int == 200, "the slots are free once the imports are done")
            #expect(slots.taken == 0)
        }
    }
}
