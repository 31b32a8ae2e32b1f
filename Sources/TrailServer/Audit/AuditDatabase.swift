import Foundation
import GRDB

// The audit log, as admins read it.

extension AppDatabase {
    func auditEvents(_ filter: AuditFilter) async throws -> [AuditEvent] {
        try await read { db in
            var request = AuditEvent.all()
            if let userId = filter.userId { request = request.filter(AuditEvent.Columns.userId == userId) }
            if let siteId = filter.siteId { request = request.filter(AuditEvent.Columns.siteId == siteId) }
            if let type = filter.objectType, !type.isEmpty { request = request.filter(AuditEvent.Columns.objectType == type) }
            if let objectId = filter.objectId, !objectId.isEmpty { request = request.filter(AuditEvent.Columns.objectId == objectId) }
            return try request.order(Column("id").desc).limit(filter.limit).fetchAll(db)
        }
    }
}
