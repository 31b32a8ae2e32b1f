import Foundation
import GRDB

// The scan queue (table `scanJob`) and the verdicts it records.
extension AppDatabase {
    func queuedScanJobs(limit: Int) async throws -> [Asset] {
        try await read { db in
            try Asset.fetchAll(
                db,
                sql: """
                    SELECT asset.* FROM scanJob JOIN asset ON asset.id = scanJob.assetId ORDER BY scanJob.queuedAt LIMIT ?
                    """,
                arguments: [limit]
            )
        }
    }

    func scanJobCount() async throws -> Int {
        try await read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM scanJob") ?? 0 }
    }

    /// Records a verdict and the file's new place; the job ends. Returns the previous path if nothing references it any more.
    /// `optimize`: the settings of media optimization when it is on; a clean video, audio file or image then gets its
    /// copy queued in the same transaction, so a crash cannot leave a clean file that never gets one.
    func recordScan(assetId: Int64, status: ScanStatus, detail: String, storedPath: String, optimize: String? = nil) async throws -> String? {
        try await write { db in
            guard var asset = try Asset.fetchOne(db, id: assetId) else { return nil }
            let previous = asset.storedPath
            asset.scanStatus = status
            asset.scanDetail = String(detail.prefix(500))
            asset.storedPath = storedPath
            asset.scannedAt = Date()
            try asset.update(db)
            try db.execute(sql: "DELETE FROM scanJob WHERE assetId = ?", arguments: [assetId])
            // A rescan of the same bytes keeps the copy it has.
            if let optimize, status == .clean,
                try OptimizedCopy.fetchOne(db, key: assetId).map({ $0.sourceSha256 != asset.sha256 || $0.settings != optimize }) ?? true
            {
                try Self.queueOptimization(db, asset: asset, settings: optimize)
            }
            let siteId = try Int64.fetchOne(
                db,
                sql: """
                    SELECT tour.siteId FROM waypoint JOIN tour ON tour.id = waypoint.tourId WHERE waypoint.id = ?
                    """,
                arguments: [asset.waypointId]
            )
            try AuditEvent.record(
                db,
                actor: .server(.scanner),
                siteId: siteId,
                objectId: "\(assetId)",
                action: .scan(status),
                detail: detail.isEmpty ? asset.originalName : detail
            )
            guard previous != storedPath else { return nil }
            return try Self.isReferenced(db, storedPath: previous) ? nil : previous
        }
    }

    func queueRescan(assetId: Int64, actor: AuditActor) async throws {
        try await write { db in
            guard try Asset.exists(db, id: assetId) else { throw NotFound() }
            try db.execute(sql: "INSERT OR IGNORE INTO scanJob (assetId, queuedAt) VALUES (?, ?)", arguments: [assetId, Date().dbTime])
            try AuditEvent.record(db, actor: actor, objectId: "\(assetId)", action: .assetRescan, detail: "")
        }
    }
}
