import Foundation
import GRDB
import Logging

/// Start-up clean-up after a crash or a long stop (DESIGN.md: finish or roll back, remove orphans).
public enum MediaRecovery {
    public struct Report: Sendable, Equatable {
        public var expiredUploads = 0
        public var orphanFiles = 0
        public var missingFiles = 0
    }

    @discardableResult
    public static func run(database: AppDatabase, paths: DataPaths, logger: Logger = Logger(label: "trail.recovery")) throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        let now = Date().dbTime
        // 1. tus uploads past their expiry: row and bytes go.
        let expired = try database.writer.write { db in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM upload WHERE expiresAt < ?", arguments: [now])
            try db.execute(sql: "DELETE FROM upload WHERE expiresAt < ?", arguments: [now])
            return ids
        }
        for id in expired { try? fileManager.removeItem(at: paths.upload(id)) }
        report.expiredUploads = expired.count

        // 2. Files in uploads/ and quarantine/ that no row names (a crash between writing and registering, or after a move).
        let referenced = try database.writer.read { db in
            Set(try String.fetchAll(db, sql: "SELECT storedPath FROM asset") + (try String.fetchAll(db, sql: "SELECT 'uploads/' || id FROM upload")))
        }
        for folder in ["uploads", "quarantine", "assets"] {
            let names = (try? fileManager.contentsOfDirectory(atPath: paths.absolute(folder).path)) ?? []
            for name in names where !referenced.contains("\(folder)/\(name)") {
                try? fileManager.removeItem(at: paths.absolute("\(folder)/\(name)"))
                report.orphanFiles += 1
            }
        }

        // 3. A row whose file is gone can never ship: mark it `error`, with the reason.
        let assets = try database.writer.read { try Asset.fetchAll($0) }
        for asset in assets where asset.scanStatus != .error && !fileManager.fileExists(atPath: paths.absolute(asset.storedPath).path) {
            try database.writer.write { db in
                try db.execute(sql: "UPDATE asset SET scanStatus = 'error', scanDetail = 'the stored file is missing' WHERE id = ?", arguments: [asset.id!])
                try db.execute(sql: "DELETE FROM scanJob WHERE assetId = ?", arguments: [asset.id!])
                try AuditEvent.record(db, actor: AuditActor(userId: nil, ipAddress: "recovery"), objectType: "asset", objectId: "\(asset.id!)",
                                      action: "asset.missing", detail: asset.storedPath)
            }
            report.missingFiles += 1
        }
        if report != Report() { logger.notice("recovery: \(report)") }
        return report
    }
}
