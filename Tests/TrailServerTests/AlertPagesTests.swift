import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// The panel's alerts page (`/sites/{slug}/alerts`) and the tour page's card, through real HTTP with a browser
/// session: the form posts, refuses with messages next to the fields, lists, ends; text is escaped.
@Suite struct AlertPagesTests {
    /// A `datetime-local` value (UTC) `hours` from now.
    static func local(_ hours: Double) -> String { String(Manifest.timestamp(Date().addingTimeInterval(hours * 3600)).prefix(16)) }

    @Test("a manager posts from the form, sees it listed and on the tour page, and ends it")
    func postListEnd() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        try await app.test { client in
            var session = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/alerts", session: session)
            #expect(page.status == .ok)
            #expect(page.text.contains("data-empty=\"alerts\""))
            for id in ["alert-title", "alert-message", "alert-severity", "alert-tour", "alert-starts", "alert-ends"] {
                #expect(page.text.contains("<label for=\"\(id)\""), "a label for \(id)")
            }
            #expect(page.text.contains("id=\"alert-stop-\(seed.waypointId)\""), "the tour's stop is offered")
            let posted = try await client.post(
                "/sites/alpha/alerts",
                form: [
                    "title": "Bridge out", "message": "Use the ford.", "severity": "closure", "tourId": "\(seed.tourId)", "endsAt": Self.local(5),
                ],
                session: session,
                extra: [("closedWaypointIds[]", "\(seed.waypointId)")]
            )
            #expect(posted.status == .seeOther, "\(posted.status) \(posted.text.prefix(600))")
            let listed = try await client.follow(posted, session: &session)
            #expect(listed.text.contains("Posted: Bridge out"))
            let id = try #require(try await app.database.read { try Int64.fetchOne($0, sql: "SELECT id FROM alert") })
            #expect(listed.text.contains("data-alert-row=\"\(id)\""))
            #expect(listed.text.contains("1. Fish Lake"), "the closed stop by name")
            #expect(try await app.database.read { try String.fetchOne($0, sql: "SELECT closedWaypointIds FROM alert") } == "[\(seed.waypointId)]")
            // The tour page's card, for everyone who sees the tour (an author too), with the stop it closes.
            var author = try await client.signIn("author@test.org")
            let tour = try await client.get("/tours/\(seed.tourId)", session: author)
            #expect(tour.status == .ok)
            #expect(tour.text.contains("data-tour-alerts"))
            #expect(tour.text.contains("Bridge out") && tour.text.contains("Closed stops: 1. Fish Lake"))
            #expect(!tour.text.contains("href=\"/sites/alpha/alerts\""), "no manage link for an author")
            author.absorb(tour)
            // Ended with the button's form.
            let ended = try await client.post("/alerts/\(id)/end", form: [:], session: session)
            #expect(ended.status == .seeOther)
            let after = try await client.follow(ended, session: &session)
            #expect(after.text.contains("Ended: Bridge out"))
            #expect(!after.text.contains("data-alert-row=\"\(id)\""))
            #expect(!(try await client.get("/tours/\(seed.tourId)", session: author)).text.contains("data-tour-alerts"))
        }
    }

    @Test("a refused form keeps what was typed and puts each message next to its field, with a summary; nothing stored")
    func refusedForm() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        try await app.test { client in
            let session = try await client.signIn("admin@test.org")
            let response = try await client.post(
                "/sites/alpha/alerts",
                form: ["title": "", "message": Payload.raw, "severity": "closure", "tourId": "", "endsAt": Self.local(-2)],
                session: session
            )
            #expect(response.status == .unprocessableContent)
            let html = response.text
            #expect(HTML.fieldError(html, field: "title") != nil)
            #expect(HTML.fieldError(html, field: "endsAt")?.contains("future") == true)
            #expect(HTML.fieldError(html, field: "message") == nil)
            #expect(html.contains("data-error-summary"))
            #expect(html.contains("href=\"#alert-title\"") && html.contains("href=\"#alert-ends\""))
            // What was typed comes back, escaped.
            Payload.expectEscaped(html, "the alerts form")
            #expect(try await app.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM alert") } == 0)
        }
    }

    @Test("a posted message with markup is shown escaped in the list and on the tour page")
    func escaped() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        try await app.test { client in
            let session = try await client.signIn("manager@test.org")
            let posted = try await client.post(
                "/sites/alpha/alerts",
                form: ["title": Payload.raw, "message": Payload.raw, "severity": "warning", "tourId": "\(seed.tourId)", "endsAt": Self.local(3)],
                session: session
            )
            #expect(posted.status == .seeOther)
            Payload.expectEscaped(try await client.get("/sites/alpha/alerts", session: session).text, "the alerts list")
            Payload.expectEscaped(try await client.get("/tours/\(seed.tourId)", session: session).text, "the tour's alert card")
        }
    }

    @Test("authors and reviewers get 403 from the page, the form and the End button; another site's manager 404")
    func forbidden() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        try await app.test { client in
            let manager = try await client.signIn("manager@test.org")
            let posted = try await client.post(
                "/sites/alpha/alerts",
                form: ["title": "Fire", "message": "Area closed.", "severity": "closure", "endsAt": Self.local(3)],
                session: manager
            )
            #expect(posted.status == .seeOther)
            let id = try #require(try await app.database.read { try Int64.fetchOne($0, sql: "SELECT id FROM alert") })
            // Members who may not manage get 403; someone outside the site gets 404, as on every site route.
            for (email, status) in [
                ("author@test.org", HTTPResponse.Status.forbidden), ("reviewer@test.org", .forbidden), ("outsider@test.org", .notFound),
            ] {
                let session = try await client.signIn(email)
                #expect(try await client.get("/sites/alpha/alerts", session: session).status == status, "\(email) page")
                let form = ["title": "X", "message": "Y", "severity": "info", "endsAt": Self.local(3)]
                #expect(try await client.post("/sites/alpha/alerts", form: form, session: session).status == status, "\(email) post")
                #expect(try await client.post("/alerts/\(id)/end", form: [:], session: session).status == status, "\(email) end")
            }
            #expect(try await app.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM alert WHERE endedAt IS NULL") } == 1)
        }
    }

    @Test("times are entered and shown in the site's time zone; the API's times keep their own zone")
    func siteTimeZone() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        try await app.database.write { db in
            try db.execute(sql: "UPDATE site SET timeZone = 'America/Denver' WHERE id = ?", arguments: [seed.alphaId])
        }
        let denver = try #require(TimeZone(identifier: "America/Denver"))
        // Tomorrow at 18:00 in Denver, as the form's datetime-local field sends it.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = denver
        let tomorrow = try #require(calendar.date(byAdding: .day, value: 1, to: Date()))
        let end = try #require(calendar.date(bySettingHour: 18, minute: 0, second: 0, of: tomorrow))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = denver
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        try await app.test { client in
            var session = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/alerts", session: session)
            #expect(page.text.contains("Ends (America/Denver time)"))
            let posted = try await client.post(
                "/sites/alpha/alerts",
                form: ["title": "Snow", "message": "Chains required.", "severity": "warning", "tourId": "", "endsAt": formatter.string(from: end)],
                session: session
            )
            #expect(posted.status == .seeOther, "\(posted.text.prefix(600))")
            let stored = try await app.database.read { try Double.fetchOne($0, sql: "SELECT endsAt FROM alert") }
            #expect(stored == end.timeIntervalSince1970, "18:00 in Denver, not 18:00 UTC")
            let listed = try await client.follow(posted, session: &session)
            let shown = formatter.string(from: end).replacingOccurrences(of: "T", with: " ") + " " + (denver.abbreviation(for: end) ?? "")
            #expect(listed.text.contains("until \(shown)"), "listed as typed, with the zone")
            let tour = try await client.get("/tours/\(seed.tourId)", session: session)
            #expect(tour.text.contains(shown), "the tour page's card in the site's zone too")
        }
    }
}
