import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Open uploads count against the quota, a user cannot open uploads without end, a multipart request
/// stops at the quota as its bytes arrive, and abandoned work is swept while the server runs.
@Suite(.scratch) struct UploadLimitsTests {
    static func setQuota(_ env: TestEnv, bytes: Int64) async throws {
        try await env.database.write {
            try $0.execute(sql: "UPDATE site SET storageQuotaBytes = ? WHERE id = ?", arguments: [bytes, env.seed.alphaId])
        }
    }

    @Test("tus: Upload-Length is reserved against the quota at creation; cancelling one frees its room")
    func tusReservesQuota() async throws {
        let env = try await TestEnv.media()
        try await Self.setQuota(env, bytes: 1_000_000)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let first = try await client.tusCreate(env, token: token, length: 600_000)
            #expect(first.status == .created)
            let second = try await client.tusCreate(env, token: token, length: 600_000)
            #expect(second.status == .contentTooLarge)
            #expect(String(buffer: second.body).contains("counting the uploads still in progress"), "\(String(buffer: second.body))")
            #expect(env.files(in: "uploads").count == 1, "the refused upload left no file")
            #expect(try await client.tus(.delete, try #require(first.location), token: token).status == .noContent)
            #expect(try await client.tusCreate(env, token: token, length: 600_000).status == .created)
        }
    }

    @Test("a user may have at most maxOpenUploadsPerUser unfinished uploads: the next gets 429 and stores nothing")
    func openUploadsAreCapped() async throws {
        let env = try await TestEnv.media(configure: { $0.maxOpenUploadsPerUser = 3 })
        let token = try await env.token("author@test.org")
        let other = try await env.token("manager@test.org")
        try await env.app.test { client in
            for _ in 0..<3 { #expect(try await client.tusCreate(env, token: token, length: 1000).status == .created) }
            let fourth = try await client.tusCreate(env, token: token, length: 1000)
            #expect(fourth.status == .tooManyRequests)
            #expect(String(buffer: fourth.body).contains("3 unfinished uploads"))
            #expect(env.files(in: "uploads").count == 3)
            #expect(try await client.tusCreate(env, token: other, length: 1000).status == .created, "another user is not affected")
        }
    }

    @Test("a multipart request stops at the quota while its bytes arrive: 413, nothing stored")
    func multipartStopsAtTheQuota() async throws {
        let env = try await TestEnv.media()
        try await Self.setQuota(env, bytes: 1_000_000)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let parts = [
                MediaMultipart.file(MediaFixtures.png(size: 700_000, seed: 1), fileName: "a.png"),
                MediaMultipart.file(MediaFixtures.png(size: 700_000, seed: 2), fileName: "b.png"),
            ]
            let response = try await client.execute(
                uri: env.panelAssetsURI.replacingOccurrences(of: "/tours/", with: "/api/v1/manage/tours/"),
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=quota"],
                body: MediaMultipart.encode(parts, boundary: "quota")
            )
            #expect(response.status == .contentTooLarge)
            #expect(String(buffer: response.body).contains("storage quota"), "\(String(buffer: response.body))")
            #expect(env.files(in: "uploads").isEmpty)
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM asset") as Int? == 0)
            // Within the room: accepted.
            let one = try await client.execute(
                uri: env.assetsURI,
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=quota"],
                body: MediaMultipart.encode([parts[0]], boundary: "quota")
            )
            #expect(one.status == .created, "\(String(buffer: one.body))")
        }
    }

    @Test("the hourly sweep removes expired uploads, previews older than an hour and closed requests' old staging folders, and nothing else")
    func sweepRemovesLeftovers() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        final class Box: @unchecked Sendable { var expired = "", current = "" }
        let box = Box()
        try await env.app.test { client in
            box.expired = String(try #require(try await client.tusCreate(env, token: token, length: 1000).location).split(separator: "/").last!)
            box.current = String(try #require(try await client.tusCreate(env, token: token, length: 1000).location).split(separator: "/").last!)
        }
        try await env.database.write { try $0.execute(sql: "UPDATE upload SET expiresAt = 0 WHERE id = ?", arguments: [box.expired]) }
        let fileManager = FileManager.default
        let old = Date().addingTimeInterval(-2 * 3600)
        let stalePreview = env.paths.uploads.appendingPathComponent("import-\(UUID().uuidString.lowercased()).u1.t1")
        let freshPreview = env.paths.uploads.appendingPathComponent("import-\(UUID().uuidString.lowercased()).u1.t1")
        for file in [stalePreview, freshPreview] { try Data("{}".utf8).write(to: file) }
        try fileManager.setAttributes([.modificationDate: old], ofItemAtPath: stalePreview.path)
        let closed = env.paths.staging.appendingPathComponent(UUID().uuidString.lowercased())
        let recent = env.paths.staging.appendingPathComponent(UUID().uuidString.lowercased())
        for folder in [closed, recent] { try fileManager.createDirectory(at: folder, withIntermediateDirectories: true) }
        try fileManager.setAttributes([.modificationDate: old], ofItemAtPath: closed.path)

        let report = try await MaintenanceService(database: env.database, paths: env.paths).sweep()
        #expect(report == .init(expiredUploads: 1, stalePreviews: 1, staleStagingFolders: 1))
        #expect(!fileManager.fileExists(atPath: env.paths.upload(box.expired).path))
        #expect(fileManager.fileExists(atPath: env.paths.upload(box.current).path))
        #expect(try await env.database.scalar("SELECT COUNT(*) FROM upload") as Int? == 1)
        #expect(!fileManager.fileExists(atPath: stalePreview.path) && fileManager.fileExists(atPath: freshPreview.path))
        #expect(!fileManager.fileExists(atPath: closed.path) && fileManager.fileExists(atPath: recent.path), "a new folder may be a build starting")
    }
}
