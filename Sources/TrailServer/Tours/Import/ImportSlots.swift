import Synchronization

/// How much importing the server does at once, across the panel and the API, weighed by size. Reading a file near the
/// import size limit takes a core for seconds (XML and CSV parsing, point checks) and memory in proportion to its
/// size; without a bound, a few signed-in people importing at once took every core, and `/healthz` went unanswered
/// for most of a minute. An import takes its file's size of a budget of ``defaultLimit`` files at the size limit, so
/// four imports of the largest size fill it while many small ones can run beside one large one. Beyond the budget the
/// answer is 429 with `Retry-After`, before the file is read.
///
/// A slot is taken once the file has arrived (it streams to a file in `uploads/` first, within `--import-max-size`),
/// never while it is still arriving: four uploads that sent a few bytes every 25 seconds held every slot, and every
/// other person's import got 429 for as long as they kept sending.
final class ImportSlots: Sendable {
    /// Imports at the size limit at once. Their parsing runs on ``BlockingWork/imports(_:)``, whose two threads take
    /// turns, so a full budget still leaves the event loops and the cooperative threads free.
    static let defaultLimit = 4
    /// The smallest share of the budget an import takes, as a fraction of one at the size limit: at most
    /// `defaultLimit × minimumShareDivisor` (16) imports at once, however small.
    static let minimumShareDivisor = 4
    /// A large import is read in a few seconds; asking again sooner only queues behind it.
    static let retryAfterSeconds = 5

    /// Imports at the size limit the budget holds.
    let limit: Int
    /// The budget in bytes: `limit` files at the size limit.
    let budget: Int
    private let maxFileSize: Int
    private let inUse = Mutex(0)

    init(limit: Int = ImportSlots.defaultLimit, maxFileSize: Int) {
        self.limit = limit
        self.maxFileSize = max(1, maxFileSize)
        self.budget = limit * self.maxFileSize
    }

    /// What an import of `bytes` takes of the budget: its size, at least a quarter of the size limit, at most the limit.
    func weight(ofBytes bytes: Int) -> Int {
        min(maxFileSize, max(bytes, maxFileSize / Self.minimumShareDivisor))
    }

    /// Bytes of the budget taken now (for tests and the docs' figures).
    var taken: Int { inUse.withLock { $0 } }

    /// Runs `work` with `bytes` of the budget (a file at the size limit when nil), or refuses at once when they do
    /// not fit beside the imports already running.
    func run<T: Sendable>(bytes: Int? = nil, _ work: () async throws -> T) async throws -> T {
        let weight = weight(ofBytes: bytes ?? maxFileSize)
        let admitted = inUse.withLock { used in
            guard used + weight <= budget else { return false }
            used += weight
            return true
        }
        guard admitted else {
            throw TooBusy(
                "The server is busy reading other imports. Try again in a few seconds.",
                retryAfterSeconds: Self.retryAfterSeconds
            )
        }
        defer { inUse.withLock { $0 -= weight } }
        return try await work()
    }
}
