import GRDB
import ServiceLifecycle

/// Empties the read API's caches (``ReadAPICache`` and the signed catalog) when
/// another process committed to the database: `trail-companion site create`, an emergency `package unpublish`, a
/// `user` command run beside the server.
///
/// Why a poll: GRDB's observation follows the commits of this process's writer only. SQLite's `PRAGMA data_version`,
/// read on that same writer connection, changes exactly when some other connection committed, and costs one
/// statement. Read twice a second, a change made elsewhere reaches every answer within a second; the server's own
/// writes never move it, so they do not empty the caches twice.
struct OtherProcessCommits: Service {
    let database: AppDatabase
    let cache: ReadAPICache
    var interval: Duration = .milliseconds(500)

    init(database: AppDatabase, cache: ReadAPICache) {
        self.database = database
        self.cache = cache
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            var seen = try? await dataVersion()
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let now = try? await dataVersion() else { continue }
                if now != seen {
                    cache.invalidate()
                    seen = now
                }
            }
        }
    }

    /// The writer connection's `data_version`: a connection's own commits leave it unchanged.
    func dataVersion() async throws -> Int {
        try await database.dataVersion()
    }
}
