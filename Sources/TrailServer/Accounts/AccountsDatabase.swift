import Foundation
import GRDB
import HummingbirdBcrypt
import NIOPosix

/// Intention-named writes and reads for users (sessions, sign-in attempts and API tokens: `SignIn/SignInDatabase.swift`).
extension AppDatabase {
    // MARK: Users

    /// Bcrypt (slow on purpose) runs on the blocking pool and the write on GRDB's queue, so an event loop or a
    /// cooperative thread never waits for either.
    @discardableResult
    package func createUser(
        email: String,
        displayName: String,
        password: String,
        isAdmin: Bool,
        mustChangePassword: Bool = false,
        bcryptCost: UInt8,
        actor: AuditActor
    ) async throws -> User {
        let (email, displayName) = try Self.validatedNewUser(email: email, displayName: displayName, password: password)
        let hash = try await BlockingWork.short { Bcrypt.hash(password, cost: bcryptCost) }
        return try await write { db in
            try Self.insertUser(
                db,
                email: email,
                displayName: displayName,
                hash: hash,
                isAdmin: isAdmin,
                mustChangePassword: mustChangePassword,
                actor: actor
            )
        }
    }

    /// The trimmed email and name, once every field passed its rule.
    static func validatedNewUser(email: String, displayName: String, password: String) throws -> (String, String) {
        let email = email.trimmingCharacters(in: .whitespacesAndNewlines)
        let displayName = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.looksLikeEmail(email) else { throw ValidationErrors(["email": "Enter an email address like name@example.org."]) }
        if let problem = displayNameProblem(displayName) { throw ValidationErrors(["displayName": problem]) }
        if let problem = Self.passwordProblem(password) { throw ValidationErrors(["password": problem]) }
        return (email, displayName)
    }

    static func insertUser(
        _ db: Database,
        email: String,
        displayName: String,
        hash: String,
        isAdmin: Bool,
        mustChangePassword: Bool,
        addressProven: Bool = true,
        actor: AuditActor
    ) throws -> User {
        if try User.filter(User.Columns.email == email).fetchCount(db) > 0 {
            throw ValidationErrors(["email": "A user with this email already exists."])
        }
        let user = try User.New(
            email: email,
            displayName: displayName,
            passwordHash: hash,
            isAdmin: isAdmin,
            isDisabled: false,
            mustChangePassword: mustChangePassword,
            createdAt: Date(),
            addressProven: addressProven
        ).inserted(db)
        try AuditEvent.record(
            db,
            actor: actor,
            objectId: "\(user.id)",
            action: .userCreate,
            detail: "\(email)\(isAdmin ? " (admin)" : "")\(addressProven ? "" : " (address not proven)")"
        )
        return user
    }

    /// Who brought each account in: for every user who accepted an invitation, "inviter's email to site name" of the
    /// first one they accepted (the admin's user list shows it).
    func invitationOrigins() async throws -> [Int64: String] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT invitation.acceptedBy AS userId, inviter.email AS inviter, site.name AS site
                    FROM invitation JOIN site ON site.id = invitation.siteId
                    LEFT JOIN user AS inviter ON inviter.id = invitation.invitedBy
                    WHERE invitation.acceptedBy IS NOT NULL
                    ORDER BY invitation.acceptedAt DESC
                    """
            )
            var origins: [Int64: String] = [:]
            for row in rows {
                origins[row["userId"]] = "\(row["inviter"] as String? ?? "a removed user") to \(row["site"] as String)"
            }
            return origins
        }
    }

    /// An administrator vouches for the address of an account made from a shown invitation link (they know the person):
    /// its approvals count from now on.
    func confirmAddress(userId: Int64, actor: AuditActor) async throws {
        try await write { db in
            guard let user = try User.fetchOne(db, id: userId) else { throw NotFound() }
            try db.execute(sql: "UPDATE user SET addressProven = 1 WHERE id = ? AND addressProven = 0", arguments: [userId])
            // Recorded even when it was proven already: the admin vouched, and the log says who did.
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .userAddressProven,
                detail: "\(user.email), confirmed by an administrator\(user.addressProven ? " (already proven)" : "")"
            )
        }
    }

    func userCount() async throws -> Int { try await read { try User.fetchCount($0) } }

    func user(id: Int64) async throws -> User? { try await read { try User.fetchOne($0, id: id) } }

    package func user(email: String) async throws -> User? {
        try await read { try User.filter(User.Columns.email == email.trimmingCharacters(in: .whitespaces)).fetchOne($0) }
    }

    func allUsers() async throws -> [User] {
        try await read { try User.order(User.Columns.email).fetchAll($0) }
    }

    /// Disabling ends every session and revokes every token of the user at once.
    package func setUserDisabled(id: Int64, disabled: Bool, actor: AuditActor) async throws {
        try await write { db in
            guard var user = try User.fetchOne(db, id: id) else { throw NotFound() }
            user.isDisabled = disabled
            try user.update(db)
            if disabled {
                try SessionRecord.filter(SessionRecord.Columns.userId == id).deleteAll(db)
                try db.execute(
                    sql: "UPDATE apiToken SET revokedAt = ? WHERE userId = ? AND revokedAt IS NULL",
                    arguments: [Date().dbTime, id]
                )
            }
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(id)",
                action: disabled ? .userDisable : .userEnable,
                detail: user.email
            )
        }
    }

    /// Sets a new password and ends every other session of the user (a password changed because it leaked must lock
    /// out whoever used it); the session the change was made in (`keepingSession`, its cookie token) stays.
    /// bcrypt runs on the thread pool (see `createUser`).
    func changePassword(userId: Int64, newPassword: String, bcryptCost: UInt8, actor: AuditActor, keepingSession: String? = nil) async throws {
        if let problem = Self.passwordProblem(newPassword) { throw ValidationErrors(["newPassword": problem]) }
        let hash = try await BlockingWork.short { Bcrypt.hash(newPassword, cost: bcryptCost) }
        try await write { db in
            try db.execute(sql: "UPDATE user SET passwordHash = ?, mustChangePassword = 0 WHERE id = ?", arguments: [hash, userId])
            try db.execute(
                sql: "DELETE FROM session WHERE userId = ? AND tokenHash IS NOT ?",
                arguments: [userId, keepingSession.map(SecretToken.hash)]
            )
            try AuditEvent.record(db, actor: actor, objectId: "\(userId)", action: .userPassword, detail: "")
        }
    }

    /// Someone with a one-time password signed on through the agency's provider instead: that password, never used, is
    /// voided (a random one nobody knows takes its place), so it cannot be used later and the panel does not ask for a
    /// password they do not need. "Reset password" gives them one again. bcrypt runs on the thread pool.
    func voidOneTimePassword(userId: Int64, bcryptCost: UInt8, actor: AuditActor) async throws -> User {
        let hash = try await BlockingWork.short { Bcrypt.hash(SecretToken.make(), cost: bcryptCost) }
        return try await write { db in
            guard var user = try User.fetchOne(db, id: userId) else { throw NotFound() }
            guard user.mustChangePassword else { return user }
            user.passwordHash = hash
            user.mustChangePassword = false
            try user.update(db)
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "\(userId)",
                action: .userOneTimePasswordVoided,
                detail: "signed on through the agency's provider"
            )
            return user
        }
    }

    /// Gives the user a new one-time password (to change at the next sign-in), ends every session, revokes every API
    /// token and forgets the email's failed sign-ins: whoever knew the old password, or holds a token made with it, is
    /// out. For a forgotten password, or one that leaked. bcrypt runs on the thread pool (see `createUser`).
    package func resetPassword(userId: Int64, bcryptCost: UInt8, actor: AuditActor) async throws -> (user: User, password: String) {
        let password = OneTimePassword.make()
        let hash = try await BlockingWork.short { Bcrypt.hash(password, cost: bcryptCost) }
        return (try await write { try Self.storeResetPassword($0, userId: userId, hash: hash, actor: actor) }, password)
    }

    static func storeResetPassword(_ db: Database, userId: Int64, hash: String, actor: AuditActor) throws -> User {
        guard var user = try User.fetchOne(db, id: userId) else { throw NotFound() }
        user.passwordHash = hash
        user.mustChangePassword = true
        try user.update(db)
        try SessionRecord.filter(SessionRecord.Columns.userId == userId).deleteAll(db)
        try db.execute(sql: "UPDATE apiToken SET revokedAt = ? WHERE userId = ? AND revokedAt IS NULL", arguments: [Date().dbTime, userId])
        try db.execute(sql: "DELETE FROM loginFailure WHERE email = ?", arguments: [user.email])
        // Also lifts the lock of a hundred wrong second-step codes in a row: the new password keeps the guesser out.
        try db.execute(sql: "DELETE FROM secondStepFailure WHERE userId = ?", arguments: [userId])
        try AuditEvent.record(db, actor: actor, objectId: "\(userId)", action: .userResetPassword, detail: user.email)
        return user
    }

    /// A display name is one line of 1 to 100 characters: it goes into email text and headers, where a line break
    /// would let its owner write lines that look like the server's own.
    static func displayNameProblem(_ name: String) -> String? {
        if name.isEmpty || name.count > 100 { return "Enter a name of 1 to 100 characters." }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isPatternWhitespace && $0 != " " }) {
            return "Enter the name on one line, without tabs or line breaks."
        }
        return nil
    }

    static func passwordProblem(_ password: String) -> String? {
        if password.count < 10 { return "Use at least 10 characters." }
        // bcrypt reads only the first 72 bytes: a longer password would be silently cut.
        if password.utf8.count > 72 { return "Use at most 72 bytes (72 plain letters; accented letters and symbols take 2 to 4 each)." }
        return nil
    }

    static func looksLikeEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return email.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
            && !email.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 32 } ?? false })
    }
}
