import Foundation
import GRDB
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Sessions live in SQLite: they survive a restart, end at sign-out, when the user is disabled and after idle time;
/// every sign-in gets a new id; repeated failures are throttled; a one-time password must be changed first.
@Suite struct SessionTests {
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trail-session-\(UUID().uuidString)")
        try DataFolder.prepare(folder)
        return folder
    }

    @Test func sessionSurvivesAServerRestart() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configure: (inout AppConfig) -> Void = { $0.dataFolder = folder }
        var browser = BrowserSession()
        var config = AppConfig()
        config.root = projectRoot
        config.dataFolder = folder
        do {
            let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
            let first = try await TestApp.make(database: database, configure: configure)
            try await first.seed()
            browser = try await first.application.test(.router) { client in try await client.signIn("author@test.org") }
        }
        // A new process: a new pool on the same file, new templates, new router.
        let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
        let second = try await TestApp.make(database: database, configure: configure)
        try await second.test { [browser] client in
            let page = try await client.get("/sites", session: browser)
            #expect(page.status == .ok)
            #expect(page.text.contains("Alpha District"))
            // The CSRF token is part of the stored session, so a form from before the restart still posts.
            let posted = try await client.post(
                "/tours/1/waypoints",
                form: ["name": "After Restart", "latitude": "44.4", "longitude": "-122.1"],
                session: browser
            )
            #expect(posted.status == .seeOther)
        }
        #expect(try await database.waypoints(tourId: 1).map(\.name).contains("After Restart"))
    }

    @Test func signOutEndsTheSessionOnTheServer() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session")
            #expect(before == 1)
            let out = try await client.post("/logout", form: [:], session: browser)
            #expect(out.status == .seeOther)
            #expect(out.location == "/login")
            let cleared = try #require(out.setCookies.first { $0.hasPrefix("tc_session=") })
            #expect(cleared.hasPrefix("tc_session=;") && cleared.contains("Max-Age=0"))
            let after: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session")
            #expect(after == 0)
            #expect(try await app.database.actions().last == "session.end")

            // The old cookie, replayed, is worth nothing.
            let replay = try await client.get("/sites", session: browser)
            #expect(replay.status == .seeOther)
            #expect(replay.location == "/login?next=/sites")
        }
    }

    @Test func disablingAUserInTheAdminPagesEndsTheirSessionsAndTokens() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let otherBrowser = try await client.signIn("author@test.org")
            let token = try await app.token(for: "author@test.org")
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token).status == .ok)

            var admin = try await client.signIn("admin@test.org")
            let disabled = try await client.post("/admin/users/\(seed.authorId)/disable", form: [:], session: admin)
            #expect(disabled.location == "/admin/users")
            let users = try await client.follow(disabled, session: &admin)
            #expect(users.text.contains("User disabled; their sessions and tokens have ended."))
            #expect(users.text.contains(#"<span class="badge bg-danger">disabled</span>"#))

            for browser in [author, otherBrowser] {
                let page = try await client.get("/sites", session: browser)
                #expect(page.status == .seeOther)
                #expect(page.location?.hasPrefix("/login") == true)
            }
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token).status == .unauthorized)
            let sessions: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session WHERE userId = ?", [seed.authorId])
            #expect(sessions == 0)
            let live: Int? = try await app.database.scalar("SELECT COUNT(*) FROM apiToken WHERE userId = ? AND revokedAt IS NULL", [seed.authorId])
            #expect(live == 0)

            // A disabled user cannot sign in, and is told nothing more than for a wrong password.
            let browser = try await client.anonymousBrowser()
            let refused = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            #expect(refused.status == .unauthorized)
            #expect(refused.text.contains("The email or password is not right."))

            // Enabled again: signing in works; the old token stays revoked.
            let enabled = try await client.post("/admin/users/\(seed.authorId)/enable", form: [:], session: admin)
            #expect(enabled.status == .seeOther)
            _ = try await client.signIn("author@test.org")
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token).status == .unauthorized)
        }
    }

    @Test func disablingAUserDirectlyEndsTheirSessionsAndTokens() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("manager@test.org")
            let token = try await app.token(for: "manager@test.org")
            let manager = try #require(try await app.database.user(email: "manager@test.org"))
            try await app.database.setUserDisabled(id: manager.id, disabled: true, actor: .system)
            #expect(try await client.get("/sites/alpha", session: browser).location == "/login?next=/sites/alpha")
            let api = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token)
            #expect(api.status == .unauthorized)
            #expect(api.errorMessage == "The bearer token is unknown, revoked, or its user is disabled.")
        }
    }

    /// Even a session row that somehow outlived the disabling (the flag set by hand) is refused.
    @Test func disabledFlagAloneIsEnough() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let token = try await app.token(for: "author@test.org")
            try await app.database.execute("UPDATE user SET isDisabled = 1 WHERE id = ?", [seed.authorId])
            #expect(try await client.get("/sites", session: browser).status == .seeOther)
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token).status == .unauthorized)
        }
    }

    @Test func everySignInGetsANewSessionId() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            // A session id planted before sign-in (fixation) is not adopted.
            var browser = try await client.anonymousBrowser()
            browser.cookies["tc_session"] = "planted-by-an-attacker-0000000000000000000"
            let response = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            browser.absorb(response)
            let first = try #require(browser.cookies["tc_session"])
            #expect(first != "planted-by-an-attacker-0000000000000000000")
            #expect(first.count >= 43)
            let stored: String? = try await app.database.scalar("SELECT tokenHash FROM session")
            #expect(stored == SecretToken.hash(first), "the table holds the hash, not the cookie")

            // Signing in again in the same browser replaces the session; the old id stops working.
            browser.absorb(try await client.get("/sites", session: browser))
            let again = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            var renewed = browser
            renewed.absorb(again)
            let second = try #require(renewed.cookies["tc_session"])
            #expect(second != first)
            #expect(try await client.get("/sites", session: renewed).status == .ok)
            #expect(try await client.get("/sites", session: browser).status == .seeOther)

            // Two browsers: two sessions, both valid.
            let a = try await client.signIn("manager@test.org")
            let b = try await client.signIn("manager@test.org")
            #expect(a.cookies["tc_session"] != b.cookies["tc_session"])
            #expect(a.csrf != b.csrf)
            #expect(try await client.get("/sites", session: a).status == .ok)
            #expect(try await client.get("/sites", session: b).status == .ok)
        }
    }

    @Test func idleSessionsExpire() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let hash = SecretToken.hash(try #require(browser.cookies["tc_session"]))
            // Just inside the default 8 hours: still valid, and the visit counts as activity.
            try await app.database.execute(
                "UPDATE session SET lastSeenAt = ? WHERE tokenHash = ?",
                [Date().timeIntervalSince1970 - 8 * 3600 + 30, hash]
            )
            #expect(try await client.get("/sites", session: browser).status == .ok)
            let touched: Double? = try await app.database.scalar("SELECT lastSeenAt FROM session WHERE tokenHash = ?", [hash])
            #expect(try #require(touched) > Date().timeIntervalSince1970 - 60)
            // Past it: sent to sign in, and the row is gone.
            try await app.database.execute(
                "UPDATE session SET lastSeenAt = ? WHERE tokenHash = ?",
                [Date().timeIntervalSince1970 - 8 * 3600 - 1, hash]
            )
            let expired = try await client.get("/sites", session: browser)
            #expect(expired.status == .seeOther)
            #expect(expired.location == "/login?next=/sites")
            let left: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session WHERE tokenHash = ?", [hash])
            #expect(left == 0)
        }
    }

    @Test func idleTimeoutIsConfigurable() async throws {
        let (app, _) = try await TestApp.seeded { $0.sessionIdleTimeout = 120 }
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            try await app.database.execute("UPDATE session SET lastSeenAt = lastSeenAt - 121")
            #expect(try await client.get("/sites", session: browser).status == .seeOther)
        }
    }

    @Test func repeatedFailedSignInsAreThrottled() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            func attempt(_ email: String, _ password: String) async throws -> TestResponse {
                try await client.post("/login", form: ["email": email, "password": password], session: browser)
            }
            for _ in 1...5 {
                #expect(try await attempt("author@test.org", "wrong password").status == .unauthorized)
            }
            // The sixth is refused before the password is even looked at, the right one included.
            for password in ["wrong password", TestApp.password] {
                let sixth = try await attempt("author@test.org", password)
                #expect(sixth.status == .tooManyRequests)
                #expect(sixth.text.contains("Too many failed sign-ins for this email from your address. Try again in 15 minutes"), "\(sixth.text)")
                #expect(!sixth.text.contains("reset your password"))
                #expect(!sixth.setCookies.contains { $0.hasPrefix("tc_session=") })
            }
            let failures: Int? = try await app.database.scalar("SELECT COUNT(*) FROM loginFailure WHERE email = 'author@test.org'")
            #expect(failures == 5, "refused attempts are not counted again")
            #expect(try await app.database.actions().filter { $0 == "session.failed" }.count == 5)
            // Another account is not affected.
            #expect(try await attempt("manager@test.org", TestApp.password).status == .seeOther)
            // Once the window has passed, the right password works and clears the count.
            try await app.database.execute("UPDATE loginFailure SET failedAt = failedAt - 15 * 60 - 1")
            #expect(try await attempt("author@test.org", TestApp.password).status == .seeOther)
            let cleared: Int? = try await app.database.scalar("SELECT COUNT(*) FROM loginFailure WHERE email = 'author@test.org'")
            #expect(cleared == 0)
        }
    }

    /// Over a real socket the address is known: 20 failures from one address, spread over many emails, stop that address too.
    @Test func failuresFromOneAddressAreThrottled() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            for index in 1...20 {
                let response = try await client.post(
                    "/login",
                    form: ["email": "guess\(index)@test.org", "password": "wrong password"],
                    session: browser
                )
                #expect(response.status == .unauthorized, "attempt \(index)")
            }
            let addresses: [String] = try await app.database.read {
                try String.fetchAll($0, sql: "SELECT DISTINCT ipAddress FROM loginFailure")
            }
            #expect(addresses.count == 1 && addresses.first?.isEmpty == false, "the failures carry the caller's address: \(addresses)")
            let refused = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.text.contains("Too many failed sign-ins from your address."))
        }
    }

    @Test func successfulSignInResetsTheFailureCount() async throws {
        let (app, _) = try await TestApp.seeded { $0.loginFailureLimit = 3 }
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            for _ in 1...2 { _ = try await client.post("/login", form: ["email": "author@test.org", "password": "nope nope"], session: browser) }
            _ = try await client.signIn("author@test.org")
            for _ in 1...2 {
                #expect(
                    try await client.post("/login", form: ["email": "author@test.org", "password": "nope nope"], session: browser).status
                        == .unauthorized
                )
            }
            #expect(
                try await client.post("/login", form: ["email": "author@test.org", "password": "nope nope"], session: browser).status == .unauthorized
            )
            #expect(
                try await client.post("/login", form: ["email": "author@test.org", "password": "nope nope"], session: browser).status
                    == .tooManyRequests
            )
        }
    }

    /// An admin hands out a one-time password; its first use leads straight to choosing a new one, and nothing else opens before that.
    @Test func oneTimePasswordMustBeChangedAtFirstSignIn() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var admin = try await client.signIn("admin@test.org")
            let created = try await client.post(
                "/admin/users",
                form: ["email": "new.ranger@test.org", "displayName": "New Ranger", "password": ""],
                session: admin
            )
            let notice = try await client.follow(created, session: &admin).text
            let range = try #require(notice.range(of: #"One-time password: [A-Za-z0-9]{16}"#, options: .regularExpression))
            let oneTime = String(notice[range].suffix(16))
            #expect(try await app.database.user(email: "new.ranger@test.org")?.mustChangePassword == true)
            try await app.database.setMembership(siteId: seed.alphaId, email: "new.ranger@test.org", role: .author, actor: .system)

            var browser = try await client.anonymousBrowser()
            let signedIn = try await client.post(
                "/login",
                form: ["email": "new.ranger@test.org", "password": oneTime, "next": "/sites/alpha"],
                session: browser
            )
            #expect(signedIn.location == "/account/password")
            browser.absorb(signedIn)
            for path in ["/sites", "/sites/alpha", "/tours/\(seed.tourId)", "/account/tokens"] {
                let page = try await client.get(path, session: browser)
                #expect(page.location == "/account/password", "\(path) must wait for the new password")
            }
            let form = try await client.get("/account/password", session: browser)
            browser.absorb(form)
            let posted = try await client.post("/tours/\(seed.tourId)/delete", form: [:], session: browser)
            #expect(posted.status == .seeOther)
            #expect(posted.location == "/account/password")
            #expect(try await app.database.tour(id: seed.tourId) != nil)

            #expect(form.status == .ok)
            #expect(form.text.contains("You signed in with a one-time password. Choose your own password to continue."))
            for field in ["currentPassword", "newPassword", "confirmPassword"] {
                #expect(form.text.contains("name=\"\(field)\""), "\(field) field")
            }
            let changed = try await client.post(
                "/account/password",
                form: [
                    "currentPassword": oneTime, "newPassword": "my own trail password",
                    "confirmPassword": "my own trail password",
                ],
                session: browser
            )
            #expect(changed.location == "/")
            let home = try await client.follow(changed, session: &browser)
            #expect(home.status == .seeOther, "/ leads to /sites")
            #expect(try await client.get("/sites/alpha", session: browser).status == .ok)
            #expect(try await app.database.user(email: "new.ranger@test.org")?.mustChangePassword == false)

            // The one-time password is used up; the new one works.
            let anonymous = try await client.anonymousBrowser()
            #expect(
                try await client.post("/login", form: ["email": "new.ranger@test.org", "password": oneTime], session: anonymous).status
                    == .unauthorized
            )
            _ = try await client.signIn("new.ranger@test.org", password: "my own trail password")
        }
    }

    /// First start with no users: an admin whose one-time password is in a 0600 file, not the log; later starts add
    /// nobody; the file goes at that admin's first sign-in.
    @Test func firstStartCreatesAnAdminWithAOneTimePassword() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        var printed: [String] = []
        let password = try await #require(try Bootstrap.firstStart(database: app.database, config: app.config, print: { printed.append($0) }))
        let file = Bootstrap.passwordFile(in: app.config.dataFolder)
        #expect(printed.joined().contains("email:    admin@trail.local"))
        #expect(!printed.joined().contains(password), "the password is not in the log")
        #expect(printed.joined().contains("one-time password is in \(file.path)"), "the log says where it is")
        #expect(try String(contentsOf: file, encoding: .utf8) == "email:    admin@trail.local\npassword: \(password)\n")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(password.count == 16)
        let admin = try #require(try await app.database.user(email: Bootstrap.firstAdminEmail))
        #expect(admin.isAdmin && admin.mustChangePassword)
        await #expect(try Bootstrap.firstStart(database: app.database, config: app.config, print: { printed.append($0) }) == nil)
        #expect(try await app.database.userCount() == 1)
        try await app.test { client in
            let wrong = try await client.post(
                "/login",
                form: ["email": Bootstrap.firstAdminEmail, "password": "not the password"],
                session: try await client.anonymousBrowser()
            )
            #expect(wrong.status == .unauthorized)
            #expect(FileManager.default.fileExists(atPath: file.path), "a failed sign-in leaves it")
            let browser = try await client.anonymousBrowser()
            let response = try await client.post("/login", form: ["email": Bootstrap.firstAdminEmail, "password": password], session: browser)
            #expect(response.location == "/account/password")
            #expect(!FileManager.default.fileExists(atPath: file.path), "removed at the first sign-in")
        }
    }

    @Test func changingThePasswordKeepsTheSessionAndReplacesTheOldPassword() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            var browser = try await client.signIn("reviewer@test.org")
            let changed = try await client.post(
                "/account/password",
                form: [
                    "currentPassword": TestApp.password, "newPassword": "a new long secret",
                    "confirmPassword": "a new long secret",
                ],
                session: browser
            )
            #expect(changed.location == "/")
            let next = try await client.follow(changed, session: &browser)
            #expect(next.status == .seeOther)
            #expect(try await client.get("/sites", session: browser).text.contains("Your password has been changed."))
            let anonymous = try await client.anonymousBrowser()
            #expect(
                try await client.post("/login", form: ["email": "reviewer@test.org", "password": TestApp.password], session: anonymous)
                    .status == .unauthorized
            )
            _ = try await client.signIn("reviewer@test.org", password: "a new long secret")
            #expect(try await app.database.actions().contains("user.password"))
        }
    }
}
