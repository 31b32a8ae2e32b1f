import Foundation
import GRDB

/// Who is acting, for the audit log.
/// Who made a change: a person (signed in, or not yet, as in a sign-in attempt) from an address, or a part of the
/// server acting on its own. A part's name is written where a person's address goes, so the audit page and older
/// events read the same.
package enum AuditActor: Sendable, Equatable {
    case person(userId: Int64?, ipAddress: String?)
    case server(ServerPart)

    /// The parts of the server that change things on their own.
    package enum ServerPart: String, Sendable, CaseIterable {
        /// The command line, and changes made at start-up.
        case cli
        /// The package builder.
        case builder
        /// The malware scanner's results.
        case scanner
        /// Recovery at start: jobs and files left half-done by a stop.
        case recovery
        /// The media optimizer.
        case optimizer
        /// The demo content written at the first start.
        case demo
    }

    init(userId: Int64?, ipAddress: String?) { self = .person(userId: userId, ipAddress: ipAddress) }

    /// Changes made from the command line or at start-up.
    package static let system = AuditActor.server(.cli)

    var userId: Int64? {
        if case .person(let userId, _) = self { return userId }
        return nil
    }

    /// What the audit trail records as the address: a person's, or the part's name.
    var ipAddress: String? {
        switch self {
        case .person(_, let ipAddress): ipAddress
        case .server(let part): part.rawValue
        }
    }
}

struct AuditEvent: Codable, Sendable, UnixTimeRecord, FetchableRecord, TableRecord {
    var id: Int64
    var occurredAt: Date
    var userId: Int64?
    var siteId: Int64?
    var objectType: String
    var objectId: String
    var action: LoggedAuditAction
    var detail: String
    var ipAddress: String?

    static let databaseTableName = "auditEvent"

    enum Columns {
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
    /// The object's type comes from the action (`AuditAction.objectType`); `objectId` names the object.
    static func record(
        _ db: Database,
        actor: AuditActor,
        siteId: Int64? = nil,
        objectId: String,
        action: AuditAction,
        detail: String
    ) throws {
        try New(
            occurredAt: Date(),
            userId: actor.userId,
            siteId: siteId,
            objectType: action.objectType,
            objectId: objectId,
            action: action.rawValue,
            detail: String(detail.prefix(500)),
            ipAddress: actor.ipAddress
        ).insert(db)
    }

    /// An event about a tour (the tour's own actions, its order of waypoints, its tiles file), in the tour's site.
    static func record(_ db: Database, actor: AuditActor, tour: Tour, action: AuditAction, detail: String) throws {
        try record(db, actor: actor, siteId: tour.siteId, objectId: "\(tour.id)", action: action, detail: detail)
    }
}

struct AuditFilter: Sendable {
    var userId: Int64?
    var siteId: Int64?
    var objectType: String?
    var objectId: String?
    var limit = 200
    init(userId: Int64? = nil, siteId: Int64? = nil, objectType: String? = nil, objectId: String? = nil) {
        self.userId = userId
        self.siteId = siteId
        self.objectType = objectType
        self.objectId = objectId
    }
}
