import Foundation
import GRDB
import Hummingbird
import HummingbirdBcrypt
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// An invitation link shown to its inviter (no SMTP) proves nothing about the invited address: whoever holds it can
/// make the account. Such an account is marked as not proven; it cannot approve a tour until a single sign-on through
/// the agency's provider (the browser suite's single sign-on test does that with a real provider) or an administrator
/// proves it, and the sign-on voids whatever the link's holder set up.
@Suite(.serialized) struct InvitationProofTests {
    /// The manager makes the colleague's account from the shown link; its approval is refused with a reason and counts
    /// nothing, until an admin confirms the address.
    @Test func anAccountFromAShownLinkCannotApproveUntilProven() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let app = env.app
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            let shown = try await client.post("/sites/alpha/members", form: ["email": "casey@parks.example", "role": "reviewer"], session: manager)
            #expect(shown.status == .created, "no SMTP: the one member form invites and shows the link")
            let token = try #require(EmailInvitationTests.token(in: shown.text))
            let linkShown: Int? = try await app.database.scalar("SELECT linkShown FROM invitation")
            #expect(linkShown == 1)

            var holder = BrowserSession()
            holder.absorb(try await client.get("/invite/\(token)", session: nil))
            let made = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Casey", "password": "chosen by the manager", "confirmPassword": "chosen by the manager"],
                session: holder
            )
            #expect(made.status == .seeOther)
            let casey = try #require(try await app.database.user(email: "casey@parks.example"))
            #expect(!casey.addressProven)

            let author = try await env.token("author@test.org")
            let request = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let caseyToken = try await env.token("casey@parks.example")
            let refused = try await client.publishAction(request, "approve", token: caseyToken)
            #expect(refused.status == .forbidden)
            #expect(refused.text.contains("Your email address is not confirmed yet, so your approval cannot count."))
            let reviews: Int? = try await app.database.scalar("SELECT COUNT(*) FROM review")
            #expect(reviews == 0, "nothing was counted")
            #expect(try await client.publishState(request, token: author)["state"] as? String == "pending")

            // The admin's list says who invited whom and that the address is not proven; confirming it lets it count.
            let admin = try await client.signIn("admin@test.org")
            let users = try await client.get("/admin/users", session: admin)
            #expect(users.text.contains("Invited by manager@test.org to Alpha District"))
            #expect(users.text.contains("data-address-unproven"))
            let confirmed = try await client.post("/admin/users/\(casey.id)/confirm-address", form: [:], session: admin)
            #expect(confirmed.status == .seeOther)
            #expect(try await app.database.user(id: casey.id)?.addressProven == true)
            let approved = try await client.publishAction(request, "approve", token: caseyToken)
            #expect(approved.status == .ok, "\(approved.text)")
            #expect(try await client.publishState(request, token: author)["state"] as? String == "ready")
        }
    }

    /// A mailed link reached the address: its account is proven from the start.
    @Test func anAccountFromAMailedLinkIsProven() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(sink.url) }
        try await app.seed()
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            let sent = try await client.post("/sites/alpha/members", form: ["email": "lee@parks.example", "role": "reviewer"], session: manager)
            #expect(sent.status == .seeOther)
            #expect(sent.location == "/sites/alpha/members")
            try await app.drainMail(until: { !sink.messages(to: "lee@parks.example").isEmpty })
            let mail = try #require(sink.messages(to: "lee@parks.example").first)
            let token = try #require(EmailInvitationTests.token(in: mail.body))
            var browser = BrowserSession()
            browser.absorb(try await client.get("/invite/\(token)", session: nil))
            let joined = try await client.post(
                "/invite/\(token)",
                form: ["displayName": "Lee", "password": "a long new password", "confirmPassword": "a long new password"],
                session: browser
            )
            #expect(joined.status == .seeOther)
            #expect(try await app.database.user(email: "lee@parks.example")?.addressProven == true)
        }
    }

    /// The provider's word on the address (its first sign-on) voids the link holder's password, sessions, tokens and
    /// authenticator, in the transaction that binds the provider's `sub`; a proven account is left alone.
    @Test func theFirstSignOnVoidsWhatTheLinkHolderSetUp() async throws {
        let (app, _) = try await TestApp.seeded()
        let holderPassword = "chosen by the manager"
        let user = try await app.database.write { db in
            try AppDatabase.insertUser(
                db,
                email: "casey@parks.example",
                displayName: "Casey",
                hash: Bcrypt.hash(holderPassword, cost: 4),
                isAdmin: false,
                mustChangePassword: false,
                addressProven: false,
                actor: .system
            )
        }
        let apiToken = try await app.database.createAPIToken(userId: user.id, name: "holder's", actor: .system).token
        try await app.test(.router) { client in
            let holder = try await client.signIn("casey@parks.example", password: holderPassword)
            #expect(try await client.get("/sites", session: holder).status == .ok)

            let voidHash = Bcrypt.hash(SecretToken.make(), cost: 4)
            let link = try await app.database.linkSingleSignOnSubject(
                userId: user.id,
                issuer: "https://login.agency.example",
                subject: "agency-0004",
                actor: .system,
                provingAddressWith: voidHash
            )
            #expect(link == .linked)
            let after = try #require(try await app.database.user(id: user.id))
            #expect(after.addressProven)
            #expect(!Bcrypt.verify(holderPassword, hash: after.passwordHash), "the holder's password opens nothing")
            #expect(try await client.get("/sites", session: holder).status != .ok, "the holder's session ended")
            let revoked: Int? = try await app.database.scalar("SELECT COUNT(*) FROM apiToken WHERE userId = ? AND revokedAt IS NOT NULL", [user.id])
            #expect(revoked == 1)
            let api = try await client.api(.get, "/api/v1/manage/tours?site=alpha", token: apiToken)
            #expect(api.status == .unauthorized, "the holder's token was revoked")
            let audited: Int? = try await app.database.scalar("SELECT COUNT(*) FROM auditEvent WHERE action = 'user.addressProven'")
            #expect(audited == 1)

            // A second sign-on of the now-proven account changes nothing.
            let again = try await app.database.linkSingleSignOnSubject(
                userId: user.id,
                issuer: "https://login.agency.example",
                subject: "agency-0004",
                actor: .system,
                provingAddressWith: Bcrypt.hash(SecretToken.make(), cost: 4)
            )
            #expect(again == .same)
            #expect(try await app.database.user(id: user.id)?.passwordHash == after.passwordHash)
        }
    }

    /// With a provider that makes accounts, a shown link offers sign-on only: nobody can set a password through it.
    @Test func aShownLinkIsSignOnOnlyWhereTheProviderMakesAccounts() async throws {
        var oidc = OIDCSettings(issuer: "https://login.agency.example", clientId: "trail", clientSecretFile: nil)
        oidc.createUsers = true
        let shown = Invitation(
            id: 1,
            siteId: 1,
            email: "casey@parks.example",
            role: .reviewer,
            tokenHash: "",
            invitedBy: nil,
            createdAt: Date(),
            expiresAt: Date(),
            acceptedAt: nil,
            acceptedBy: nil,
            linkShown: true
        )
        var mailed = shown
        mailed.linkShown = false
        #expect(InvitationController.signOnOnly(shown, oidc: oidc))
        #expect(!InvitationController.signOnOnly(mailed, oidc: oidc))
        oidc.createUsers = false
        #expect(!InvitationController.signOnOnly(shown, oidc: oidc), "without account creation the password form stays")
        #expect(!InvitationController.signOnOnly(shown, oidc: nil))
    }

    /// A display name is one line: a name with a line break is refused and no account is made.
    @Test func aDisplayNameIsOneLine() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            let shown = try await client.post("/sites/alpha/members", form: ["email": "pat@parks.example", "role": "author"], session: manager)
            let token = try #require(EmailInvitationTests.token(in: shown.text))
            var browser = BrowserSession()
            browser.absorb(try await client.get("/invite/\(token)", session: nil))
            let refused = try await client.post(
                "/invite/\(token)",
                form: [
                    "displayName": "Pat\nClick https://evil.example", "password": "a long new password", "confirmPassword": "a long new password",
                ],
                session: browser
            )
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("Enter the name on one line, without tabs or line breaks."))
            #expect(try await app.database.user(email: "pat@parks.example") == nil)
        }
        #expect(Mailer.oneLine("Pat\r\nBcc: x") == "Pat  Bcc: x")
    }

    /// A provider that is down is asked once a minute, not once per visitor: the failure is remembered (and audited
    /// once), and after the minute it is asked again.
    @Test func aFailedDiscoveryIsRemembered() async throws {
        // Port 1 on loopback: refused at once, no waiting.
        let provider = OIDCProvider(settings: OIDCSettings(issuer: "http://127.0.0.1:1", clientId: "trail", clientSecretFile: nil))
        let start = Date()
        do {
            _ = try await provider.discover(now: start)
            Issue.record("discovery of a closed port succeeded")
        } catch let error as OIDCUnavailable {
            #expect(!error.remembered)
        }
        do {
            _ = try await provider.discover(now: start.addingTimeInterval(30))
            Issue.record("the remembered failure was not answered")
        } catch let error as OIDCUnavailable {
            #expect(error.remembered, "within the minute the provider is not asked again")
        }
        do {
            _ = try await provider.discover(now: start.addingTimeInterval(OIDCProvider.failureMemory + 1))
            Issue.record("discovery of a closed port succeeded")
        } catch let error as OIDCUnavailable {
            #expect(!error.remembered, "after the minute it is asked again")
        }
    }
}
