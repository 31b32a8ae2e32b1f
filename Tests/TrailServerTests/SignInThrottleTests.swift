import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The sign-in throttle holds under concurrent guessing, sees the real client behind a trusted proxy, and the answer's
/// timing does not tell which emails have accounts.
@Suite struct SignInThrottleTests {
    @Test("50 concurrent wrong passwords for one email: at most 5 are checked, the rest get 429")
    func concurrentGuessesAreCountedBeforeTheCheck() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await client.post("/login", form: ["email": "author@test.org", "password": "guess \(index)"], session: browser).status
                            .code
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let checked = statuses.filter { $0 == 401 }.count
            let refused = statuses.filter { $0 == 429 }.count
            #expect(checked == 5, "passwords checked: \(checked)")
            #expect(refused == 45, "throttled: \(refused)")
            // The right password is refused too while the limit holds.
            #expect(
                try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser).status
                    == .tooManyRequests
            )
        }
    }

    @Test("behind a trusted proxy, two clients are throttled apart and the audit log names each; an untrusted peer's X-Forwarded-For is ignored")
    func trustedProxyNamesTheClient() async throws {
        let (app, _) = try await TestApp.seeded { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8, ::1") }
        try await app.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            func attempt(_ email: String, from address: String, password: String = "wrong password") async throws -> HTTPResponse.Status {
                // The client's own claim comes first; the proxy appends the address it saw.
                try await client.post(
                    "/login",
                    form: ["email": email, "password": password],
                    session: browser,
                    headers: [.xForwardedFor: "10.9.9.9, \(address)"]
                ).status
            }
            // 20 failures over many emails from one visitor stop that visitor's address (the limit per address is 4 × 5)...
            for index in 1...20 { #expect(try await attempt("guess\(index)@test.org", from: "203.0.113.7") == .unauthorized) }
            #expect(try await attempt("author@test.org", from: "203.0.113.7", password: TestApp.password) == .tooManyRequests)
            // ...but not another visitor behind the same proxy.
            #expect(try await attempt("author@test.org", from: "198.51.100.9", password: TestApp.password) == .seeOther)
            let addresses: [String] = try await app.database.read {
                try String.fetchAll($0, sql: "SELECT DISTINCT ipAddress FROM auditEvent WHERE action = 'session.failed'")
            }
            #expect(addresses == ["203.0.113.7"], "the audit log names the client, not the proxy or the forged hop: \(addresses)")
        }

        // Without --trusted-proxies the header is only a claim: the peer's own address counts.
        let (plain, _) = try await TestApp.seeded()
        try await plain.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            let response = try await client.post(
                "/login",
                form: ["email": "nobody@test.org", "password": "wrong password"],
                session: browser,
                headers: [.xForwardedFor: "203.0.113.7"]
            )
            #expect(response.status == .unauthorized)
            let addresses: [String] = try await plain.database.read {
                try String.fetchAll($0, sql: "SELECT DISTINCT ipAddress FROM loginFailure")
            }
            #expect(addresses.count == 1 && addresses.first != "203.0.113.7" && addresses.first?.isEmpty == false, "\(addresses)")
        }
    }

    @Test("failures from one address lock that address out of the email, not the owner signing in from another; the 429 says so")
    func lockoutIsPerEmailAndAddress() async throws {
        let (app, _) = try await TestApp.seeded { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8, ::1") }
        try await app.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            func attempt(from address: String, password: String) async throws -> TestResponse {
                try await client.post(
                    "/login",
                    form: ["email": "author@test.org", "password": password],
                    session: browser,
                    headers: [.xForwardedFor: address]
                )
            }
            for _ in 1...5 { #expect(try await attempt(from: "203.0.113.7", password: "wrong password").status == .unauthorized) }
            let locked = try await attempt(from: "203.0.113.7", password: TestApp.password)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.text.contains("Too many failed sign-ins for this email from your address. Try again in 15 minutes"), "\(locked.text)")
            #expect(!locked.text.contains("reset your password"), "no promise of a self-service reset that does not exist")
            let retryAfter = try #require(locked.headers[.retryAfter].flatMap { Int($0) })
            #expect(retryAfter > 14 * 60 && retryAfter <= 15 * 60, "\(retryAfter)")
            // The owner, elsewhere, signs in.
            #expect(try await attempt(from: "198.51.100.9", password: TestApp.password).status == .seeOther)
            // The guesser's count is not wiped by the owner's success.
            #expect(try await attempt(from: "203.0.113.7", password: TestApp.password).status == .tooManyRequests)
        }
    }

    @Test("guesses at one email from many addresses are slowed down, never refused")
    func guessesFromManyAddressesSlowDown() async throws {
        let (app, _) = try await TestApp.seeded { config in
            config.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8, ::1")
            config.loginMaxDelay = 0.5
        }
        try await app.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            for index in 1...12 {
                let response = try await client.post(
                    "/login",
                    form: ["email": "author@test.org", "password": "wrong password"],
                    session: browser,
                    headers: [.xForwardedFor: "203.0.113.\(index)"]
                )
                #expect(response.status == .unauthorized, "attempt \(index)")
            }
            let clock = ContinuousClock()
            let start = clock.now
            let owner = try await client.post(
                "/login",
                form: ["email": "author@test.org", "password": TestApp.password],
                session: browser,
                headers: [.xForwardedFor: "198.51.100.9"]
            )
            #expect(owner.status == .seeOther, "the right password from a fresh address works after 12 failures elsewhere")
            #expect(clock.now - start >= .milliseconds(500), "but waits the bounded delay first")
        }
        #expect(AppDatabase.loginDelay(failures: 4, limit: 5, maxDelay: 8) == 0)
        #expect(AppDatabase.loginDelay(failures: 5, limit: 5, maxDelay: 8) == 0.25)
        #expect(AppDatabase.loginDelay(failures: 7, limit: 5, maxDelay: 8) == 1)
        #expect(AppDatabase.loginDelay(failures: 500, limit: 5, maxDelay: 8) == 8)
    }

    @Test("an admin's Reset password shows a one-time password once, ends the user's sessions and tokens, and is audited")
    func adminResetsAPassword() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let author = try #require(try await app.database.user(email: "author@test.org"))
            let authorSession = try await client.signIn("author@test.org")
            let (token, _) = try await app.database.createAPIToken(userId: author.id, name: "script", actor: .system)
            #expect(try await app.database.userForAPIToken(token) != nil)
            var admin = try await client.signIn("admin@test.org")
            admin.absorb(try await client.get("/admin/users", session: admin))
            let without = try await client.post("/admin/users/\(author.id)/reset-password", form: [:], session: admin, csrf: "")
            #expect(without.status == .forbidden, "no CSRF token, no reset")
            #expect(try await app.database.userForAPIToken(token) != nil)
            let reset = try await client.post("/admin/users/\(author.id)/reset-password", form: [:], session: admin)
            #expect(reset.status == .ok)
            #expect(reset.headers[.cacheControl] == "no-store")
            let range = try #require(
                reset.text.range(
                    of: #"New one-time password for author@test.org: <code id="reset-password-value">[A-Za-z0-9]{16}</code>"#,
                    options: .regularExpression
                ),
                "\(reset.text)"
            )
            let password = String(reset.text[range].dropLast("</code>".count).suffix(16))
            #expect(try await app.database.userForAPIToken(token) == nil, "the token is revoked")
            let ended = try await client.get("/sites", session: authorSession)
            #expect(ended.location?.hasPrefix("/login") == true, "the session ended")
            #expect(try await app.database.actions().contains("user.resetPassword"))
            let browser = try await client.anonymousBrowser()
            let signedIn = try await client.post("/login", form: ["email": "author@test.org", "password": password], session: browser)
            #expect(signedIn.location == "/account/password", "the one-time password works once, and must be changed")
            let old = try await client.post(
                "/login",
                form: ["email": "author@test.org", "password": TestApp.password],
                session: try await client.anonymousBrowser()
            )
            #expect(old.status == .unauthorized, "the old password no longer works")
            // The users page shows it no more.
            #expect(!(try await client.get("/admin/users", session: admin).text.contains(password)))
        }
    }

    @Test("trusted proxy ranges: IPv4, IPv6, mapped addresses; a bad range is a clear error")
    func trustedProxyParsing() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.1, fd00::/8")
        #expect(
            proxies.contains("10.200.3.4") && proxies.contains("192.168.1.1") && proxies.contains("fd12::1") && proxies.contains("::ffff:10.1.1.1")
        )
        #expect(!proxies.contains("11.0.0.1") && !proxies.contains("192.168.1.2") && !proxies.contains("fe80::1") && !proxies.contains("nonsense"))
        // Read from the right: trusted hops are skipped, the first other one is the client.
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["6.6.6.6, 198.51.100.9, 10.0.0.2"]) == "198.51.100.9")
        #expect(proxies.clientAddress(peer: "8.8.8.8", forwardedFor: ["198.51.100.9"]) == "8.8.8.8")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: []) == "10.0.0.1")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["garbage, 198.51.100.9"]) == "198.51.100.9")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["198.51.100.9, garbage"]) == "10.0.0.1")
        #expect(throws: TrustedProxiesError.self) { try TrustedProxies(parsing: "10.0.0.0/33") }
        #expect(throws: TrustedProxiesError.self) { try TrustedProxies(parsing: "proxy.example") }
        #expect(try TrustedProxies(parsing: "").isEmpty)
    }

    @Test("an unknown email takes as long as a known one with a wrong password (medians within 25 %)")
    func unknownEmailsTakeAsLong() async throws {
        // A real cost, so that bcrypt, not the machine's noise, is what is timed.
        let (app, _) = try await TestApp.seeded { config in
            config.bcryptCost = 10
            config.loginFailureLimit = 1_000
        }
        try await app.database.changePassword(
            userId: try #require(await app.database.user(email: "author@test.org")?.id),
            newPassword: TestApp.password,
            bcryptCost: 10,
            actor: .system
        )
        // The dummy hash has the configured cost: the part of the answer's time that could differ.
        #expect(
            app.dependencies.unknownUserPasswordHash.hasPrefix("$2b$10$") || app.dependencies.unknownUserPasswordHash.hasPrefix("$2a$10$"),
            "\(app.dependencies.unknownUserPasswordHash.prefix(7))"
        )
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            let clock = ContinuousClock()
            func seconds(_ email: String) async throws -> Double {
                let start = clock.now
                let response = try await client.post("/login", form: ["email": email, "password": "wrong password"], session: browser)
                #expect(response.status == .unauthorized)
                let elapsed = clock.now - start
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            }
            // Other suites run at the same time: each unknown email is timed right after a known one, and the median of
            // those pairs' ratios is compared, so a busy moment falls on both sides. A cost-4 dummy gives about 0.06.
            var ratios: [Double] = []
            for round in 0..<3 {
                var pairs: [Double] = []
                for index in 0..<11 {
                    let known = try await seconds("author@test.org")
                    let unknown = try await seconds("nobody\(round)-\(index)@test.org")
                    pairs.append(unknown / known)
                }
                let median = pairs.sorted()[pairs.count / 2]
                ratios.append(median)
                if median > 0.75 && median < 1.25 { break }
            }
            #expect(ratios.contains { $0 > 0.75 && $0 < 1.25 }, "median ratios unknown/known per round: \(ratios)")
        }
    }

    @Test("a password change ends the user's other sessions and keeps the one it was made in")
    func passwordChangeEndsOtherSessions() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            var here = try await client.signIn("author@test.org")
            let elsewhere = try await client.signIn("author@test.org")
            let other = try await client.signIn("manager@test.org")
            here.absorb(try await client.get("/account/password", session: here))
            let changed = try await client.post(
                "/account/password",
                form: [
                    "currentPassword": TestApp.password, "newPassword": "a brand new password",
                    "confirmPassword": "a brand new password",
                ],
                session: here
            )
            #expect(changed.status == .seeOther, "\(changed.status) \(changed.text)")
            #expect(try await client.get("/sites", session: here).status == .ok, "the session the change was made in stays")
            let ended = try await client.get("/sites", session: elsewhere)
            #expect(ended.status == .seeOther && ended.location?.hasPrefix("/login") == true, "the other session ended")
            #expect(try await client.get("/sites", session: other).status == .ok, "another user's session is untouched")
        }
    }

    @Test("Strict-Transport-Security only when the public URL is https")
    func strictTransportSecurityFollowsThePublicURL() async throws {
        let (secure, _) = try await TestApp.seeded { $0.publicURL = "https://tours.example.gov" }
        try await secure.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            let api = try await client.execute(uri: "/api/v1/sites", method: .get)
            #expect(page.headers[.strictTransportSecurity] == "max-age=31536000")
            #expect(api.headers[.strictTransportSecurity] == "max-age=31536000")
        }
        let (plain, _) = try await TestApp.seeded()
        try await plain.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            #expect(page.headers[.strictTransportSecurity] == nil)
        }
    }

    @Test("a session ends 7 days after sign-in even when it is used every day")
    func sessionsHaveAnAbsoluteLifetime() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            #expect(try await client.get("/sites", session: browser).status == .ok)
            // Signed in 6 days ago, seen a minute ago: still fine. 8 days ago: over.
            for (days, alive) in [(6.0, true), (8.0, false)] {
                try await app.database.write { db in
                    try db.execute(
                        sql: "UPDATE session SET createdAt = ?, lastSeenAt = ?",
                        arguments: [
                            Date().timeIntervalSince1970 - days * 86_400,
                            Date().timeIntervalSince1970 - 60,
                        ]
                    )
                }
                let page = try await client.get("/sites", session: browser)
                #expect(alive ? page.status == .ok : page.location?.hasPrefix("/login") == true, "\(days) days: \(page.status)")
            }
        }
    }

    @Test("the data folder and the keys folder are 0700, the database file 0600")
    func dataFolderIsPrivate() throws {
        let folder = TestScratch.folder("trail-private")
        defer { try? FileManager.default.removeItem(at: folder) }
        try DataFolder.prepare(folder)
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        #expect(try mode(folder.path) == 0o700)
        #expect(try mode(folder.appendingPathComponent("keys").path) == 0o700)
        let path = folder.appendingPathComponent("trail.sqlite").path
        _ = try AppDatabase.openFile(at: path, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        #expect(try mode(path) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            #expect(try mode(path + suffix) == 0o600, "\(suffix)")
        }
    }
}
