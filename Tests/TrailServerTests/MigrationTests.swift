import Foundation
import GRDB
import Testing

@testable import TrailServer

/// `migrations/*.sql`, applied in name order by GRDB's `DatabaseMigrator`, to a real database file.
@Suite struct MigrationTests {
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trail-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static var migrationsFolder: URL { projectRoot.appendingPathComponent("migrations") }

    static var migrationNames: [String] {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: migrationsFolder.path).filter { $0.hasSuffix(".sql") }.sorted()
                .map { String($0.dropLast(4)) }
        }
    }

    /// The schema and the migration log, as text.
    static func schema(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map { "\($0)" }
                + Row.fetchAll(db, sql: "SELECT * FROM grdb_migrations ORDER BY identifier").map { "\($0)" }
                + [try Int.fetchOne(db, sql: "PRAGMA user_version").map { "user_version \($0)" } ?? ""]
        }
    }

    @Test func emptyDatabaseGetsEveryMigrationAndASecondRunChangesNothing() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("trail.sqlite").path

        let first = try AppDatabase.openFile(at: path, migrationsFolder: Self.migrationsFolder)
        await #expect(try first.appliedMigrations() == Self.migrationNames)
        #expect(try Self.migrationNames.first == "0001_foundation")
        let tables = try await first.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        for table in ["user", "session", "apiToken", "loginFailure", "site", "membership", "tour", "waypoint", "auditEvent", "grdb_migrations"] {
            #expect(tables.contains(table), "table \(table)")
        }
        let migrator = try AppDatabase.migrator(folder: Self.migrationsFolder)
        #expect(try await first.read { try migrator.hasCompletedMigrations($0) })
        _ = try await first.createSite(SiteInput(slug: "kept", name: "Kept", description: "", requiredApprovals: 1), actor: .system)
        let schemaAfterFirst = try Self.schema(path)

        // The second run (a restart, or `trail-companion migrate`) finds nothing to do.
        let second = try AppDatabase.openFile(at: path, migrationsFolder: Self.migrationsFolder)
        #expect(try Self.schema(path) == schemaAfterFirst)
        await #expect(try second.appliedMigrations() == Self.migrationNames)
        await #expect(try second.site(slug: "kept") != nil, "data is untouched")
        // And running the migrator itself once more, too.
        try DatabaseAccess.opening { try AppDatabase.migrator(folder: Self.migrationsFolder).migrate(second.writer) }
        #expect(try Self.schema(path) == schemaAfterFirst)
    }

    @Test func databaseFileUsesWALAndForeignKeys() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try AppDatabase.openFile(at: folder.appendingPathComponent("trail.sqlite").path, migrationsFolder: Self.migrationsFolder)
        let (journal, foreignKeys, synchronous) = try await database.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try Int.fetchOne(db, sql: "PRAGMA synchronous")
            )
        }
        #expect(journal == "wal")
        #expect(foreignKeys == 1)
        #expect(synchronous == 2, "FULL")
    }

    /// Files apply in name order, whatever order they were written in; a later file is applied on the next start, alone.
    @Test func migrationsApplyInNameOrderAndNewOnesApplyLater() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrations = folder.appendingPathComponent("migrations")
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: true)
        // Written newest first; 0101 only works after 0100.
        try "INSERT INTO note (text) VALUES ('after');".write(
            to: migrations.appendingPathComponent("0101_fill.sql"),
            atomically: true,
            encoding: .utf8
        )
        try "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL);".write(
            to: migrations.appendingPathComponent("0100_note.sql"),
            atomically: true,
            encoding: .utf8
        )
        try "-- not a migration".write(to: migrations.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        for name in try Self.migrationNames {
            try FileManager.default.copyItem(
                at: Self.migrationsFolder.appendingPathComponent("\(name).sql"),
                to: migrations.appendingPathComponent("\(name).sql")
            )
        }
        let path = folder.appendingPathComponent("trail.sqlite").path
        let database = try AppDatabase.openFile(at: path, migrationsFolder: migrations)
        #expect(try await database.appliedMigrations() == (try Self.migrationNames) + ["0100_note", "0101_fill"])

        try "INSERT INTO note (text) VALUES ('later');".write(
            to: migrations.appendingPathComponent("0102_more.sql"),
            atomically: true,
            encoding: .utf8
        )
        let reopened = try AppDatabase.openFile(at: path, migrationsFolder: migrations)
        await #expect(try reopened.appliedMigrations().suffix(3) == ["0100_note", "0101_fill", "0102_more"])
        let notes = try await reopened.read { try String.fetchAll($0, sql: "SELECT text FROM note ORDER BY id") }
        #expect(notes == ["after", "later"], "0101 ran once, 0102 once")
    }

    /// A migration that fails part-way leaves nothing behind: it runs in one transaction.
    @Test func failingMigrationIsRolledBack() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrations = folder.appendingPathComponent("migrations")
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.migrationsFolder.appendingPathComponent("0001_foundation.sql"),
            to: migrations.appendingPathComponent("0001_foundation.sql")
        )
        try "CREATE TABLE half (id INTEGER); INSERT INTO nowhere VALUES (1);".write(
            to: migrations.appendingPathComponent("0900_broken.sql"),
            atomically: true,
            encoding: .utf8
        )
        let path = folder.appendingPathComponent("trail.sqlite").path
        #expect(throws: (any Error).self) { try AppDatabase.openFile(at: path, migrationsFolder: migrations) }
        let queue = try DatabaseQueue(path: path)
        let (half, applied) = try await queue.read { db in
            (try db.tableExists("half"), try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
        }
        #expect(!half)
        #expect(!applied.contains("0900_broken"))
    }

    @Test func aFolderWithoutMigrationsIsAnErrorThatSaysWhere() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try AppDatabase.inMemory(migrationsFolder: folder)
            Issue.record("expected an error")
        } catch let error as AppDatabaseError {
            #expect("\(error)".contains(folder.path))
            #expect("\(error)".contains("--root"))
        }
    }
}
