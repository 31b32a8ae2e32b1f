import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// tus 1.0 at `/api/v1/manage/uploads`: a real client (Python's tuspy) against a live server, and the protocol's errors.
@Suite("Media: tus resumable uploads", .scratch)
struct TusTests {
    static let endpoint = "/api/v1/manage/uploads"

    @Test("tuspy uploads in chunks over a live socket; the connection is cut midway; it resumes and the stored SHA-256 is the file's")
    func tuspyResumesAfterACut() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let content = MediaFixtures.png(size: 5 * 1024 * 1024 + 12_345, seed: 99)
        let file = env.folder.appendingPathComponent("trail video.png")
        try content.write(to: file)
        let sha = MediaFixtures.sha256(content)

        try await env.app.application.testLive { client in
            let port = try #require(client.port)
            let run = try await TestScripts.python(
                "tus_resume.py",
                [
                    "--endpoint", "http://localhost:\(port)\(Self.endpoint)", "--token", token, "--file", file.path,
                    "--tour", "\(env.seed.tourId)", "--waypoint", "\(env.seed.waypointId)",
                    "--chunk-size", "\(1024 * 1024)", "--chunks-before-cut", "2", "--cut-bytes", "1500001",
                ]
            )
            #expect(run.status == 0, "tus_resume.py failed:\n\(run.stdout)\n\(run.stderr)")
            let result = run.json
            #expect(result["error"] == nil, "\(result)")
            #expect(result["sha256"] as? String == sha)
            #expect(result["beforeCut"] as? Int == 2 * 1024 * 1024)
            // The bytes that arrived before the connection dropped were kept, and tuspy resumed from exactly there.
            let afterCut = try #require(result["afterCut"] as? Int, "\(result)")
            #expect(afterCut > 2 * 1024 * 1024, "nothing of the cut PATCH was kept: \(result)")
            #expect(afterCut <= 2 * 1024 * 1024 + 1_500_001)
            #expect(afterCut < content.count)
            #expect(result["headStatus"] as? Int == 200)
            #expect(result["headCacheControl"] as? String == "no-store")
            #expect(result["resumedFrom"] as? Int == afterCut)
            #expect(result["finalOffset"] as? Int == content.count)
            #expect(result["statusAfter"] as? Int == 404, "a finished upload is gone from the tus endpoint")
            let headers = try #require(result["finalHeaders"] as? [String: Any])
            let assetId = try #require((headers["asset-id"] as? String).flatMap { Int64($0) }, "\(headers)")
            #expect(headers["asset-location"] as? String == "/api/v1/manage/assets/\(assetId)")

            let pending = try await env.asset(assetId)
            #expect(pending.sha256 == sha, "the running hash differs from the file's")
            #expect(pending.size == Int64(content.count))
            #expect(pending.originalName == "trail video.png")
            #expect(pending.mimeType == "image/png")
            #expect(try MediaFixtures.sha256(fileAt: env.paths.absolute(pending.storedPath)) == sha, "the bytes on disk differ from the file")

            #expect(await env.scanAll() == 1)
            let asset = try await env.asset(assetId)
            #expect(asset.scanStatus == .clean)
            #expect(asset.storedPath == "assets/\(sha)")
            #expect(try MediaFixtures.sha256(fileAt: env.paths.absolute(asset.storedPath)) == sha)
            #expect(env.files(in: "uploads").isEmpty)
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM upload") as Int? == 0)
            let json = try await client.mediaAsset(assetId, token: token)
            #expect(json["scanStatus"] as? String == "clean")
            #expect(json["sha256"] as? String == sha)
        }
    }

    @Test("tus errors: 415 without offset+octet-stream, 409 on a wrong offset, HEAD no-store, 412 without Tus-Resumable, 460 on a checksum mismatch")
    func protocolErrors() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let content = MediaFixtures.png(size: 200_000)
        try await env.app.test { client in
            let created = try await client.tusCreate(env, token: token, length: content.count)
            #expect(created.status == .created)
            #expect(created.headers[.tusResumable] == "1.0.0")
            let location = try #require(created.location)
            #expect(location.hasPrefix("\(Self.endpoint)/"))
            let id = String(location.dropFirst(Self.endpoint.count + 1))
            #expect(env.files(in: "uploads") == [id], "the upload's file is named by the server (a uuid)")
            #expect(UUID(uuidString: id) != nil)

            // HEAD: offset, length, never cached.
            var head = try await client.tus(.head, location, token: token)
            #expect(head.status == .ok)
            #expect(head.headers[.uploadOffset] == "0")
            #expect(head.headers[.uploadLength] == "\(content.count)")
            #expect(head.headers[.cacheControl] == "no-store")

            // No Tus-Resumable: 412 with the version the server speaks.
            let noVersion = try await client.execute(uri: location, method: .head, headers: [.authorization: "Bearer \(token)"])
            #expect(noVersion.status == .preconditionFailed)
            #expect(noVersion.headers[.tusVersion] == "1.0.0")
            let noVersionPatch = try await client.execute(
                uri: location,
                method: .patch,
                headers: [
                    .authorization: "Bearer \(token)", .contentType: "application/offset+octet-stream", .uploadOffset: "0",
                ],
                body: ByteBuffer(bytes: content.prefix(100))
            )
            #expect(noVersionPatch.status == .preconditionFailed)

            // PATCH with another Content-Type: 415, nothing written.
            for contentType in [nil, "application/octet-stream", "multipart/form-data; boundary=x"] {
                let wrongType = try await client.tus(.patch, location, token: token, offset: 0, contentType: contentType, body: content.prefix(1000))
                #expect(wrongType.status == .unsupportedMediaType, "\(contentType ?? "none"): \(wrongType.status)")
            }
            #expect(try fileSize(env, id) == 0)

            // A good chunk.
            let firstChunk = content.prefix(65_536)
            var patched = try await client.tus(.patch, location, token: token, offset: 0, body: firstChunk)
            #expect(patched.status == .noContent)
            #expect(patched.headers[.uploadOffset] == "65536")

            // Wrong offsets: 409 and nothing changes.
            for offset in [0, 1000, 65_537, 200_000] {
                let conflict = try await client.tus(.patch, location, token: token, offset: offset, body: content[65_536..<70_000])
                #expect(conflict.status == .conflict, "offset \(offset): \(conflict.status)")
            }
            head = try await client.tus(.head, location, token: token)
            #expect(head.headers[.uploadOffset] == "65536")

            // Checksum mismatch: 460, the offset and the file stay as they were.
            let second = content[65_536..<131_072]
            let wrongDigest = Data(SHA256.hash(data: Data("something else".utf8))).base64EncodedString()
            let mismatch = try await client.tus(
                .patch,
                location,
                token: token,
                offset: 65_536,
                body: second,
                extra: [.uploadChecksum: "sha256 \(wrongDigest)"]
            )
            #expect(mismatch.status.code == 460, "\(mismatch.status)")
            head = try await client.tus(.head, location, token: token)
            #expect(head.headers[.uploadOffset] == "65536")
            #expect(try fileSize(env, id) == 65_536)
            // The right checksum is accepted (sha256 and sha1).
            let rightDigest = Data(SHA256.hash(data: second)).base64EncodedString()
            patched = try await client.tus(
                .patch,
                location,
                token: token,
                offset: 65_536,
                body: second,
                extra: [.uploadChecksum: "sha256 \(rightDigest)"]
            )
            #expect(patched.status == .noContent)
            #expect(patched.headers[.uploadOffset] == "131072")
            let third = content[131_072...]
            let sha1 = Data(Insecure.SHA1.hash(data: third)).base64EncodedString()
            patched = try await client.tus(.patch, location, token: token, offset: 131_072, body: third, extra: [.uploadChecksum: "sha1 \(sha1)"])
            #expect(patched.status == .noContent)
            #expect(patched.headers[.uploadOffset] == "\(content.count)")
            let assetId = try #require(patched.headers[.assetId].flatMap { Int64($0) })
            let asset = try await env.asset(assetId)
            #expect(asset.sha256 == MediaFixtures.sha256(content))
            #expect(try env.contents(asset.storedPath) == content)
            #expect(try await client.tus(.head, location, token: token).status == .notFound)
        }
    }

    @Test("An expired upload answers 404 or 410; termination removes the file; a foreign user's upload is 404")
    func expiryTerminationAndOwnership() async throws {
        let env = try await TestEnv.media()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            // Expired (expiresAt in the past).
            let expired = try #require(try await client.tusCreate(env, token: author, length: 5000).location)
            let expiredId = String(expired.dropFirst(Self.endpoint.count + 1))
            try await env.database.execute("UPDATE upload SET expiresAt = ? WHERE id = ?", [Date().timeIntervalSince1970 - 60, expiredId])
            for method in [HTTPRequest.Method.head, .patch] {
                let response = try await client.tus(method, expired, token: author, offset: 0, body: MediaFixtures.png(size: 5000).prefix(100))
                #expect([.notFound, .gone].contains(response.status), "\(method) on an expired upload: \(response.status)")
            }
            #expect(try fileSize(env, expiredId) == 0, "an expired upload took bytes")

            // Termination: 204, the file and the row go, then 404.
            let doomed = try #require(try await client.tusCreate(env, token: author, length: 5000).location)
            let doomedId = String(doomed.dropFirst(Self.endpoint.count + 1))
            let chunk = try await client.tus(.patch, doomed, token: author, offset: 0, body: MediaFixtures.png(size: 5000).prefix(2000))
            #expect(chunk.status == .noContent)
            #expect(env.files(in: "uploads").contains(doomedId))
            let terminated = try await client.tus(.delete, doomed, token: author)
            #expect(terminated.status == .noContent)
            #expect(!env.files(in: "uploads").contains(doomedId), "termination left the file")
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM upload WHERE id = ?", [doomedId]) as Int? == 0)
            #expect(try await client.tus(.head, doomed, token: author).status == .notFound)
            #expect(try await client.tus(.delete, doomed, token: author).status == .notFound)
            // An expired upload can still be terminated.
            #expect(try await client.tus(.delete, expired, token: author).status == .noContent)
            #expect(!env.files(in: "uploads").contains(expiredId))

            // Someone else's upload: 404 for every method, even for a manager of the same site, and it stays intact.
            let mine = try #require(try await client.tusCreate(env, token: author, length: 5000).location)
            let mineId = String(mine.dropFirst(Self.endpoint.count + 1))
            for email in ["manager@test.org", "admin@test.org", "outsider@test.org"] {
                let other = try await env.token(email)
                for method in [HTTPRequest.Method.head, .patch, .delete] {
                    let response = try await client.tus(method, mine, token: other, offset: 0, body: Data(repeating: 0x41, count: 10))
                    #expect(response.status == .notFound, "\(email) \(method): \(response.status)")
                }
            }
            #expect(env.files(in: "uploads").contains(mineId))
            #expect(try fileSize(env, mineId) == 0)
            // Unknown ids too.
            #expect(try await client.tus(.head, "\(Self.endpoint)/\(UUID().uuidString.lowercased())", token: author).status == .notFound)
            let traversal = try await client.tus(.head, "\(Self.endpoint)/..%2F..%2Ftrail.sqlite", token: author)
            #expect([.notFound, .badRequest].contains(traversal.status), "\(traversal.status)")
            // No token at all: 401.
            let anonymous = try await client.execute(uri: mine, method: .head, headers: [.tusResumable: "1.0.0"])
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test("An upload begun earlier cannot be finished by someone made a reviewer (403) or removed from the site (404); nothing is added")
    func continuingNeedsTheRightToEditStill() async throws {
        let env = try await TestEnv.media()
        let author = try await env.token("author@test.org")
        let body = MediaFixtures.png(size: 5000)
        try await env.app.test { client in
            let upload = try #require(try await client.tusCreate(env, token: author, length: 5000).location)
            #expect(try await client.tus(.patch, upload, token: author, offset: 0, body: body.prefix(2000)).status == .noContent)
            let assetsBefore: Int? = try await env.database.scalar("SELECT COUNT(*) FROM asset", [])

            // Demoted to reviewer: the next PATCH (the last one) is refused, nothing is written or added.
            try await env.database.setMembership(siteId: env.seed.alphaId, email: "author@test.org", role: .reviewer, actor: .system)
            let demoted = try await client.tus(.patch, upload, token: author, offset: 2000, body: body.suffix(3000))
            #expect(demoted.status == .forbidden, "\(demoted.status) \(demoted.text)")
            #expect(try await client.tus(.head, upload, token: author).headers[.uploadOffset] == "2000")

            // Removed from the site: the tour is not theirs to see any more.
            let userId = try #require(try await env.database.user(email: "author@test.org")?.id)
            try await env.database.removeMembership(siteId: env.seed.alphaId, userId: userId, actor: .system)
            let removed = try await client.tus(.patch, upload, token: author, offset: 2000, body: body.suffix(3000))
            #expect(removed.status == .notFound, "\(removed.status)")
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM asset", []) as Int? == assetsBefore, "no asset was added")

            // Made an author again: the same upload finishes.
            try await env.database.setMembership(siteId: env.seed.alphaId, email: "author@test.org", role: .author, actor: .system)
            let finished = try await client.tus(.patch, upload, token: author, offset: 2000, body: body.suffix(3000))
            #expect(finished.status == .noContent && finished.headers[.assetId] != nil, "\(finished.status)")
        }
    }

    @Test("Upload-Length above the limit is 413 at creation; a PATCH past Upload-Length is 413 and keeps nothing of itself")
    func limits() async throws {
        let env = try await TestEnv.media(configure: { $0.maxUploadSize = 64 * 1024 })
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let options = try await client.execute(uri: Self.endpoint, method: HTTPRequest.Method.options)
            #expect(options.status == .noContent)
            #expect(options.headers[.tusMaxSize] == "\(64 * 1024)")
            #expect(options.headers[.tusVersion] == "1.0.0")
            #expect(options.headers[.tusExtension]?.contains("creation") == true)
            #expect(options.headers[.tusExtension]?.contains("termination") == true)

            let tooBig = try await client.tusCreate(env, token: token, length: 64 * 1024 + 1)
            #expect(tooBig.status == .contentTooLarge)
            #expect(tooBig.mediaErrorMessage?.contains("64.0 KiB") == true, "\(tooBig.text)")
            #expect(env.files(in: "uploads").isEmpty, "a refused creation left a file")
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM upload") as Int? == 0)

            let atLimit = try await client.tusCreate(env, token: token, length: 64 * 1024)
            #expect(atLimit.status == .created)
            let location = try #require(atLimit.location)
            let id = String(location.dropFirst(Self.endpoint.count + 1))
            let overflowing = try await client.tus(.patch, location, token: token, offset: 0, body: MediaFixtures.png(size: 64 * 1024 + 100))
            #expect(overflowing.status == .contentTooLarge)
            #expect(try fileSize(env, id) == 0, "the refused PATCH left bytes")
            let head = try await client.tus(.head, location, token: token)
            #expect(head.headers[.uploadOffset] == "0")

            // Missing or bad creation headers.
            #expect(try await client.tusCreate(env, token: token, length: nil).status == .badRequest)
            #expect(
                try await client.tusCreate(env, token: token, length: 100, metadata: "filename \(Data("x".utf8).base64EncodedString())").status
                    == .unprocessableContent
            )
            #expect(env.files(in: "uploads") == [id])
        }
    }

    @Test("Creation checks the tour: a reviewer gets 403, an outsider 404, another tour's waypoint 404")
    func creationAuthorization() async throws {
        let env = try await TestEnv.media()
        try await env.app.test { client in
            #expect(try await client.tusCreate(env, token: try env.token("reviewer@test.org"), length: 100).status == .forbidden)
            #expect(try await client.tusCreate(env, token: try env.token("outsider@test.org"), length: 100).status == .notFound)
            let other = try await env.database.createTour(siteId: env.seed.alphaId, TourInput(name: "Other", description: ""), actor: .system)
            let metadata = TestClientTus.metadata(tour: other.id, waypoint: env.seed.waypointId, fileName: "x.png")
            #expect(try await client.tusCreate(env, token: try env.token("author@test.org"), length: 100, metadata: metadata).status == .notFound)
            #expect(env.files(in: "uploads").isEmpty)
        }
    }

    func fileSize(_ env: TestEnv, _ id: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: env.paths.upload(id).path)[.size] as? Int)
    }
}

enum TestClientTus {
    static func metadata(tour: Int64, waypoint: Int64, fileName: String) -> String {
        [("tour", "\(tour)"), ("waypoint", "\(waypoint)"), ("filename", fileName)]
            .map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }
}

extension TestClientProtocol {
    /// tus creation: `POST /api/v1/manage/uploads` with Upload-Length and metadata for the seeded waypoint.
    func tusCreate(_ env: TestEnv, token: String, length: Int?, metadata: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [
            .authorization: "Bearer \(token)", .tusResumable: "1.0.0",
            .uploadMetadata: metadata ?? TestClientTus.metadata(tour: env.seed.tourId, waypoint: env.seed.waypointId, fileName: "clip.png"),
        ]
        if let length { headers[.uploadLength] = "\(length)" }
        return try await execute(uri: TusTests.endpoint, method: .post, headers: headers)
    }

    /// A tus request with `Tus-Resumable: 1.0.0`; PATCH gets `Upload-Offset` and `application/offset+octet-stream` unless told otherwise.
    func tus(
        _ method: HTTPRequest.Method,
        _ uri: String,
        token: String,
        offset: Int? = nil,
        contentType: String? = "application/offset+octet-stream",
        body: Data? = nil,
        extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(token)", .tusResumable: "1.0.0"]
        if method == .patch {
            if let offset { headers[.uploadOffset] = "\(offset)" }
            if let contentType { headers[.contentType] = contentType }
        }
        headers.append(contentsOf: extra)
        return try await execute(uri: uri, method: method, headers: headers, body: method == .patch ? body.map { ByteBuffer(bytes: $0) } : nil)
    }
}
