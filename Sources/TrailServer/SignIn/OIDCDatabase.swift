import Foundation
import GRDB

// What single sign-on records.

/// What the provider's subject (`sub`) of a sign-on found against the one kept for the account.
enum SubjectLink: Sendable, Equatable {
    /// The account's first sign-on through this provider: the subject is kept from now on.
    case linked
    /// The same subject as before.
    case same
    /// The account was linked to another subject of the same provider: someone else holds the email now.
    case changed
    /// The subject is already linked to another account (the person's email changed at the provider).
    case linkedElsewhere
}

extension AppDatabase {
    /// A refused single sign-on, in the audit log (the reason, never a token).
    func recordSingleSignOnFailure(reason: String, ipAddress: String?) async throws {
        try await write { db in
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: nil, ipAddress: ipAddress),
                objectId: "-",
                action: .sessionSsoFailed,
                detail: reason
            )
        }
    }

    /// Checks the provider's subject of a sign-on against the one kept for `userId`, and keeps it at the first sign-on
    /// (audited), in one transaction. A subject kept under another issuer (the operator moved to another provider) is
    /// replaced: only the configured provider's tokens get this far.
    func linkSingleSignOnSubject(
        userId: Int64,
        issuer: String,
        subject: String,
        actor: AuditActor,
        provingAddressWith voidHash: String? = nil,
        now: Date = Date()
    ) async throws
        -> SubjectLink
    {
        try await write { db in
            let kept = try Row.fetchOne(db, sql: "SELECT issuer, subject FROM singleSignOnSubject WHERE userId = ?", arguments: [userId])
            if let kept, kept["issuer"] as String == issuer {
                guard kept["subject"] as String == subject else { return .changed }
                if let voidHash { try Self.proveAddress(db, userId: userId, voidHash: voidHash, actor: actor, now: now) }
                return .same
            }
            let holder = try Int64.fetchOne(
                db,
                sql: "SELECT userId FROM singleSignOnSubject WHERE issuer = ? AND subject = ?",
                arguments: [issuer, subject]
            )
            if let holder, holder != userId { return .linkedElsewhere }
            // The proof comes before the binding: from here on only the provider's person holds the account.
            if let voidHash { try Self.proveAddress(db, userId: userId, voidHash: voidHash, actor: actor, now: now) }
            try db.execute(
                sql: "INSERT OR REPLACE INTO singleSignOnSubject (userId, issuer, subject, linkedAt) VALUES (?, ?, ?, ?)",
                arguments: [userId, issuer, subject, now.dbTime]
            )
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .userSsoLinked,
                detail: kept == nil ? issuer : "\(issuer) (was \(kept!["issuer"] as String))"
            )
            return .linked
        }
    }

    /// The provider vouched for the address of an account made from a shown invitation link: whatever the link's holder
    /// set up is voided. The password becomes one nobody knows (`voidHash`, a bcrypt hash of a random secret), every
    /// session and pending sign-in ends and every API token is revoked; the account is proven from now on.
    static func proveAddress(_ db: Database, userId: Int64, voidHash: String, actor: AuditActor, now: Date) throws {
        try db.execute(
            sql: "UPDATE user SET passwordHash = ?, mustChangePassword = 0, addressProven = 1 WHERE id = ? AND addressProven = 0",
            arguments: [voidHash, userId]
        )
        guard db.changesCount == 1 else { return }
        // The link holder's authenticator and recovery codes go too: they would let them past a second step later.
        try db.execute(
            sql: "UPDATE user SET totpSecret = NULL, totpSecretHolder = NULL, totpEnrolledAt = NULL, totpLastStep = 0 WHERE id = ?",
            arguments: [userId]
        )
        try db.execute(sql: "DELETE FROM recoveryCode WHERE userId = ?", arguments: [userId])
        try SessionRecord.filter(SessionRecord.Columns.userId == userId).deleteAll(db)
        try db.execute(sql: "DELETE FROM pendingSignIn WHERE userId = ?", arguments: [userId])
        try db.execute(sql: "UPDATE apiToken SET revokedAt = ? WHERE userId = ? AND revokedAt IS NULL", arguments: [now.dbTime, userId])
        try AuditEvent.record(
            db,
            actor: actor,
            objectId: "\(userId)",
            action: .userAddressProven,
            detail: "by single sign-on: the password set through a shown invitation link is void, its two-step set-up, sessions and tokens ended"
        )
    }
}
