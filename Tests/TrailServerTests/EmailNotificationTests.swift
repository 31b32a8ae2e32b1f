import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// Notifications of the review workflow, through a real SMTP server: each reaches the right people, and someone who
/// turned one off on the account page gets none of it.
@Suite(.serialized, .scratch) struct EmailNotificationTests {
    /// Review requested → the site's reviewers and managers (not the author); approved, denied (with its comment) and
    /// released → the author who submitted.
    @Test func eachNotificationReachesTheRightPeople() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let url = sink.url
        let env = try await TestEnv.publishing(requiredApprovals: 2, configure: { $0.mail = .testing(url) })
        let app = env.app
        try await app.test(.router) { client in
            let author = try await env.token("author@test.org")
            let reviewer = try await env.token("reviewer@test.org")
            let reviewer2 = try await env.token("reviewer2@test.org")
            let manager = try await env.token("manager@test.org")

            let first = try await client.publishSubmit(env, token: author)
            try await app.drainMail(until: { sink.messages().count == 3 })
            let asked = sink.messages().filter { $0.subject == "Review requested: Ridge Walk" }
            #expect(Set(asked.flatMap(\.envelopeTo)) == ["reviewer@test.org", "reviewer2@test.org", "manager@test.org"])
            #expect(asked.allSatisfy { $0.body.contains("author submitted \"Ridge Walk\" (Alpha District) for review.") })
            #expect(asked.allSatisfy { $0.body.contains("http://127.0.0.1:8080/requests/\(first)") })
            #expect(sink.messages(to: "author@test.org").isEmpty, "the author is not asked to review their own tour")

            #expect(await env.buildAll() == 1)
            #expect(try await client.publishAction(first, "approve", token: reviewer, json: #"{"comment":"Nice loop."}"#).status == .ok)
            try await app.drainMail(until: { sink.messages(to: "author@test.org").count == 1 })
            let approved = try #require(sink.messages(to: "author@test.org").first)
            #expect(approved.subject == "Approved: Ridge Walk")
            #expect(approved.body.contains("reviewer approved \"Ridge Walk\""))
            #expect(approved.body.contains("reviewer wrote (their words, not Trail Companion's):\n> Nice loop."))
            #expect(approved.body.contains("Approvals so far: 1 of 2."))
            #expect(try await client.publishAction(first, "approve", token: reviewer2).status == .ok)
            try await app.drainMail(until: { sink.messages(to: "author@test.org").count == 2 })
            let ready = sink.messages(to: "author@test.org")[1]
            #expect(ready.body.contains("It has every approval it needs. Release it from the tour's page"))
            #expect(
                ready.body.contains("http://127.0.0.1:8080/tours/\(env.seed.tourId)#publish"),
                "the approved email leads to the tour page's Release"
            )

            #expect(try await client.publishAction(first, "push", token: manager).status == .ok)
            try await app.drainMail(until: { sink.messages(to: "author@test.org").count == 3 })
            let released = sink.messages(to: "author@test.org")[2]
            #expect(released.subject == "Released: Ridge Walk")
            #expect(released.body.contains("as version 1"))
            #expect(released.body.contains("http://127.0.0.1:8080/tours/\(env.seed.tourId)#publish"), "the visitor link and QR code are there")

            let second = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            let comment = "The waypoint text at Fish Lake needs the trail's closing time."
            let deny = try await client.publishAction(second, "deny", token: reviewer, json: #"{"comment":"\#(comment)"}"#)
            #expect(deny.status == .ok)
            try await app.drainMail(until: { sink.messages(to: "author@test.org").count == 4 })
            let denied = sink.messages(to: "author@test.org")[3]
            #expect(denied.subject == "Changes needed: Ridge Walk")
            #expect(denied.body.contains(comment))
            // Nobody is told of what they did themselves: the reviewers got only the two review requests.
            #expect(sink.messages(to: "reviewer@test.org").count == 2)
            #expect(sink.messages(to: "manager@test.org").count == 2)
        }
    }

    /// A reviewer who turned review requests off, and an author who turned approvals off, get none of those; the
    /// others still do, and what was left on still arrives.
    @Test func anOptedOutPersonGetsNone() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let url = sink.url
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.mail = .testing(url) })
        let app = env.app
        try await app.test(.router) { client in
            let reviewerSession = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/account/notifications", session: reviewerSession)
            #expect(page.status == .ok)
            #expect(page.text.contains(#"value="reviewRequested" id="notify-reviewRequested" checked"#))
            let saved = try await client.post(
                "/account/notifications",
                form: [:],
                session: reviewerSession,
                extra: [("on[]", "approved"), ("on[]", "denied"), ("on[]", "released"), ("on[]", "alert")]
            )
            #expect(saved.status == .seeOther)
            let after = try await client.get("/account/notifications", session: reviewerSession)
            #expect(!after.text.contains(#"value="reviewRequested" id="notify-reviewRequested" checked"#))
            let authorSession = try await client.signIn("author@test.org")
            _ = try await client.post(
                "/account/notifications",
                form: [:],
                session: authorSession,
                extra: [("on[]", "reviewRequested"), ("on[]", "denied"), ("on[]", "released"), ("on[]", "alert")]
            )
            #expect(try await app.database.notificationOptOuts(userId: try await env.user("author@test.org").id) == [.approved])
            let audit: Int? = try await app.database.scalar("SELECT COUNT(*) FROM auditEvent WHERE action = 'notifications.set'")
            #expect(audit == 2)

            let author = try await env.token("author@test.org")
            let manager = try await env.token("manager@test.org")
            let request = try await client.publishSubmit(env, token: author)
            #expect(await env.buildAll() == 1)
            #expect(try await client.publishAction(request, "approve", token: manager).status == .ok)
            #expect(try await client.publishAction(request, "push", token: manager).status == .ok)
            try await app.drainMail(until: { !sink.messages(to: "author@test.org").isEmpty })
            _ = await app.outbox.drain()
            #expect(sink.messages(to: "reviewer@test.org").isEmpty, "review requests are off for this reviewer")
            #expect(sink.messages(to: "reviewer2@test.org").map(\.subject) == ["Review requested: Ridge Walk"])
            #expect(sink.messages(to: "author@test.org").map(\.subject) == ["Released: Ridge Walk"], "approvals are off for the author")
            let queued: Int? = try await app.database.scalar("SELECT COUNT(*) FROM outbox WHERE recipient = 'reviewer@test.org'")
            #expect(queued == 0, "nothing is even queued for an opted-out person")
        }
    }

    /// A new alert reaches the site's managers at once, with what it says, the stops it closes and its end; not the
    /// manager who posted it, not a manager who turned alerts off, and not the site's authors and reviewers.
    @Test func anAlertReachesTheSitesOtherManagers() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let url = sink.url
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.mail = .testing(url) })
        let app = env.app
        _ = try await env.addMember("manager2@test.org", role: .manager)
        let quiet = try await env.addMember("manager3@test.org", role: .manager)
        try await app.database.setNotificationOptOuts(userId: quiet, off: [.alert], actor: .system)
        let stopId = env.seed.waypointId
        let stopNameRead: String? = try await app.database.scalar("SELECT name FROM waypoint WHERE id = ?", [stopId])
        let stopName = try #require(stopNameRead)
        try await app.test(.router) { client in
            let manager = try await env.token("manager@test.org")
            let posted = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/alerts",
                token: manager,
                json: AlertAPITests.body(message: "Water over the footbridge.\n<b>Use the ford.</b>", tourId: env.seed.tourId, closed: [stopId])
            )
            #expect(posted.status == .created, "\(posted.text)")
            try await app.drainMail(until: { !sink.messages(to: "manager2@test.org").isEmpty })
            _ = await app.outbox.drain()
            let mail = try #require(sink.messages(to: "manager2@test.org").first)
            #expect(mail.subject == "Closure posted for Alpha District: Bridge out")
            #expect(mail.body.contains("manager posted this closure for Alpha District (tour \"Ridge Walk\")"))
            #expect(
                mail.body.contains("> Water over the footbridge.\n> <b>Use the ford.</b>"),
                "the message as typed, in plain text, quoted as the poster's"
            )
            #expect(mail.body.contains("It closes these stops: \(stopName)."))
            #expect(mail.body.contains("http://127.0.0.1:8080/sites/alpha/alerts"))
            let queued = try await app.database.read { db in
                try String.fetchAll(db, sql: "SELECT recipient FROM outbox WHERE kind = 'alert' ORDER BY recipient")
            }
            #expect(queued == ["manager2@test.org"], "the poster, a manager who turned alerts off, authors and reviewers get none")
        }
    }
}
