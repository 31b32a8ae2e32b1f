import Foundation
import GRDB
import NIOPosix

/// The one door to SQLite. Writes are named after what they mean (`createTour`, `reorderWaypoints`, ...)
/// and live in feature files as extensions; each runs in one transaction together with its audit event.
public struct AppDatabase: Sendable {
    public let writer: any DatabaseWriter

    public init(_ writer: any DatabaseWriter, migrationsFolder: URL) throws {
        self.writer = writer
        try Self.migrator(folder: migrationsFolder).migrate(writer)
    }

    /// Opens (or creates) the WAL database at `path`, with `synchronous=FULL` so a committed state transition survives power loss.
    public static func openFile(at path: String, migrationsFolder: URL) throws -> AppDatabase {
        let pool = try DatabasePool(path: path, configuration: configuration())
        // Owner only: password hashes, session hashes and the audit log. SQLite gives -wal and -shm the file's mode.
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard chmod(path + suffix, 0o600) == 0 else { throw POSIXFailure(operation: "chmod \(path + suffix)", code: errno) }
        }
        return try AppDatabase(pool, migrationsFolder: migrationsFolder)
    }

    /// An in-memory database for tests: real SQLite, same migrations.
    public static func inMemory(migrationsFolder: URL) throws -> AppDatabase {
        let queue = try DatabaseQueue(configuration: configuration())
        return try AppDatabase(queue, migrationsFolder: migrationsFolder)
    }

    static func configuration() -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        return config
    }

    /// Every `*.sql` file in `migrations/`, applied in name order. The file name (without `.sql`) is the migration's identifier.
    public static func migrator(folder: URL) throws -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        guard FileManager.default.fileExists(atPath: folder.path) else { throw AppDatabaseError.noMigrations(folder.path) }
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else { throw AppDatabaseError.noMigrations(folder.path) }
        for file in files {
            let sql = try String(contentsOf: file, encoding: .utf8)
            let identifier = file.deletingPathExtension().lastPathComponent
            migrator.registerMigration(identifier) { db in
                try db.execute(sql: sql)
            }
        }
        return migrator
    }

    /// Runs named reads and writes for a request handler or a middleware, off Swift's cooperative threads.
    ///
    /// Why: the named methods are synchronous (the CLI, recovery at start and the tests call them as they are). A
    /// handler that calls one directly holds one of the cooperative threads, of which there is one per core, while
    /// SQLite works or waits up to the busy time-out for the write lock: on two cores, two requests waiting behind a
    /// long write stopped every other request, `/healthz` included. GRDB's async `read`/`write` cannot wrap them (a named
    /// method opens its own database access, which GRDB refuses inside another), so the call runs on threads of its
    /// own (``BlockingWork/sqlite``) and the request's task waits without a thread.
    @discardableResult
    func perform<T: Sendable>(_ work: @escaping @Sendable (AppDatabase) throws -> T) async throws -> T {
        try await BlockingWork.sqlite.runIfActive { try work(self) }
    }

    /// Names of the migrations already applied, in order.
    public func appliedMigrations() throws -> [String] {
        try writer.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
    }
}

public enum AppDatabaseError: Error, CustomStringConvertible {
    case noMigrations(String)
    public var description: String {
        switch self {
        case .noMigrations(let path): "no migrations (*.sql) found in \(path); is --root pointing at the project folder?"
        }
    }
}

extension Date {
    /// Seconds since 1970, the unit every `...At` column stores.
    var dbTime: Double { timeIntervalSince1970 }
}

/// A record whose timestamps are `Date`s, stored as seconds since 1970 (a REAL column), as every table has held them
/// since the first migration; GRDB's own default would write text. Raw SQL passes the same number (`Date().dbTime`).
public protocol UnixTimeRecord: FetchableRecord, EncodableRecord {}

extension UnixTimeRecord {
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSince1970 }
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSince1970 }
}

// The database's own health, as the server's services ask it.
extension AppDatabase {
    /// The writer connection's `data_version`: it changes when another connection (the CLI, another process) commits,
    /// never for this connection's own commits.
    func dataVersion() async throws -> Int {
        try await writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }

    /// A write that changes nothing the app reads (`user_version` rewritten with its own value), committed: proof that
    /// the database file can be written and synced.
    func checkWritable() async throws {
        try await writer.write { db in
            let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            try db.execute(sql: "PRAGMA user_version = \(version)")
        }
    }
}
