import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing

@testable import TrailServer

/// Two-step sign-in against someone who already has the password: wrong codes are limited per account whatever the
/// address, each enrolment attempt shows its own key, and a half-finished sign-in ends with the password it passed.
/// Through the real pages, behind a trusted proxy so each request can come from another client address.
@Suite struct TwoStepSecurityTests {
    let clock = NIOLockedValueBox(TwoStepTests.now)

    func makeApp(_ requirement: TwoStepRequirement = .none) async throws -> TestApp {
        let clock = self.clock
        return try await TestApp.seeded {
            $0.twoStepRequirement = requirement
            $0.twoStepClock = { clock.withLockedValue { $0 } }
            $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8, ::1")
            // The growing delay per email is the password step's business (SignInThrottleTests); here it only slows.
            $0.loginMaxDelay = 0
        }.0
    }

    /// Enrols the author on the account page, ten minutes before `TwoStepTests.now`, and gives the key.
    func enrol(_ client: some TestClientProtocol) async throws -> String {
        clock.withLockedValue { $0 = TwoStepTests.enrolled }
        defer { clock.withLockedValue { $0 = TwoStepTests.now } }
        var browser = try await client.signIn("author@test.org")
        _ = try await client.post("/account/two-step/start", form: [:], session: browser)
        let page = try await client.get("/account/two-step", session: browser)
        browser.absorb(page)
        let secret = try TwoStepTests.secret(on: page)
        let confirmed = try await client.post(
            "/account/two-step",
            form: ["code": try TwoStepTests.oathtool(secret, at: TwoStepTests.enrolled)],
            session: browser
        )
        #expect(confirmed.status == .ok)
        _ = try await client.post("/logout", form: [:], session: browser)
        return secret
    }

    @Test("IPv6 clients are counted per /64; IPv4 alone")
    func throttleAddressKeys() {
        #expect(ThrottleAddress.key("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(ThrottleAddress.key("2001:db8:1:2::7") == ThrottleAddress.key("2001:DB8:1:2:ffff::1"))
        #expect(ThrottleAddress.key("2001:db8:1:3::7") != ThrottleAddress.key("2001:db8:1:2::7"))
        #expect(ThrottleAddress.key("203.0.113.7") == "203.0.113.7")
        #expect(ThrottleAddress.key("::ffff:203.0.113.7") == "203.0.113.7")
        #expect(ThrottleAddress.key("not an address") == "not an address")
    }

    @Test("wrong codes sent at once from many addresses (IPv4, and IPv6 in one /64) are stopped per account; the owner is told")
    func wrongCodesAreLimitedPerAccount() async throws {
        let app = try await makeApp()
        try await app.application.testLive { client in
            let secret = try await enrol(client)
            let (browser, first) = try await TwoStepTests.password(client, "author@test.org")
            #expect(first.location == "/login/code")
            let right = try TwoStepTests.oathtool(secret)
            let wrong = right == "000000" ? "111111" : "000000"
            // Every guess from a fresh address: the per-address limit never sees two from the same IPv4 address.
            let addresses = (1...15).map { "203.0.113.\($0)" } + (1...15).map { "2001:db8:1:2::\(String($0, radix: 16))" }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for address in addresses {
                    group.addTask {
                        try await client.post("/login/code", form: ["code": wrong], session: browser, headers: [.xForwardedFor: address]).status
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .unauthorized }.count == SecondStepLimits.failures, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == addresses.count - SecondStepLimits.failures)

            // Now the right code, from an address never seen, waits too: the account is what is limited.
            let locked = try await client.post("/login/code", form: ["code": right], session: browser, headers: [.xForwardedFor: "198.51.100.9"])
            #expect(locked.status == .tooManyRequests)
            #expect(locked.text.contains("Too many wrong codes were entered for this account. Try again in 15 minutes"), "\(locked.text)")
            let retryAfter = try #require(locked.headers[.retryAfter].flatMap { Int($0) })
            #expect(retryAfter > 14 * 60 && retryAfter <= 15 * 60, "\(retryAfter)")
            #expect(!locked.setCookies.contains { $0.hasPrefix("tc_session=") })

            // Once the window has passed, the right code works and the owner learns what happened.
            clock.withLockedValue { $0 = TwoStepTests.now.addingTimeInterval(SecondStepLimits.window + 30) }
            let laterTime = clock.withLockedValue { $0 }
            let later = try TwoStepTests.oathtool(secret, at: laterTime)
            let done = try await client.post("/login/code", form: ["code": later], session: browser, headers: [.xForwardedFor: "198.51.100.9"])
            #expect(TwoStepTests.signedIn(done), "\(done.status) \(done.text.prefix(300))")
            var session = browser
            session.absorb(done)
            let landing = try await follow(client, done, session: &session)
            #expect(landing.text.contains("5 wrong codes were entered for your account since 2027-01-15 08:00 UTC"), "\(landing.text.prefix(2000))")

            // Told once: the next sign-in says nothing of them.
            let again = try await TwoStepTests.signIn(client, "author@test.org", code: try TwoStepTests.oathtool(secret, stepsAgo: -1, at: laterTime))
            #expect(TwoStepTests.signedIn(again))
            var next = BrowserSession()
            next.absorb(again)
            #expect(!(try await follow(client, again, session: &next)).text.contains("wrong codes were entered"))
        }
        let audited: Int? = try await app.database.scalar("SELECT COUNT(*) FROM auditEvent WHERE action = 'twoStep.failed'")
        #expect(audited == SecondStepLimits.failures, "only the inputs looked at are audited as wrong")
    }

    @Test("a hundred wrong codes in a row lock the second step until an administrator resets the password")
    func consecutiveWrongCodesLockUntilReset() async throws {
        let app = try await makeApp()
        try await app.application.testLive { client in
            let secret = try await enrol(client)
            let authorId = try #require(try await app.database.user(email: "author@test.org")?.id)
            // 99 wrong codes spread over the past weeks, none within the window.
            for day in 1...(SecondStepLimits.consecutive - 1) {
                try await app.database.execute(
                    "INSERT INTO secondStepFailure (userId, failedAt) VALUES (?, ?)",
                    [authorId, TwoStepTests.now.addingTimeInterval(Double(-day) * 3600).dbTime]
                )
            }
            let (browser, _) = try await TwoStepTests.password(client, "author@test.org")
            let right = try TwoStepTests.oathtool(secret)
            let hundredth = try await client.post("/login/code", form: ["code": right == "000000" ? "111111" : "000000"], session: browser)
            #expect(hundredth.status == .unauthorized)
            let locked = try await client.post("/login/code", form: ["code": right], session: browser, headers: [.xForwardedFor: "198.51.100.9"])
            #expect(locked.status == .tooManyRequests)
            #expect(locked.text.contains("its two-step sign-in is locked. Ask an administrator to reset your password"), "\(locked.text)")
            _ = try await app.database.resetPassword(userId: authorId, bcryptCost: 4, actor: .system)
            let left: Int? = try await app.database.scalar("SELECT COUNT(*) FROM secondStepFailure WHERE userId = ?", [authorId])
            #expect(left == 0, "a password reset lifts the lock")
        }
    }

    @Test("IPv6 addresses of one /64 share the per-address limit of the password step")
    func passwordGuessesFromOneSlash64AreCountedTogether() async throws {
        let app = try await makeApp()
        try await app.application.testLive { client in
            let browser = try await client.anonymousBrowser()
            func attempt(from address: String, password: String = "wrong password") async throws -> TestResponse {
                try await client.post(
                    "/login",
                    form: ["email": "author@test.org", "password": password],
                    session: browser,
                    headers: [.xForwardedFor: address]
                )
            }
            for index in 1...5 { #expect(try await attempt(from: "2001:db8:5:6:\(index)::1").status == .unauthorized) }
            let locked = try await attempt(from: "2001:db8:5:6:ffff::99", password: TestApp.password)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.text.contains("Too many failed sign-ins for this email from your address"))
            // Another /64 is another client.
            #expect(try await attempt(from: "2001:db8:5:7::1", password: TestApp.password).status == .seeOther)
        }
    }

    @Test("each enrolment attempt at sign-in shows its own key; an earlier attempt's key never completes a later one")
    func everyEnrolmentAttemptHasItsOwnKey() async throws {
        let app = try await makeApp(.admins)
        let secondKeyBox = NIOLockedValueBox("")
        try await app.test { client in
            let (first, _) = try await TwoStepTests.password(client, "admin@test.org")
            let firstKey = try TwoStepTests.secret(on: try await client.get("/login/enrol", session: first))
            let (second, _) = try await TwoStepTests.password(client, "admin@test.org")
            let secondKey = try TwoStepTests.secret(on: try await client.get("/login/enrol", session: second))
            #expect(firstKey != secondKey, "the key shown at one sign-in is shown again at the next")
            secondKeyBox.withLockedValue { $0 = secondKey }
            // Whoever saw the first key (say, someone who had the password) cannot finish the owner's later attempt...
            let stolen = try await client.post("/login/enrol", form: ["code": try TwoStepTests.oathtool(firstKey)], session: second)
            #expect(stolen.status == .unprocessableContent, "\(stolen.status)")
            #expect(!stolen.setCookies.contains { $0.hasPrefix("tc_session=") && !$0.hasPrefix("tc_session=;") })
            // ...nor their own, earlier one: its key is void, and the page it came from no longer shows it.
            let stale = try await client.post("/login/enrol", form: ["code": try TwoStepTests.oathtool(firstKey)], session: first)
            #expect(stale.location == "/login")
            #expect(try await client.get("/login/enrol", session: first).location == "/login")
            // The key of the latest attempt works.
            let done = try await client.post("/login/enrol", form: ["code": try TwoStepTests.oathtool(secondKey)], session: second)
            #expect(done.status == .ok && TwoStepTests.recoveryCodes(on: done).count == 10)
        }
        let adminId = try #require(try await app.database.user(email: "admin@test.org")?.id)
        let stored: String? = try await app.database.scalar("SELECT totpSecret FROM user WHERE id = ?", [adminId])
        #expect(stored.map(TwoStepCodes.base32) == secondKeyBox.withLockedValue { $0 }, "the latest attempt's key is the one enrolled")
    }

    @Test("on the account page, a key started in another browser is not shown here and its code does not confirm this one")
    func accountPageEnrolmentBelongsToItsSession() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let elsewhere = try await client.signIn("author@test.org")
            _ = try await client.post("/account/two-step/start", form: [:], session: elsewhere)
            let elsewhereKey = try TwoStepTests.secret(on: try await client.get("/account/two-step", session: elsewhere))
            let owner = try await client.signIn("author@test.org")
            let page = try await client.get("/account/two-step", session: owner)
            #expect(!page.text.contains(#"id="two-step-secret""#), "another browser's key is shown")
            _ = try await client.post("/account/two-step/start", form: [:], session: owner)
            let ownerKey = try TwoStepTests.secret(on: try await client.get("/account/two-step", session: owner))
            #expect(ownerKey != elsewhereKey)
            let stolen = try await client.post("/account/two-step", form: ["code": try TwoStepTests.oathtool(elsewhereKey)], session: owner)
            #expect(stolen.status == .unprocessableContent)
            #expect(try await client.post("/account/two-step", form: ["code": try TwoStepTests.oathtool(ownerKey)], session: owner).status == .ok)
        }
    }

    /// An enrolled author half signed in (the password passed, the code still to come) with `password`.
    func halfSignedIn(_ client: some TestClientProtocol, password: String = TestApp.password) async throws -> BrowserSession {
        var browser = try await client.anonymousBrowser()
        let response = try await client.post("/login", form: ["email": "author@test.org", "password": password], session: browser)
        #expect(response.location == "/login/code")
        browser.absorb(response)
        #expect(try await client.get("/login/code", session: browser).status == .ok)
        return browser
    }

    @Test("a half-finished sign-in ends when its password is changed, reset or voided")
    func halfFinishedSignInEndsWithItsPassword() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let secret = try await enrol(client)
            let authorId = try #require(try await app.database.user(email: "author@test.org")?.id)
            func refused(_ browser: BrowserSession, code: String) async throws {
                let answer = try await client.post("/login/code", form: ["code": code], session: browser)
                #expect(answer.location == "/login", "the right code after the password changed: \(answer.status)")
                #expect(!TwoStepTests.signedIn(answer))
                #expect(try await client.get("/login/code", session: browser).location == "/login")
            }
            // Changed (by the owner, signed in elsewhere).
            let changed = try await halfSignedIn(client)
            try await app.database.changePassword(userId: authorId, newPassword: "a brand new password", bcryptCost: 4, actor: .system)
            try await refused(changed, code: try TwoStepTests.oathtool(secret))

            // Reset by an administrator.
            let reset = try await halfSignedIn(client, password: "a brand new password")
            let (_, oneTime) = try await app.database.resetPassword(userId: authorId, bcryptCost: 4, actor: .system)
            try await refused(reset, code: try TwoStepTests.oathtool(secret))

            // The one-time password voided (its owner signed on through the agency's provider instead).
            let voided = try await halfSignedIn(client, password: oneTime)
            _ = try await app.database.voidOneTimePassword(userId: authorId, bcryptCost: 4, actor: .system)
            try await refused(voided, code: try TwoStepTests.oathtool(secret))

            // Nothing else ends a half-finished sign-in: with the password unchanged, the code still works.
            try await app.database.changePassword(userId: authorId, newPassword: TestApp.password, bcryptCost: 4, actor: .system)
            let kept = try await halfSignedIn(client)
            #expect(TwoStepTests.signedIn(try await client.post("/login/code", form: ["code": try TwoStepTests.oathtool(secret)], session: kept)))
        }
    }

    /// Follows a sign-in's redirects to the page that shows its notice.
    func follow(_ client: some TestClientProtocol, _ response: TestResponse, session: inout BrowserSession) async throws -> TestResponse {
        var current = response
        for _ in 0..<4 {
            guard current.status == .seeOther, let location = current.location else { break }
            current = try await client.get(location, session: session)
            session.absorb(current)
        }
        return current
    }
}
