import Foundation
import GRDB
import Hummingbird

/// What a message is about. Notifications are the kinds a person can turn off; invitations are always sent.
enum MailKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case invitation, reviewRequested, approved, denied, released, alert

    /// The kinds listed on the account page, each with its own switch.
    static var notifications: [MailKind] { allCases.filter { $0 != .invitation } }

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
enum OutboxState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case queued, sent, failed
}

/// One message of the durable outbox.
struct OutboxMessage: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var recipient: String
    var subject: String
    var body: String
    var kind: MailKind
    var state: OutboxState
    var attempts: Int
    var nextAttemptAt: Date
    var lastError: String?
    var createdAt: Date
    var sentAt: Date?
    /// The tour a "review requested" message is about: repeats within a few minutes are merged into the first.
    var aboutTourId: Int64?
    /// Who caused the message (an invitation's inviter), for the per-sender limits.
    var sentBy: Int64?

    static let databaseTableName = "outbox"

    enum Columns {
        static let state = Column(CodingKeys.state)
        static let nextAttemptAt = Column(CodingKeys.nextAttemptAt)
        static let attempts = Column(CodingKeys.attempts)
        static let createdAt = Column(CodingKeys.createdAt)
    }

    /// A message as it is queued: due now, not yet tried.
    struct New: NewRecord {
        typealias Stored = OutboxMessage
        var recipient: String
        var subject: String
        var body: String
        var kind: MailKind
        var state: OutboxState = .queued
        var attempts = 0
        var nextAttemptAt: Date
        var createdAt: Date
        var aboutTourId: Int64?
        var sentBy: Int64?
    }
}

/// An invitation to join a site with a role; the link's token is kept only as its SHA-256.
struct Invitation: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var siteId: Int64
    var email: String
    var role: SiteRole
    var tokenHash: String
    var invitedBy: Int64?
    var createdAt: Date
    var expiresAt: Date
    var acceptedAt: Date?
    var acceptedBy: Int64?
    /// The link was shown to the inviter (no email carried it), so using it proves nothing about the address.
    var linkShown: Bool

    static let databaseTableName = "invitation"
    /// How long a link works.
    static let lifetime: TimeInterval = 7 * 86_400

    enum Columns {
        static let siteId = Column(CodingKeys.siteId)
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let createdAt = Column(CodingKeys.createdAt)
        static let acceptedAt = Column(CodingKeys.acceptedAt)
        static let expiresAt = Column(CodingKeys.expiresAt)
    }

    /// An invitation as it is sent: not yet accepted.
    struct New: NewRecord {
        typealias Stored = Invitation
        var siteId: Int64
        var email: String
        var role: SiteRole
        var tokenHash: String
        var invitedBy: Int64?
        var createdAt: Date
        var expiresAt: Date
        var linkShown: Bool
    }
}

/// Why an invitation link no longer works: a page says which, so the invitee knows to ask for a new one.
struct InvitationUnusable: AppError {
    enum Reason: Sendable { case unknown, used, expired }
    let reason: Reason
    var status: HTTPResponse.Status { .gone }
    var message: String {
        switch reason {
        case .unknown: "This invitation link is not valid. Check that you copied all of it, or ask your site manager for a new one."
        case .used: "This invitation link has already been used. Sign in instead, or ask your site manager for a new invitation."
        case .expired: "This invitation link has expired (links work for 7 days). Ask your site manager for a new one."
        }
    }
}
