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
                objectType: "session",
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
        now: Date = Date()
    ) async throws
        -> SubjectLink
    {
        try await write { db in
            let kept = try Row.fetchOne(db, sql: "SELECT issuer, subject FROM singleSignOnSubject WHERE userId = ?", arguments: [userId])
            if let kept, kept["issuer"] as String == issuer {
                return kept["subject"] as String == subject ? .same : .changed
            }
            let holder = try Int64.fetchOne(
                db,
                sql: "SELECT userId FROM singleSignOnSubject WHERE issuer = ? AND subject = ?",
                arguments: [issuer, subject]
            )
            if let holder, holder != userId { return .linkedElsewhere }
            try db.execute(
                sql: "INSERT OR REPLACE INTO singleSignOnSubject (userId, issuer, subject, linkedAt) VALUES (?, ?, ?, ?)",
                arguments: [userId, issuer, subject, now.dbTime]
            )
            try AuditEvent.record(
                db,
                actor: actor,
                objectType: "user",
                objectId: "\(userId)",
                action: .userSsoLinked,
                detail: kept == nil ? issuer : "\(issuer) (was \(kept!["issuer"] as String))"
            )
            return .linked
        }
    }
}
