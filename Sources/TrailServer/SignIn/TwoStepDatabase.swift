import Foundation
import GRDB

/// A half-signed-in browser (`pendingSignIn`): the password was right, the second step is still to come.
struct PendingSignIn: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var tokenHash: String
    var userId: Int64
    var stage: PendingStage
    /// Where the browser goes once signed in (already checked by `SignInResponder.safeNext`).
    var next: String
    var createdAt: Date
    var ipAddress: String?
    /// The SHA-256 of the password hash this sign-in passed: a changed, reset or voided password ends it.
    var passwordDigest: String?

    static let databaseTableName = "pendingSignIn"
}

/// A user's two-step sign-in, as the pages need it (never the secret of an enrolled account).
struct TwoStepStatus: Sendable, Equatable {
    var enrolled: Bool
    /// Enrolment started (a secret was shown) but no code confirmed it yet.
    var enrolling: Bool
    var recoveryCodesLeft: Int
    /// An administrator reset the second step and the user has not been told yet.
    var resetNotice: Bool
}

/// What a second-step code (or a recovery code) turned out to be.
enum SecondStepCheck: Sendable, Equatable {
    case acceptedCode
    case acceptedRecoveryCode(left: Int)
    /// Right for a time step already used: each code works once.
    case reused
    case wrong
    /// Not looked at: too many wrong inputs for this account (see `SecondStepLimits`). `retryAfter` is nil once the
    /// consecutive limit is reached: only an administrator's reset opens the second step again.
    case locked(retryAfter: TimeInterval?)
}

/// How many wrong second-step inputs an account takes, from all addresses together. The password is already known to
/// whoever sends them, so the account (not the address) is what is guarded: a few in a short window make the next wait
/// until the window passes, and a hundred in a row (NIST SP 800-63B §5.2.2's ceiling) lock the second step until an
/// administrator resets the password or the two-step sign-in. A right input clears the count.
enum SecondStepLimits {
    static let failures = 5
    static let window: TimeInterval = 15 * 60
    static let consecutive = 100
}

/// The wrong second-step inputs since the account's last right one, as its owner is told at their next sign-in.
struct SecondStepFailures: Sendable, Equatable {
    var count: Int
    var since: Date
}

/// Intention-named writes and reads for two-step sign-in; each write in one transaction with its audit event. Secrets
/// and codes never go into an audit detail or a log line.
extension AppDatabase {
    func twoStepStatus(userId: Int64) async throws -> TwoStepStatus {
        try await read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT totpSecret, totpEnrolledAt, twoStepResetNotice FROM user WHERE id = ?",
                    arguments: [userId]
                )
            else { throw NotFound() }
            let left = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recoveryCode WHERE userId = ? AND usedAt IS NULL", arguments: [userId]) ?? 0
            let enrolled = (row["totpEnrolledAt"] as Double?) != nil
            return TwoStepStatus(
                enrolled: enrolled,
                enrolling: !enrolled && (row["totpSecret"] as String?) != nil,
                recoveryCodesLeft: left,
                resetNotice: row["twoStepResetNotice"] as Bool
            )
        }
    }

    /// The users who have two-step sign-in set up, for the admin's user list.
    func twoStepEnrolledUserIds() async throws -> Set<Int64> {
        try await read { Set(try Int64.fetchAll($0, sql: "SELECT id FROM user WHERE totpEnrolledAt IS NOT NULL")) }
    }

    /// Whether `--require-two-step` asks this user to be enrolled: admins, site managers (and admins), or everyone.
    func twoStepRequired(for user: User, requirement: TwoStepRequirement) async throws -> Bool {
        switch requirement {
        case .none: return false
        case .all: return true
        case .admins: return user.isAdmin
        case .managers:
            if user.isAdmin { return true }
            return try await read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM membership WHERE userId = ? AND role = 'manager'", arguments: [user.id]) ?? 0 > 0
            }
        }
    }

    /// A new secret to show for enrolment, held by `holder` (the SHA-256 of the half-finished sign-in's or the session's
    /// token that shows it). Never the one an earlier attempt showed: whoever saw that one (someone who had the password
    /// before the owner enrolled) must not keep a working generator, so it stops confirming anything. Refused once
    /// enrolled: only an administrator's reset starts over.
    func beginTwoStepEnrolment(userId: Int64, holder: String? = nil, actor: AuditActor) async throws -> String {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT email, totpEnrolledAt FROM user WHERE id = ?", arguments: [userId])
            else { throw NotFound() }
            guard (row["totpEnrolledAt"] as Double?) == nil else { throw Conflict("Two-step sign-in is already set up for this account.") }
            let secret = TwoStepCodes.makeSecret()
            try db.execute(
                sql: "UPDATE user SET totpSecret = ?, totpSecretHolder = ?, totpLastStep = 0 WHERE id = ?",
                arguments: [secret, holder, userId]
            )
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .twoStepEnrolStart,
                detail: row["email"] as String
            )
            return secret
        }
    }

    /// The secret of the enrolment `holder` started (to draw its QR code again), nil when it has none in progress.
    func pendingTwoStepSecret(userId: Int64, holder: String? = nil) async throws -> String? {
        try await read { db in
            try String.fetchOne(
                db,
                sql: "SELECT totpSecret FROM user WHERE id = ? AND totpEnrolledAt IS NULL AND totpSecretHolder IS ?",
                arguments: [userId, holder]
            )
        }
    }

    /// The first right code confirms enrolment: the step is marked used, ten recovery codes are made (returned once,
    /// stored hashed). Nil when the code is not right for the secret shown.
    func confirmTwoStepEnrolment(
        userId: Int64,
        holder: String? = nil,
        code: String,
        at date: Date,
        actor: AuditActor
    ) async throws -> [String]? {
        let recoveryCodes = (0..<RecoveryCodes.count).map { _ in RecoveryCodes.make() }
        return try await write { db -> [String]? in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT email, totpSecret, totpSecretHolder, totpEnrolledAt FROM user WHERE id = ?",
                    arguments: [userId]
                )
            else { throw NotFound() }
            guard (row["totpEnrolledAt"] as Double?) == nil else { throw Conflict("Two-step sign-in is already set up for this account.") }
            // Only the key this step showed: a later attempt's new key replaced an earlier one.
            guard let secret = row["totpSecret"] as String?, (row["totpSecretHolder"] as String?) == holder else {
                throw Conflict("Start the set-up again: no code was shown for this account.")
            }
            guard let code = TwoStepCodes.normalizedCode(code), let step = TwoStepCodes.matchingSteps(secret: secret, code: code, at: date).first
            else {
                try AuditEvent.record(
                    db,
                    actor: actor,
                    objectId: "\(userId)",
                    action: .twoStepEnrolFailed,
                    detail: row["email"] as String
                )
                return nil
            }
            try db.execute(
                sql: "UPDATE user SET totpEnrolledAt = ?, totpLastStep = ?, totpSecretHolder = NULL, twoStepResetNotice = 0 WHERE id = ?",
                arguments: [date.dbTime, step, userId]
            )
            try db.execute(sql: "DELETE FROM recoveryCode WHERE userId = ?", arguments: [userId])
            for code in recoveryCodes {
                try db.execute(sql: "INSERT INTO recoveryCode (userId, codeHash) VALUES (?, ?)", arguments: [userId, RecoveryCodes.hash(code)])
            }
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .twoStepEnrol,
                detail: row["email"] as String
            )
            return recoveryCodes
        }
    }

    /// Checks a second-step input: a six-digit code within ±1 step of `date` and newer than the last one accepted, or
    /// an unused recovery code (spent by this call). Checked and marked in one transaction, so two browsers sending the
    /// same code at once cannot both pass. Failures and recovery-code use are audited.
    func checkSecondStep(userId: Int64, input: String, at date: Date, actor: AuditActor) async throws -> SecondStepCheck {
        try await write { db -> SecondStepCheck in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT email, totpSecret, totpEnrolledAt, totpLastStep FROM user WHERE id = ?",
                    arguments: [userId]
                )
            else { throw NotFound() }
            let email: String = row["email"]
            // The account's limit, checked and counted in this transaction: wrong codes sent at once from many
            // addresses are counted one after the other, and none is looked at once the limit is reached.
            let now = date.dbTime
            let consecutive =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM secondStepFailure WHERE userId = ?", arguments: [userId]) ?? 0
            if consecutive >= SecondStepLimits.consecutive { return .locked(retryAfter: nil) }
            if let recent = try Row.fetchOne(
                db,
                sql: "SELECT COUNT(*), MIN(failedAt) FROM secondStepFailure WHERE userId = ? AND failedAt > ?",
                arguments: [userId, now - SecondStepLimits.window]
            ), recent[0] as Int >= SecondStepLimits.failures {
                return .locked(retryAfter: max(1, (recent[1] as Double) + SecondStepLimits.window - now))
            }
            func failure(_ why: String) throws {
                try db.execute(
                    sql: "INSERT INTO secondStepFailure (userId, failedAt, ipAddress) VALUES (?, ?, ?)",
                    arguments: [userId, now, actor.ipAddress]
                )
                try AuditEvent.record(
                    db,
                    actor: actor,
                    objectId: "\(userId)",
                    action: .twoStepFailed,
                    detail: "\(email): \(why)"
                )
            }
            guard (row["totpEnrolledAt"] as Double?) != nil, let secret = row["totpSecret"] as String? else {
                try failure("not enrolled")
                return .wrong
            }
            if let code = TwoStepCodes.normalizedCode(input) {
                let steps = TwoStepCodes.matchingSteps(secret: secret, code: code, at: date)
                let lastStep: Int64 = row["totpLastStep"]
                if let step = steps.first(where: { $0 > lastStep }) {
                    try db.execute(sql: "UPDATE user SET totpLastStep = ? WHERE id = ?", arguments: [step, userId])
                    return .acceptedCode
                }
                try failure(steps.isEmpty ? "wrong code" : "code already used")
                return steps.isEmpty ? .wrong : .reused
            }
            if let hash = RecoveryCodes.hash(input) {
                try db.execute(
                    sql: "UPDATE recoveryCode SET usedAt = ? WHERE userId = ? AND codeHash = ? AND usedAt IS NULL",
                    arguments: [date.dbTime, userId, hash]
                )
                if db.changesCount == 1 {
                    let left =
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recoveryCode WHERE userId = ? AND usedAt IS NULL", arguments: [userId]) ?? 0
                    try AuditEvent.record(
                        db,
                        actor: actor,
                        objectId: "\(userId)",
                        action: .twoStepRecoveryCode,
                        detail: "\(email): \(left) left"
                    )
                    return .acceptedRecoveryCode(left: left)
                }
                try failure("wrong or used recovery code")
                return .wrong
            }
            try failure("not a code")
            return .wrong
        }
    }

    /// The wrong inputs since the last right one, cleared as they are read: the owner is told once, at the sign-in that
    /// follows them. Nil when there were none.
    func takeSecondStepFailures(userId: Int64) async throws -> SecondStepFailures? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MIN(failedAt) FROM secondStepFailure WHERE userId = ?", arguments: [userId]),
                row[0] as Int > 0
            else { return nil }
            try db.execute(sql: "DELETE FROM secondStepFailure WHERE userId = ?", arguments: [userId])
            return SecondStepFailures(count: row[0], since: Date(timeIntervalSince1970: row[1]))
        }
    }

    /// An administrator's reset (a lost phone, used-up recovery codes): the secret and recovery codes go, the user's
    /// sessions and half-finished sign-ins end, and the panel tells them at their next sign-in. With a requirement in
    /// force, they enrol again then.
    @discardableResult
    package func resetTwoStep(userId: Int64, actor: AuditActor) async throws -> User {
        try await write { db in
            guard let user = try User.fetchOne(db, id: userId) else { throw NotFound() }
            try db.execute(
                sql: """
                    UPDATE user SET totpSecret = NULL, totpSecretHolder = NULL, totpEnrolledAt = NULL, totpLastStep = 0,
                        twoStepResetNotice = 1 WHERE id = ?
                    """,
                arguments: [userId]
            )
            try db.execute(sql: "DELETE FROM recoveryCode WHERE userId = ?", arguments: [userId])
            try db.execute(sql: "DELETE FROM secondStepFailure WHERE userId = ?", arguments: [userId])
            try SessionRecord.filter(SessionRecord.Columns.userId == userId).deleteAll(db)
            try db.execute(sql: "DELETE FROM pendingSignIn WHERE userId = ?", arguments: [userId])
            // The agency link goes too: the remedy for a person whose provider account was made anew (a new `sub`).
            try db.execute(sql: "DELETE FROM singleSignOnSubject WHERE userId = ?", arguments: [userId])
            try AuditEvent.record(db, actor: actor, objectId: "\(userId)", action: .userResetTwoStep, detail: user.email)
            return user
        }
    }

    /// Reads and clears the reset notice: the panel says it once.
    func takeTwoStepResetNotice(userId: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE user SET twoStepResetNotice = 0 WHERE id = ? AND twoStepResetNotice = 1", arguments: [userId])
            return db.changesCount == 1
        }
    }

    // MARK: Half-signed-in browsers

    /// After a right password (`passwordHash`, the hash it was checked against): a new token for the half-signed-in
    /// browser (never the session's), audited.
    func startPendingSignIn(
        userId: Int64,
        passwordHash: String,
        stage: PendingStage,
        next: String,
        ipAddress: String?
    ) async throws -> String {
        let token = SecretToken.make()
        let now = Date()
        try await write { db in
            // Abandoned half-sign-ins (a closed tab) go here, a day on: no job needed for a table this small.
            try db.execute(sql: "DELETE FROM pendingSignIn WHERE createdAt < ?", arguments: [now.dbTime - 86_400])
            try PendingSignIn(
                tokenHash: SecretToken.hash(token),
                userId: userId,
                stage: stage,
                next: next,
                createdAt: now,
                ipAddress: ipAddress,
                passwordDigest: Self.passwordDigest(passwordHash)
            ).insert(db)
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: userId, ipAddress: ipAddress),
                objectId: "\(userId)",
                action: .sessionPassword,
                detail: stage == .code ? "second step asked" : "enrolment required"
            )
        }
        return token
    }

    /// The half-signed-in browser of this token and its user, if younger than `lifetime`, the user is not disabled and
    /// the password it passed is still theirs (not changed, reset or voided since); any other is deleted.
    func pendingSignIn(token: String, lifetime: TimeInterval) async throws -> (PendingSignIn, User)? {
        let hash = SecretToken.hash(token)
        let found = try await read { db -> (PendingSignIn, User?)? in
            guard let pending = try PendingSignIn.fetchOne(db, key: hash) else { return nil }
            return (pending, try User.fetchOne(db, id: pending.userId))
        }
        guard let (pending, user) = found else { return nil }
        guard Date().timeIntervalSince(pending.createdAt) <= lifetime, let user, !user.isDisabled,
            let digest = pending.passwordDigest, SecretToken.constantTimeEquals(digest, Self.passwordDigest(user.passwordHash))
        else {
            try await endPendingSignIn(tokenHash: hash)
            return nil
        }
        return (pending, user)
    }

    /// What a half-finished sign-in keeps of the password hash it passed: enough to see it changed, no copy of the hash.
    static func passwordDigest(_ passwordHash: String) -> String { SecretToken.hash(passwordHash) }

    func endPendingSignIn(tokenHash: String) async throws {
        _ = try await write { try PendingSignIn.deleteOne($0, key: tokenHash) }
    }
}
