import Foundation
import GRDB

/// Who is acting, for the audit log.
public struct AuditActor: Sendable {
    public var userId: Int64?
    public var ipAddress: String?
    public init(userId: Int64?, ipAddress: String?) {
        self.userId = userId
        self.ipAddress = ipAddress
    }
    /// Changes made from the command line or at start-up.
    public static let system = AuditActor(userId: nil, ipAddress: "cli")
}

public struct AuditEvent: Codable, Sendable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var occurredAt: Date
    public var userId: Int64?
    public var siteId: Int64?
    public var objectType: String
    public var objectId: String
    public var action: String
    public var detail: String
    public var ipAddress: String?

    public static let databaseTableName = "auditEvent"

    public enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let siteId = Column(CodingKeys.siteId)
        static let objectType = Column(CodingKeys.objectType)
        static let objectId = Column(CodingKeys.objectId)
        static let action = Column(CodingKeys.action)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

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
        var event = AuditEvent(
            id: nil,
            occurredAt: Date(),
            userId: actor.userId,
            siteId: siteId,
            objectType: objectType,
            objectId: objectId,
            action: action.rawValue,
            detail: String(detail.prefix(500)),
            ipAddress: actor.ipAddress
        )
        try event.insert(db)
    }

    /// An event about a tour, in the tour's site.
    static func record(_ db: Database, actor: AuditActor, tour: Tour, action: AuditAction, detail: String) throws {
        try record(db, actor: actor, siteId: tour.siteId, objectType: "tour", objectId: "\(tour.id!)", action: action, detail: detail)
    }
}

public struct AuditFilter: Sendable {
    public var userId: Int64?
    public var siteId: Int64?
    public var objectType: String?
    public var objectId: String?
    public var limit = 200
    public init(userId: Int64? = nil, siteId: Int64? = nil, objectType: String? = nil, objectId: String? = nil) {
        self.userId = userId
        self.siteId = siteId
        self.objectType = objectType
        self.objectId = objectId
    }
}
