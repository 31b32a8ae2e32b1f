import Foundation
import GRDB

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
