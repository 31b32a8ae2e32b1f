import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// The review rules, through the management API (and the pages where the rule shows there): who may approve, once,
/// what a denial and a withdrawal do, the lock while a request is open, and the checklist of a tour that is not ready.
@Suite("Publishing: review rules", .scratch)
struct PublishingRulesTests {
    /// A built, pending request of the seed tour with clean media, submitted by `submitter`.
    static func pendingRequest(_ env: TestEnv, _ client: some TestClientProtocol, submitter: String = "author@test.org") async throws -> String {
        let token = try await env.token(submitter)
        try await env.addCleanMedia(client, token: token)
        let rid = try await client.publishSubmit(env, token: token)
        #expect(await env.buildAll() == 1)
        let built = try await env.request(rid)
        #expect(built.state == .pending, "build failed: \(built.failureReason ?? "")")
        return rid
    }

    @Test("Self-approval is refused (403), for an author and for a manager who submitted; nothing is recorded")
    func selfApprovalRefused() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            // The manager may review (manager = author + reviewer) but not their own submission.
            let rid = try await Self.pendingRequest(env, client, submitter: "manager@test.org")
            let response = try await client.publishAction(rid, "approve", token: try env.token("manager@test.org"))
            #expect(response.status == .forbidden, "\(response.status) \(response.text)")
            #expect(response.errorMessage?.contains("someone else") == true, "\(response.text)")
            await #expect(try env.reviews(rid).isEmpty)
            await #expect(try env.request(rid).state == .pending)
            // The page does not offer it either, and a forged form post is refused the same way.
            var manager = try await client.signIn("manager@test.org")
            let page = try await client.get("/requests/\(rid)", session: manager)
            manager.absorb(page)
            #expect(!page.text.contains("id=\"approve-form\""), "the submitter is offered the approve form")
            let post = try await client.post("/requests/\(rid)/approve", form: [:], session: manager)
            #expect(post.status == .forbidden)
            await #expect(try env.reviews(rid).isEmpty)

            // An author of the site who is not a reviewer cannot approve anyone's request.
            let author = try await client.publishAction(rid, "approve", token: try env.token("author@test.org"))
            #expect(author.status == .forbidden)
            await #expect(try env.reviews(rid).isEmpty)
        }
    }

    @Test("A second approval by the same reviewer does not count (409, approvals stay 1); nor does a denial after it")
    func reviewerCountsOnce() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            let reviewer = try await env.token("reviewer@test.org")
            #expect(try await client.publishAction(rid, "approve", token: reviewer).status == .ok)
            let again = try await client.publishAction(rid, "approve", token: reviewer)
            #expect(again.status == .conflict, "\(again.status) \(again.text)")
            let state = try await client.publishState(rid, token: reviewer)
            #expect(state["approvals"] as? Int == 1)
            #expect(state["state"] as? String == "pending")
            let deny = try await client.publishAction(rid, "deny", token: reviewer, json: #"{"comment":"changed my mind"}"#)
            #expect(deny.status == .conflict)
            await #expect(try env.reviews(rid).count == 1)
            await #expect(try env.request(rid).state == .pending)
        }
    }

    @Test("Approving after a denial is refused (409); so is a second denial and a push")
    func approveAfterDenial() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            let deny = try await client.publishAction(
                rid,
                "deny",
                token: try env.token("reviewer@test.org"),
                json: #"{"comment":"The audio is missing."}"#
            )
            #expect(deny.status == .ok, "\(deny.text)")
            #expect(deny.jsonObject["state"] as? String == "denied")
            let approve = try await client.publishAction(rid, "approve", token: try env.token("reviewer2@test.org"))
            #expect(approve.status == .conflict, "\(approve.status) \(approve.text)")
            let denyAgain = try await client.publishAction(rid, "deny", token: try env.token("reviewer2@test.org"), json: #"{"comment":"me too"}"#)
            #expect(denyAgain.status == .conflict)
            let push = try await client.publishAction(rid, "push", token: try env.token("manager@test.org"))
            #expect(push.status == .conflict)
            await #expect(try env.request(rid).state == .denied)
            await #expect(try env.reviews(rid).map(\.decision) == [.deny])
        }
    }

    @Test("Push before ready is refused (409): while building, while pending, with one of two approvals")
    func pushBeforeReady() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let rid = try await client.publishSubmit(env, token: author)
            var push = try await client.publishAction(rid, "push", token: author)
            #expect(push.status == .conflict, "push while building: \(push.status)")
            #expect(await env.buildAll() == 1)
            push = try await client.publishAction(rid, "push", token: author)
            #expect(push.status == .conflict, "push while pending: \(push.status)")
            #expect(try await client.publishAction(rid, "approve", token: try env.token("reviewer@test.org")).status == .ok)
            push = try await client.publishAction(rid, "push", token: try env.token("manager@test.org"))
            #expect(push.status == .conflict, "push with 1 of 2 approvals: \(push.status)")
            await #expect(try env.request(rid).state == .pending)
            #expect(try await env.database.package(tourId: env.seed.tourId)?.currentVersion == nil)
            await #expect(!FileManager.default.fileExists(atPath: env.paths.packages.appendingPathComponent(try env.request(rid).packageId).path))
            // And a reviewer who is not the author or a manager cannot push a ready request.
            #expect(try await client.publishAction(rid, "approve", token: try env.token("reviewer2@test.org")).status == .ok)
            push = try await client.publishAction(rid, "push", token: try env.token("reviewer@test.org"))
            #expect(push.status == .forbidden, "a reviewer pushed: \(push.status)")
            await #expect(try env.request(rid).state == .ready)
        }
    }

    @Test("A reviewer or manager of another site gets 404 (reading, approving, denying, pushing, withdrawing) and changes nothing")
    func otherSiteReviewer() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.addMember("bravo-reviewer@test.org", role: .reviewer, siteId: env.seed.bravoId)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            for email in ["outsider@test.org", "bravo-reviewer@test.org"] {
                let token = try await env.token(email)
                let read = try await client.api(.get, "/api/v1/manage/publish-requests/\(rid)", token: token)
                #expect(read.status == .notFound, "\(email) read: \(read.status)")
                for action in ["approve", "push", "withdraw"] {
                    let response = try await client.publishAction(rid, action, token: token)
                    #expect(response.status == .notFound || response.status == .forbidden, "\(email) \(action): \(response.status)")
                }
                let deny = try await client.publishAction(rid, "deny", token: token, json: #"{"comment":"not yours"}"#)
                #expect(deny.status == .notFound || deny.status == .forbidden, "\(email) deny: \(deny.status)")
                var session = try await client.signIn(email)
                let page = try await client.get("/requests/\(rid)", session: session)
                #expect(page.status == .notFound, "\(email) request page: \(page.status)")
                let queue = try await client.get("/reviews", session: session)
                session.absorb(queue)
                #expect(!queue.text.contains(rid), "\(email)'s queue lists another site's request")
                let post = try await client.post("/requests/\(rid)/approve", form: [:], session: session)
                #expect(post.status == .notFound || post.status == .forbidden)
            }
            await #expect(try env.reviews(rid).isEmpty)
            await #expect(try env.request(rid).state == .pending)
        }
    }

    @Test("Deny without a comment: 422 with the message (API and page); nothing changes")
    func denyNeedsComment() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            let token = try await env.token("reviewer@test.org")
            for body in [nil, #"{}"#, #"{"comment":"   "}"#] {
                let response = try await client.publishAction(rid, "deny", token: token, json: body)
                #expect(response.status == .unprocessableContent, "body \(body ?? "none"): \(response.status)")
                #expect(response.errorMessage?.contains("a denial needs a comment") == true, "\(response.text)")
                #expect(response.errorFields["comment"] != nil)
            }
            var session = try await client.signIn("reviewer@test.org")
            session.absorb(try await client.get("/requests/\(rid)", session: session))
            let page = try await client.post("/requests/\(rid)/deny", form: ["comment": ""], session: session)
            #expect(page.status == .unprocessableContent)
            #expect(page.text.contains("a denial needs a comment"), "the page does not say why")
            await #expect(try env.request(rid).state == .pending)
            await #expect(try env.reviews(rid).isEmpty)
            await #expect(try env.tour().state == .inReview)
        }
    }

    @Test("A denial unlocks the tour and the tour page shows the comment; the staging folder goes")
    func denialUnlocksAndShowsComment() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            #expect(try await client.publishAction(rid, "approve", token: try env.token("reviewer2@test.org")).status == .ok)
            let comment = "The intro video shows the wrong lake <b>here</b>."
            let deny = try await client.publishAction(
                rid,
                "deny",
                token: try env.token("reviewer@test.org"),
                json: #"{"comment":"The intro video shows the wrong lake <b>here</b>."}"#
            )
            #expect(deny.status == .ok, "\(deny.text)")
            #expect(deny.jsonObject["denialComment"] as? String == comment)
            await #expect(try env.tour().state == .draft)
            await #expect(try env.tour().reviewComment == comment)
            #expect(!env.exists(env.stagingFolder(rid)), "the staging folder of a denied request was kept")
            await #expect(try env.auditCount("publish.deny", objectId: rid) == 1)

            let author = try await env.token("author@test.org")
            let edit = try await client.api(.patch, "/api/v1/manage/tours/\(env.seed.tourId)", token: author, json: #"{"description":"Fixed."}"#)
            #expect(edit.status == .ok, "the tour is still locked after the denial: \(edit.status)")
            let session = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(page.text.contains("id=\"review-comment\""))
            #expect(page.text.contains("The intro video shows the wrong lake &lt;b&gt;here&lt;/b&gt;."), "the comment is not shown (escaped)")
            #expect(!page.text.contains("id=\"locked-banner\""))

            // The next submission clears the comment.
            _ = try await client.publishSubmit(env, token: author)
            await #expect(try env.tour().reviewComment == nil)
        }
    }

    @Test("The author withdraws an open request: the tour is editable again; a withdrawn request cannot be approved")
    func withdrawUnlocks() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        try await env.app.test { client in
            let rid = try await Self.pendingRequest(env, client)
            let author = try await env.token("author@test.org")
            let stranger = try await client.publishAction(rid, "withdraw", token: try env.token("reviewer@test.org"))
            #expect(stranger.status == .forbidden, "a reviewer withdrew someone else's request: \(stranger.status)")
            let response = try await client.publishAction(rid, "withdraw", token: author)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.jsonObject["state"] as? String == "withdrawn")
            await #expect(try env.tour().state == .draft)
            #expect(!env.exists(env.stagingFolder(rid)))
            let edit = try await client.api(.patch, "/api/v1/manage/tours/\(env.seed.tourId)", token: author, json: #"{"description":"Again."}"#)
            #expect(edit.status == .ok)
            #expect(try await client.publishAction(rid, "approve", token: try env.token("reviewer@test.org")).status == .conflict)
            #expect(try await client.publishAction(rid, "withdraw", token: author).status == .conflict)

            // Withdrawn while building: the queued build is dropped, and nothing is built.
            let rid2 = try await client.publishSubmit(env, token: author)
            var session = try await client.signIn("author@test.org")
            session.absorb(try await client.get("/requests/\(rid2)", session: session))
            let page = try await client.post("/requests/\(rid2)/withdraw", form: [:], session: session)
            #expect(page.status == .seeOther && page.location == "/tours/\(env.seed.tourId)")
            #expect(await env.buildAll() == 0)
            await #expect(try env.request(rid2).state == .withdrawn)
            await #expect(try env.tour().state == .draft)
        }
    }

    @Test("While a request is open the tour is read-only: 409 on every edit through the API, a banner on the pages")
    func readOnlyWhileOpen() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        let tourURI = "/api/v1/manage/tours/\(env.seed.tourId)"
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let rid = try await client.publishSubmit(env, token: author)
            let before = try await env.tour()
            for state in ["building", "pending", "ready"] {
                if state == "pending" { #expect(await env.buildAll() == 1) }
                if state == "ready" {
                    #expect(try await client.publishAction(rid, "approve", token: try env.token("reviewer@test.org")).status == .ok)
                }
                await #expect(try env.request(rid).state.rawValue == state)
                let edits: [(HTTPRequest.Method, String, String?)] = [
                    (.patch, tourURI, #"{"name":"Renamed"}"#),
                    (.patch, tourURI, #"{"frame":{"north":44.5,"south":44.3,"east":-121.9,"west":-122.3}}"#),
                    (.post, "\(tourURI)/waypoints", #"{"name":"New","latitude":44.39,"longitude":-122.1}"#),
                    (.patch, "\(tourURI)/waypoints/\(env.seed.waypointId)", #"{"name":"Moved"}"#),
                    (.delete, "\(tourURI)/waypoints/\(env.seed.waypointId)", nil),
                    (.delete, tourURI, nil),
                ]
                for (method, uri, body) in edits {
                    let response = try await client.api(method, uri, token: author, json: body)
                    #expect(response.status == .conflict, "\(state): \(method) \(uri) answered \(response.status)")
                    #expect(response.errorMessage?.contains("locked") == true, "\(response.text)")
                }
                let upload = try await client.execute(
                    uri: "\(tourURI)/waypoints/\(env.seed.waypointId)/assets",
                    method: .post,
                    headers: [.authorization: "Bearer \(author)", .contentType: "multipart/form-data; boundary=b"],
                    body: PublishFixtures.multipart(MediaFixtures.text("late"), fileName: "late.txt", contentType: "text/plain", boundary: "b")
                )
                #expect(upload.status == .conflict, "\(state): an upload to a locked tour answered \(upload.status)")
                let submit = try await client.api(.post, "\(tourURI)/publish", token: author)
                #expect(submit.status == .conflict, "\(state): a second submission answered \(submit.status)")

                var session = try await client.signIn("author@test.org")
                let page = try await client.get("/tours/\(env.seed.tourId)", session: session)
                session.absorb(page)
                #expect(page.text.contains("id=\"locked-banner\""), "\(state): no banner")
                #expect(page.text.contains("/requests/\(rid)"))
                #expect(page.text.contains("<fieldset disabled>"), "\(state): the frame form is editable on a locked tour")
                let post = try await client.post(
                    "/tours/\(env.seed.tourId)/edit",
                    form: ["name": "Renamed", "description": "", "mapName": ""],
                    session: session
                )
                #expect(post.status == .conflict, "\(state): the edit form answered \(post.status)")
            }
            let after = try await env.tour()
            #expect(after.name == before.name && after.frame == before.frame)
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).map(\.name) == ["Fish Lake"])
        }
    }

    @Test("A tour that is not ready: 422 with every checklist item (no frame, no waypoints, outside the frame, not clean); the tour page lists them")
    func notReadyChecklist() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            // A new tour: no frame, no waypoints.
            let created = try await client.api(
                .post,
                "/api/v1/manage/tours",
                token: author,
                json: #"{"site":"alpha","name":"Bare Tour","description":""}"#
            )
            #expect(created.status == .created)
            let bareId = try #require(publishInt(created.jsonObject["id"]))
            var response = try await client.api(.post, "/api/v1/manage/tours/\(bareId)/publish", token: author)
            #expect(response.status == .unprocessableContent, "\(response.status) \(response.text)")
            #expect(Set(response.errorFields.values) == ["Set the map frame.", "Add at least one waypoint."], "\(response.errorFields)")
            #expect(response.errorMessage?.contains("Set the map frame.") == true)

            // The seed tour with a file that was never scanned (pending) and a waypoint pushed outside the frame.
            let pendingId = try await client.publishUpload(
                env,
                token: author,
                data: MediaFixtures.png(size: 2_000, seed: 3),
                fileName: "unscanned.png",
                contentType: "image/png"
            )
            let outside = try await env.database.createWaypoint(
                tourId: env.seed.tourId,
                WaypointInput(name: "Far Ridge", description: "", latitude: 44.41, longitude: -122.1),
                actor: .system
            )
            try await env.sql("UPDATE waypoint SET latitude = 45.5 WHERE id = ?", [outside.id])
            response = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: author)
            #expect(response.status == .unprocessableContent)
            var items = Set(response.errorFields.values)
            #expect(items.contains("Waypoint “Far Ridge” is outside the frame."), "\(items)")
            #expect(items.contains("File “unscanned.png” at “Fish Lake” is pending, not clean."), "\(items)")
            #expect(items.count == 2, "\(items)")

            // Without a frame as well: every item at once.
            try await env.sql(
                "UPDATE tour SET frameNorth = NULL, frameSouth = NULL, frameEast = NULL, frameWest = NULL WHERE id = ?",
                [env.seed.tourId]
            )
            response = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: author)
            #expect(response.status == .unprocessableContent)
            items = Set(response.errorFields.values)
            #expect(items == ["Set the map frame.", "File “unscanned.png” at “Fish Lake” is pending, not clean."], "\(items)")
            #expect(try await env.database.requests(tourId: env.seed.tourId).isEmpty, "a request was made for a tour that is not ready")
            await #expect(try env.tour().state == .draft)

            // The tour page shows the list and no submit button; the panel's submit redirects back with the list.
            var session = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            session.absorb(page)
            let list = try #require(
                page.text.range(of: "<ul class=\"mb-0\" id=\"publish-checklist\" data-checklist>").map {
                    String(page.text[$0.upperBound...].prefix(while: { $0 != "\n" }))
                }
            )
            #expect(list.contains("<li>Set the map frame.</li>"), "\(list)")
            #expect(list.contains("unscanned.png"), "\(list)")
            #expect(!page.text.contains("action=\"/tours/\(env.seed.tourId)/publish\""))
            let barePage = try await client.get("/tours/\(bareId)", session: session)
            #expect(barePage.text.contains("<li>Add at least one waypoint.</li>"))
            let post = try await client.post("/tours/\(env.seed.tourId)/publish", form: [:], session: session)
            #expect(post.status == .seeOther && post.location == "/tours/\(env.seed.tourId)#publish")

            // An infected file is listed too.
            try await env.sql("UPDATE asset SET scanStatus = 'infected' WHERE id = ?", [pendingId])
            #expect(
                try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).contains(
                    "File “unscanned.png” at “Fish Lake” is infected, not clean."
                )
            )
        }
    }
}
