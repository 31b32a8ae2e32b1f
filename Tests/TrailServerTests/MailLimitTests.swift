import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// What a signed-in person can make the server send, against a real SMTP server (aiosmtpd): one open invitation per
/// address and site, a limit per inviter and per address, review requests merged, a daily ceiling, and user text
/// marked as theirs.
@Suite(.serialized) struct MailLimitTests {
    /// Inviting the same address again sends the same invitation again: one row, a new link, the old link dead.
    @Test func aRepeatInvitationIsTheSameInvitationAgain() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(sink.url) }
        try await app.seed()
        try await app.test(.router) { client in
            let manager = try await client.signIn("manager@test.org")
            for role in ["author", "reviewer"] {
                let sent = try await client.post("/sites/alpha/members", form: ["email": "kim@parks.example", "role": role], session: manager)
                #expect(sent.status == .seeOther)
            }
            try await app.drainMail(until: { sink.messages(to: "kim@parks.example").count == 2 })
            let rows: Int? = try await app.database.scalar("SELECT COUNT(*) FROM invitation WHERE email = 'kim@parks.example'")
            #expect(rows == 1, "one open invitation per address and site")
            let role: String? = try await app.database.scalar("SELECT role FROM invitation")
            #expect(role == "reviewer", "the repeat carries the new role")
            let mails = sink.messages(to: "kim@parks.example")
            let first = try #require(EmailInvitationTests.token(in: mails[0].body))
            let second = try #require(EmailInvitationTests.token(in: mails[1].body))
            #expect(first != second)
            #expect(try await client.get("/invite/\(first)", session: nil).status == .gone, "the old link stopped working")
            #expect(try await client.get("/invite/\(second)", session: nil).status == .ok)
            let resent: Int? = try await app.database.scalar("SELECT COUNT(*) FROM auditEvent WHERE action = 'invitation.resend'")
            #expect(resent == 1)
        }
    }

    /// An address gets at most three invitation emails a day; the fourth is refused (429) and nothing is queued.
    @Test func anAddressGetsAtMostThreeInvitationsADay() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let app = try await TestApp.make { $0.mail = .testing(sink.url) }
        try await app.seed()
        let admin = try await EmailInvitationTests.apiToken(app, "admin@test.org")
        try await app.test(.router) { client in
            for _ in 0..<AppDatabase.invitationMailsPerAddressPerDay {
                let sent = try await client.api(
                    .post,
                    "/api/v1/manage/sites/alpha/invitations",
                    token: admin,
                    json: #"{"email":"flood@parks.example","role":"author"}"#
                )
                #expect(sent.status == .created)
            }
            let refused = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/invitations",
                token: admin,
                json: #"{"email":"flood@parks.example","role":"author"}"#
            )
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "86400")
            #expect(refused.text.contains("has been sent 3 invitations in the last day"))
            let queued: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox WHERE recipient = 'flood@parks.example'")
            #expect(queued == 3)
        }
    }

    /// One person sends at most 30 invitations an hour, shown links included; the next gets 429 and stores nothing.
    @Test func anInviterSendsAtMostThirtyAnHour() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        let manager = try await EmailInvitationTests.apiToken(app, "manager@test.org")
        try await app.test(.router) { client in
            for index in 0..<AppDatabase.invitationsPerInviterPerHour {
                let made = try await client.api(
                    .post,
                    "/api/v1/manage/sites/alpha/invitations",
                    token: manager,
                    json: #"{"email":"person\#(index)@parks.example","role":"author"}"#
                )
                #expect(made.status == .created)
            }
            let before = try await app.database.snapshot()
            let refused = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/invitations",
                token: manager,
                json: #"{"email":"one-more@parks.example","role":"author"}"#
            )
            #expect(refused.status == .tooManyRequests)
            #expect(refused.text.contains("You have sent 30 invitations in the last hour"))
            try await app.database.expectUnchanged(since: before)
        }
    }

    /// An author's submit-and-withdraw loop mails each reviewer once per tour within the merge window.
    @Test func reviewRequestsForOneTourAreMerged() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let url = sink.url
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.mail = .testing(url) })
        let app = env.app
        try await app.test(.router) { client in
            let author = try await env.token("author@test.org")
            for _ in 0..<5 {
                let request = try await client.publishSubmit(env, token: author)
                #expect(try await client.publishAction(request, "withdraw", token: author).status == .ok)
            }
            try await app.drainMail(until: { sink.messages(to: "reviewer@test.org").count == 1 })
            _ = await app.outbox.drain()
            #expect(sink.messages(to: "reviewer@test.org").count == 1)
            #expect(sink.messages(to: "reviewer2@test.org").count == 1)
            let queued: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox WHERE kind = 'reviewRequested'")
            #expect(queued == 3, "one per reviewer and manager, not five each")
        }
    }

    /// At the daily ceiling the outbox stops sending: the rest waits (nothing is lost), and admins see why.
    @Test func theDailyCeilingHoldsMailAndTellsAdmins() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        var settings = MailSettings.testing(sink.url)
        settings.dailyLimit = 2
        let app = try await TestApp.make { $0.mail = settings }
        try await app.seed()
        try await app.database.write { db in
            for index in 0..<4 {
                try AppDatabase.enqueueMail(db, to: "r\(index)@parks.example", subject: "Message \(index)", body: "Body", kind: .approved)
            }
        }
        #expect(await app.outbox.drain() == 2)
        #expect(await app.outbox.drain() == 0, "the ceiling holds on the next pass too")
        #expect(sink.messages().count == 2)
        let queued: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox WHERE state = 'queued'")
        #expect(queued == 2, "the rest waits, nothing is given up")
        try await app.test(.router) { client in
            let admin = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/email", session: admin)
            #expect(page.text.contains(#"data-notice="mail-ceiling""#))
            #expect(page.text.contains("Sent in the last 24 hours: 2 of at most 2."))
        }
        // A day later the window has room again.
        try await app.database.write { db in try db.execute(sql: "UPDATE outbox SET sentAt = sentAt - 86401 WHERE state = 'sent'") }
        #expect(await app.outbox.drain() == 2)
        #expect(sink.messages().count == 4)
    }

    /// Text a person wrote is set apart from the server's words, and names are one line.
    @Test func userTextIsMarkedAsTheirs() {
        let quoted = Mailer.quoted("Looks good.\nVisit https://evil.example to confirm.", by: "Rev\niewer")
        #expect(quoted == "Rev iewer wrote (their words, not Trail Companion's):\n> Looks good.\n> Visit https://evil.example to confirm.")
    }

    /// An address with letters outside ASCII is refused with what to do, and nothing is stored.
    @Test func aNonASCIIAddressIsRefused() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        let manager = try await EmailInvitationTests.apiToken(app, "manager@test.org")
        try await app.test(.router) { client in
            let before = try await app.database.snapshot()
            let refused = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/invitations",
                token: manager,
                json: #"{"email":"jos\#u{e9}@parks.example","role":"author"}"#
            )
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("Enter the address in plain letters"))
            try await app.database.expectUnchanged(since: before)
        }
    }

    /// A given-up invitation keeps no link; a given-up notification keeps its body for the admin to read.
    @Test func aGivenUpInvitationKeepsNoLink() async throws {
        let app = try await TestApp.make()
        try await app.database.write { db in
            try AppDatabase.enqueueMail(db, to: "a@parks.example", subject: "Invited", body: "http://x/invite/secret", kind: .invitation)
            try AppDatabase.enqueueMail(db, to: "b@parks.example", subject: "Approved", body: "Approved text", kind: .approved)
        }
        let ids: [Int64] = try await app.database.read { try Int64.fetchAll($0, sql: "SELECT id FROM outbox ORDER BY id") }
        for id in ids {
            try await app.database.markMailAttemptFailed(id: id, error: "550 refused", retryAt: Date(), giveUp: true)
        }
        let bodies: [String] = try await app.database.read { try String.fetchAll($0, sql: "SELECT body FROM outbox ORDER BY id") }
        #expect(bodies == ["", "Approved text"])
    }

    /// An author removed from the site hears nothing more of their requests.
    @Test func aRemovedAuthorGetsNoMail() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let url = sink.url
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.mail = .testing(url) })
        let app = env.app
        try await app.test(.router) { client in
            let author = try await env.token("author@test.org")
            let request = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let authorId = try await env.user("author@test.org").id
            try await app.database.removeMembership(siteId: env.seed.alphaId, userId: authorId, actor: .system)
            let reviewer = try await env.token("reviewer@test.org")
            #expect(try await client.publishAction(request, "approve", token: reviewer).status == .ok)
            try await app.drainMail(until: { sink.messages(to: "reviewer2@test.org").count == 1 })
            _ = await app.outbox.drain()
            let toAuthor: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox WHERE recipient = 'author@test.org'")
            #expect(toAuthor == 0)
        }
    }
}
