import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// Invitations: made by managers and admins (panel and API), carried by a real SMTP server, used once.
@Suite(.serialized) struct EmailInvitationTests {
    /// The token of the first `/invite/…` link in `text`.
    static func token(in text: String) -> String? {
        guard let range = text.range(of: #"/invite/[A-Za-z0-9_-]{20,}"#, options: .regularExpression) else { return nil }
        return String(text[range].dropFirst("/invite/".count))
    }

    static func apiToken(_ app: TestApp, _ email: String) async throws -> String {
        let user = try #require(try await app.database.user(email: email))
        return try await app.database.createAPIToken(userId: user.id, name: "test", actor: .system).token
    }

    /// A manager invites from the members page; the email arrives by SMTP; its link makes the account, joins the site
    /// with the role and signs in; the same link then gets a clear "already used" page.
    @Test func anInvitationArrivesAndItsLinkWorksOnce() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(sink.url) }
        try await app.seed()
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            let members = try await client.get("/sites/alpha/members", session: manager)
            #expect(
                members.text.contains(#"action="/sites/alpha/members" novalidate data-add-member"#),
                "the members page has the one add-or-invite form"
            )
            let invite = try await client.post(
                "/sites/alpha/invitations",
                form: ["email": "Kim.Ranger@parks.example", "role": "reviewer"],
                session: manager
            )
            #expect(invite.status == .seeOther)
            #expect(invite.location == "/sites/alpha/invitations")
            let list = try await client.get("/sites/alpha/invitations", session: manager)
            #expect(list.text.contains("Kim.Ranger@parks.example"))
            #expect(Self.token(in: list.text) == nil, "with email on, the link is never shown in the panel")

            try await app.drainMail(until: { !sink.messages(to: "Kim.Ranger@parks.example").isEmpty })
            let mail = try #require(sink.messages(to: "Kim.Ranger@parks.example").first)
            #expect(mail.to == "Kim.Ranger@parks.example")
            #expect(mail.subject == "You are invited to Alpha District on Trail Companion")
            #expect(mail.body.contains("manager invited you to join Alpha District on Trail Companion as reviewer."))
            #expect(mail.body.contains("http://127.0.0.1:8080/invite/"))
            let token = try #require(Self.token(in: mail.body))
            let stored: String? = try await app.database.scalar("SELECT tokenHash FROM invitation")
            #expect(stored == SecretToken.hash(token), "only the token's hash is stored")

            var browser = BrowserSession()
            let page = try await client.get("/invite/\(token)", session: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains("Create your account"))
            browser.absorb(page)
            let short = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Kim", "password": "short", "confirmPassword": "short"],
                session: browser
            )
            #expect(short.status == .unprocessableContent)
            #expect(short.text.contains("Use at least 10 characters."))
            let joined = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Kim Ranger", "password": "a long new password", "confirmPassword": "a long new password"],
                session: browser
            )
            #expect(joined.status == .seeOther)
            #expect(joined.location == "/sites/alpha")
            browser.absorb(joined)
            let site = try await client.get("/sites/alpha", session: browser)
            #expect(site.status == .ok, "the new account is signed in and sees its site")
            browser.absorb(site)
            let user = try #require(try await app.database.user(email: "Kim.Ranger@parks.example"))
            #expect(user.displayName == "Kim Ranger")
            let role: String? = try await app.database.scalar("SELECT role FROM membership WHERE userId = ?", [user.id])
            #expect(role == "reviewer")
            let actions: [String] = try await app.database.read { db in
                try String.fetchAll(db, sql: "SELECT action FROM auditEvent WHERE objectType = 'invitation' ORDER BY id")
            }
            #expect(actions == ["invitation.create", "invitation.accept"])

            // Used: a second visit and a second POST are refused with a page that says so.
            let again = try await client.get("/invite/\(token)", session: nil)
            #expect(again.status == .gone)
            #expect(again.text.contains("already been used"))
            let reuse = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Mallory", "password": "another password", "confirmPassword": "another password"],
                session: browser
            )
            #expect(reuse.status == .gone)
            let users: Int? = try await app.database.scalar("SELECT COUNT(*) FROM user WHERE displayName = 'Mallory'")
            #expect(users == 0)
        }
    }

    /// An expired link and an unknown one get clear pages (410) and change nothing.
    @Test func expiredAndUnknownLinksAreRefused() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        let manager = try #require(try await app.database.user(email: "manager@test.org"))
        let (_, token) = try await app.database.createInvitation(
            siteId: seed.alphaId,
            email: "late@parks.example",
            role: .author,
            inviter: AuthenticatedUser(manager),
            actor: .system,
            now: Date().addingTimeInterval(-8 * 86_400),
            mail: nil
        )
        try await app.test(.router) { client in
            let expired = try await client.get("/invite/\(token)", session: nil)
            #expect(expired.status == .gone)
            #expect(expired.text.contains("has expired"))
            var browser = BrowserSession()
            browser.absorb(try await client.get("/login", session: nil))
            let post = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Late", "password": "a long new password", "confirmPassword": "a long new password"],
                session: browser
            )
            #expect(post.status == .gone)
            #expect(try await app.database.user(email: "late@parks.example") == nil)
            let unknown = try await client.get("/invite/not-a-real-token-at-all-0123456789", session: nil)
            #expect(unknown.status == .gone)
            #expect(unknown.text.contains("not valid"))
        }
    }

    /// Authors cannot invite (403, panel and API); a malformed email or role gets 422 naming the field; an outsider
    /// does not even see the site (404).
    @Test func onlyManagersAndAdminsInviteAndBadFieldsAreNamed() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        let author = try await Self.apiToken(app, "author@test.org")
        let outsider = try await Self.apiToken(app, "outsider@test.org")
        let admin = try await Self.apiToken(app, "admin@test.org")
        try await app.test(.router) { client in
            let path = "/api/v1/manage/sites/alpha/invitations"
            let refused = try await client.api(.post, path, token: author, json: #"{"email":"x@parks.example","role":"author"}"#)
            #expect(refused.status == .forbidden)
            let hidden = try await client.api(.post, path, token: outsider, json: #"{"email":"x@parks.example","role":"author"}"#)
            #expect(hidden.status == .notFound)
            let badEmail = try await client.api(.post, path, token: admin, json: #"{"email":"not an email","role":"author"}"#)
            #expect(badEmail.status == .unprocessableContent)
            let fields = ((badEmail.json as? [String: Any])?["error"] as? [String: Any])?["fields"] as? [String: String]
            #expect(fields?["email"]?.isEmpty == false, "\(badEmail.text)")
            #expect(fields?["role"] == nil)
            let badRole = try await client.api(.post, path, token: admin, json: #"{"email":"x@parks.example","role":"owner"}"#)
            #expect(badRole.status == .unprocessableContent)
            #expect((((badRole.json as? [String: Any])?["error"] as? [String: Any])?["fields"] as? [String: String])?["role"] != nil)
            let anonymous = try await client.api(.post, path, token: nil, json: #"{"email":"x@parks.example","role":"author"}"#)
            #expect(anonymous.status == .unauthorized)
            let count: Int? = try await app.database.scalar("SELECT COUNT(*) FROM invitation")
            #expect(count == 0, "no refused request made an invitation")

            let authorSession = try await client.signIn("author@test.org")
            let panel = try await client.post(
                "/sites/alpha/invitations",
                form: ["email": "x@parks.example", "role": "author"],
                session: authorSession
            )
            #expect(panel.status == .forbidden)
            let manager = try await client.signIn("manager@test.org")
            let badForm = try await client.post("/sites/alpha/invitations", form: ["email": "nope", "role": "author"], session: manager)
            #expect(badForm.status == .unprocessableContent)
            #expect(badForm.text.contains("Enter an email address like name@example.org."))
        }
    }

    /// Without SMTP the panel (and the API) show the link to pass on; nothing is queued.
    @Test func withoutSMTPThePanelShowsTheLink() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        let admin = try await Self.apiToken(app, "admin@test.org")
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            let created = try await client.post("/sites/alpha/invitations", form: ["email": "pat@parks.example", "role": "author"], session: manager)
            #expect(created.status == .created)
            #expect(created.text.contains("pass this link on to pat@parks.example"))
            let token = try #require(Self.token(in: created.text))
            #expect(try await client.get("/invite/\(token)", session: nil).status == .ok)
            let api = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/invitations",
                token: admin,
                json: #"{"email":"sam@parks.example","role":"manager"}"#
            )
            #expect(api.status == .created)
            let body = try #require(api.json as? [String: Any])
            #expect(body["emailed"] as? Bool == false)
            #expect(body["role"] as? String == "manager" && body["site"] as? String == "alpha")
            #expect((body["link"] as? String).flatMap(Self.token(in:)) != nil)
        }
        let queued: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox")
        #expect(queued == 0)
    }

    /// Someone who already has an account signs in first and joins with one click, with the invited role.
    @Test func anExistingAccountJoinsAfterSigningIn() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        let admin = try #require(try await app.database.user(email: "admin@test.org"))
        let (_, token) = try await app.database.createInvitation(
            siteId: seed.bravoId,
            email: "reviewer@test.org",
            role: .author,
            inviter: AuthenticatedUser(admin),
            actor: .system,
            mail: nil
        )
        try await app.test(.router) { client in
            let anonymous = try await client.get("/invite/\(token)", session: nil)
            #expect(anonymous.text.contains("Sign in to accept"))
            #expect(!anonymous.text.contains("Create your account"))
            let other = try await client.signIn("author@test.org")
            let wrong = try await client.post("/invite/\(token)", form: [:], session: other)
            #expect(wrong.status == .forbidden)
            let reviewer = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/invite/\(token)", session: reviewer)
            #expect(page.text.contains("Join Bravo District"))
            let joined = try await client.post("/invite/\(token)", form: [:], session: reviewer)
            #expect(joined.status == .seeOther)
            #expect(joined.location == "/sites/bravo")
        }
        let role: String? = try await app.database.scalar(
            "SELECT role FROM membership JOIN user ON user.id = membership.userId WHERE user.email = 'reviewer@test.org' AND siteId = ?",
            [seed.bravoId]
        )
        #expect(role == "author")
    }
}
