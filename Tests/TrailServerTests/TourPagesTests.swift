import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A ranger's path through the tour pages: list, create, edit, frame, delete; and the lock while a tour is in review.
@Suite struct TourPagesTests {
    @Test func createEditFrameAndDeleteATour() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let site = try await client.get("/sites/alpha", session: browser)
            #expect(site.text.contains(#"href="/sites/alpha/tours/new""#))
            #expect(site.text.contains(#"<a href="/tours/\#(seed.tourId)">Ridge Walk</a>"#))
            #expect(site.text.contains(#"<span class="badge text-bg-secondary">Draft</span>"#))

            // The site page starts a tour from its name alone: one page load to the tour page.
            #expect(site.text.contains(#"<form method="post" action="/sites/alpha/tours" class="row g-2 align-items-end mb-3" data-quick-tour"#))
            let quick = try await client.post("/sites/alpha/tours", form: ["name": "Quick Start Loop", "description": ""], session: browser)
            #expect(quick.status == .seeOther)
            #expect(try await app.database.tours(siteId: seed.alphaId).contains { $0.name == "Quick Start Loop" && $0.description.isEmpty })

            let form = try await client.get("/sites/alpha/tours/new", session: browser)
            #expect(form.status == .ok)
            #expect(form.text.contains(#"action="/sites/alpha/tours""#))

            // Create.
            let created = try await client.post(
                "/sites/alpha/tours",
                form: ["name": "Iron Mountain Loop", "description": "Wildflowers.", "mapName": ""],
                session: browser
            )
            #expect(created.status == .seeOther)
            let location = try #require(created.location)
            let id = try #require(Int64(location.replacingOccurrences(of: "/tours/", with: "")))
            var page = try await client.follow(created, session: &browser)
            #expect(page.text.contains("Tour created. Now frame its area on the map."))
            #expect(page.text.contains("<h1 class=\"h3 mb-0 me-2\">Iron Mountain Loop</h1>"))
            #expect(HTML.element(page.text, id: "frame-summary") == "not set")
            #expect(!page.text.contains("·  km²"), "no empty area after \"not set\"")
            #expect(page.text.contains("No waypoints yet."))
            var tour = try #require(try await app.database.tour(id: id))
            #expect(tour.name == "Iron Mountain Loop" && tour.description == "Wildflowers." && tour.mapName == "iron-mountain-loop")
            #expect(tour.state == .draft && tour.frame == nil && tour.siteId == seed.alphaId)

            let listed = try await client.get("/sites/alpha", session: browser)
            #expect(listed.text.contains("Iron Mountain Loop</a><div class=\"small text-muted\">iron-mountain-loop</div>"))
            #expect(listed.text.contains("not set"))

            // Edit details.
            let edit = try await client.get("/tours/\(id)/edit", session: browser)
            #expect(HTML.value(edit.text, field: "name") == "Iron Mountain Loop")
            #expect(HTML.value(edit.text, field: "mapName") == "iron-mountain-loop")
            let saved = try await client.post(
                "/tours/\(id)/edit",
                form: ["name": "Iron Mountain", "description": "Lookout.", "mapName": "iron-mtn"],
                session: browser
            )
            #expect(saved.location == "/tours/\(id)")
            page = try await client.follow(saved, session: &browser)
            #expect(page.text.contains("Tour saved."))
            tour = try #require(try await app.database.tour(id: id))
            #expect(tour.name == "Iron Mountain" && tour.description == "Lookout." && tour.mapName == "iron-mtn")

            // Frame.
            let framed = try await client.post(
                "/tours/\(id)/frame",
                form: [
                    "north": "44.43", "south": "44.36", "east": "-121.97", "west": "-122.28",
                    "minZoom": "11", "maxZoom": "15",
                ],
                session: browser
            )
            #expect(framed.location == "/tours/\(id)")
            page = try await client.follow(framed, session: &browser)
            #expect(page.text.contains("Frame saved."))
            #expect(HTML.element(page.text, id: "frame-summary") == "N 44.43000, S 44.36000, E -121.97000, W -122.28000")
            #expect(HTML.value(page.text, field: "north") == "44.430000")
            #expect(HTML.value(page.text, field: "minZoom") == "11")
            #expect(
                page.text.contains(
                    "&quot;frame&quot;:{&quot;east&quot;:-121.97,&quot;north&quot;:44.43,&quot;south&quot;:44.36,&quot;west&quot;:-122.28}"
                )
            )
            tour = try #require(try await app.database.tour(id: id))
            #expect(tour.frame == Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28))
            #expect(tour.minZoom == 11 && tour.maxZoom == 15)

            // Delete, waypoints and all.
            _ = try await app.database.createWaypoint(
                tourId: id,
                WaypointInput(name: "A", description: "", latitude: 44.4, longitude: -122),
                actor: .system
            )
            let deleted = try await client.post("/tours/\(id)/delete", form: [:], session: browser)
            #expect(deleted.location == "/sites/alpha")
            page = try await client.follow(deleted, session: &browser)
            #expect(page.text.contains("Tour “Iron Mountain” deleted."))
            #expect(!page.text.contains("/tours/\(id)\""))
            #expect(try await app.database.tour(id: id) == nil)
            let orphans: Int? = try await app.database.scalar("SELECT COUNT(*) FROM waypoint WHERE tourId = ?", [id])
            #expect(orphans == 0)
            #expect(try await client.get("/tours/\(id)", session: browser).status == .notFound)
        }
    }

    @Test func homeListsOnlyTheSitesOfTheUser() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.get("/sites", session: try await client.signIn("author@test.org"))
            #expect(author.text.contains("Alpha District") && !author.text.contains("Bravo District"))
            #expect(author.text.contains(#"<span class="badge bg-secondary">author</span>"#))
            let admin = try await client.get("/sites", session: try await client.signIn("admin@test.org"))
            #expect(admin.text.contains("Alpha District") && admin.text.contains("Bravo District"))
            let spare = try await client.get("/sites", session: try await client.signIn("spare@test.org"))
            #expect(spare.text.contains("You are not a member of any site yet."))
        }
    }

    @Test func reviewerSeesTheTourWithoutEditingControls() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("reviewer@test.org")
            let site = try await client.get("/sites/alpha", session: browser)
            #expect(!site.text.contains("/tours/new"))
            #expect(!site.text.contains("data-quick-tour"), "reviewers start no tours")
            let page = try await client.get("/tours/\(seed.tourId)", session: browser)
            #expect(page.status == .ok)
            #expect(!page.text.contains("Edit details"))
            #expect(page.text.contains("<fieldset disabled>"), "the frame form is read-only")
            let edit = try await client.get("/tours/\(seed.tourId)/edit", session: browser)
            #expect(edit.status == .forbidden)
            #expect(edit.text.contains("Only authors and managers of Alpha District can change its tours."))
        }
    }

    /// While a publish request is open the working copy cannot change, through pages or API (409 with a message).
    @Test func lockedTourRefusesEveryChange() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.database.execute("UPDATE tour SET state = 'inReview' WHERE id = ?", [seed.tourId])
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(seed.tourId)", session: browser)
            #expect(page.text.contains("id=\"locked-banner\""))
            #expect(page.text.contains(#"<span class="badge text-bg-warning" id="tour-state">In review</span>"#))
            #expect(!page.text.contains("Edit details"))
            let before = try await app.database.snapshot()
            let base = "/tours/\(seed.tourId)"
            let posts: [(String, [(String, String)])] = [
                ("\(base)/edit", [("name", "X"), ("description", ""), ("mapName", "")]),
                ("\(base)/frame", RouteTable.frame),
                ("\(base)/delete", []),
                ("\(base)/waypoints", [("name", "New"), ("latitude", "44.4"), ("longitude", "-122.1")]),
                ("\(base)/waypoints/order", [("ids[]", "\(seed.secondWaypointId)"), ("ids[]", "\(seed.waypointId)")]),
                ("\(base)/waypoints/\(seed.waypointId)", [("name", "X"), ("latitude", "44.4"), ("longitude", "-122.1")]),
                ("\(base)/waypoints/\(seed.waypointId)/move", [("latitude", "44.4"), ("longitude", "-122.1")]),
                ("\(base)/waypoints/\(seed.waypointId)/down", []),
                ("\(base)/waypoints/\(seed.waypointId)/delete", []),
            ]
            for (path, form) in posts {
                let response = try await client.post(path, form: [:], session: browser, extra: form)
                #expect(response.status == .conflict, "\(path): \(response.status)")
                #expect(response.text.contains("is locked while its publish request is open"), "\(path)")
            }
            try await app.database.expectUnchanged(since: before, "pages")
            let token = try await app.token(for: "author@test.org")
            let mid = try await app.database.snapshot()
            let api = "/api/v1/manage/tours/\(seed.tourId)"
            for (method, path, json) in [
                (HTTPRequest.Method.patch, api, #"{"name":"X"}"#), (.delete, api, nil),
                (.post, "\(api)/waypoints", #"{"name":"N","latitude":44.4,"longitude":-122.1}"#),
                (.patch, "\(api)/waypoints/\(seed.waypointId)", #"{"name":"X"}"#),
                (.delete, "\(api)/waypoints/\(seed.waypointId)", nil),
            ] {
                let response = try await client.api(method, path, token: token, json: json)
                #expect(response.status == .conflict, "\(method) \(path): \(response.status)")
                #expect(response.errorCode == "conflict")
            }
            try await app.database.expectUnchanged(since: mid, "API")
        }
    }
}
