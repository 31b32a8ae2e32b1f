import Foundation
import GRDB

// Open tus uploads (table `upload`).
extension AppDatabase {
    /// Why a tus upload cannot be opened.
    enum UploadRefusal: Error, Equatable {
        case overQuota(quota: Int64)
        case tooManyOpen(limit: Int)
    }

    /// Opens a tus upload: the quota check (with every open upload's reservation) and the per-user cap on unfinished
    /// uploads happen in the same write transaction as the insert, so concurrent creations cannot both slip through.
    func createUpload(_ upload: UploadRecord, siteId: Int64, quota: Int64?, maxOpenPerUser: Int) async throws {
        try await write { db in
            _ = try Self.editableTour(db, id: upload.tourId)
            let open = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE userId = ?", arguments: [upload.userId]) ?? 0
            if open >= maxOpenPerUser { throw UploadRefusal.tooManyOpen(limit: maxOpenPerUser) }
            if let quota {
                let used = try Self.usedOrReservedBytes(db, siteId: siteId, excludingUpload: nil)
                if used + upload.length > quota { throw UploadRefusal.overQuota(quota: quota) }
            }
            try upload.insert(db)
        }
    }

    /// Unfinished uploads past their expiry: their rows, returned so the caller removes their files.
    func removeExpiredUploads(now: Date = Date()) async throws -> [String] {
        try await write { db in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM upload WHERE expiresAt < ?", arguments: [now.dbTime])
            try db.execute(sql: "DELETE FROM upload WHERE expiresAt < ?", arguments: [now.dbTime])
            return ids
        }
    }

    func upload(id: String) async throws -> UploadRecord? { try await read { try UploadRecord.fetchOne($0, key: id) } }

    func setUploadOffset(id: String, offset: Int64) async throws {
        try await write { try $0.execute(sql: "UPDATE upload SET offset = ? WHERE id = ?", arguments: [offset, id]) }
    }

    func deleteUpload(id: String) async throws {
        try await write { _ = try UploadRecord.deleteOne($0, key: id) }
    }
}
