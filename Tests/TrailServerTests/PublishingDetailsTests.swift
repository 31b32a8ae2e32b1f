import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// Details of media and publishing that the larger flows pass over: replacing and reordering files, scan jobs that
/// outlive the process, Range on the review page's files, and a manager releasing someone else's request.
@Suite(.scratch) struct PublishingDetailsTests {
    @Test("replace takes the old file's place; ↑/↓ reorder; both by an author through the panel and the API")
    func replaceAndReorderAssets() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let first = try await client.publishUpload(
                env,
                token: token,
                data: MediaFixtures.png(size: 30_000, seed: 1),
                fileName: "old.png",
                contentType: "image/png"
            )
            let second = try await client.publishUpload(
                env,
                token: token,
                data: MediaFixtures.text("Second file."),
                fileName: "b.txt",
                contentType: "text/plain"
            )
            #expect(await env.scanAll() == 2)

            // Replace the first through the API: a multipart body with the file and `replaces`.
            let replaced = try await client.replaceUpload(env, token: token, replaces: ["\(first)"], size: 31_000)
            #expect(replaced.status == .created, "\(replaced.text)")
            let third = Int64(try #require(publishInt(replaced.jsonObject["id"])))
            #expect(await env.scanAll() == 1)
            var order = try await env.database.assets(waypointId: env.seed.waypointId).map(\.id)
            #expect(order == [third, second], "the new file took the old one's place: \(order)")
            #expect(try await env.database.asset(id: first) == nil, "the replaced file is gone")

            // ↓ on the first through the panel.
            let browser = try await client.signIn("author@test.org")
            let moved = try await client.post("/assets/\(third)/down", form: [:], session: browser)
            #expect(moved.status == .seeOther)
            order = try await env.database.assets(waypointId: env.seed.waypointId).map(\.id)
            #expect(order == [second, third], "\(order)")
            // A reviewer may look but not reorder.
            let reviewer = try await client.signIn("reviewer@test.org")
            #expect(try await client.post("/assets/\(third)/up", form: [:], session: reviewer).status == .forbidden)
            #expect(try await env.database.assets(waypointId: env.seed.waypointId).map(\.id) == [second, third])
        }
    }

    @Test("a `replaces` that is not one asset number is refused on that field, and nothing is stored")
    func replacesMustNameOneAsset() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let first = try await client.publishUpload(
                env,
                token: token,
                data: MediaFixtures.png(size: 20_000, seed: 1),
                fileName: "old.png",
                contentType: "image/png"
            )
            let before = try await env.database.assets(waypointId: env.seed.waypointId).map(\.id)
            let uploadsBefore = try FileManager.default.contentsOfDirectory(atPath: env.paths.uploads.path)
            // Not a number, an empty value, a negative one, and the field twice (which of the two was meant?).
            for fields in [["abc"], [""], ["-3"], ["\(first)", "\(first)"]] {
                let refused = try await client.replaceUpload(env, token: token, replaces: fields, size: 21_000)
                #expect(refused.status == .unprocessableContent, "replaces \(fields): \(refused.status) \(refused.text)")
                #expect(refused.text.contains("replaces"), "the answer names the field: \(refused.text)")
            }
            // tus: the same rule for the metadata's `replaces`.
            let metadata = ["tour": "\(env.seed.tourId)", "waypoint": "\(env.seed.waypointId)", "replaces": "abc"]
                .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
            let tus = try await client.execute(
                uri: "/api/v1/manage/uploads",
                method: .post,
                headers: [
                    .authorization: "Bearer \(token)", HTTPField.Name("Tus-Resumable")!: "1.0.0",
                    HTTPField.Name("Upload-Length")!: "100", HTTPField.Name("Upload-Metadata")!: metadata,
                ]
            )
            #expect(tus.status == .unprocessableContent, "\(tus.status) \(tus.text)")
            // Nothing was stored: the same assets, no upload left behind.
            #expect(try await env.database.assets(waypointId: env.seed.waypointId).map(\.id) == before)
            let left = try FileManager.default.contentsOfDirectory(atPath: env.paths.uploads.path)
            #expect(Set(left).subtracting(uploadsBefore).isEmpty, "left in uploads/: \(left)")
        }
    }

    @Test("a queued scan survives a restart: the next process scans it")
    func scanJobsSurviveARestart() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            _ = try await client.publishUpload(
                env,
                token: token,
                data: MediaFixtures.png(size: 20_000, seed: 9),
                fileName: "a.png",
                contentType: "image/png"
            )
        }
        let assetId = try #require(try await env.database.assets(waypointId: env.seed.waypointId).first?.id)
        #expect(try await env.database.asset(id: assetId)?.scanStatus == .pending, "not scanned before the 'crash'")
        #expect(try await env.database.scalar("SELECT COUNT(*) FROM scanJob") == 1)
        let restarted = try await env.reopen()
        #expect(await restarted.scanAll() == 1)
        let asset = try #require(try await restarted.database.asset(id: assetId))
        #expect(asset.scanStatus == .clean)
        #expect(asset.storedPath == "assets/\(asset.sha256)")
        #expect(try await restarted.database.scalar("SELECT COUNT(*) FROM scanJob") == 0)
    }

    @Test("the review page's files answer Range requests from the built package's copy; a manager releases an author's request")
    func reviewFilesRangeAndManagerPush() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            #expect(request.state == .ready)
            let reviewer = try await client.signIn("reviewer@test.org")
            var headers = HTTPFields()
            headers[.range] = "bytes=0-9"
            let part = try await client.get("/requests/\(request.id)/assets/0", session: reviewer, headers: headers)
            #expect(part.status == .partialContent)
            #expect(part.headers[.contentRange]?.hasPrefix("bytes 0-9/") == true, "\(part.headers)")
            #expect(part.body.readableBytes == 10)
            headers[.range] = "bytes=99999999-"
            let beyond = try await client.get("/requests/\(request.id)/assets/0", session: reviewer, headers: headers)
            #expect(beyond.status == .rangeNotSatisfiable)
            #expect(try await client.get("/requests/\(request.id)/assets/99", session: reviewer).status == .notFound)

            // The author is not the one who releases here: a manager of the site does.
            let manager = try await env.token("manager@test.org")
            let pushed = try await client.publishAction(request.id, "push", token: manager)
            #expect(pushed.status == .ok, "\(pushed.text)")
            let package = try await env.package(request.packageId)
            #expect(package.currentVersion == 1)
            #expect(env.exists(env.packageZip(request.packageId, version: 1)))
            await #expect(try env.auditCount("publish.push", objectId: request.packageId) == 1)

            // Apps report verified downloads; the package page counts them per version (a wrong hash is not counted).
            let zipSHA = try await #require(env.package(request.packageId).currentVersion.flatMap { _ in request.zipSha256 })
            for sha in [zipSHA, zipSHA, String(repeating: "0", count: 64)] {
                let verify = try await client.execute(
                    uri: "/api/v1/packages/\(request.packageId)/verify",
                    method: .post,
                    headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"sha256":"\#(sha)","version":1}"#)
                )
                #expect(verify.status == .ok)
                #expect(verify.jsonObject["valid"] as? Bool == (sha == zipSHA))
            }
            let author = try await client.signIn("author@test.org")
            let page = try await client.get("/packages/\(request.packageId)", session: author)
            #expect(page.status == .ok)
            // Two valid reports from one address on one day are one verified download.
            #expect(page.text.contains(#"<td class="verified-count">1</td>"#), "one verified download shown")
        }
    }
}

extension TestClientProtocol {
    /// `POST` of a new PNG to the seed waypoint through the API, with a `replaces` field for each of `replaces`.
    fileprivate func replaceUpload(_ env: TestEnv, token: String, replaces: [String], size: Int) async throws -> TestResponse {
        let boundary = "replace-boundary"
        var body = ByteBuffer()
        for value in replaces {
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"replaces\"\r\n\r\n\(value)\r\n")
        }
        var file = PublishFixtures.multipart(
            MediaFixtures.png(size: size, seed: 2),
            fileName: "new.png",
            contentType: "image/png",
            boundary: boundary
        )
        body.writeBuffer(&file)
        return try await execute(
            uri: "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
            method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
            body: body
        )
    }
}
