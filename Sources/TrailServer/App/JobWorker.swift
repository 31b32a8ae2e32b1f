import Logging
import ServiceLifecycle
import Synchronization

/// The loop every durable queue shares: scans (`scanJob`), package builds (`buildJob`), optimized copies
/// (`optimizedCopy`) and mail (`outbox`). The jobs are rows, so they survive a restart; this only decides when to read
/// them. Wake-ups coalesce (a burst of uploads causes one more pass, not one per upload), a pass works the queue a
/// batch at a time until a read comes back empty, and a failed read of the queue is met one way everywhere: logged,
/// and read again after ``retryDelay`` (the jobs stay queued, so nothing is lost while the database is busy or full).
final class JobWorker: Sendable {
    /// What a stop (SIGTERM) does to the job in hand.
    enum OnStop: Sendable {
        /// The batch in hand finishes and no other starts: scans and mail take seconds.
        case finishBatch
        /// The job in hand is cancelled and stays queued for the next start: a build or a conversion may take minutes,
        /// and a stop must not wait for them.
        case cancel
    }

    /// What the log calls the queue ("scan", "build", …).
    let queue: String
    let logger: Logger
    let retryDelay: Duration
    private let wakeStream: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation
    private let stopping = Atomic<Bool>(false)

    init(queue: String, logger: Logger, retryDelay: Duration = .seconds(5)) {
        self.queue = queue
        self.logger = logger
        self.retryDelay = retryDelay
        (wakeStream, wakeContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// True from a graceful stop on: no new batch is read.
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// New work arrived: one more pass, after the one running if there is one.
    func wake() { wakeContinuation.yield() }

    /// Passes over the queue at the start and after every wake-up, until a graceful stop. `ticker`, when given, runs
    /// in a loop beside it and wakes the queue after each round (a signature reload, the next mail retry falling due).
    func run(onStop: OnStop, ticker: (@Sendable () async -> Void)? = nil, pass: @escaping @Sendable () async -> Void) async {
        stopping.store(false, ordering: .relaxed)
        let ticking = ticker.map { tick in
            Task {
                while !Task.isCancelled {
                    await tick()
                    wake()
                }
            }
        }
        defer { ticking?.cancel() }
        wake()
        let loop = Task { for await _ in wakeStream { await pass() } }
        await withGracefulShutdownHandler {
            // A cancelled service (the group ends for another reason) ends the loop too: `loop` is a task of its own.
            await withTaskCancellationHandler {
                await loop.value
            } onCancel: {
                self.wakeContinuation.finish()
                loop.cancel()
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.wakeContinuation.finish()
            if onStop == .cancel { loop.cancel() }
        }
    }

    /// Works the queue a batch at a time until `batch` comes back empty or the worker stops, with up to `concurrency`
    /// jobs of a batch at once; returns how many jobs `work` reported done. Tests call the services' `drain()`, which
    /// comes here, directly.
    func drain<Job: Sendable>(
        batch: () async throws -> [Job],
        concurrency: Int = 1,
        work: @escaping @Sendable (Job) async -> Bool
    ) async -> Int {
        var done = 0
        while !Task.isCancelled, !isStopping {
            let jobs: [Job]
            do { jobs = try await batch() } catch {
                logger.error("cannot read the \(queue) queue; reading it again in \(retryDelay): \(error)")
                let retryDelay = self.retryDelay
                Task {
                    try? await Task.sleep(for: retryDelay)
                    self.wake()
                }
                return done
            }
            if jobs.isEmpty { return done }
            if concurrency <= 1 {
                for job in jobs where await work(job) { done += 1 }
            } else {
                for start in stride(from: 0, to: jobs.count, by: concurrency) {
                    done += await withTaskGroup(of: Bool.self) { group in
                        for job in jobs[start..<min(jobs.count, start + concurrency)] { group.addTask { await work(job) } }
                        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                }
            }
        }
        return done
    }
}
