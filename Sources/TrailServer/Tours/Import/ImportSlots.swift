import Synchronization

/// How many imports may be received and read at once, across the panel and the API. Reading a file near the import
/// size limit takes a core for seconds (XML and CSV parsing, point checks); without a bound, a few signed-in people
/// importing at once took every core, and `/healthz` went unanswered for most of a minute. Beyond the bound the answer
/// is 429 with `Retry-After`, before a byte of the file is read.
final class ImportSlots: Sendable {
    /// Imports at once. Their parsing runs on ``BlockingWork/imports(_:)``, whose two threads take turns, so four
    /// admitted imports still leave the event loops and the cooperative threads free.
    static let defaultLimit = 4
    /// A large import is read in a few seconds; asking again sooner only queues behind it.
    static let retryAfterSeconds = 5

    let limit: Int
    private let inUse = Mutex(0)

    init(limit: Int = ImportSlots.defaultLimit) { self.limit = limit }

    /// Runs `work` in a slot, or refuses at once when every slot is taken.
    func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        let admitted = inUse.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw TooBusy(
                "The server is reading \(limit) other imports right now. Try again in a few seconds.",
                retryAfterSeconds: Self.retryAfterSeconds
            )
        }
        defer { inUse.withLock { $0 -= 1 } }
        return try await work()
    }
}
