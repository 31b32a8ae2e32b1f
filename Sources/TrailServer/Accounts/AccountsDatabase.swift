import Foundation
import GRDB
import HummingbirdBcrypt
import NIOPosix

/// Intention-named writes and reads for users, sessions and tokens.
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
            objectType: "user",
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
                objectType: "user",
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
                objectType: "user",
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
            try AuditEvent.record(db, actor: actor, objectType: "user", objectId: "\(userId)", action: .userPassword, detail: "")
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
                objectType: "user",
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
        try AuditEvent.record(db, actor: actor, objectType: "user", objectId: "\(userId)", action: .userResetPassword, detail: user.email)
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

    // MARK: Sign-in throttling

    /// What `beginLoginAttempt` decided.
    enum LoginAttempt: Sendable, Equatable {
        /// Check the password, after waiting `delay` seconds; `id` is the failure counted in advance.
        case allowed(id: Int64, delay: TimeInterval)
        /// Too many failures for this email from this address: this address may not try it again before `retryAfter`
        /// seconds. Someone else, elsewhere, still can: nobody can lock another person out.
        case lockedForEmail(retryAfter: TimeInterval)
        /// Too many failures from this address, over all emails.
        case lockedForAddress(retryAfter: TimeInterval)
    }

    /// Counts a sign-in attempt as failed before its password is checked, if the email from this address, and the
    /// address, are under the limit (checked and written in one transaction, so concurrent guesses are counted one after
    /// the other). Refused over the limit; else the attempt's id, which `endLoginAttempt` removes once the password
    /// proved right, and a delay that grows with the email's failures from every address (bounded by `maxDelay`): guesses
    /// spread over many addresses slow down, but are never refused, so the account's owner can always sign in.
    func beginLoginAttempt(
        email: String,
        ipAddress: String?,
        window: TimeInterval,
        limit: Int,
        maxDelay: TimeInterval = 0
    ) async throws -> LoginAttempt {
        // An IPv6 client counts per /64: it can take a new address from it for every guess.
        let ipAddress = ipAddress.map(ThrottleAddress.key)
        let now = Date().dbTime
        let since = now - window
        return try await write { db -> LoginAttempt in
            func count(_ sql: String, _ arguments: StatementArguments) throws -> (count: Int, oldest: Double) {
                guard
                    let row = try Row.fetchOne(
                        db,
                        sql: "SELECT COUNT(*), COALESCE(MIN(failedAt), ?) FROM loginFailure WHERE \(sql) AND failedAt > ?",
                        arguments: StatementArguments([now]) + arguments + [since]
                    )
                else { return (0, now) }
                return (row[0] as Int, row[1] as Double)
            }
            func retryAfter(_ oldest: Double) -> TimeInterval { max(1, oldest + window - now) }
            let byPair = try count("email = ? AND ipAddress IS ?", [email, ipAddress])
            if byPair.count >= limit { return .lockedForEmail(retryAfter: retryAfter(byPair.oldest)) }
            if let ipAddress {
                // An address may serve a whole ranger station, so it gets more room than one email.
                let byAddress = try count("ipAddress = ?", [ipAddress])
                if byAddress.count / 4 >= limit { return .lockedForAddress(retryAfter: retryAfter(byAddress.oldest)) }
            }
            let byEmail = try count("email = ?", [email]).count
            try db.execute(sql: "INSERT INTO loginFailure (email, ipAddress, failedAt) VALUES (?, ?, ?)", arguments: [email, ipAddress, now])
            return .allowed(id: db.lastInsertedRowID, delay: Self.loginDelay(failures: byEmail, limit: limit, maxDelay: maxDelay))
        }
    }

    /// No wait for the first `limit` failures of an email; then a quarter second, doubling with each failure up to
    /// `maxDelay`.
    static func loginDelay(failures: Int, limit: Int, maxDelay: TimeInterval) -> TimeInterval {
        guard failures >= limit, maxDelay > 0 else { return 0 }
        return min(maxDelay, 0.25 * pow(2, Double(min(failures - limit, 30))))
    }

    /// The password was right: the attempt is not a failure.
    func endLoginAttempt(_ id: Int64) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM loginFailure WHERE rowid = ?", arguments: [id]) }
    }

    /// Records a failed sign-in in the audit log (`beginLoginAttempt` already counted it).
    func recordLoginFailure(email: String, ipAddress: String?) async throws {
        try await write { db in
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: nil, ipAddress: ipAddress),
                objectType: "session",
                objectId: "-",
                action: .sessionFailed,
                detail: email
            )
        }
    }

    // MARK: Sessions

    /// Starts a fresh session (a new id at every sign-in) and returns the cookie token.
    /// `detail` says how the user signed in (password, code, recovery code), for the audit log.
    func startSession(userId: Int64, ipAddress: String?, detail: String = "") async throws -> (token: String, csrf: String) {
        let token = SecretToken.make()
        let csrf = SecretToken.make()
        let now = Date()
        try await write { db in
            try SessionRecord(
                tokenHash: SecretToken.hash(token),
                userId: userId,
                csrfToken: csrf,
                createdAt: now,
                lastSeenAt: now,
                ipAddress: ipAddress
            ).insert(db)
            // Only this address's failures: a guesser elsewhere keeps the count it earned.
            try db.execute(
                sql: "DELETE FROM loginFailure WHERE email = (SELECT email FROM user WHERE id = ?) AND ipAddress IS ?",
                arguments: [userId, ipAddress.map(ThrottleAddress.key)]
            )
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: userId, ipAddress: ipAddress),
                objectType: "session",
                objectId: "\(userId)",
                action: .sessionStart,
                detail: detail
            )
        }
        return (token, csrf)
    }

    /// The session of this cookie token, if it is neither idle past `idleTimeout` nor older than `lifetime` (a session
    /// in daily use still ends: a stolen cookie does not work for ever); an ended session is deleted.
    ///
    /// A read first: every page view asks, and a write transaction would queue it behind every other write of the server
    /// (GRDB's one writer, then SQLite's lock). It writes only to end a session or, once a minute, to note `lastSeenAt`.
    /// What a session cookie stands for, as of one read: nothing, a session to end (idle too long, too old, or its
    /// user disabled or gone), or an active one, with whether its last-seen time is old enough to write again.
    enum SessionLookup: Sendable {
        case unknown
        case ended
        case active(SessionRecord, User, seenAgain: Bool)
    }

    /// One read: the session of `token` and its user, judged against the idle time-out and the lifetime at `now`.
    /// The caller writes what follows (`endSession(tokenHash:)`, `sessionSeen(tokenHash:at:)`) only when needed, so a
    /// signed-in request usually takes no write at all.
    func session(
        token: String,
        idleTimeout: TimeInterval,
        lifetime: TimeInterval = .infinity,
        now: Date = Date()
    ) async throws
        -> SessionLookup
    {
        let hash = SecretToken.hash(token)
        return try await read { db in
            guard let session = try SessionRecord.fetchOne(db, key: hash) else { return .unknown }
            guard now.timeIntervalSince(session.lastSeenAt) <= idleTimeout, now.timeIntervalSince(session.createdAt) <= lifetime,
                let user = try User.fetchOne(db, id: session.userId), !user.isDisabled
            else { return .ended }
            // Written at most once a minute: a page's dozen requests would otherwise each take the writer.
            return .active(session, user, seenAgain: now.timeIntervalSince(session.lastSeenAt) > 60)
        }
    }

    /// Removes a session found ended by `session(token:…)`.
    func removeEndedSession(token: String) async throws {
        _ = try await write { try SessionRecord.deleteOne($0, key: SecretToken.hash(token)) }
    }

    /// Records that a session was used at `now`.
    func sessionSeen(token: String, at now: Date = Date()) async throws {
        try await write {
            try $0.execute(sql: "UPDATE session SET lastSeenAt = ? WHERE tokenHash = ?", arguments: [now.dbTime, SecretToken.hash(token)])
        }
    }

    func endSession(token: String, actor: AuditActor) async throws {
        try await write { db in
            _ = try SessionRecord.deleteOne(db, key: SecretToken.hash(token))
            try AuditEvent.record(db, actor: actor, objectType: "session", objectId: "\(actor.userId ?? 0)", action: .sessionEnd, detail: "")
        }
    }

    // MARK: API tokens

    /// Creates a bearer token; the clear text is returned once and never stored.
    package func createAPIToken(userId: Int64, name: String, actor: AuditActor) async throws -> (token: String, record: APITokenRecord) {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100 else { throw ValidationErrors(["name": "Enter a name of 1 to 100 characters."]) }
        let token = "tc_" + SecretToken.make()
        return try await write { db in
            guard let user = try User.fetchOne(db, id: userId), !user.isDisabled else { throw NotFound() }
            let record = try APITokenRecord.New(userId: userId, name: name, tokenHash: SecretToken.hash(token), createdAt: Date()).inserted(db)
            try AuditEvent.record(db, actor: actor, objectType: "apiToken", objectId: "\(record.id)", action: .tokenCreate, detail: name)
            return (token, record)
        }
    }

    func userForAPIToken(_ token: String) async throws -> User? {
        // A read first, as for sessions: `lastUsedAt` is written once a minute at most.
        let hash = SecretToken.hash(token)
        let found = try await read { db -> (record: APITokenRecord, user: User)? in
            guard
                let record = try APITokenRecord.filter(APITokenRecord.Columns.tokenHash == hash && APITokenRecord.Columns.revokedAt == nil).fetchOne(
                    db
                ),
                let user = try User.fetchOne(db, id: record.userId), !user.isDisabled
            else { return nil }
            return (record, user)
        }
        guard let (record, user) = found else { return nil }
        let now = Date()
        if now.timeIntervalSince(record.lastUsedAt ?? .distantPast) > 60 {
            try await write { try $0.execute(sql: "UPDATE apiToken SET lastUsedAt = ? WHERE id = ?", arguments: [now.dbTime, record.id]) }
        }
        return user
    }

    func apiTokens(userId: Int64) async throws -> [APITokenRecord] {
        try await read { try APITokenRecord.filter(APITokenRecord.Columns.userId == userId).order(Column("id").desc).fetchAll($0) }
    }

    func revokeAPIToken(id: Int64, userId: Int64, actor: AuditActor) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE apiToken SET revokedAt = ? WHERE id = ? AND userId = ? AND revokedAt IS NULL",
                arguments: [Date().dbTime, id, userId]
            )
            guard db.changesCount == 1 else { throw NotFound() }
            try AuditEvent.record(db, actor: actor, objectType: "apiToken", objectId: "\(id)", action: .tokenRevoke, detail: "")
        }
    }
}
