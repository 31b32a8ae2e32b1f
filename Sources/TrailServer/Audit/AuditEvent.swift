import Foundation
import GRDB

/// Who is acting, for the audit log.
package struct AuditActor: Sendable {
    package var userId: Int64?
    package var ipAddress: String?
    package init(userId: Int64?, ipAddress: String?) {
        self.userId = userId
        self.ipAddress = ipAddress
    }
    /// Changes made from the command line or at start-up.
    package static let system = AuditActor(userId: nil, ipAddress: "cli")
}

package struct AuditEvent: Codable, Sendable, UnixTimeRecord, FetchableRecord, TableRecord {
    package var id: Int64
    package var occurredAt: Date
    package var userId: Int64?
    package var siteId: Int64?
    package var objectType: String
    package var objectId: String
    package var action: String
    package var detail: String
    package var ipAddress: String?

    package static let databaseTableName = "auditEvent"

    package enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let siteId = Column(CodingKeys.siteId)
        static let objectType = Column(CodingKeys.objectType)
        static let objectId = Column(CodingKeys.objectId)
        static let action = Column(CodingKeys.action)
    }

    /// An event as it is written; the log is append-only, so this is the only way a row gets there.
    struct New: NewRecord {
        typealias Stored = AuditEvent
        var occurredAt: Date
        var userId: Int64?
        var siteId: Int64?
        var objectType: String
        var objectId: String
        var action: String
        var detail: String
        var ipAddress: String?
    }

    /// Called inside the transaction that makes the change, so the event and the change land together or not at all.
    static func record(
        _ db: Database,
        actor: AuditActor,
        siteId: Int64? = nil,
        objectType: String,
        objectId: String,
        action: AuditAction,
        detail: String
    ) throws {
        try New(
            occurredAt: Date(),
            userId: actor.userId,
            siteId: siteId,
            objectType: objectType,
            objectId: objectId,
            action: action.rawValue,
            detail: String(detail.prefix(500)),
            ipAddress: actor.ipAddress
        ).insert(db)
    }

    /// An event about a tour, in the tour's site.
    static func record(_ db: Database, actor: AuditActor, tour: Tour, action: AuditAction, detail: String) throws {
        try record(db, actor: actor, siteId: tour.siteId, objectType: "tour", objectId: "\(tour.id)", action: action, detail: detail)
    }
}

package struct AuditFilter: Sendable {
    package var userId: Int64?
    package var siteId: Int64?
    package var objectType: String?
    package var objectId: String?
    package var limit = 200
    package init(userId: Int64? = nil, siteId: Int64? = nil, objectType: String? = nil, objectId: String? = nil) {
        self.userId = userId
        self.siteId = siteId
        self.objectType = objectType
        self.objectId = objectId
    }
}
