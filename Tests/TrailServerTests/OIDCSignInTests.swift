import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TestSupport
import Testing

@testable import TrailServer

/// Single sign-on against a real OpenID Connect provider on loopback (Scripts/oidc_provider.py: Authlib's authorization
/// server, which checks the client, PKCE and one-time codes and makes the ID tokens), through the server's own HTTP
/// client. The browser's part (following the redirects, posting the provider's sign-in form) is done by hand, so every
/// step can be bent; the browser suite goes through it with Chromium.
@Suite(.serialized) struct OIDCSignInTests {
    static let clientId = "trail-companion"
    static let clientSecret = "provider-secret-\(UUID().uuidString)"

    /// The provider process. Started without blocking a cooperative thread (its port is read on a Dispatch thread),
    /// stopped by `stop()`, or by itself when the test process ends.
    final class Provider: Sendable {
        let process: Process
        let port: Int
        /// The browser's part: the provider's 302 back to the server is read, not followed. Lives as long as the process.
        static let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(redirectConfiguration: .disallow))

        static func start() async throws -> Provider {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/oidc_provider.py").path,
                OIDCSignInTests.clientId, OIDCSignInTests.clientSecret,
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.standardError
            try process.run()
            // The first line only: what follows in the same read (a server's start-up lines) is not the port.
            let line = await firstLine(of: output)
            guard let port = line.split(separator: "\n").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
                process.terminate()
                throw ObjectStore.StartFailure(description: "the OpenID provider did not start: \(line)")
            }
            let provider = Provider(process: process, port: port)
            try await provider.waitUntilAnswering()
            return provider
        }

        private init(process: Process, port: Int) {
            self.process = process
            self.port = port
        }

        func stop() {
            if process.isRunning { process.terminate() }
        }

        var issuer: String { "http://127.0.0.1:\(port)" }

        /// Flask binds its port just after printing it.
        private func waitUntilAnswering() async throws {
            for _ in 0..<100 {
                if (try? await Self.http.execute(HTTPClientRequest(url: issuer + "/stats"), timeout: .seconds(2)))?.status == .ok { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw ObjectStore.StartFailure(description: "the OpenID provider does not answer at \(issuer)")
        }

        func control(_ json: String) async throws {
            var request = HTTPClientRequest(url: issuer + "/control")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
            let response = try await Self.http.execute(request, timeout: .seconds(10))
            #expect(response.status == .ok)
        }

        /// What the provider counted: `jwks_fetches`, `userinfo_fetches`, and the last `acr_values` it was asked for.
        func stats() async throws -> [String: Any] {
            let response = try await Self.http.execute(HTTPClientRequest(url: issuer + "/stats"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 10_000)
            return (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
        }

        func jwksFetches() async throws -> Int { try await stats()["jwks_fetches"] as? Int ?? -1 }

        /// The provider's sign-in page, then its form sent (as the person whose email /control set): where it sends
        /// the browser back.
        func authorize(_ url: String) async throws -> String {
            let page = try await Self.http.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            #expect(page.status == .ok, "the provider refused the authorization request: \(page.status)")
            var submit = HTTPClientRequest(url: url)
            submit.method = .POST
            submit.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            submit.body = .bytes(ByteBuffer(string: ""))
            let response = try await Self.http.execute(submit, timeout: .seconds(10))
            #expect(response.status == .found, "the provider did not send the browser back: \(response.status)")
            return response.headers.first(name: "Location") ?? ""
        }
    }

    static func app(_ provider: Provider?, issuer: String? = nil, configure: (inout AppConfig) -> Void = { _ in }) async throws -> TestApp {
        let secretFile = TestScratch.folder("oidc-secret").appendingPathComponent("client-secret")
        try FileManager.default.createDirectory(at: secretFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (clientSecret + "\n").write(to: secretFile, atomically: true, encoding: .utf8)
        return try await TestApp.seeded {
            $0.oidc = OIDCSettings(issuer: issuer ?? provider!.issuer, clientId: clientId, clientSecretFile: secretFile.path)
            configure(&$0)
        }.0
    }

    /// Start, the provider's page, and the callback; the callback's answer and the browser.
    static func signIn(
        _ client: some TestClientProtocol,
        _ provider: Provider,
        bend: (String) -> String = { $0 }
    ) async throws -> (TestResponse, BrowserSession, String) {
        var browser = try await client.anonymousBrowser()
        let start = try await client.get("/auth/oidc/start?next=/sites/alpha", session: browser)
        #expect(start.status == .found)
        browser.absorb(start)
        let location = try #require(start.location)
        let items = URLComponents(string: location)?.queryItems ?? []
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        #expect(location.hasPrefix(provider.issuer + "/authorize?"))
        #expect(item("code_challenge_method") == "S256" && item("code_challenge")?.count == 43)
        #expect(item("scope") == "openid email profile" && item("state") != nil && item("nonce") != nil)
        let back = try await provider.authorize(location)
        let components = try #require(URLComponents(string: back))
        let callback = bend(components.path + "?" + (components.percentEncodedQuery ?? ""))
        return (try await client.get(callback, session: browser), browser, callback)
    }

    static func signedIn(_ response: TestResponse) -> Bool {
        response.status == .seeOther && response.setCookies.contains { $0.hasPrefix("tc_session=") && !$0.hasPrefix("tc_session=;") }
    }

    @Test func aVerifiedAgencyAccountSignsIn() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await provider.control(#"{"email": "author@test.org"}"#)
        try await app.test { client in
            let login = try await client.get("/login", session: nil)
            #expect(login.text.contains("Sign in with your agency account"))
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(response), "\(response.status) \(response.text.prefix(300))")
            #expect(response.location == "/sites/alpha")
        }
        let details = try await app.database.read {
            try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'session.start'")
        }
        #expect(details.contains { $0.hasPrefix("single sign-on") })
    }

    @Test func stateMustBeThisBrowsersAndACodeWorksOnce() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await provider.control(#"{"email": "author@test.org"}"#)
        try await app.test { client in
            let (wrong, _, _) = try await Self.signIn(client, provider) { $0.replacingOccurrences(of: "state=", with: "state=x") }
            #expect(wrong.status == .badRequest && !Self.signedIn(wrong))
            let (missing, _, _) = try await Self.signIn(client, provider) { $0.components(separatedBy: "&state=")[0] }
            #expect(missing.status == .badRequest && !Self.signedIn(missing))

            let (first, browser, callback) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(first))
            // The same callback again: the cookie is gone, and were it kept, the provider would refuse the code.
            var after = browser
            after.absorb(first)
            let replay = try await client.get(callback, session: after)
            #expect(replay.status == .badRequest && !Self.signedIn(replay), "\(replay.status) \(replay.text.prefix(300))")
            let replayWithCookie = try await client.get(callback, session: browser)
            #expect(replayWithCookie.status == .unauthorized && !Self.signedIn(replayWithCookie))
        }
        #expect(try await app.database.actions().filter { $0 == "session.ssoFailed" }.count == 4)
    }

    @Test(arguments: [
        (#"{"email": "author@test.org", "aud": "another-client"}"#, "another client"),
        (#"{"email": "author@test.org", "exp_offset": -600}"#, "expired"),
        (#"{"email": "author@test.org", "nonce": "not-this-one"}"#, "nonce"),
        (#"{"email": "author@test.org", "alg": "none"}"#, "algorithm none"),
        (#"{"email": "author@test.org", "alg": "HS256"}"#, "algorithm HS256"),
        (#"{"email": "author@test.org", "kid": "stranger"}"#, "does not publish"),
        (#"{"email": "author@test.org", "email_verified": false}"#, "not verified"),
        (#"{"email": "author@test.org", "iss": "https://evil.example"}"#, "another issuer"),
    ])
    func badTokensAreRefused(control: String, reason: String) async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await provider.control(control)
        try await app.test { client in
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(response.status == .unauthorized && !Self.signedIn(response), "\(response.status)")
            #expect(response.text.contains("could not be checked"))
        }
        let details = try await app.database.read {
            try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'session.ssoFailed'")
        }
        #expect(details.contains { $0.contains(reason) }, "\(details)")
        if reason == "does not publish" { #expect(try await provider.jwksFetches() == 1, "the key set was fetched for the unknown kid") }
    }

    @Test("every refused sign-on writes one warning line with its reason, and never a code, a token or a secret")
    func refusedSignOnsAreLogged() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "oidc-test") { _ in RecordingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let application = Application(router: buildRouter(app.dependencies), server: .trail(app.dependencies.config), logger: logger)
        let callbacks = NIOLockedValueBox<[String]>([])
        try await application.testLive { client in
            try await provider.control(#"{"email": "author@test.org", "exp_offset": -600}"#)
            let (expired, _, callback) = try await Self.signIn(client, provider)
            #expect(expired.status == .unauthorized)
            let (stateless, _, withoutState) = try await Self.signIn(client, provider) { $0.components(separatedBy: "&state=")[0] }
            #expect(stateless.status == .badRequest)
            try await provider.control(#"{"email": "stranger@agency.gov"}"#)
            let (unknown, _, strangers) = try await Self.signIn(client, provider)
            #expect(unknown.status == .forbidden)
            callbacks.withLockedValue { $0 = [callback, withoutState, strangers] }
        }
        let warnings = lines.withLockedValue { $0 }.filter { $0.hasPrefix("warning single sign-on refused") }
        #expect(warnings.count == 3, "\(warnings)")
        if warnings.count == 3 {
            #expect(warnings[0].contains("expired"))
            #expect(warnings[1].contains("state missing or wrong"))
            #expect(warnings[2].contains("no account for stranger@agency.gov"))
        }
        // What the callbacks carried (codes and states) and the client secret appear in no warning.
        let secrets =
            [Self.clientSecret]
            + callbacks.withLockedValue { $0 }.flatMap { URLComponents(string: $0)?.queryItems ?? [] }.compactMap(\.value)
        for secret in secrets where secret.count >= 16 {
            #expect(!warnings.contains { $0.contains(secret) }, "a code, a state or a secret reached the log")
        }
        #expect(try await app.database.actions().filter { $0 == "session.ssoFailed" }.count == 3, "and each is audited")
    }

    @Test func aKeyIdTheProviderDoesNotHoldFetchesItsKeysAgainAtMostOncePerInterval() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider) { $0.oidc?.keyRefreshInterval = 0 }
        try await provider.control(#"{"email": "author@test.org"}"#)
        try await app.test { client in
            #expect(Self.signedIn(try await Self.signIn(client, provider).0))
            #expect(try await provider.jwksFetches() == 1)
            try await provider.control(#"{"email": "author@test.org", "kid": "stranger"}"#)
            let (refused, _, _) = try await Self.signIn(client, provider)
            #expect(refused.status == .unauthorized && !Self.signedIn(refused))
            #expect(try await provider.jwksFetches() == 2, "the key set was fetched again for the key id it lacked")
        }
        // With the interval (a minute by default), a forged key id right after a fetch costs the provider nothing.
        let patient = try await Self.app(provider)
        try await provider.control(#"{"email": "author@test.org"}"#)
        try await patient.test { client in
            #expect(Self.signedIn(try await Self.signIn(client, provider).0))
            let before = try await provider.jwksFetches()
            try await provider.control(#"{"email": "author@test.org", "kid": "stranger"}"#)
            #expect(try await Self.signIn(client, provider).0.status == .unauthorized)
            #expect(try await provider.jwksFetches() == before)
        }
    }

    @Test func unknownAndDisabledAccounts() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await app.test { client in
            try await provider.control(#"{"email": "stranger@agency.gov"}"#)
            let (unknown, _, _) = try await Self.signIn(client, provider)
            #expect(unknown.status == .forbidden && unknown.text.contains("Ask a site manager"))
            let id = try #require(try await app.database.user(email: "reviewer@test.org")?.id)
            try await app.database.setUserDisabled(id: id, disabled: true, actor: .system)
            try await provider.control(#"{"email": "reviewer@test.org"}"#)
            let (disabled, _, _) = try await Self.signIn(client, provider)
            #expect(disabled.status == .forbidden && disabled.text.contains("disabled"))
        }
        #expect(try await app.database.user(email: "stranger@agency.gov") == nil)

        let creating = try await Self.app(provider) { $0.oidc?.createUsers = true }
        try await provider.control(#"{"email": "new.ranger@agency.gov"}"#)
        try await creating.test { client in
            let (created, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(created))
        }
        let user = try #require(try await creating.database.user(email: "new.ranger@agency.gov"))
        #expect(!user.isAdmin && user.displayName == "Pat Ranger")
    }

    @Test func aOneTimePasswordIsVoidedWhenItsOwnerSignsOnThroughTheProvider() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        let created = try await app.database.createUser(
            email: "new.hire@agency.gov",
            displayName: "New Hire",
            password: "one-time-pass-1",
            isAdmin: false,
            mustChangePassword: true,
            bcryptCost: 4,
            actor: .system
        )
        try await provider.control(#"{"email": "new.hire@agency.gov"}"#)
        try await app.test { client in
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(response))
            #expect(response.location == "/sites/alpha", "not sent to change a password they do not use")
            // The one-time password an administrator handed out no longer signs in.
            var browser = try await client.anonymousBrowser()
            browser.absorb(try await client.get("/login", session: browser))
            let attempt = try await client.post("/login", form: ["email": "new.hire@agency.gov", "password": "one-time-pass-1"], session: browser)
            #expect(!Self.signedIn(attempt), "\(attempt.status)")
        }
        let user = try #require(try await app.database.user(id: created.id))
        #expect(!user.mustChangePassword)
        #expect(try await app.database.actions().contains("user.oneTimePasswordVoided"))
    }

    @Test func anAdminTurnsPasswordSignInOffForASite() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        let alpha = try #require(try await app.database.site(slug: "alpha")?.id)
        try await app.test { client in
            let admin = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/sites/\(alpha)", session: admin)
            #expect(page.text.contains("Members sign in with their agency account only"))
            let saved = try await client.post("/admin/sites/\(alpha)/sign-in", form: ["passwordsOff": "on"], session: admin)
            #expect(saved.status == .seeOther)

            // A member of the site: the right password is refused, with what to do instead; nothing is signed in.
            var browser = try await client.anonymousBrowser()
            browser.absorb(try await client.get("/login", session: browser))
            let refused = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            #expect(refused.status == .forbidden && !Self.signedIn(refused), "\(refused.status)")
            #expect(refused.text.contains("signs in with your agency account only"))
            // The same person through the provider, and an administrator with a password, still get in.
            try await provider.control(#"{"email": "author@test.org"}"#)
            #expect(Self.signedIn(try await Self.signIn(client, provider).0))
            _ = try await client.signIn("admin@test.org")

            // On again: the password works.
            _ = try await client.post("/admin/sites/\(alpha)/sign-in", form: [:], session: admin)
            _ = try await client.signIn("author@test.org")
        }
        let details = try await app.database.read {
            try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'site.passwordSignIn' ORDER BY id")
        }
        #expect(details == ["members sign in through the agency's provider only", "members may sign in with a password"])
    }

    /// Login.gov's way: a public client (PKCE alone, no secret), `acr_values`, and the email only at UserInfo.
    @Test func aPublicClientWhoseEmailComesFromUserInfoSignsIn() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let acr = "urn:acr.login.gov:auth-only"
        let app = try await TestApp.seeded {
            var settings = OIDCSettings(issuer: provider.issuer, clientId: Self.clientId + "-public", clientSecretFile: nil)
            settings.acrValues = acr
            settings.prompt = "select_account"
            $0.oidc = settings
        }.0
        try await provider.control(#"{"email": "author@test.org", "id_token_email": false}"#)
        try await app.test { client in
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(response), "\(response.status) \(response.text.prefix(300))")
            #expect(try await provider.stats()["acr_values"] as? String == acr)
            #expect(try await provider.stats()["prompt"] as? String == "select_account")
            #expect(try await provider.stats()["userinfo_fetches"] as? Int == 1)

            // UserInfo about someone else than the ID token: refused.
            try await provider.control(#"{"email": "author@test.org", "id_token_email": false, "userinfo_sub": "agency-someone-else"}"#)
            let (mixed, _, _) = try await Self.signIn(client, provider)
            #expect(mixed.status == .unauthorized && !Self.signedIn(mixed))
        }
        let details = try await app.database.read {
            try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'session.ssoFailed'")
        }
        #expect(details.contains { $0.contains("another person") }, "\(details)")
    }

    @Test func aProviderThatIsDownIsSaidAndPasswordsStillWork() async throws {
        // A port nobody listens on.
        let socket = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = socket.localAddress?.port ?? 9
        try await socket.close()
        let app = try await Self.app(nil, issuer: "http://127.0.0.1:\(port)")
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            let start = try await client.get("/auth/oidc/start", session: browser)
            #expect(start.status == .serviceUnavailable)
            #expect(start.text.contains("not answering"))
            _ = try await client.signIn("author@test.org")
        }
    }

    @Test func signingOutEndsTheProvidersSessionToo() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await provider.control(#"{"email": "author@test.org"}"#)
        try await app.test { client in
            let (response, browser, _) = try await Self.signIn(client, provider)
            var session = browser
            session.absorb(response)
            session.absorb(try await client.get("/sites", session: session))
            let out = try await client.post("/logout", form: [:], session: session)
            #expect(out.location?.hasPrefix(provider.issuer + "/logout?") == true, "\(out.location ?? "")")
        }
    }

    // MARK: The second step after single sign-on, and the provider's subject

    /// Enrols `email` in two-step sign-in directly (a code of a minute ago confirms it): its key.
    static func enrol(_ app: TestApp, _ email: String) async throws -> String {
        let id = try #require(try await app.database.user(email: email)?.id)
        let secret = try await app.database.beginTwoStepEnrolment(userId: id, actor: .system)
        let earlier = Date().addingTimeInterval(-60)
        let code = TwoStepCodes.code(secret: secret, step: TwoStepCodes.step(at: earlier))
        #expect(try await app.database.confirmTwoStepEnrolment(userId: id, code: code, at: earlier, actor: .system) != nil)
        return secret
    }

    /// Where a sign-on that must still give a second step went: that step's page, with a half-signed-in cookie and no
    /// session.
    static func askedForSecondStep(_ response: TestResponse, page: String) -> Bool {
        response.status == .seeOther && response.location == page && !signedIn(response)
            && response.setCookies.contains { $0.hasPrefix("tc_pending=") && !$0.hasPrefix("tc_pending=;") }
    }

    @Test("an enrolled account gives its own code after single sign-on, unless the ID token's amr or acr shows a second factor")
    func anEnrolledAccountGivesItsCodeUnlessTheProviderAskedForOne() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider) { $0.oidc?.secondFactorACR = ["urn:agency:mfa"] }
        let secret = try await Self.enrol(app, "author@test.org")
        try await app.test { client in
            for claims in [#""amr": ["pwd"]"#, #""acr": "urn:agency:password""#, #""amr": "pwd""#] {
                try await provider.control(#"{"email": "author@test.org", \#(claims)}"#)
                let (response, _, _) = try await Self.signIn(client, provider)
                #expect(Self.askedForSecondStep(response, page: "/login/code"), "\(claims): \(response.status) \(response.setCookies)")
            }
            // The code page finishes what the provider began, to where the sign-on was going.
            try await provider.control(#"{"email": "author@test.org"}"#)
            let (asked, browser, _) = try await Self.signIn(client, provider)
            #expect(Self.askedForSecondStep(asked, page: "/login/code"))
            var pending = browser
            pending.absorb(asked)
            let code = TwoStepCodes.code(secret: secret, step: TwoStepCodes.step(at: Date()))
            let done = try await client.post("/login/code", form: ["code": code], session: pending)
            #expect(Self.signedIn(done), "\(done.status) \(done.text.prefix(300))")
            #expect(done.location == "/sites/alpha")
            // A provider that says it asked for a second factor is believed.
            for claims in [#""amr": ["pwd", "otp"]"#, #""amr": ["mfa"]"#, #""acr": "urn:agency:mfa""#] {
                try await provider.control(#"{"email": "author@test.org", \#(claims)}"#)
                let (response, _, _) = try await Self.signIn(client, provider)
                #expect(Self.signedIn(response), "\(claims): \(response.status) \(response.location ?? "")")
            }
            // An account that never set up a second step, and is no admin, signs on with the provider's word alone.
            try await provider.control(#"{"email": "reviewer@test.org", "amr": ["pwd"]}"#)
            let (reviewer, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(reviewer))
        }
    }

    @Test("an admin whose sign-on shows a password alone sets up and gives a second step here; the operator can trust the provider instead")
    func anAdminIsAskedForASecondStep() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await provider.control(#"{"email": "admin@test.org", "amr": ["pwd"]}"#)
        try await app.test { client in
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(Self.askedForSecondStep(response, page: "/login/enrol"), "\(response.status) \(response.location ?? "")")
        }
        let trusting = try await Self.app(provider) { $0.oidc?.askSecondStep = false }
        try await trusting.test { client in
            let (response, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(response), "\(response.status) \(response.location ?? "")")
        }
    }

    @Test("the provider's sub is kept at the first sign-on; another sub for the same email, or one linked to another account, is refused and audited")
    func aChangedSubjectIsRefused() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let app = try await Self.app(provider)
        try await app.test { client in
            try await provider.control(#"{"email": "author@test.org"}"#)
            let (first, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(first))
            #expect(try await app.database.actions().contains("user.ssoLinked"))
            let (again, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(again), "the same person again")

            // The agency gave the address to someone new: their sign-on is not the account's owner's.
            try await provider.control(#"{"email": "author@test.org", "sub": "agency-newcomer"}"#)
            let (changed, _, _) = try await Self.signIn(client, provider)
            #expect(changed.status == .forbidden && !Self.signedIn(changed))
            #expect(changed.text.contains("Ask an administrator to reset your sign-in"))
            // The author's agency account cannot sign in as another account here either.
            try await provider.control(#"{"email": "reviewer@test.org", "sub": "agency-author@test.org"}"#)
            let (elsewhere, _, _) = try await Self.signIn(client, provider)
            #expect(elsewhere.status == .forbidden && !Self.signedIn(elsewhere))
            let reasons = try await app.database.read {
                try String.fetchAll($0, sql: "SELECT detail FROM auditEvent WHERE action = 'session.ssoFailed' ORDER BY id")
            }
            #expect(reasons.contains { $0.hasPrefix("subject changed for author@test.org") }, "\(reasons)")
            #expect(reasons.contains { $0.hasPrefix("subject of reviewer@test.org is already linked") }, "\(reasons)")

            // An administrator's reset forgets the link: the new person's sign-on is kept from then on.
            let id = try #require(try await app.database.user(email: "author@test.org")?.id)
            _ = try await app.database.resetTwoStep(userId: id, actor: .system)
            try await provider.control(#"{"email": "author@test.org", "sub": "agency-newcomer"}"#)
            let (relinked, _, _) = try await Self.signIn(client, provider)
            #expect(Self.signedIn(relinked))
            try await provider.control(#"{"email": "author@test.org"}"#)
            let (old, _, _) = try await Self.signIn(client, provider)
            #expect(old.status == .forbidden, "the earlier subject is now the stranger")
        }
    }
}
