import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// `/api/v1/manage`: tours and waypoints with a bearer token, and JSON errors with the right status.
@Suite(.scratch) struct ManageAPITests {
    @Test func tourLifecycle() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let created = try await client.api(
                .post,
                "/api/v1/manage/tours",
                token: token,
                json: #"{"site":"alpha","name":"Iron Mountain Loop","description":"Wildflowers"}"#
            )
            #expect(created.status == .created)
            #expect(created.headers[.contentType] == "application/json; charset=utf-8")
            let body = created.jsonObject
            let id = try #require(body["id"] as? Int)
            #expect(body["site"] as? String == "alpha")
            #expect(body["name"] as? String == "Iron Mountain Loop")
            #expect(body["description"] as? String == "Wildflowers")
            #expect(body["mapName"] as? String == "iron-mountain-loop")
            #expect(body["state"] as? String == "draft")
            #expect(body["frame"] is NSNull || body["frame"] == nil)
            #expect(body["minZoom"] as? Int == 12 && body["maxZoom"] as? Int == 16)
            #expect((body["waypoints"] as? [Any])?.isEmpty == true)

            let list = try await client.api(.get, "/api/v1/manage/tours?site=alpha", token: token)
            #expect(list.status == .ok)
            let names = (list.jsonObject["tours"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(names == ["Iron Mountain Loop", "Ridge Walk"])

            let patched = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(id)",
                token: token,
                json: #"{"frame":{"north":44.43,"south":44.36,"east":-121.97,"west":-122.28},"minZoom":11,"maxZoom":15}"#
            )
            #expect(patched.status == .ok)
            let frame = try #require(patched.jsonObject["frame"] as? [String: Double])
            #expect(frame == ["north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28])
            #expect(patched.jsonObject["minZoom"] as? Int == 11 && patched.jsonObject["maxZoom"] as? Int == 15)

            // Zoom alone keeps the frame; details alone keep everything else.
            let zoom = try await client.api(.patch, "/api/v1/manage/tours/\(id)", token: token, json: #"{"maxZoom":17}"#)
            #expect(zoom.jsonObject["maxZoom"] as? Int == 17 && zoom.jsonObject["minZoom"] as? Int == 11)
            #expect(zoom.jsonObject["frame"] as? [String: Double] == frame)
            let details = try await client.api(.patch, "/api/v1/manage/tours/\(id)", token: token, json: #"{"mapName":"iron-loop"}"#)
            #expect(details.jsonObject["mapName"] as? String == "iron-loop")
            #expect(details.jsonObject["name"] as? String == "Iron Mountain Loop")
            #expect(details.jsonObject["description"] as? String == "Wildflowers")

            let waypoint = try await client.api(
                .post,
                "/api/v1/manage/tours/\(id)/waypoints",
                token: token,
                json: #"{"name":"Summit","latitude":44.4023,"longitude":-122.1558,"description":"Lookout"}"#
            )
            #expect(waypoint.status == .created)
            #expect(waypoint.jsonObject["order"] as? Int == 1)
            #expect(waypoint.jsonObject["description"] as? String == "Lookout")

            let read = try await client.api(.get, "/api/v1/manage/tours/\(id)", token: token)
            #expect(read.status == .ok)
            #expect((read.jsonObject["waypoints"] as? [[String: Any]])?.first?["name"] as? String == "Summit")

            let deleted = try await client.api(.delete, "/api/v1/manage/tours/\(id)", token: token)
            #expect(deleted.status == .noContent)
            #expect(deleted.body.readableBytes == 0)
            #expect(try await client.api(.get, "/api/v1/manage/tours/\(id)", token: token).status == .notFound)
            #expect(try await app.database.tour(id: Int64(id)) == nil)
            #expect(try await app.database.tour(id: seed.tourId) != nil)
        }
    }

    /// A PATCH that fails validation changes nothing, even the parts of it that were valid.
    @Test("GET /tours/{id} lists each waypoint's files (id, kind, name, size, SHA-256, scan status, order); other answers leave them out")
    func tourListsWaypointFiles() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let ids = try await env.addCleanMedia(client, token: token)
            let tour = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)", token: token)
            #expect(tour.status == .ok)
            let waypoints = try #require(tour.jsonObject["waypoints"] as? [[String: Any]])
            let fishLake = try #require(waypoints.first { ($0["id"] as? Int).map(Int64.init) == env.seed.waypointId })
            let assets = try #require(fishLake["assets"] as? [[String: Any]])
            #expect(assets.compactMap { ($0["id"] as? Int).map(Int64.init) } == ids)
            #expect(assets.compactMap { $0["order"] as? Int } == Array(1...ids.count))
            for (listed, id) in zip(assets, ids) {
                let stored = try #require(try await env.database.asset(id: id))
                #expect(listed["sha256"] as? String == stored.sha256 && (listed["size"] as? Int).map(Int64.init) == stored.size)
                #expect(listed["kind"] as? String == stored.kind.rawValue && listed["originalName"] as? String == stored.originalName)
                #expect(listed["scanStatus"] as? String == "clean" && listed["waypoint"] as? Int == Int(env.seed.waypointId))
            }
            let others = waypoints.filter { ($0["id"] as? Int).map(Int64.init) != env.seed.waypointId }
            #expect(others.allSatisfy { ($0["assets"] as? [Any])?.isEmpty == true })
            let patched = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"description":"Listed"}"#
            )
            #expect(patched.status == .ok && patched.jsonObject["assets"] == nil, "\(patched.text)")
        }
    }

    @Test func rejectedPatchChangesNothing() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let before = try await app.database.snapshot()
            let badFrame = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)",
                token: token,
                json: #"{"name":"Renamed","frame":{"north":44.3,"south":44.36,"east":-121.97,"west":-122.28}}"#
            )
            Expect.apiErrors(badFrame, ["north": "North must be greater than south."], "bad frame")
            let outside = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)",
                token: token,
                json: #"{"description":"New","frame":{"north":44.405,"south":44.36,"east":-121.97,"west":-122.28}}"#
            )
            #expect(outside.status == .unprocessableContent)
            #expect(outside.errorFields["frame"]?.contains("“Summit”") == true)
            let badName = try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: #"{"name":"","maxZoom":14}"#)
            Expect.apiErrors(badName, ["name": "Enter a name of 1 to 120 characters."], "bad name")
            try await app.database.expectUnchanged(since: before)
            // Both parts valid: both saved, with one audit event each.
            let last = try await app.database.lastAuditId()
            let good = try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: #"{"name":"Renamed","maxZoom":14}"#)
            #expect(good.status == .ok)
            let tour = try #require(try await app.database.tour(id: seed.tourId))
            #expect(tour.name == "Renamed" && tour.maxZoom == 14)
            #expect(try await app.database.actions(since: last) == ["tour.update", "tour.frame"])
        }
    }

    @Test func errorsAreJSONWithTheRightStatus() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let tour = "/api/v1/manage/tours/\(seed.tourId)"
            let cases: [(String, TestResponse, HTTPResponse.Status, String)] = [
                ("malformed JSON", try await client.api(.patch, tour, token: token, json: "{name:"), .badRequest, "bad_request"),
                (
                    "missing key", try await client.api(.post, "/api/v1/manage/tours", token: token, json: #"{"name":"No site"}"#), .badRequest,
                    "bad_request"
                ),
                (
                    "wrong type",
                    try await client.api(.post, "\(tour)/waypoints", token: token, json: #"{"name":"A","latitude":"44","longitude":-122}"#),
                    .badRequest, "bad_request"
                ),
                ("no site filter", try await client.api(.get, "/api/v1/manage/tours", token: token), .badRequest, "bad_request"),
                ("unknown waypoint", try await client.api(.patch, "\(tour)/waypoints/999", token: token, json: "{}"), .notFound, "not_found"),
                ("unknown tour", try await client.api(.delete, "/api/v1/manage/tours/999", token: token), .notFound, "not_found"),
                ("unknown route", try await client.api(.get, "/api/v1/manage/nothing", token: token), .notFound, "not_found"),
                ("bad token", try await client.api(.get, tour, token: "tc_forged"), .unauthorized, "unauthorized"),
                ("no token", try await client.api(.get, tour, token: nil), .unauthorized, "unauthorized"),
            ]
            for (what, response, status, code) in cases {
                #expect(response.status == status, "\(what): \(response.status) \(response.text)")
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "\(what)")
                #expect(response.errorCode == code, "\(what): \(response.text)")
                #expect(response.errorMessage?.isEmpty == false, "\(what)")
                #expect(!response.text.contains("Swift") && !response.text.contains(".swift"), "\(what): no internals in the answer")
            }
            let missing = cases[1].1
            #expect(missing.errorMessage?.contains("“site”") == true, "the message names the missing key: \(missing.errorMessage ?? "")")

            var headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "text/plain"]
            let wrongType = try await client.execute(uri: tour, method: .patch, headers: headers, body: ByteBuffer(string: #"{"name":"X"}"#))
            #expect(wrongType.status == .unsupportedMediaType)
            #expect(wrongType.errorCode == "unsupported_media_type")

            headers[.contentType] = "application/json"
            let huge = try await client.execute(
                uri: tour,
                method: .patch,
                headers: headers,
                body: ByteBuffer(string: #"{"description":"\#(String(repeating: "x", count: 600 * 1024))"}"#)
            )
            #expect(huge.status == .contentTooLarge)
            #expect(huge.errorCode == "payload_too_large")
            #expect(try await app.database.tour(id: seed.tourId)?.name == "Ridge Walk")
        }
    }

    /// The same API works with a panel session (plus its CSRF token), so the panel's own scripts can use it.
    @Test func sessionCookieWorksLikeAToken() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("manager@test.org")
            let read = try await client.send(.get, "/api/v1/manage/tours/\(seed.tourId)", session: browser)
            #expect(read.status == .ok)
            #expect(read.jsonObject["name"] as? String == "Ridge Walk")
            let outsider = try await client.signIn("outsider@test.org")
            #expect(try await client.send(.get, "/api/v1/manage/tours/\(seed.tourId)", session: outsider).status == .notFound)
        }
    }

    @Test func tokensMadeInThePanelWorkOnceShownAndStopWhenRevoked() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var browser = try await client.signIn("author@test.org")
            let created = try await client.post("/account/tokens", form: ["name": "import script"], session: browser)
            #expect(created.status == .created)
            let token = try #require(HTML.value(created.text, field: "new-token") ?? Self.newToken(created.text))
            #expect(token.hasPrefix("tc_"))
            let stored: String? = try await app.database.scalar("SELECT tokenHash FROM apiToken WHERE name = 'import script'")
            #expect(stored == SecretToken.hash(token), "only the hash is stored")
            #expect(stored != token)

            let listed = try await client.get("/account/tokens", session: browser)
            #expect(listed.text.contains("<td>import script</td>"))
            #expect(!listed.text.contains(token), "the token is shown only once")

            let use = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token)
            #expect(use.status == .ok)
            #expect(
                try await app.database.apiTokens(userId: try #require(try await app.database.user(email: "author@test.org")).id)
                    .first { $0.name == "import script" }?.lastUsedAt != nil
            )

            let id = try #require(try await app.database.apiTokens(userId: 2).first { $0.name == "import script" }?.id)
            let revoked = try await client.post("/account/tokens/\(id)/revoke", form: [:], session: browser)
            #expect(revoked.location == "/account/tokens")
            let page = try await client.follow(revoked, session: &browser)
            #expect(page.text.contains("Token revoked."))
            #expect(page.text.contains(#"<span class="badge bg-secondary">revoked</span>"#))
            let refused = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token)
            #expect(refused.status == .unauthorized)
            #expect(refused.errorMessage == "The bearer token is unknown, revoked, or its user is disabled.")
            // Revoking twice is not found: nothing left to revoke.
            #expect(try await client.post("/account/tokens/\(id)/revoke", form: [:], session: browser).status == .notFound)
        }
    }

    static func newToken(_ html: String) -> String? {
        guard let range = html.range(of: #"tc_[A-Za-z0-9_-]{43}"#, options: .regularExpression) else { return nil }
        return String(html[range])
    }
}
