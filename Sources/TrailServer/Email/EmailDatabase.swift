import Foundation
import GRDB

// The outbox, invitations and notification settings: the named reads and writes.
extension AppDatabase {
    // MARK: Outbox

    /// Queues a message inside the caller's transaction: it is sent only if that transaction commits.
    static func enqueueMail(
        _ db: Database,
        to recipient: String,
        subject: String,
        body: String,
        kind: MailKind,
        aboutTourId: Int64? = nil,
        sentBy: Int64? = nil,
        now: Date = Date()
    ) throws {
        try OutboxMessage.New(
            recipient: recipient,
            subject: subject,
            body: body,
            kind: kind,
            nextAttemptAt: now,
            createdAt: now,
            aboutTourId: aboutTourId,
            sentBy: sentBy
        ).insert(db)
    }

    /// Queued messages whose time has come, oldest first, except those in `excluding` (already tried this round).
    func dueMail(limit: Int, now: Date = Date(), excluding: Set<Int64> = []) async throws -> [OutboxMessage] {
        try await read { db in
            try OutboxMessage.filter(OutboxMessage.Columns.state == OutboxState.queued && OutboxMessage.Columns.nextAttemptAt <= now.dbTime)
                .filter(!excluding.contains(Column("id")))
                .order(OutboxMessage.Columns.nextAttemptAt, Column("id"))
                .limit(limit)
                .fetchAll(db)
        }
    }

    /// How many messages the SMTP server took since `date` (the daily ceiling counts these).
    func mailSent(since date: Date) async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE state = 'sent' AND sentAt > ?", arguments: [date.dbTime]) ?? 0
        }
    }

    /// When the next queued message is due (nil: nothing queued), so the service sleeps until then.
    func nextMailDue() async throws -> Date? {
        try await read { db in
            try Double.fetchOne(db, sql: "SELECT MIN(nextAttemptAt) FROM outbox WHERE state = 'queued'").map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// The server took the message. Its body goes: it may hold an invitation link, which must not outlive its use in
    /// the database and its backups (the subject and recipient stay, for "did it go out?").
    func markMailSent(id: Int64, now: Date = Date()) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET state = 'sent', sentAt = ?, attempts = attempts + 1, lastError = NULL, body = ''
                    WHERE id = ? AND state = 'queued'
                    """,
                arguments: [now.dbTime, id]
            )
        }
    }

    /// A failed attempt: retried at `retryAt`, or given up (`failed`) when `giveUp`.
    func markMailAttemptFailed(id: Int64, error: String, retryAt: Date, giveUp: Bool) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ?, state = ?,
                        -- Given up, an invitation's body (its link, a secret) is never needed again: it goes, as at a send.
                        body = CASE WHEN ? AND kind = 'invitation' THEN '' ELSE body END
                    WHERE id = ? AND state = 'queued'
                    """,
                arguments: [String(error.prefix(500)), retryAt.dbTime, (giveUp ? OutboxState.failed : .queued).rawValue, giveUp, id]
            )
        }
    }

    /// What administrators see of the outbox: how much waits, what keeps failing, and what was given up.
    struct OutboxSummary: Sendable {
        var queued = 0
        /// Queued messages whose last attempt failed.
        var retrying = 0
        var failed = 0
        var sent = 0
        /// The most recent messages with an error, newest first.
        var problems: [OutboxMessage] = []
    }

    func outboxSummary() async throws -> OutboxSummary {
        try await read { db in try Self.outboxSummary(db) }
    }

    /// The same on any connection (the doctor opens the database file itself).
    static func outboxSummary(_ db: Database) throws -> OutboxSummary {
        var summary = OutboxSummary()
        for row in try Row.fetchAll(
            db,
            sql: "SELECT state, lastError IS NOT NULL AS hasError, COUNT(*) AS n FROM outbox GROUP BY state, lastError IS NOT NULL"
        ) {
            let count: Int = row["n"]
            switch OutboxState(rawValue: row["state"]) {
            case .queued:
                summary.queued += count
                if row["hasError"] as Bool { summary.retrying += count }
            case .sent: summary.sent += count
            case .failed: summary.failed += count
            case nil: break
            }
        }
        summary.problems = try OutboxMessage.filter(sql: "lastError IS NOT NULL AND state != 'sent'")
            .order(Column("id").desc).limit(20).fetchAll(db)
        return summary
    }

    /// Every message to one address, oldest first (tests and support questions: "did the invitation go out?").
    func outbox(recipient: String) async throws -> [OutboxMessage] {
        try await read { db in
            try OutboxMessage.filter(sql: "recipient = ? COLLATE NOCASE", arguments: [recipient]).order(Column("id")).fetchAll(db)
        }
    }

    // MARK: Invitations

    /// How many invitations one person may send in an hour, and how many invitation emails one address may get in a
    /// day. A manager inviting a team stays far below both; a loop of invitations (to flood an address, or to send the
    /// agency's mail server's reputation somewhere) stops at them.
    static let invitationsPerInviterPerHour = 30
    /// "Review requested" messages about one tour to one reviewer within this long, when a withdrawal came between,
    /// are one message.
    static let reviewMailMergeWindow: TimeInterval = 10 * 60
    static let invitationMailsPerAddressPerDay = 3

    /// Creates an invitation and, when `mail` makes a message of its link, queues that message in the same transaction.
    /// Returns the link's token (shown once, never stored). The inviter must manage the site (re-checked here).
    /// An address with an open invitation to the site gets that invitation again, with the new role and a new link (the
    /// old link stops working): one open invitation per address and site.
    func createInvitation(
        siteId: Int64,
        email: String,
        role: SiteRole,
        inviter: AuthenticatedUser,
        actor: AuditActor,
        now: Date = Date(),
        mail: (@Sendable (_ token: String, _ site: Site) -> (subject: String, body: String))?
    ) async throws -> (invitation: Invitation, token: String) {
        let email = email.trimmed
        guard MailMessage.isAddress(email) else { throw ValidationErrors(["email": "Enter an email address like name@example.org."]) }
        // Mail relays that do not speak SMTPUTF8 refuse such an address, and a look-alike letter could pass for another
        // person's: agencies hand out plain ASCII addresses.
        guard email.unicodeScalars.allSatisfy(\.isASCII) else {
            throw ValidationErrors([
                "email": "Enter the address in plain letters (a–z, digits, dots and hyphens), as the agency's mail system writes it."
            ])
        }
        let token = SecretToken.make()
        return try await write { db in
            guard let site = try Site.fetchOne(db, id: siteId) else { throw NotFound() }
            try Self.access(db, user: inviter, siteId: siteId).require(.manage, to: "invite members")
            try Self.checkInvitationLimits(db, inviter: inviter, email: email, mailed: mail != nil, now: now)
            let open = try Invitation.filter(Invitation.Columns.siteId == siteId && Invitation.Columns.acceptedAt == nil)
                .filter(sql: "email = ? COLLATE NOCASE", arguments: [email]).fetchOne(db)
            let invitation: Invitation
            if var again = open {
                again.role = role
                again.tokenHash = SecretToken.hash(token)
                again.invitedBy = inviter.id
                again.createdAt = now
                again.expiresAt = now.addingTimeInterval(Invitation.lifetime)
                again.linkShown = mail == nil
                try again.update(db)
                invitation = again
            } else {
                invitation = try Invitation.New(
                    siteId: siteId,
                    email: email,
                    role: role,
                    tokenHash: SecretToken.hash(token),
                    invitedBy: inviter.id,
                    createdAt: now,
                    expiresAt: now.addingTimeInterval(Invitation.lifetime),
                    linkShown: mail == nil
                ).inserted(db)
            }
            if let mail {
                let (subject, body) = mail(token, site)
                try Self.enqueueMail(db, to: email, subject: subject, body: body, kind: .invitation, sentBy: inviter.id, now: now)
            }
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(invitation.id)",
                action: open == nil ? .invitationCreate : .invitationResend,
                detail: "\(email) as \(role.rawValue)\(mail == nil ? " (link shown, no email)" : "")"
            )
            return (invitation, token)
        }
    }

    /// The two invitation limits; 429 with when to try again.
    static func checkInvitationLimits(_ db: Database, inviter: AuthenticatedUser, email: String, mailed: Bool, now: Date) throws {
        let hourAgo = now.addingTimeInterval(-3600)
        let sentByInviter =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM auditEvent WHERE userId = ? AND objectType = 'invitation' AND action IN (?, ?) AND occurredAt > ?
                    """,
                arguments: [inviter.id, AuditAction.invitationCreate.rawValue, AuditAction.invitationResend.rawValue, hourAgo.dbTime]
            ) ?? 0
        if sentByInviter >= invitationsPerInviterPerHour {
            throw RateLimited(
                "You have sent \(invitationsPerInviterPerHour) invitations in the last hour, the most one person may. Try again within the hour.",
                retryAfterSeconds: 3600
            )
        }
        guard mailed else { return }
        let dayAgo = now.addingTimeInterval(-86_400)
        let toAddress =
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM outbox WHERE recipient = ? COLLATE NOCASE AND kind = ? AND createdAt > ?",
                arguments: [email, MailKind.invitation.rawValue, dayAgo.dbTime]
            ) ?? 0
        if toAddress >= invitationMailsPerAddressPerDay {
            throw RateLimited(
                "\(email) has been sent \(invitationMailsPerAddressPerDay) invitations in the last day, the most one address gets. Ask them to look for the last one (and in their spam folder), or try again tomorrow.",
                retryAfterSeconds: 86_400
            )
        }
    }

    /// The site's invitations not yet used, newest first (expired ones included, marked by their date).
    func openInvitations(siteId: Int64) async throws -> [Invitation] {
        try await read { db in
            try Invitation.filter(Invitation.Columns.siteId == siteId && Invitation.Columns.acceptedAt == nil)
                .order(Invitation.Columns.createdAt.desc).fetchAll(db)
        }
    }

    /// Withdraws an unused invitation (its link stops working).
    func revokeInvitation(id: Int64, siteId: Int64, actor: AuditActor) async throws {
        try await write { db in
            guard
                let invitation = try Invitation.filter(
                    Column("id") == id && Invitation.Columns.siteId == siteId && Invitation.Columns.acceptedAt == nil
                )
                .fetchOne(db)
            else { throw NotFound() }
            _ = try invitation.delete(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(id)",
                action: .invitationRevoke,
                detail: invitation.email
            )
        }
    }

    /// What an invitation link leads to: the invitation, its site, and the account its email already has (if any).
    /// Throws ``InvitationUnusable`` for an unknown, used or expired link.
    func usableInvitation(token: String, now: Date = Date()) async throws -> (invitation: Invitation, site: Site, account: User?) {
        try await read { db in try Self.usableInvitation(db, token: token, now: now) }
    }

    static func usableInvitation(_ db: Database, token: String, now: Date) throws -> (invitation: Invitation, site: Site, account: User?) {
        guard let invitation = try Invitation.filter(Invitation.Columns.tokenHash == SecretToken.hash(token)).fetchOne(db),
            let site = try Site.fetchOne(db, id: invitation.siteId)
        else { throw InvitationUnusable(reason: .unknown) }
        if invitation.acceptedAt != nil { throw InvitationUnusable(reason: .used) }
        if invitation.expiresAt <= now { throw InvitationUnusable(reason: .expired) }
        return (invitation, site, try User.filter(User.Columns.email == invitation.email).fetchOne(db))
    }

    /// Who accepts an invitation: a new account made from the link's form, or the signed-in owner of its email.
    enum Invitee: Sendable {
        case newAccount(displayName: String, passwordHash: String)
        case existing(userId: Int64)
    }

    /// Uses the link once: makes the account (when new), gives it the invited role on the site, and marks the
    /// invitation used, in one transaction whose `WHERE acceptedAt IS NULL` lets only one of two racing uses through.
    func acceptInvitation(token: String, as invitee: Invitee, actor: AuditActor, now: Date = Date()) async throws -> (User, Site) {
        try await write { db in
            let (invitation, site, account) = try Self.usableInvitation(db, token: token, now: now)
            let user: User
            switch invitee {
            case let .newAccount(displayName, hash):
                guard account == nil else { throw Conflict("An account with this email exists: sign in to accept the invitation.") }
                user = try Self.insertUser(
                    db,
                    email: invitation.email,
                    displayName: displayName,
                    hash: hash,
                    isAdmin: false,
                    mustChangePassword: false,
                    // A mailed link reached the address; a shown one reached whoever the inviter gave it to.
                    addressProven: !invitation.linkShown,
                    actor: actor
                )
            case let .existing(userId):
                guard let account, account.id == userId else {
                    throw Forbidden("This invitation is for \(invitation.email). Sign in with that account to accept it.")
                }
                guard !account.isDisabled else { throw Forbidden("This account is disabled.") }
                user = account
            }
            try db.execute(
                sql: "UPDATE invitation SET acceptedAt = ?, acceptedBy = ? WHERE id = ? AND acceptedAt IS NULL",
                arguments: [now.dbTime, user.id, invitation.id]
            )
            guard db.changesCount == 1 else { throw InvitationUnusable(reason: .used) }
            // The invited role, as `member add` would set it (an existing member's role changes to it).
            let role = invitation.role
            try Membership(userId: user.id, siteId: site.id, role: role).upsert(db)
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: user.id, ipAddress: actor.ipAddress),
                siteId: site.id,
                objectId: "\(invitation.id)",
                action: .invitationAccept,
                detail: "\(user.email) as \(role.rawValue)"
            )
            return (user, site)
        }
    }

    // MARK: Notifications

    /// The notifications the user turned off.
    func notificationOptOuts(userId: Int64) async throws -> Set<MailKind> {
        try await read { db in
            Set(
                try String.fetchAll(db, sql: "SELECT kind FROM notificationOptOut WHERE userId = ?", arguments: [userId])
                    .compactMap(MailKind.init(rawValue:))
            )
        }
    }

    /// Sets which notifications the user receives: every one not in `off`.
    func setNotificationOptOuts(userId: Int64, off: Set<MailKind>, actor: AuditActor) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM notificationOptOut WHERE userId = ?", arguments: [userId])
            for kind in MailKind.notifications where off.contains(kind) {
                try db.execute(sql: "INSERT INTO notificationOptOut (userId, kind) VALUES (?, ?)", arguments: [userId, kind.rawValue])
            }
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .notificationsSet,
                detail: off.isEmpty ? "all on" : "off: " + MailKind.notifications.filter(off.contains).map(\.rawValue).joined(separator: ", ")
            )
        }
    }

    /// What a notification about a publish request needs: the request, its tour's name, its site, and its author.
    struct RequestMailFacts: Sendable {
        let request: PublishRequest
        let tourName: String
        let site: Site
        let author: User?
    }

    /// Queues one notification about a request for each recipient who wants it (enabled account, not opted out, not the
    /// person who caused it), in one transaction. `recipients` picks them from the facts: the site's reviewers, or the
    /// request's author.
    func queueRequestNotification(
        kind: MailKind,
        requestId: String,
        causedBy: Int64?,
        audience: NotificationAudience,
        message: @Sendable (RequestMailFacts, User) -> (subject: String, body: String)
    ) async throws {
        try await write { db in
            guard let request = try PublishRequest.fetchOne(db, key: requestId), let site = try Site.fetchOne(db, id: request.siteId) else { return }
            let tourName =
                try request.tourId.flatMap { try String.fetchOne(db, sql: "SELECT name FROM tour WHERE id = ?", arguments: [$0]) }
                ?? request.snapshot.name
            let author = try request.authorId.flatMap { try User.fetchOne(db, id: $0) }
            let facts = RequestMailFacts(request: request, tourName: tourName, site: site, author: author)
            let candidates: [User]
            switch audience {
            case .reviewers:
                candidates = try User.fetchAll(
                    db,
                    sql: """
                        SELECT user.* FROM user JOIN membership ON membership.userId = user.id
                        WHERE membership.siteId = ? AND membership.role IN (\(SiteRole.reviewing.map { "'\($0.rawValue)'" }.joined(separator: ", ")))
                        ORDER BY user.email
                        """,
                    arguments: [site.id]
                )
            case .author:
                // Someone removed from the site hears no more of its requests, their own included.
                let stillMember = try author.map { try Self.role(db, userId: $0.id, siteId: site.id) != nil || $0.isAdmin } ?? false
                candidates = stillMember ? [author!] : []
            }
            // A submit-and-withdraw loop would mail every reviewer each time: a submission that follows a withdrawal of
            // the same tour within a few minutes is merged into the message its reviewers already have. A submission
            // after a decision or a release is news, and is always sent.
            var merge: TimeInterval?
            if kind == .reviewRequested, let tourId = request.tourId {
                let since = Date().addingTimeInterval(-Self.reviewMailMergeWindow).dbTime
                let withdrawn =
                    try Bool.fetchOne(
                        db,
                        sql: """
                            SELECT EXISTS (SELECT 1 FROM auditEvent JOIN publishRequest ON publishRequest.id = auditEvent.objectId
                            WHERE auditEvent.objectType = 'publishRequest' AND auditEvent.action = ? AND publishRequest.tourId = ?
                            AND auditEvent.occurredAt > ?)
                            """,
                        arguments: [AuditAction.publishWithdraw.rawValue, tourId, since]
                    ) ?? false
                if withdrawn { merge = Self.reviewMailMergeWindow }
            }
            try Self.queueNotification(
                db,
                kind: kind,
                to: candidates,
                causedBy: causedBy,
                aboutTourId: request.tourId,
                mergeWithin: merge
            ) { message(facts, $0) }
        }
    }

    /// The site's managers: who hears of its alerts.
    static func siteManagers(_ db: Database, siteId: Int64) throws -> [User] {
        try User.fetchAll(
            db,
            sql: """
                SELECT user.* FROM user JOIN membership ON membership.userId = user.id
                WHERE membership.siteId = ? AND membership.role = ?
                ORDER BY user.email
                """,
            arguments: [siteId, SiteRole.manager.rawValue]
        )
    }

    /// Queues `kind` for each of `candidates` who wants it: an enabled account, not opted out of `kind`, and not the
    /// person who caused it (nobody is told of what they did themselves). Runs inside the caller's transaction, so the
    /// mail goes out only if the event it tells about is committed.
    static func queueNotification(
        _ db: Database,
        kind: MailKind,
        to candidates: [User],
        causedBy: Int64?,
        aboutTourId: Int64? = nil,
        mergeWithin: TimeInterval? = nil,
        now: Date = Date(),
        message: (User) -> (subject: String, body: String)
    ) throws {
        for user in candidates where !user.isDisabled && user.id != causedBy {
            if let mergeWithin, let aboutTourId {
                let recent =
                    try Int.fetchOne(
                        db,
                        sql: "SELECT COUNT(*) FROM outbox WHERE recipient = ? COLLATE NOCASE AND kind = ? AND aboutTourId = ? AND createdAt > ?",
                        arguments: [user.email, kind.rawValue, aboutTourId, now.addingTimeInterval(-mergeWithin).dbTime]
                    ) ?? 0
                // The message already queued or sent within the window links the same tour's review page.
                if recent > 0 { continue }
            }
            let optedOut =
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM notificationOptOut WHERE userId = ? AND kind = ?",
                    arguments: [user.id, kind.rawValue]
                ) ?? 0
            guard optedOut == 0 else { continue }
            let (subject, body) = message(user)
            try Self.enqueueMail(db, to: user.email, subject: subject, body: body, kind: kind, aboutTourId: aboutTourId, sentBy: causedBy, now: now)
        }
    }
}

/// Who a notification about a request goes to.
enum NotificationAudience: Sendable {
    /// The site's reviewers and managers.
    case reviewers
    /// The author who submitted the request.
    case author
}
