import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import TrailServer

/// Two-step sign-in through the real pages. Codes come from `oathtool` (OATH Toolkit, an independent RFC 6238
/// implementation run as a child process), for a clock the tests fix, so a step never turns over mid-test.
@Suite struct TwoStepTests {
    /// 15 s into a time step: the time of the sign-ins.
    static let now = Date(timeIntervalSince1970: 1_800_000_015)
    /// Ten minutes before: the time of enrolment (whose code marks its step used).
    static let enrolled = now.addingTimeInterval(-600)

    /// The app's clock (`now` unless a test moves it).
    let clock = NIOLockedValueBox(TwoStepTests.now)

    func makeApp(_ requirement: TwoStepRequirement = .none, configure: @escaping (inout AppConfig) -> Void = { _ in }) async throws -> TestApp {
        let clock = self.clock
        return try await TestApp.seeded {
            $0.twoStepRequirement = requirement
            $0.twoStepClock = { clock.withLockedValue { $0 } }
            configure(&$0)
        }.0
    }

    /// The code `oathtool --totp` gives for this base32 key, `stepsAgo` steps before `at`.
    static func oathtool(_ base32: String, stepsAgo: Int = 0, at date: Date = now) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/oathtool")
        let time = Int(date.timeIntervalSince1970) - 30 * stepsAgo
        process.arguments = ["--totp", "--digits=6", "--time-step-size=30s", "--now", "@\(time)", "-b", base32]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "oathtool failed: is Debian's oathtool installed (scripts/install-deps.sh)?")
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The key the enrolment page shows as text, without its spaces.
    static func secret(on page: TestResponse) throws -> String {
        let text = page.text
        let start = try #require(text.range(of: #"id="two-step-secret" class="fs-5">"#))
        let end = try #require(text.range(of: "</code>", range: start.upperBound..<text.endIndex))
        return text[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
    }

    static func recoveryCodes(on page: TestResponse) -> [String] {
        let text = page.text
        guard let list = text.range(of: #"<ul class="list-unstyled font-monospace fs-5" id="recovery-codes">"#),
            let end = text.range(of: "</ul>", range: list.upperBound..<text.endIndex)
        else { return [] }
        return text[list.upperBound..<end.lowerBound].components(separatedBy: "<li>").dropFirst()
            .map { $0.replacingOccurrences(of: "</li>", with: "").trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The password step; answers the browser (with its half-signed-in cookie) and the response.
    static func password(_ client: some TestClientProtocol, _ email: String) async throws -> (BrowserSession, TestResponse) {
        var browser = try await client.anonymousBrowser()
        let response = try await client.post("/login", form: ["email": email, "password": TestApp.password], session: browser)
        browser.absorb(response)
        return (browser, response)
    }

    /// Enrols through the account page (signed in with a password alone), ten minutes before `now`: the key and the
    /// recovery codes.
    func enrolOnAccountPage(_ client: some TestClientProtocol, _ email: String) async throws -> (secret: String, codes: [String]) {
        clock.withLockedValue { $0 = Self.enrolled }
        defer { clock.withLockedValue { $0 = Self.now } }
        var browser = try await client.signIn(email)
        let start = try await client.post("/account/two-step/start", form: [:], session: browser)
        #expect(start.location == "/account/two-step")
        let page = try await client.get("/account/two-step", session: browser)
        browser.absorb(page)
        #expect(page.text.contains("<svg"), "no QR code")
        #expect(page.headers[.cacheControl] == "no-store")
        let secret = try Self.secret(on: page)
        let confirmed = try await client.post("/account/two-step", form: ["code": try Self.oathtool(secret, at: Self.enrolled)], session: browser)
        #expect(confirmed.status == .ok)
        let codes = Self.recoveryCodes(on: confirmed)
        #expect(codes.count == 10)
        _ = try await client.post("/logout", form: [:], session: browser)
        return (secret, codes)
    }

    /// Password, then this input on the code page.
    static func signIn(_ client: some TestClientProtocol, _ email: String, code: String) async throws -> TestResponse {
        let (browser, first) = try await password(client, email)
        #expect(first.location == "/login/code")
        return try await client.post("/login/code", form: ["code": code], session: browser)
    }

    static func signedIn(_ response: TestResponse) -> Bool {
        response.status == .seeOther && response.setCookies.contains { $0.hasPrefix("tc_session=") && !$0.hasPrefix("tc_session=;") }
    }

    @Test func oathtoolAndTheServerAgree() throws {
        for step: Int64 in [0, 1, 59_999_999, 60_000_000] {
            let secret = TwoStepCodes.makeSecret()
            let base32 = TwoStepCodes.base32(secret)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/oathtool")
            process.arguments = ["--totp", "--now", "@\(step * 30)", "-b", base32]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            process.waitUntilExit()
            let expected = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines
            )
            #expect(TwoStepCodes.code(secret: secret, step: step) == expected)
        }
        #expect(
            TwoStepCodes.authenticatorURL(secret: "12345678901234567890", email: "a@b.org")
                .hasPrefix("otpauth://totp/Trail%20Companion:a@b.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        )
    }

    @Test func codesOfTheWindowWorkOnceAndOthersAreRefused() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let (secret, _) = try await enrolOnAccountPage(client, "author@test.org")
            // A password alone no longer opens a session: the browser is only half signed in.
            let (browser, first) = try await Self.password(client, "author@test.org")
            #expect(first.location == "/login/code")
            #expect(!first.setCookies.contains { $0.hasPrefix("tc_session=") })
            #expect(try await client.get("/sites", session: browser).location?.hasPrefix("/login") == true)
            let page = try await client.get("/login/code", session: browser)
            #expect(page.status == .ok && page.text.contains(#"autocomplete="one-time-code""#))

            let wrong = try await client.post(
                "/login/code",
                form: ["code": "000000" == (try Self.oathtool(secret)) ? "111111" : "000000"],
                session: browser
            )
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains(#"id="code-error""#))
            let twoStepsAgo = try await client.post("/login/code", form: ["code": try Self.oathtool(secret, stepsAgo: 2)], session: browser)
            #expect(twoStepsAgo.status == .unauthorized, "a code two steps old must be refused")
            let oneStepAgo = try await client.post("/login/code", form: ["code": try Self.oathtool(secret, stepsAgo: 1)], session: browser)
            #expect(Self.signedIn(oneStepAgo), "a code one step old is accepted: \(oneStepAgo.status)")
            #expect(oneStepAgo.setCookies.contains { $0.hasPrefix("tc_pending=;") }, "the half-signed-in cookie is cleared")

            // The same code again, and a code of a step before it, are refused; the current one is newer and works.
            let reused = try await Self.signIn(client, "author@test.org", code: try Self.oathtool(secret, stepsAgo: 1))
            #expect(reused.status == .unauthorized)
            #expect(reused.text.contains("already used"))
            let current = try await Self.signIn(client, "author@test.org", code: try Self.oathtool(secret))
            #expect(Self.signedIn(current))
            let again = try await Self.signIn(client, "author@test.org", code: try Self.oathtool(secret))
            #expect(again.status == .unauthorized, "each code works once")
        }
        let details = try await app.database.read {
            try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'twoStep.failed'")
        }
        #expect(details.contains { $0.contains("wrong code") } && details.contains { $0.contains("code already used") }, "\(details)")
    }

    @Test func recoveryCodeWorksOnce() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let (_, codes) = try await enrolOnAccountPage(client, "author@test.org")
            let used = codes[3]
            // Typed in capitals without dashes, as people do.
            let first = try await Self.signIn(client, "author@test.org", code: used.uppercased().replacingOccurrences(of: "-", with: " "))
            #expect(Self.signedIn(first))
            let second = try await Self.signIn(client, "author@test.org", code: used)
            #expect(second.status == .unauthorized, "a recovery code works once")
            #expect(Self.signedIn(try await Self.signIn(client, "author@test.org", code: codes[4])))
        }
        #expect(try await app.database.actions().filter { $0 == "twoStep.recoveryCode" }.count == 2)
        #expect(
            try await app.database.twoStepStatus(userId: try #require(await app.database.user(email: "author@test.org")?.id)).recoveryCodesLeft == 8
        )
        let stored: [String] = try await app.database.read { try String.fetchAll($0, sql: "SELECT codeHash FROM recoveryCode") }
        #expect(stored.allSatisfy { $0.count == 64 }, "recovery codes are stored as SHA-256 only")
    }

    @Test func adminsMustEnrolAtSignInAndOthersNeedNot() async throws {
        let app = try await makeApp(.admins)
        try await app.test { client in
            // The author is not covered by `admins`.
            let author = try await client.post(
                "/login",
                form: ["email": "author@test.org", "password": TestApp.password],
                session: try await client.anonymousBrowser()
            )
            #expect(Self.signedIn(author))

            let (browser, first) = try await Self.password(client, "admin@test.org")
            #expect(first.location == "/login/enrol")
            #expect(!first.setCookies.contains { $0.hasPrefix("tc_session=") })
            #expect(try await client.get("/admin/users", session: browser).location?.hasPrefix("/login") == true, "the panel stays closed")
            let page = try await client.get("/login/enrol", session: browser)
            #expect(page.status == .ok)
            #expect(page.text.contains("<svg") && page.text.contains("Your account must use two-step sign-in"))
            let secret = try Self.secret(on: page)
            let wrong = try await client.post("/login/enrol", form: ["code": "12345"], session: browser)
            #expect(wrong.status == .unprocessableContent && wrong.text.contains(#"id="code-error""#))
            let done = try await client.post("/login/enrol", form: ["code": try Self.oathtool(secret)], session: browser)
            #expect(done.status == .ok)
            #expect(Self.recoveryCodes(on: done).count == 10)
            #expect(done.setCookies.contains { $0.hasPrefix("tc_session=") && !$0.hasPrefix("tc_session=;") })
            #expect(done.headers[.cacheControl] == "no-store")
            var signedIn = browser
            signedIn.absorb(done)
            #expect(try await client.get("/admin/users", session: signedIn).status == .ok)
        }
        let actions = try await app.database.actions()
        for action in ["session.password", "twoStep.enrolStart", "twoStep.enrolFailed", "twoStep.enrol", "session.start"] {
            #expect(actions.contains(action), "no \(action) in the audit log")
        }
    }

    @Test func managersRequirementCoversSiteManagers() async throws {
        let app = try await makeApp(.managers)
        let manager = try #require(try await app.database.user(email: "manager@test.org"))
        let author = try #require(try await app.database.user(email: "author@test.org"))
        #expect(try await app.database.twoStepRequired(for: manager, requirement: .managers))
        #expect(try await !app.database.twoStepRequired(for: author, requirement: .managers))
        #expect(try await app.database.twoStepRequired(for: author, requirement: .all))
        #expect(try await !app.database.twoStepRequired(for: manager, requirement: .admins))
    }

    @Test func adminResetClearsTheSecondStepAndTheUserIsTold() async throws {
        let app = try await makeApp(.none)
        try await app.test { client in
            let (secret, _) = try await enrolOnAccountPage(client, "author@test.org")
            #expect(Self.signedIn(try await Self.signIn(client, "author@test.org", code: try Self.oathtool(secret))))
            let authorSessions: Int? = try await app.database.scalar(
                "SELECT COUNT(*) FROM session WHERE userId = (SELECT id FROM user WHERE email = 'author@test.org')"
            )
            #expect(authorSessions == 1)

            let admin = try await client.signIn("admin@test.org")
            let users = try await client.get("/admin/users", session: admin)
            #expect(users.text.contains("Reset two-step"))
            let authorId = try #require(try await app.database.user(email: "author@test.org")?.id)
            let reset = try await client.post("/admin/users/\(authorId)/reset-two-step", form: [:], session: admin)
            #expect(reset.location == "/admin/users")
            let left: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session WHERE userId = ?", [authorId])
            #expect(left == 0, "the user's sessions end")

            // A password alone signs in again, and the panel says why, once.
            let (browser, signIn) = try await Self.password(client, "author@test.org")
            #expect(Self.signedIn(signIn))
            var session = browser
            session.absorb(signIn)
            let home = try await client.get(signIn.location ?? "/", session: session)
            session.absorb(home)
            let landing = home.status == .seeOther ? try await client.get(home.location ?? "/sites", session: session) : home
            #expect(landing.text.contains("An administrator reset your two-step sign-in"), "\(landing.text.prefix(300))")
            #expect(try await !app.database.twoStepStatus(userId: authorId).resetNotice)
        }
        #expect(try await app.database.actions().contains("user.resetTwoStep"))
    }

    @Test func adminResetAtSignInWithTheRequirementAsksToEnrolAgain() async throws {
        let app = try await makeApp(.admins)
        let adminId = try #require(try await app.database.user(email: "admin@test.org")?.id)
        _ = try await app.database.beginTwoStepEnrolment(userId: adminId, actor: .system)
        let secret = try #require(try await app.database.pendingTwoStepSecret(userId: adminId))
        #expect(
            try await app.database.confirmTwoStepEnrolment(
                userId: adminId,
                code: TwoStepCodes.code(secret: secret, step: TwoStepCodes.step(at: Self.now)),
                at: Self.now,
                actor: .system
            ) != nil
        )
        try await app.database.resetTwoStep(userId: adminId, actor: .system)
        try await app.test { client in
            let (browser, first) = try await Self.password(client, "admin@test.org")
            #expect(first.location == "/login/enrol")
            let page = try await client.get("/login/enrol", session: browser)
            #expect(page.text.contains(#"id="two-step-reset-notice""#))
            #expect(try Self.secret(on: page) != TwoStepCodes.base32(secret), "a reset makes a new key")
        }
    }

    @Test func repeatedWrongCodesLockOut() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let (secret, _) = try await enrolOnAccountPage(client, "author@test.org")
            let (browser, _) = try await Self.password(client, "author@test.org")
            let wrong = try Self.oathtool(secret) == "000000" ? "111111" : "000000"
            for _ in 1...5 {
                #expect(try await client.post("/login/code", form: ["code": wrong], session: browser).status == .unauthorized)
            }
            // The sixth is refused before it is looked at, the right code included.
            let locked = try await client.post("/login/code", form: ["code": try Self.oathtool(secret)], session: browser)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] != nil)
            #expect(!locked.setCookies.contains { $0.hasPrefix("tc_session=") })
        }
        #expect(try await app.database.actions().filter { $0 == "twoStep.failed" }.count == 5)
    }

    @Test func withoutAPasswordStepTheCodePagesSendBackToSignIn() async throws {
        let app = try await makeApp(.admins)
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            for path in ["/login/code", "/login/enrol"] {
                #expect(try await client.get(path, session: browser).location == "/login")
                #expect(try await client.post(path, form: ["code": "123456"], session: browser).location == "/login")
            }
            // A half-signed-in cookie at the code stage does not open the enrolment page, and the reverse.
            let (enrolling, _) = try await Self.password(client, "admin@test.org")
            #expect(try await client.get("/login/code", session: enrolling).location == "/login")
            // Signing out ends it.
            let (leaving, _) = try await Self.password(client, "admin@test.org")
            let out = try await client.post("/logout", form: [:], session: leaving)
            #expect(out.setCookies.contains { $0.hasPrefix("tc_pending=;") })
            #expect(try await client.get("/login/enrol", session: leaving).location == "/login")
            // An expired one is refused (a fresh one: each sign-in's key voids the earlier ones').
            let (fresh, _) = try await Self.password(client, "admin@test.org")
            #expect(try await client.get("/login/enrol", session: fresh).status == .ok)
            try await app.database.execute("UPDATE pendingSignIn SET createdAt = createdAt - 3600")
            #expect(try await client.get("/login/enrol", session: fresh).location == "/login")
        }
    }

    /// Neither the key, nor a code, nor a recovery code reaches a log line (at trace level) or an audit detail.
    @Test func noSecretInLogsOrAudit() async throws {
        let app = try await makeApp(.admins)
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "two-step-test") { _ in RecordingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let application = Application(router: buildRouter(app.dependencies), server: .trail(app.dependencies.config), logger: logger)
        let secretsBox = NIOLockedValueBox<[String]>([])
        try await application.testLive { client in
            let (browser, _) = try await Self.password(client, "admin@test.org")
            let page = try await client.get("/login/enrol", session: browser)
            let secret = try Self.secret(on: page)
            let code = try Self.oathtool(secret)
            let done = try await client.post("/login/enrol", form: ["code": code], session: browser)
            let codes = Self.recoveryCodes(on: done)
            #expect(codes.count == 10)
            _ = try await Self.signIn(client, "admin@test.org", code: codes[0])
            _ = try await Self.signIn(client, "admin@test.org", code: "000000")
            let raw = try #require(
                try await app.database.read {
                    try String.fetchOne($0, sql: "SELECT totpSecret FROM user WHERE email = 'admin@test.org'")
                }
            )
            secretsBox.withLockedValue { $0 = [secret, raw, code] + codes + codes.map { $0.replacingOccurrences(of: "-", with: "") } }
        }
        let secrets = secretsBox.withLockedValue { $0 }
        let logged = lines.withLockedValue { $0 }
        #expect(!logged.isEmpty, "nothing was logged: the test would prove nothing")
        let details = try await app.database.read { try String.fetchAll($0, sql: "SELECT detail || ' ' || objectId FROM auditEvent") }
        for secret in secrets {
            #expect(!logged.contains { $0.contains(secret) }, "a secret reached the log")
            #expect(!details.contains { $0.contains(secret) }, "a secret reached the audit log")
        }
    }
}

/// Keeps every log line with its metadata, as text.
struct RecordingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLockedValue { $0.append("\(event.level) \(event.message) \(all)") }
    }
}
