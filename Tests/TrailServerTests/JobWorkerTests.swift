import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Testing

@testable import TrailServer

/// The one loop behind the scan, build, optimization and mail queues, with a queue of its own: an actor standing in for
/// the table, so a failed read and a stop can be placed exactly.
@Suite struct JobWorkerTests {
    actor Queue {
        var jobs: [Int]
        var failingReads: Int
        private(set) var reads = 0
        private(set) var done: [Int] = []
        init(jobs: [Int], failingReads: Int = 0) {
            self.jobs = jobs
            self.failingReads = failingReads
        }
        struct ReadFailure: Error, CustomStringConvertible { var description: String { "database is locked" } }
        /// Up to `limit` queued jobs; the first `failingReads` reads throw.
        func batch(limit: Int) throws -> [Int] {
            reads += 1
            if failingReads > 0 {
                failingReads -= 1
                throw ReadFailure()
            }
            return Array(jobs.prefix(limit))
        }
        func finish(_ job: Int) {
            jobs.removeAll { $0 == job }
            done.append(job)
        }
    }

    /// A job that waits until it is let go, so a stop can arrive while it is in hand.
    final class Gate: Sendable {
        private let state = NIOLockedValueBox((entered: false, open: false))
        var entered: Bool { state.withLockedValue { $0.entered } }
        func open() { state.withLockedValue { $0.open = true } }
        func pass() async {
            state.withLockedValue { $0.entered = true }
            while !state.withLockedValue({ $0.open }), !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
        }
    }

    struct WorkerService: Service {
        let worker: JobWorker
        let onStop: JobWorker.OnStop
        let pass: @Sendable () async -> Void
        func run() async throws { await worker.run(onStop: onStop, pass: pass) }
    }

    /// Polls until `condition` holds. The deadline only ends a run that is stuck: a full parallel run on a loaded
    /// machine once kept these tasks from running for over 30 s.
    static func waitFor(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(180)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw StorageSyncTests.WaitTimeout(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a failed read of the queue is logged, and the queue is read again after the delay: every job is done once")
    func failedReadIsLoggedAndRetried() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "test") { _ in RecordingLogHandler(lines: lines) }
        let worker = JobWorker(queue: "test", logger: logger, retryDelay: .milliseconds(50))
        let queue = Queue(jobs: [1, 2, 3, 4, 5], failingReads: 2)
        let drain: @Sendable () async -> Void = {
            _ = await worker.drain(
                batch: { try await queue.batch(limit: 2) },
                concurrency: 2,
                work: { job in
                    await queue.finish(job)
                    return true
                }
            )
        }
        let running = Task { await worker.run(onStop: .finishBatch, pass: drain) }
        defer { running.cancel() }
        try await Self.waitFor("every job done") { await queue.done.count == 5 }
        #expect(await queue.done.sorted() == [1, 2, 3, 4, 5])
        #expect(await queue.reads >= 2 + 3, "two failed reads, then three batches (2, 2, 1) and the empty one")
        let failures = lines.withLockedValue { $0 }.filter { $0.contains("cannot read the test queue") }
        #expect(failures.count == 2, "each failed read is logged once: \(failures)")
        #expect(failures.first?.contains("database is locked") == true)
        #expect(failures.first?.hasPrefix("error") == true)
        running.cancel()
        await running.value
    }

    @Test("drain works a batch at a time until the queue is empty and counts what the job reported done")
    func drainCountsReportedJobs() async throws {
        let worker = JobWorker(queue: "test", logger: Logger(label: "test"))
        let queue = Queue(jobs: Array(1...7))
        let done = await worker.drain(
            batch: { try await queue.batch(limit: 3) },
            concurrency: 3,
            work: { job in
                await queue.finish(job)
                return job % 2 == 1
            }
        )
        #expect(done == 4, "1, 3, 5 and 7 reported done")
        #expect(await queue.jobs.isEmpty)
        #expect(await queue.reads == 4, "batches of 3, 3, 1 and the empty read")
    }

    @Test(
        "a graceful stop: .finishBatch lets the job in hand finish and reads no other batch; .cancel cancels it and leaves it queued",
        arguments: [JobWorker.OnStop.finishBatch, .cancel]
    )
    func gracefulStop(onStop: JobWorker.OnStop) async throws {
        let worker = JobWorker(queue: "test", logger: Logger(label: "test"))
        let queue = Queue(jobs: [1, 2, 3])
        let gate = Gate()
        let cancelled = NIOLockedValueBox(false)
        let drain: @Sendable () async -> Void = {
            _ = await worker.drain(
                batch: { try await queue.batch(limit: 1) },
                work: { job in
                    await gate.pass()
                    if Task.isCancelled {
                        cancelled.withLockedValue { $0 = true }
                        return false
                    }
                    await queue.finish(job)
                    return true
                }
            )
        }
        let group = ServiceGroup(services: [WorkerService(worker: worker, onStop: onStop, pass: drain)], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        try await Self.waitFor("the first job in hand") { gate.entered }
        await group.triggerGracefulShutdown()
        // The group tells its services in a task of its own: the stop has arrived once the worker says so.
        try await Self.waitFor("the stop to reach the worker") { worker.isStopping }
        if onStop == .finishBatch {
            #expect(!cancelled.withLockedValue { $0 })
            gate.open()
        }
        try await running.value
        let readsAfterStop = await queue.reads
        switch onStop {
        case .finishBatch:
            #expect(await queue.done == [1], "the job in hand finished")
            #expect(await queue.jobs == [2, 3], "no other job was started")
        case .cancel:
            #expect(cancelled.withLockedValue { $0 }, "the job in hand saw its cancellation")
            #expect(await queue.done.isEmpty)
            #expect(await queue.jobs == [1, 2, 3], "every job stays queued for the next start")
        }
        #expect(readsAfterStop == 1, "one batch was read before the stop and none after")
    }
}
