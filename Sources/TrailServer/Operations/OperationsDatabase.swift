import Foundation
import GRDB

// What backups, restores and `doctor` read from a database file of their own (a snapshot, a backup's copy, the
// server's file opened read-only): building blocks that take the `Database` of that file.
extension AppDatabase {
    /// The newest migration applied to the file, nil for a file without migrations.
    static func latestMigration(_ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier DESC LIMIT 1")
    }

    /// Every migration applied, in order; none for a file that never saw one.
    static func appliedMigrationIdentifiers(_ db: Database) throws -> [String] {
        try db.tableExists("grdb_migrations") ? String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") : []
    }

    /// SQLite's own check of the file: `["ok"]` when sound.
    static func integrityCheck(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "PRAGMA integrity_check")
    }

    /// A restored database keeps no upload in progress: their bytes were never backed up.
    static func forgetUploadsInProgress(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM upload")
    }

    /// The data-folder files the database names, with the SHA-256 it records for each: assets (uploaded, clean or
    /// quarantined), released packages, tilesets; and the ids of the requests under review, whose staged files a
    /// backup takes too.
    static func namedDataFiles(_ db: Database) throws -> (files: [(path: String, sha256: String?)], underReview: [String]) {
        var files: [(path: String, sha256: String?)] = []
        for row in try Row.fetchAll(db, sql: "SELECT storedPath, sha256 FROM asset") {
            // A clean asset's path is its hash; a pending or quarantined one's bytes are still the uploaded ones.
            files.append((row["storedPath"], row["sha256"]))
        }
        for row in try Row.fetchAll(db, sql: "SELECT packageId, version, sha256 FROM packageVersion") {
            files.append(("packages/\(row["packageId"] as String)/\(row["version"] as Int).zip", row["sha256"]))
        }
        for row in try Row.fetchAll(db, sql: "SELECT storedPath, sha256 FROM tourTileset") {
            files.append((row["storedPath"], row["sha256"]))
        }
        let open = try String.fetchAll(db, SQLRequest(literal: "SELECT id FROM publishRequest WHERE state IN \(PublishState.reviewable)"))
        return (files, open)
    }

    /// How many versions were ever released (0 for a file without the table yet).
    static func releasedVersionCount(_ db: Database) throws -> Int {
        try db.tableExists("packageVersion") ? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM packageVersion") ?? 0 : 0
    }

    /// The tile settings an admin saved in the panel: nil when none were saved, `.some(nil)` when they name no tile
    /// server (which wins over `--tile-url` just the same).
    static func savedTileURLTemplate(_ db: Database) throws -> String?? {
        guard try db.tableExists("tileSettings"), let row = try Row.fetchOne(db, sql: "SELECT urlTemplate FROM tileSettings WHERE id = 1") else {
            return nil
        }
        return .some(row["urlTemplate"])
    }
}
