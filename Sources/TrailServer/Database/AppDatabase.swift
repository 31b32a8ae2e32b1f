import Foundation
import GRDB
import NIOPosix

/// The one door to SQLite. Writes are named after what they mean (`createTour`, `reorderWaypoints`, ...)
/// and live in feature files as extensions; each runs in one transaction together with its audit event.
package struct AppDatabase: Sendable {
    let writer: any DatabaseWriter
    /// The terrain model the trail facts are worked out from, in the write that changes a route or a stop.
    let terrain: TerrainSource

    init(_ writer: any DatabaseWriter, migrationsFolder: URL, terrain: TerrainSource = TerrainSource()) throws {
        self.writer = writer
        self.terrain = terrain
        try DatabaseAccess.opening { try Self.migrator(folder: migrationsFolder).migrate(writer) }
    }

    /// Opens (or creates) the WAL database at `path`, with `synchronous=FULL` so a committed state transition survives power loss.
    package static func openFile(
        at path: String,
        migrationsFolder: URL,
        terrain: TerrainSource = TerrainSource(),
        onBlockingAccess: DatabaseAccess.Handler? = DatabaseAccess.debugHandler
    ) throws -> AppDatabase {
        let pool = try DatabaseAccess.opening { try DatabasePool(path: path, configuration: configuration(onBlockingAccess: onBlockingAccess)) }
        // Owner only: password hashes, session hashes and the audit log. SQLite gives -wal and -shm the file's mode.
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard chmod(path + suffix, 0o600) == 0 else { throw POSIXFailure(operation: "chmod \(path + suffix)", code: errno) }
        }
        return try AppDatabase(pool, migrationsFolder: migrationsFolder, terrain: terrain)
    }

    /// An in-memory database for tests: real SQLite, same migrations.
    static func inMemory(
        migrationsFolder: URL,
        terrain: TerrainSource = TerrainSource(),
        onBlockingAccess: DatabaseAccess.Handler? = DatabaseAccess.debugHandler
    ) throws -> AppDatabase {
        let queue = try DatabaseAccess.opening { try DatabaseQueue(configuration: configuration(onBlockingAccess: onBlockingAccess)) }
        return try AppDatabase(queue, migrationsFolder: migrationsFolder, terrain: terrain)
    }

    static func configuration(onBlockingAccess: DatabaseAccess.Handler?) -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if let onBlockingAccess {
                db.trace(options: .statement) { event in
                    if let problem = DatabaseAccess.blockingProblem() { onBlockingAccess(problem, "\(event)") }
                }
            }
        }
        return config
    }

    /// The one way this app runs SQL: awaited, on GRDB's own queues (one writer, the pool's readers), so the task that
    /// asks waits without holding a thread. Every intention method runs exactly one of these.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        try await DatabaseAccess.$isAwaited.withValue(true) { try await writer.read(body) }
    }

    /// A write transaction, awaited (see ``read(_:)``). Before it commits, the trail facts of every tour whose route
    /// or stops it changed are worked out again (the schema's triggers list them), so no reader ever sees a route
    /// with the facts of the one before.
    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        let terrain = self.terrain
        return try await DatabaseAccess.$isAwaited.withValue(true) {
            try await writer.write { db in
                let result = try body(db)
                try Self.refreshTrailFacts(db, terrain: terrain)
                return result
            }
        }
    }

    /// Calls `onChange` after each commit that changed one of `tables` (GRDB's `DatabaseRegionObservation`); cancel
    /// the answer to stop. Starting reads the schema once, synchronously: at start-up, like opening.
    func observeChanges(
        to tables: [String],
        onError: @escaping @Sendable (any Error) -> Void = { _ in },
        onChange: @escaping @Sendable () -> Void
    ) throws -> AnyDatabaseCancellable {
        try DatabaseAccess.opening {
            DatabaseRegionObservation(tracking: tables.map { Table($0) }).start(in: writer, onError: onError, onChange: { _ in onChange() })
        }
    }

    /// Copies the whole database into `copy` (SQLite's online backup). GRDB's backup is synchronous and copies for as
    /// long as the database is large: on the blocking pool, not on the caller's task.
    func backup(to copy: DatabaseQueue) async throws {
        let writer = self.writer
        try await BlockingWork.files { try writer.backup(to: copy) }
    }

    /// Statements outside a transaction (pragmas), awaited (see ``read(_:)``).
    func writeWithoutTransaction<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        try await DatabaseAccess.$isAwaited.withValue(true) { try await writer.writeWithoutTransaction(body) }
    }

    /// Every `*.sql` file in `migrations/`, applied in name order. The file name (without `.sql`) is the migration's identifier.
    static func migrator(folder: URL) throws -> DatabaseMigrator {
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

    /// Names of the migrations already applied, in order.
    package func appliedMigrations() async throws -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
    }
}

enum AppDatabaseError: Error, CustomStringConvertible {
    case noMigrations(String)
    var description: String {
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
protocol UnixTimeRecord: FetchableRecord, EncodableRecord {}

extension UnixTimeRecord {
    package static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSince1970 }
    package static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSince1970 }
}

// The database's own health, as the server's services ask it.
extension AppDatabase {
    /// A write that changes nothing the app reads (`user_version` rewritten with its own value), committed: proof that
    /// the database file can be written and synced.
    func checkWritable() async throws {
        try await write { db in
            let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            try db.execute(sql: "PRAGMA user_version = \(version)")
        }
    }
}

/// Catches SQLite run where it must not be: on an event loop, or synchronously on a Swift task (a request's, a
/// service's), where it would hold one of the few cooperative threads (one per core) while SQLite works or waits up to
/// the busy time-out for the write lock. On two cores, two such requests stopped every other one, `/healthz` included.
///
/// Each statement of the app's database is checked (a statement trace installed by ``AppDatabase``): an access made
/// through ``AppDatabase/read(_:)`` or ``AppDatabase/write(_:)`` marks its task, anything else that runs on a task or
/// an event loop is reported to the handler. Debug builds (the tests) stop at the first one; release builds install
/// no trace at all.
package enum DatabaseAccess {
    /// Receives what is wrong and the statement.
    package typealias Handler = @Sendable (_ problem: String, _ statement: String) -> Void

    @TaskLocal static var isAwaited = false

    /// Opening the database and migrating it are the synchronous accesses: once, before it serves anyone.
    static func opening<T>(_ body: () throws -> T) throws -> T {
        try $isAwaited.withValue(true) { try body() }
    }

    #if DEBUG
    static let debugHandler: Handler? = { problem, statement in
        fatalError("SQLite \(problem): \(statement). Await an AppDatabase method instead.")
    }
    #else
    static let debugHandler: Handler? = nil
    #endif

    /// Why the statement about to run on this thread should not run here, or nil.
    static func blockingProblem() -> String? {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil { return "ran on an event loop" }
        if !isAwaited, withUnsafeCurrentTask(body: { $0 != nil }) { return "ran synchronously on a Swift task" }
        return nil
    }
}
