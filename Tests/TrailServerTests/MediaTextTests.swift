import Foundation
import GRDB
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A title for every file and alt text for images, through the API and the panel, required
/// or recommended per site, carried in the manifest and shown to reviewers.
@Suite(.scratch) struct MediaTextTests {
    /// Uploads an image and a video without describing them (the fixture helper describes images; this does not).
    static func undescribed(_ env: TestEnv, _ client: some TestClientProtocol, token: String) async throws -> (image: Int64, video: Int64) {
        func upload(_ data: Data, _ name: String, _ type: String) async throws -> Int64 {
            let boundary = "media-text-\(UUID().uuidString)"
            let response = try await client.execute(
                uri: "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: PublishFixtures.multipart(data, fileName: name, contentType: type, boundary: boundary)
            )
            return Int64(try #require(publishInt(response.jsonObject["id"]), "\(response.text)"))
        }
        let image = try await upload(MediaFixtures.png(size: 20_000, seed: 5), "ridge.png", "image/png")
        let video = try await upload(PublishFixtures.mp4(size: 60_000, seed: 6), "intro.mp4", "video/mp4")
        #expect(await env.scanAll() == 2)
        return (image, video)
    }

    @Test(
        "API: title and alt text saved; 2,000 characters of alt text, alt text on a video, a 250-character title: 422, nothing saved; a reviewer: 403"
    )
    func apiDescribe() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (image, video) = try await Self.undescribed(env, client, token: token)
            let saved = try await client.api(
                .patch,
                "/api/v1/manage/assets/\(image)",
                token: token,
                json: #"{"title":"The ridge","altText":"Snow on a rocky ridge above a lake."}"#
            )
            #expect(saved.status == .ok && saved.jsonObject["altText"] as? String == "Snow on a rocky ridge above a lake.", "\(saved.text)")
            #expect(saved.jsonObject["title"] as? String == "The ridge")
            let long = String(repeating: "a", count: 2_000)
            // 600 flags: 600 characters to Swift, 1,200 code points to SQLite's CHECK: refused as too long, not a 500.
            let flags = String(repeating: "\u{1F1FA}\u{1F1F8}", count: 600)
            for (id, json, field) in [
                (image, #"{"altText":"\#(long)"}"#, "altText"), (video, #"{"altText":"A man talking."}"#, "altText"),
                (image, #"{"title":"\#(String(repeating: "t", count: 250))"}"#, "title"),
                (image, #"{"altText":"\#(flags)"}"#, "altText"),
            ] {
                let refused = try await client.api(.patch, "/api/v1/manage/assets/\(id)", token: token, json: json)
                #expect(refused.status == .unprocessableContent, "\(refused.text)")
                #expect(refused.errorFields[field] != nil, "\(refused.text)")
            }
            let stored = try #require(try await env.database.asset(id: image))
            #expect(stored.altText == "Snow on a rocky ridge above a lake." && stored.title == "The ridge", "nothing refused was saved")
            #expect(try await env.database.asset(id: video)?.altText == "")
            let reviewer = try await client.api(
                .patch,
                "/api/v1/manage/assets/\(image)",
                token: try env.token("reviewer@test.org"),
                json: #"{"altText":"x"}"#
            )
            #expect(reviewer.status == .forbidden)
        }
    }

    @Test("a file id that is not a number, or names no file: 404 on the panel and in the API, before anything is read or changed")
    func unknownFileIds() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            _ = try await Self.undescribed(env, client, token: token)
            let author = try await client.signIn("author@test.org")
            let before = try await env.database.snapshot()
            for id in ["abc", "99999", "-1"] {
                #expect(try await client.get("/assets/\(id)/content", session: author).status == .notFound, "\(id)")
                let describe = try await client.post("/assets/\(id)/describe", form: ["title": "X"], session: author)
                #expect(describe.status == .notFound, "\(id): \(describe.status)")
                let api = try await client.api(.patch, "/api/v1/manage/assets/\(id)", token: token, json: #"{"title":"X"}"#)
                #expect(api.status == .notFound && api.errorCode == "not_found", "\(id): \(api.text)")
            }
            #expect(try await env.database.snapshot() == before)
        }
    }

    @Test("required (the default): an image without alt text stops the submission, named; recommended: a warning; the panel form fixes it")
    func requiredOrRecommended() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (image, _) = try await Self.undescribed(env, client, token: token)
            #expect(try await env.database.site(id: env.seed.alphaId)?.mediaAccessibility == .required)
            let refused = try await client.api(.post, "/api/v1/manage/tours/\(env.seed.tourId)/publish", token: token)
            #expect(refused.status == .unprocessableContent)
            #expect(
                refused.errorFields.values.contains("Image “ridge.png” at “Fish Lake” has no alt text: describe it on the waypoint's page."),
                "\(refused.text)"
            )

            try await env.sql("UPDATE site SET mediaAccessibility = 'recommended' WHERE id = ?", [env.seed.alphaId])
            #expect(try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current).isEmpty)
            let session = try await client.signIn("author@test.org")
            var page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(page.text.contains(#"id="publish-warnings""#) && page.text.contains("Image “ridge.png” at “Fish Lake” has no alt text"))

            // The waypoint page's form: a field per image, saved with the title.
            let waypoint = try await client.get("/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)", session: session)
            #expect(waypoint.text.contains(#"<label class="form-label small mb-0" for="alt-\#(image)">Alt text (what the image shows)</label>"#))
            let tooLong = String(repeating: "x", count: 2_000)
            let refusedForm = try await client.post("/assets/\(image)/describe", form: ["title": "The ridge", "altText": tooLong], session: session)
            #expect(refusedForm.status == .unprocessableContent)
            #expect(
                refusedForm.text.contains(#"is-invalid" id="alt-\#(image)""#) && refusedForm.text.contains("Keep the alt text to 1,000 characters"),
                "the message sits under the field"
            )
            #expect(refusedForm.text.contains(#"value="The ridge""#), "what was typed is kept")
            #expect(try await env.database.asset(id: image)?.altText == "", "nothing saved")
            let saved = try await client.post(
                "/assets/\(image)/describe",
                form: ["title": "The ridge", "altText": "A rocky ridge."],
                session: session
            )
            #expect(saved.status == .seeOther)
            #expect(try await env.database.asset(id: image)?.altText == "A rocky ridge.")
            page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(!page.text.contains("has no alt text"))
        }
    }

    @Test("the manifest carries title and alt text (a v1 reader still verifies), and the review page shows each image's alt text")
    func manifestAndReview() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let (image, video) = try await Self.undescribed(env, client, token: token)
            _ = try await client.api(
                .patch,
                "/api/v1/manage/assets/\(image)",
                token: token,
                json: #"{"title":"The ridge","altText":"A rocky ridge."}"#
            )
            _ = try await client.api(.patch, "/api/v1/manage/assets/\(video)", token: token, json: #"{"title":"Welcome"}"#)
            try await CaptionsTests.attachCaptions(client, token: token, to: video)
            #expect(await env.scanAll() == 1)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            let check = try await TestScripts.python("package_v1_check.py", [env.stagedZip(request.id).path, env.publicKey])
            let result = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check.stderr)")
            #expect(result["valid"] as? Bool == true)
            let waypoints = try #require((result["manifest"] as? [String: Any])?["waypoints"] as? [[String: Any]])
            let assets = try #require(waypoints.first?["assets"] as? [[String: Any]])
            #expect(assets.map { $0["title"] as? String } == ["The ridge", "Welcome"])
            #expect(assets.map { $0["altText"] as? String } == ["A rocky ridge.", nil])
            let session = try await client.signIn("reviewer@test.org")
            let page = try await client.get("/requests/\(request.id)", session: session)
            #expect(page.text.contains("Alt text: A rocky ridge.") && page.text.contains(#"alt="A rocky ridge.""#))
            #expect(page.text.contains("Title: Welcome"))
        }
    }

    @Test("an admin sets a site's rule on its edit form; the form shows the saved choice; an unknown value keeps the default")
    func siteSetting() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let admin = try await client.signIn("admin@test.org")
            var page = try await client.get("/admin/sites/\(env.seed.alphaId)", session: admin)
            #expect(page.text.contains(#"id="s-media-required" value="required" checked"#))
            let fields = ["slug": "alpha", "name": "Alpha District", "description": "", "requiredApprovals": "1", "storageQuota": ""]
            let saved = try await client.post(
                "/admin/sites/\(env.seed.alphaId)",
                form: fields.merging(["mediaAccessibility": "recommended"]) { $1 },
                session: admin
            )
            #expect(saved.status == .seeOther, "\(saved.status) \(saved.text)")
            #expect(try await env.database.site(id: env.seed.alphaId)?.mediaAccessibility == .recommended)
            page = try await client.get("/admin/sites/\(env.seed.alphaId)", session: admin)
            #expect(page.text.contains(#"id="s-media-recommended" value="recommended" checked"#))
            _ = try await client.post(
                "/admin/sites/\(env.seed.alphaId)",
                form: fields.merging(["mediaAccessibility": "sometimes"]) { $1 },
                session: admin
            )
            #expect(try await env.database.site(id: env.seed.alphaId)?.mediaAccessibility == .required)
        }
    }
}
