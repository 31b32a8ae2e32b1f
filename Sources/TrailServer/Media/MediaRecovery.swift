import Foundation
import GRDB
import Logging

/// Start-up clean-up after a crash or a long stop: finish or roll back what was under way, remove orphans.
enum MediaRecovery {
    struct Report: Sendable, Equatable {
        var expiredUploads = 0
        var orphanFiles = 0
        var missingFiles = 0
        var rewoundUploads = 0
    }

    @discardableResult
    static func run(database: AppDatabase, paths: DataPaths, logger: Logger = Logger(label: "trail.recovery")) async throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        // 1. tus uploads past their expiry: row and bytes go.
        let expired = try await database.removeExpiredUploads()
        for id in expired { try? fileManager.removeItem(at: paths.upload(id)) }
        report.expiredUploads = expired.count

        // 1b. A tus PATCH is acknowledged once written, not flushed (only the last one is): after a power cut a file
        // can be shorter than the offset stored for it. The offset goes back to the bytes on disk (a missing file
        // starts again, empty), so the client's HEAD resumes from there instead of leaving a hole.
        let uploads = try await database.uploadOffsets()
        for upload in uploads {
            let path = paths.upload(upload.id).path
            if !fileManager.fileExists(atPath: path), !fileManager.createFile(atPath: path, contents: nil) {
                logger.error("recovery: cannot recreate the file of upload \(upload.id)")
            }
            let size = ((try? fileManager.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? 0
            if size < upload.offset {
                try await database.setUploadOffset(id: upload.id, offset: size)
                logger.warning(
                    "recovery: upload \(upload.id) had \(size) of its \(upload.offset) acknowledged bytes on disk; it resumes from \(size)"
                )
                report.rewoundUploads += 1
            }
        }

        // 2. Files in uploads/, quarantine/ and assets/ that no row names (an asset's original or an optimized copy) (a crash between writing and registering, or after a move).
        let referenced = try await database.referencedMediaPaths()
        for folder in ["uploads", "quarantine", "assets"] {
            let names = (try? fileManager.contentsOfDirectory(atPath: paths.absolute(folder).path)) ?? []
            for name in names where !referenced.contains("\(folder)/\(name)") {
                try? fileManager.removeItem(at: paths.absolute("\(folder)/\(name)"))
                report.orphanFiles += 1
            }
        }

        // 3. A row whose file is gone can never ship: mark it `error`, with the reason.
        let assets = try await database.allAssets()
        for asset in assets where asset.scanStatus != .error && !fileManager.fileExists(atPath: paths.absolute(asset.storedPath).path) {
            try await database.markAssetMissing(asset)
            report.missingFiles += 1
        }
        if report != Report() { logger.notice("recovery: \(report)") }
        return report
    }
}
