import Foundation
import GRDB

/// Intention-named writes and reads for signing in: the sign-in attempt limits, sessions and API tokens.
extension AppDatabase {
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
                objectId: "\(userId)",
                action: .sessionStart,
                detail: detail
            )
        }
        return (token, csrf)
    }

    /// What a session cookie stands for, as of one read: nothing, a session to end (idle too long, too old, or its
    /// user disabled or gone), or an active one, with whether its last-seen time is old enough to write again.
    enum SessionLookup: Sendable {
        case unknown
        case ended
        case active(SessionRecord, User, seenAgain: Bool)
    }

    /// One read: the session of `token` and its user, judged against the idle time-out and the lifetime at `now` (a
    /// session in daily use still ends: a stolen cookie does not work for ever).
    ///
    /// A read, not a write transaction: every page view asks, and a write would queue it behind every other write of
    /// the server (GRDB's one writer, then SQLite's lock). The caller writes what follows (`removeEndedSession(token:)`,
    /// `sessionSeen(token:at:)`) only when needed, so a signed-in request usually takes no write at all.
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
            try AuditEvent.record(db, actor: actor, objectId: "\(actor.userId ?? 0)", action: .sessionEnd, detail: "")
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
            try AuditEvent.record(db, actor: actor, objectId: "\(record.id)", action: .tokenCreate, detail: name)
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
            try AuditEvent.record(db, actor: actor, objectId: "\(id)", action: .tokenRevoke, detail: "")
        }
    }
}
