import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Waypoints through the pages (forms, and the requests the map script makes) and through the API:
/// add, edit, move, reorder by drag and by up/down, delete; order stays 1…n.
@Suite struct WaypointTests {
    /// Names in tour order, after checking that the order is exactly 1…n.
    static func names(_ app: TestApp, _ tourId: Int64, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let waypoints = try await app.database.waypoints(tourId: tourId)
        #expect(
            waypoints.map(\.position) == Array(stride(from: 1, through: waypoints.count, by: 1)),
            "order is not 1…n",
            sourceLocation: sourceLocation
        )
        return waypoints.map(\.name)
    }

    @Test func addThroughTheFormAndThroughAMapClick() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let added = try await client.post(
                "/tours/\(seed.tourId)/waypoints",
                form: ["name": "Midway", "latitude": "44.39", "longitude": "-122.10", "description": "Halfway up."],
                session: browser
            )
            #expect(added.status == .seeOther)
            #expect(added.location == "/tours/\(seed.tourId)#waypoints")
            let page = try await client.follow(added, session: &browser)
            #expect(page.text.contains("Waypoint “Midway” added."))
            #expect(page.text.contains(#"class="waypoint-name">Midway</a>"#))
            #expect(page.text.contains("&quot;name&quot;:&quot;Midway&quot;"), "the map data lists the new waypoint")
            await #expect(try Self.names(app, seed.tourId) == ["Fish Lake", "Summit", "Midway"])
            let midway = try #require(try await app.database.waypoints(tourId: seed.tourId).last)
            #expect(midway.latitude == 44.39 && midway.longitude == -122.10 && midway.description == "Halfway up.")

            // A click on the map: the script posts the same form and asks for JSON.
            let clicked = try await client.script(
                "/tours/\(seed.tourId)/waypoints",
                [("name", "Viewpoint"), ("latitude", "44.415"), ("longitude", "-122.2"), ("description", "")],
                session: browser
            )
            #expect(clicked.status == .created)
            #expect(clicked.jsonObject["name"] as? String == "Viewpoint")
            #expect(clicked.jsonObject["order"] as? Int == 4)
            #expect(clicked.jsonObject["latitude"] as? Double == 44.415)
            await #expect(try Self.names(app, seed.tourId) == ["Fish Lake", "Summit", "Midway", "Viewpoint"])
        }
    }

    @Test func editThroughTheWaypointPage() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let path = "/tours/\(seed.tourId)/waypoints/\(seed.secondWaypointId)"
            let form = try await client.get(path, session: browser)
            #expect(form.status == .ok)
            #expect(HTML.value(form.text, field: "name") == "Summit")
            #expect(HTML.value(form.text, field: "latitude") == "44.410000")
            #expect(HTML.value(form.text, field: "longitude") == "-122.150000")
            #expect(form.text.contains("The top.</textarea>"))

            let saved = try await client.post(
                path,
                form: ["name": "Iron Summit", "latitude": "44.42", "longitude": "-122.16", "description": "Lookout."],
                session: browser
            )
            #expect(saved.location == path)
            let page = try await client.follow(saved, session: &browser)
            #expect(page.text.contains("Waypoint saved."))
            #expect(HTML.value(page.text, field: "name") == "Iron Summit")
            let waypoint = try #require(try await app.database.waypoints(tourId: seed.tourId).last)
            #expect(
                waypoint.name == "Iron Summit" && waypoint.latitude == 44.42 && waypoint.longitude == -122.16 && waypoint.description == "Lookout."
            )
            #expect(waypoint.position == 2)
        }
    }

    @Test func reviewerSeesTheWaypointPageReadOnly() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/tours/\(seed.tourId)/waypoints/\(seed.waypointId)", session: browser)
            #expect(page.status == .ok)
            #expect(page.text.contains("<fieldset disabled>"))
            let tour = try await client.get("/tours/\(seed.tourId)", session: browser)
            #expect(!tour.text.contains("action=\"/tours/\(seed.tourId)/waypoints\""), "no add form for a reviewer")
            #expect(!tour.text.contains("/delete\""), "no delete buttons for a reviewer")
            #expect(tour.text.contains("&quot;editable&quot;:false"))
        }
    }

    @Test func dragAMarkerToMoveIt() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let path = "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)/move"
            let dragged = try await client.script(path, [("latitude", "44.38"), ("longitude", "-122.05")], session: browser)
            #expect(dragged.status == .ok)
            #expect(dragged.jsonObject["latitude"] as? Double == 44.38)
            #expect(dragged.jsonObject["longitude"] as? Double == -122.05)
            var waypoint = try #require(try await app.database.waypoints(tourId: seed.tourId).first)
            #expect(waypoint.name == "Fish Lake" && waypoint.latitude == 44.38 && waypoint.longitude == -122.05)

            let noScript = try await client.post(path, form: ["latitude": "44.37", "longitude": "-122.06"], session: browser)
            #expect(noScript.status == .seeOther)
            waypoint = try #require(try await app.database.waypoints(tourId: seed.tourId).first)
            #expect(waypoint.latitude == 44.37 && waypoint.longitude == -122.06 && waypoint.position == 1)
        }
    }

    @Test func reorderByDragAndDrop() async throws {
        let (app, seed) = try await TestApp.seeded()
        let third = try await app.database.createWaypoint(
            tourId: seed.tourId,
            WaypointInput(name: "Creek", description: "", latitude: 44.38, longitude: -122.2),
            actor: .system
        )
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let url = "/tours/\(seed.tourId)/waypoints/order"
            let dropped = try await client.script(
                url,
                [("ids[]", "\(third.id)"), ("ids[]", "\(seed.waypointId)"), ("ids[]", "\(seed.secondWaypointId)")],
                session: browser
            )
            #expect(dropped.status == .ok)
            let list = try #require(dropped.json as? [[String: Any]])
            #expect(list.map { $0["name"] as? String } == ["Creek", "Fish Lake", "Summit"])
            #expect(list.map { $0["order"] as? Int } == [1, 2, 3])
            await #expect(try Self.names(app, seed.tourId) == ["Creek", "Fish Lake", "Summit"])

            // The same form without JavaScript.
            let form = try await client.post(
                url,
                form: [:],
                session: browser,
                extra: [("ids[]", "\(seed.secondWaypointId)"), ("ids[]", "\(third.id)"), ("ids[]", "\(seed.waypointId)")]
            )
            #expect(form.status == .seeOther)
            await #expect(try Self.names(app, seed.tourId) == ["Summit", "Creek", "Fish Lake"])
        }
    }

    @Test func reorderWithUpAndDownButtons() async throws {
        let (app, seed) = try await TestApp.seeded()
        let third = try await app.database.createWaypoint(
            tourId: seed.tourId,
            WaypointInput(name: "Creek", description: "", latitude: 44.38, longitude: -122.2),
            actor: .system
        )
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let base = "/tours/\(seed.tourId)/waypoints"
            let page = try await client.get("/tours/\(seed.tourId)", session: browser)
            #expect(page.text.contains(#"disabled aria-label="Move Fish Lake up""#), "the first cannot go up")
            #expect(page.text.contains(#"disabled aria-label="Move Creek down""#), "the last cannot go down")
            #expect(!page.text.contains(#"disabled aria-label="Move Summit up""#))

            let up = try await client.post("\(base)/\(third.id)/up", form: [:], session: browser)
            #expect(up.location == "/tours/\(seed.tourId)#waypoint-\(third.id)")
            await #expect(try Self.names(app, seed.tourId) == ["Fish Lake", "Creek", "Summit"])
            let moved = try await client.follow(up, session: &browser)
            #expect(moved.text.contains("Moved “Creek” up."))

            _ = try await client.post("\(base)/\(seed.waypointId)/down", form: [:], session: browser)
            await #expect(try Self.names(app, seed.tourId) == ["Creek", "Fish Lake", "Summit"])

            // At the ends nothing moves and nothing is recorded.
            let audit = try await app.database.auditCount()
            #expect(try await client.post("\(base)/\(third.id)/up", form: [:], session: browser).status == .seeOther)
            #expect(try await client.post("\(base)/\(seed.secondWaypointId)/down", form: [:], session: browser).status == .seeOther)
            await #expect(try Self.names(app, seed.tourId) == ["Creek", "Fish Lake", "Summit"])
            #expect(try await app.database.auditCount() == audit)
        }
    }

    @Test func deleteKeepsTheOrderContiguous() async throws {
        let (app, seed) = try await TestApp.seeded()
        for (name, lat) in [("Creek", 44.38), ("Meadow", 44.37)] {
            _ = try await app.database.createWaypoint(
                tourId: seed.tourId,
                WaypointInput(name: name, description: "", latitude: lat, longitude: -122.2),
                actor: .system
            )
        }
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let deleted = try await client.post("/tours/\(seed.tourId)/waypoints/\(seed.secondWaypointId)/delete", form: [:], session: browser)
            #expect(deleted.location == "/tours/\(seed.tourId)#waypoints")
            #expect(try await client.follow(deleted, session: &browser).text.contains("Waypoint “Summit” deleted."))
            await #expect(try Self.names(app, seed.tourId) == ["Fish Lake", "Creek", "Meadow"])

            let token = try await app.token(for: "author@test.org")
            let api = try await client.api(.delete, "/api/v1/manage/tours/\(seed.tourId)/waypoints/\(seed.waypointId)", token: token)
            #expect(api.status == .noContent)
            await #expect(try Self.names(app, seed.tourId) == ["Creek", "Meadow"])
            // A name is free again once its waypoint is gone.
            let again = try await client.api(
                .post,
                "/api/v1/manage/tours/\(seed.tourId)/waypoints",
                token: token,
                json: #"{"name":"fish lake","latitude":44.4,"longitude":-122}"#
            )
            #expect(again.status == .created)
            #expect(again.jsonObject["order"] as? Int == 3)
        }
    }

    @Test func insertWithAnOrderShiftsTheOthers() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let url = "/api/v1/manage/tours/\(seed.tourId)/waypoints"
            let first = try await client.api(.post, url, token: token, json: #"{"name":"Trailhead","latitude":44.37,"longitude":-122.25,"order":1}"#)
            #expect(first.status == .created)
            #expect(first.jsonObject["order"] as? Int == 1)
            await #expect(try Self.names(app, seed.tourId) == ["Trailhead", "Fish Lake", "Summit"])

            let middle = try await client.api(.post, url, token: token, json: #"{"name":"Bridge","latitude":44.38,"longitude":-122.2,"order":3}"#)
            #expect(middle.jsonObject["order"] as? Int == 3)
            await #expect(try Self.names(app, seed.tourId) == ["Trailhead", "Fish Lake", "Bridge", "Summit"])

            let last = try await client.api(.post, url, token: token, json: #"{"name":"End","latitude":44.39,"longitude":-122.0,"order":5}"#)
            #expect(last.jsonObject["order"] as? Int == 5)
            await #expect(try Self.names(app, seed.tourId) == ["Trailhead", "Fish Lake", "Bridge", "Summit", "End"])

            // Moving by order through PATCH, both ways.
            let endId = try #require(last.jsonObject["id"] as? Int)
            let patched = try await client.api(.patch, "\(url)/\(endId)", token: token, json: #"{"order":2}"#)
            #expect(patched.status == .ok)
            #expect(patched.jsonObject["order"] as? Int == 2)
            await #expect(try Self.names(app, seed.tourId) == ["Trailhead", "End", "Fish Lake", "Bridge", "Summit"])
            _ = try await client.api(.patch, "\(url)/\(seed.waypointId)", token: token, json: #"{"order":5}"#)
            await #expect(try Self.names(app, seed.tourId) == ["Trailhead", "End", "Bridge", "Summit", "Fish Lake"])

            // The tour as the API shows it agrees.
            let tour = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token)
            let listed = try #require(tour.jsonObject["waypoints"] as? [[String: Any]])
            #expect(listed.map { $0["name"] as? String } == ["Trailhead", "End", "Bridge", "Summit", "Fish Lake"])
            #expect(listed.map { $0["order"] as? Int } == [1, 2, 3, 4, 5])
        }
    }

    @Test func editThroughTheAPIChangesOnlyWhatIsSent() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let url = "/api/v1/manage/tours/\(seed.tourId)/waypoints/\(seed.secondWaypointId)"
            let response = try await client.api(.patch, url, token: token, json: #"{"description":"New words."}"#)
            #expect(response.status == .ok)
            let waypoint = try #require(try await app.database.waypoints(tourId: seed.tourId).last)
            #expect(waypoint.name == "Summit" && waypoint.latitude == 44.41 && waypoint.longitude == -122.15 && waypoint.description == "New words.")
            #expect(waypoint.position == 2)
        }
    }
}
