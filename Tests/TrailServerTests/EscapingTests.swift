import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Script and markup typed into every text field come back escaped on every page that shows them.
@Suite struct EscapingTests {
    @Test func payloadInEveryTextFieldIsEscapedOnEveryPage() async throws {
        let (app, _) = try await TestApp.seeded()
        let payload = Payload.raw
        try await app.test { client in
            // The admin makes a site and a user whose texts are the payload.
            var admin = try await client.signIn("admin@test.org")
            let site = try await client.post(
                "/admin/sites",
                form: ["slug": "xss", "name": payload, "description": payload, "requiredApprovals": "1"],
                session: admin
            )
            #expect(site.location == "/sites/xss")
            Payload.expectEscaped(try await client.follow(site, session: &admin).text, "site page after create (notice)")
            let siteId = try #require(try await app.database.site(slug: "xss")?.id)
            let user = try await client.post(
                "/admin/users",
                form: ["email": "xss@test.org", "displayName": payload, "password": TestApp.password],
                session: admin
            )
            #expect(user.status == .seeOther)
            try await app.database.setMembership(siteId: siteId, email: "xss@test.org", role: .manager, actor: .system)
            try await app.database.setMembership(siteId: siteId, email: "reviewer@test.org", role: .reviewer, actor: .system)
            try await app.database.execute("UPDATE user SET mustChangePassword = 0 WHERE email = 'xss@test.org'")

            // That user builds a tour whose every text is the payload.
            var ranger = try await client.signIn("xss@test.org")
            let created = try await client.post("/sites/xss/tours", form: ["name": payload, "description": payload, "mapName": ""], session: ranger)
            #expect(created.status == .seeOther)
            let tourId = try #require(created.location.flatMap { Int64($0.replacingOccurrences(of: "/tours/", with: "")) })
            Payload.expectEscaped(try await client.follow(created, session: &ranger).text, "tour page (notice)")
            let framed = try await client.post(
                "/tours/\(tourId)/frame",
                form: [
                    "north": "44.43", "south": "44.36", "east": "-121.97", "west": "-122.28",
                    "minZoom": "11", "maxZoom": "15",
                ],
                session: ranger
            )
            #expect(framed.status == .seeOther)
            let waypoint = try await client.post(
                "/tours/\(tourId)/waypoints",
                form: [
                    "name": payload, "description": payload, "latitude": "44.4",
                    "longitude": "-122.1",
                ],
                session: ranger
            )
            #expect(waypoint.status == .seeOther)
            Payload.expectEscaped(try await client.follow(waypoint, session: &ranger).text, "tour page (waypoint notice)")
            let waypointId = try #require(try await app.database.waypoints(tourId: tourId).first?.id)
            let token = try await client.post("/account/tokens", form: ["name": payload], session: ranger)
            #expect(token.status == .created)
            Payload.expectEscaped(token.text, "tokens page after create")

            // Every page that shows one of those texts.
            let rangerPages = [
                "/sites", "/sites/xss", "/sites/xss/members", "/sites/xss/tours/new", "/tours/\(tourId)", "/tours/\(tourId)/edit",
                "/tours/\(tourId)/waypoints/\(waypointId)", "/account/tokens", "/account/password",
            ]
            for path in rangerPages {
                let page = try await client.get(path, session: ranger)
                #expect(page.status == .ok, "\(path)")
                Payload.expectEscaped(page.text, path)
            }
            for path in ["/admin/users", "/admin/sites", "/admin/sites/\(siteId)", "/admin/audit", "/admin/audit?site=\(siteId)"] {
                let page = try await client.get(path, session: admin)
                #expect(page.status == .ok, "\(path)")
                Payload.expectEscaped(page.text, path)
            }
            // The audit log shows every text in its detail column (tour, waypoint, token names).
            let audit = try await client.get(
                "/admin/audit?user=\(try #require(try await app.database.user(email: "xss@test.org")?.id))",
                session: admin
            )
            for action in ["tour.create", "waypoint.create", "token.create"] {
                #expect(audit.text.contains("<code>\(action)</code></td><td>\(Payload.escaped)"), "audit detail of \(action)")
            }

            // Messages that quote what was typed, and error pages that name the site.
            let clash = try await client.post(
                "/tours/\(tourId)/waypoints",
                form: ["name": payload, "latitude": "44.4", "longitude": "-122.1"],
                session: ranger
            )
            #expect(clash.status == .unprocessableContent)
            Payload.expectEscaped(clash.text, "name clash message")
            let refused = try await client.post(
                "/tours/\(tourId)/frame",
                form: [
                    "north": "44.43", "south": "44.41", "east": "-121.97", "west": "-122.28",
                    "minZoom": "11", "maxZoom": "15",
                ],
                session: ranger
            )
            #expect(refused.status == .unprocessableContent)
            Payload.expectEscaped(HTML.element(refused.text, id: "frame-error") ?? "", "frame refusal naming the waypoint")
            let badMapName = try await client.post(
                "/tours/\(tourId)/edit",
                form: ["name": payload, "description": payload, "mapName": payload],
                session: ranger
            )
            #expect(badMapName.status == .unprocessableContent, "a map name is a slug: the payload is refused")
            #expect(HTML.value(badMapName.text, field: "mapName") == Payload.escaped)
            Payload.expectEscaped(badMapName.text, "tour form with a refused map name")
            let badSite = try await client.post(
                "/admin/sites",
                form: ["slug": payload, "name": payload, "description": payload, "requiredApprovals": "1"],
                session: admin
            )
            #expect(badSite.status == .unprocessableContent)
            #expect(HTML.value(badSite.text, field: "slug") == Payload.escaped)
            let badUser = try await client.post("/admin/users", form: ["email": payload, "displayName": payload, "password": ""], session: admin)
            #expect(badUser.status == .unprocessableContent)
            #expect(HTML.value(badUser.text, field: "email") == Payload.escaped)
            Payload.expectEscaped(badUser.text, "user form with a refused email")
            let reviewer = try await client.signIn("reviewer@test.org")
            let forbidden = try await client.get("/tours/\(tourId)/edit", session: reviewer)
            #expect(forbidden.status == .forbidden)
            Payload.expectEscaped(forbidden.text, "403 page naming the site")

            // The tour was saved as typed: escaping happens on output, not by mangling input.
            #expect(try await app.database.tour(id: tourId)?.name == payload)
            #expect(try await app.database.waypoints(tourId: tourId).first?.description == payload)
        }
    }

    /// Sign-in echoes the email and the `next` link; both are escaped.
    @Test func signInPageEscapesWhatItEchoes() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            // `next` may hold no whitespace (a sign-in would otherwise go to `/`), so the payload's spaces become slashes.
            let payload = Payload.raw.replacingOccurrences(of: " ", with: "/")
            let next = "/sites?x=" + payload
            let page = try await client.get("/login?next=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")", session: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains(Payload.html(payload)), "next: escaped payload missing")
            for raw in ["<script>alert(1)", "</script>\"", "\"><img", "'single'"] {
                #expect(!page.text.contains(raw), "next: raw \(raw) present")
            }
            let browser = try await client.anonymousBrowser()
            let failed = try await client.post("/login", form: ["email": Payload.raw, "password": "wrong password"], session: browser)
            #expect(failed.status == .unauthorized)
            Payload.expectEscaped(failed.text, "email")
        }
    }

    /// Only local paths are accepted as the place to go after sign-in.
    @Test func signInNeverRedirectsToAnotherSite() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            for (next, expected) in [
                ("//evil.example/x", "/"), ("https://evil.example", "/"), ("/\\evil.example", "/"), ("/login", "/"),
                ("/tours/1", "/tours/1"),
            ] {
                let browser = try await client.anonymousBrowser()
                let response = try await client.post(
                    "/login",
                    form: ["email": "author@test.org", "password": TestApp.password, "next": next],
                    session: browser
                )
                #expect(response.location == expected, "\(next)")
            }
        }
    }
}
