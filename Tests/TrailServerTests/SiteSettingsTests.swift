import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// A site's home area and time zone (`PATCH /api/v1/manage/sites/{slug}`, `/sites/{slug}/settings`), where a new
/// tour's map opens, and the tour page's re-read status (`/tours/{id}/status`).
@Suite(.scratch) struct SiteSettingsTests {
    @Test func aManagerSetsTheHomeAreaAndTimeZoneThroughTheAPI() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "manager@test.org")
            // Before any is set, the frame of the site's first tour stands in.
            let before = try await client.api(.patch, "/api/v1/manage/sites/alpha", token: token, json: "{}")
            #expect(before.status == .ok)
            #expect(before.jsonObject["home"] == nil)
            #expect(before.jsonObject["effectiveHome"] as? [String: Double] == ["north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28])
            #expect(before.jsonObject["timeZone"] as? String == "UTC")

            let saved = try await client.api(
                .patch,
                "/api/v1/manage/sites/alpha",
                token: token,
                json: #"{"home":{"north":45.0,"south":44.5,"east":-121.5,"west":-122.0},"timeZone":"America/Los_Angeles"}"#
            )
            #expect(saved.status == .ok)
            let home = ["north": 45.0, "south": 44.5, "east": -121.5, "west": -122.0]
            #expect(saved.jsonObject["home"] as? [String: Double] == home)
            #expect(saved.jsonObject["effectiveHome"] as? [String: Double] == home)
            let site = try #require(try await app.database.site(id: seed.alphaId))
            #expect(site.home == Frame(north: 45.0, south: 44.5, east: -121.5, west: -122.0))
            #expect(site.timeZone == "America/Los_Angeles")
            #expect(
                try await app.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM auditEvent WHERE action = 'site.home'") } == 2,
                "each PATCH is audited"
            )

            // The time zone alone keeps the home area; null removes it.
            let zone = try await client.api(.patch, "/api/v1/manage/sites/alpha", token: token, json: #"{"timeZone":"Europe/Paris"}"#)
            #expect(zone.jsonObject["home"] as? [String: Double] == home && zone.jsonObject["timeZone"] as? String == "Europe/Paris")
            let cleared = try await client.api(.patch, "/api/v1/manage/sites/alpha", token: token, json: #"{"home":null}"#)
            #expect(cleared.jsonObject["home"] == nil)
            #expect(try await app.database.site(id: seed.alphaId)?.home == nil)
        }
    }

    @Test(
        "A bad home area or time zone is 422 naming the field, and nothing is stored",
        arguments: [
            (#"{"timeZone":"Mars/Olympus_Mons"}"#, "timeZone"),
            (#"{"timeZone":""}"#, "timeZone"),
            (#"{"home":{"north":44.0,"south":45.0,"east":-121.5,"west":-122.0}}"#, "north"),
            (#"{"home":{"north":45.0,"south":44.0,"east":-122.5,"west":-122.0}}"#, "east"),
            (#"{"home":{"north":95.0,"south":44.0,"east":-121.5,"west":-122.0}}"#, "north"),
            (#"{"home":{"north":45.0,"south":44.0,"east":-121.5,"west":-190.0}}"#, "west"),
        ]
    )
    func badSettingsAreRefused(body: String, field: String) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "manager@test.org")
            let response = try await client.api(.patch, "/api/v1/manage/sites/alpha", token: token, json: body)
            #expect(response.status == .unprocessableContent)
            let error = try #require(response.jsonObject["error"] as? [String: Any])
            let message = try #require((error["fields"] as? [String: String])?[field])
            #expect(!message.isEmpty)
            let site = try #require(try await app.database.site(id: seed.alphaId))
            #expect(site.home == nil && site.timeZone == "UTC")
            #expect(try await app.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM auditEvent WHERE action = 'site.home'") } == 0)
        }
    }

    @Test func authorsMayNotChangeTheSettings() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let response = try await client.api(.patch, "/api/v1/manage/sites/alpha", token: token, json: #"{"timeZone":"Europe/Paris"}"#)
            #expect(response.status == .forbidden)
            #expect(try await app.database.site(id: seed.alphaId)?.timeZone == "UTC")
        }
    }

    @Test func theSettingsPageSavesAndRefusesWithItsMessages() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var session = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/settings", session: session)
            session.absorb(page)
            #expect(page.status == .ok)
            #expect(page.text.contains("the frame of the site's first tour (N 44.43000, S 44.36000, E -121.97000, W -122.28000)"))

            // Three edges of four, and an unknown zone: the form again, each field with its message, nothing stored.
            let refused = try await client.post(
                "/sites/alpha/settings",
                form: ["north": "45", "south": "44.5", "east": "-121.5", "west": "", "timeZone": "Atlantis/Capital"],
                session: session
            )
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("Enter this edge in decimal degrees, or leave all four empty for no home area."))
            #expect(refused.text.contains("Enter a time zone this server knows"))
            #expect(refused.text.contains(#"value="Atlantis/Capital""#))
            var site = try #require(try await app.database.site(id: seed.alphaId))
            #expect(site.home == nil && site.timeZone == "UTC")

            let saved = try await client.post(
                "/sites/alpha/settings",
                form: ["north": "45", "south": "44,5", "east": "-121.5", "west": "-122", "timeZone": "America/Denver"],
                session: session
            )
            #expect(saved.status == .seeOther && saved.location == "/sites/alpha/settings")
            site = try #require(try await app.database.site(id: seed.alphaId))
            #expect(site.home == Frame(north: 45, south: 44.5, east: -121.5, west: -122) && site.timeZone == "America/Denver")
        }
    }

    @Test func aNewTourOpensOverTheHomeAreaElseTheFirstToursFrame() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let session = try await client.signIn("author@test.org")
            let system = AuditActor.system
            let fresh = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Fresh", description: ""), actor: system)
            func mapData() async throws -> [String: Any] {
                let page = try await client.get("/tours/\(fresh.id)", session: session)
                guard let range = page.text.range(of: #"data-map="([^"]*)""#, options: .regularExpression) else {
                    Issue.record("the tour page has no map data")
                    return [:]
                }
                let escaped = String(page.text[range].dropFirst(#"data-map=""#.count).dropLast())
                let json = escaped.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
                #expect(object != nil, "the map data is a JSON object: \(json.prefix(200))")
                return object ?? [:]
            }
            #expect(try await mapData()["home"] as? [String: Double] == ["north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28])
            let admin = try #require(try await app.database.user(email: "admin@test.org"))
            try await app.database.setSiteMapSettings(
                siteId: seed.alphaId,
                SiteMapSettings(home: Frame(north: 45, south: 44.5, east: -121.5, west: -122), timeZone: "UTC"),
                user: AuthenticatedUser(admin),
                actor: system
            )
            #expect(try await mapData()["home"] as? [String: Double] == ["north": 45, "south": 44.5, "east": -121.5, "west": -122])
        }
    }

    @Test func theTourStatusIsThePagesOwnChecklistAndDuration() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let session = try await client.signIn("author@test.org")
            let system = AuditActor.system
            let bare = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Bare", description: ""), actor: system)
            let status = try await client.get("/tours/\(bare.id)/status", session: session)
            #expect(status.status == .ok)
            #expect(status.text.contains("<li>Add at least one waypoint.</li>"))
            #expect(status.text.contains(#"data-duration>About 0 min"#))
            #expect(!status.text.contains("<html"), "a fragment, not a page")
            let page = try await client.get("/tours/\(bare.id)", session: session)
            let checklist = { (text: String) in
                text.range(of: #"<ul class="mb-0" id="publish-checklist" data-checklist>[^\n]*"#, options: .regularExpression).map {
                    String(text[$0])
                }
            }
            #expect(checklist(status.text) != nil && checklist(status.text) == checklist(page.text))
        }
    }
}
