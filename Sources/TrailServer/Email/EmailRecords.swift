import Foundation
import GRDB
import Hummingbird

/// What a message is about. Notifications are the kinds a person can turn off; invitations are always sent.
package enum MailKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case invitation, reviewRequested, approved, denied, released, alert

    /// The kinds listed on the account page, each with its own switch.
    package static var notifications: [MailKind] { allCases.filter { $0 != .invitation } }

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
package enum OutboxState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case queued, sent, failed
}

/// One message of the durable outbox.
package struct OutboxMessage: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var recipient: String
    package var subject: String
    package var body: String
    package var kind: MailKind
    package var state: OutboxState
    package var attempts: Int
    package var nextAttemptAt: Date
    package var lastError: String?
    package var createdAt: Date
    package var sentAt: Date?
    /// The tour a "review requested" message is about: repeats within a few minutes are merged into the first.
    package var aboutTourId: Int64?
    /// Who caused the message (an invitation's inviter), for the per-sender limits.
    package var sentBy: Int64?

    package static let databaseTableName = "outbox"

    package enum Columns {
        static let state = Column(CodingKeys.state)
        static let nextAttemptAt = Column(CodingKeys.nextAttemptAt)
        static let attempts = Column(CodingKeys.attempts)
        static let createdAt = Column(CodingKeys.createdAt)
    }

    /// A message as it is queued: due now, not yet tried.
    package struct New: NewRecord {
        package typealias Stored = OutboxMessage
        package var recipient: String
        package var subject: String
        package var body: String
        package var kind: MailKind
        package var state: OutboxState = .queued
        package var attempts = 0
        package var nextAttemptAt: Date
        package var createdAt: Date
        package var aboutTourId: Int64?
        package var sentBy: Int64?
    }
}

/// An invitation to join a site with a role; the link's token is kept only as its SHA-256.
package struct Invitation: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var siteId: Int64
    package var email: String
    package var role: SiteRole
    package var tokenHash: String
    package var invitedBy: Int64?
    package var createdAt: Date
    package var expiresAt: Date
    package var acceptedAt: Date?
    package var acceptedBy: Int64?
    /// The link was shown to the inviter (no email carried it), so using it proves nothing about the address.
    package var linkShown: Bool

    package static let databaseTableName = "invitation"
    /// How long a link works.
    package static let lifetime: TimeInterval = 7 * 86_400

    package enum Columns {
        static let siteId = Column(CodingKeys.siteId)
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let createdAt = Column(CodingKeys.createdAt)
        static let acceptedAt = Column(CodingKeys.acceptedAt)
        static let expiresAt = Column(CodingKeys.expiresAt)
    }

    /// An invitation as it is sent: not yet accepted.
    package struct New: NewRecord {
        package typealias Stored = Invitation
        package var siteId: Int64
        package var email: String
        package var role: SiteRole
        package var tokenHash: String
        package var invitedBy: Int64?
        package var createdAt: Date
        package var expiresAt: Date
        package var linkShown: Bool
    }
}

/// Why an invitation link no longer works: a page says which, so the invitee knows to ask for a new one.
package struct InvitationUnusable: AppError {
    package enum Reason: Sendable { case unknown, used, expired }
    package let reason: Reason
    package var status: HTTPResponse.Status { .gone }
    package var message: String {
        switch reason {
        case .unknown: "This invitation link is not valid. Check that you copied all of it, or ask your site manager for a new one."
        case .used: "This invitation link has already been used. Sign in instead, or ask your site manager for a new invitation."
        case .expired: "This invitation link has expired (links work for 7 days). Ask your site manager for a new one."
        }
    }
}
