import Foundation
import GRDB
import Hummingbird

/// What a message is about. Notifications are the kinds a person can turn off; invitations are always sent.
public enum MailKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case invitation, reviewRequested, approved, denied, released, alert

    /// The kinds listed on the account page, each with its own switch.
    public static var notifications: [MailKind] { allCases.filter { $0 != .invitation } }

    /// The account page's words for it.
    var settingLabel: String {
        switch self {
        case .invitation: "Invitations"
        case .reviewRequested: "A tour of my site waits for my review"
        case .approved: "A reviewer approved my tour"
        case .denied: "A reviewer denied my tour (with the comment)"
        case .released: "My tour was released to visitors"
        case .alert: "Someone posted an alert or closure for a site I manage"
        }
    }
}

/// Where a message is: waiting (first try or a retry), taken by the SMTP server, or given up after many attempts.
public enum OutboxState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case queued, sent, failed
}

/// One message of the durable outbox.
public struct OutboxMessage: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var recipient: String
    public var subject: String
    public var body: String
    public var kind: MailKind
    public var state: OutboxState
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var sentAt: Date?

    public static let databaseTableName = "outbox"

    public enum Columns {
        static let state = Column(CodingKeys.state)
        static let nextAttemptAt = Column(CodingKeys.nextAttemptAt)
        static let attempts = Column(CodingKeys.attempts)
        static let createdAt = Column(CodingKeys.createdAt)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// An invitation to join a site with a role; the link's token is kept only as its SHA-256.
public struct Invitation: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var siteId: Int64
    public var email: String
    public var role: SiteRole
    public var tokenHash: String
    public var invitedBy: Int64?
    public var createdAt: Date
    public var expiresAt: Date
    public var acceptedAt: Date?
    public var acceptedBy: Int64?

    public static let databaseTableName = "invitation"
    /// How long a link works.
    public static let lifetime: TimeInterval = 7 * 86_400

    public enum Columns {
        static let siteId = Column(CodingKeys.siteId)
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let createdAt = Column(CodingKeys.createdAt)
        static let acceptedAt = Column(CodingKeys.acceptedAt)
        static let expiresAt = Column(CodingKeys.expiresAt)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// Why an invitation link no longer works: a page says which, so the invitee knows to ask for a new one.
public struct InvitationUnusable: AppError {
    public enum Reason: Sendable { case unknown, used, expired }
    public let reason: Reason
    public var status: HTTPResponse.Status { .gone }
    public var message: String {
        switch reason {
        case .unknown: "This invitation link is not valid. Check that you copied all of it, or ask your site manager for a new one."
        case .used: "This invitation link has already been used. Sign in instead, or ask your site manager for a new invitation."
        case .expired: "This invitation link has expired (links work for 7 days). Ask your site manager for a new one."
        }
    }
}
