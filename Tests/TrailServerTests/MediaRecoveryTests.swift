import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// `MediaRecovery.run` at start: expired uploads, orphan files and rows whose file is gone.
@Suite("Media: recovery at start", .scratch)
struct MediaRecoveryTests {
    @Test("Expired uploads and orphan files are removed, a row whose file is missing becomes error, everything else is kept")
    func recovery() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let ids = try await env.app.application.test(.router) { client in
            let clean = try #require(
                try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.png(size: 4000, seed: 1), fileName: "kept.png").mediaAssetId
            )
            let lost = try #require(
                try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.png(size: 4000, seed: 2), fileName: "lost.png").mediaAssetId
            )
            #expect(await env.scanAll() == 2)
            let lostPending = try #require(
                try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.text("lost while pending"), fileName: "lost.txt").mediaAssetId
            )
            let pending = try #require(
                try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.text("still pending"), fileName: "pending.txt").mediaAssetId
            )

            let live = try #require(try await client.tusCreate(env, token: token, length: 5000).location).split(separator: "/").last.map(String.init)!
            let patched = try await client.tus(
                .patch,
                "\(TusTests.endpoint)/\(live)",
                token: token,
                offset: 0,
                body: MediaFixtures.png(size: 5000).prefix(1000)
            )
            #expect(patched.status == .noContent)
            let expired = try #require(try await client.tusCreate(env, token: token, length: 5000).location).split(separator: "/").last.map(
                String.init
            )!
            try await env.database.execute("UPDATE upload SET expiresAt = ? WHERE id = ?", [Date().timeIntervalSince1970 - 1, expired])
            return RecoveryIds(clean: clean, lost: lost, lostPending: lostPending, pending: pending, live: live, expired: expired)
        }
        let lostAsset = try await env.asset(ids.lost)
        let lostPendingAsset = try await env.asset(ids.lostPending)
        #expect(lostAsset.storedPath.hasPrefix("assets/") && lostPendingAsset.storedPath.hasPrefix("uploads/"))
        try FileManager.default.removeItem(at: env.paths.absolute(lostAsset.storedPath))
        try FileManager.default.removeItem(at: env.paths.absolute(lostPendingAsset.storedPath))
        // Orphans: bytes no row names, in each folder (a crash between writing and registering, or after a move).
        let orphans = [
            "uploads/\(UUID().uuidString.lowercased())", "quarantine/\(UUID().uuidString.lowercased())",
            "assets/\(MediaFixtures.sha256(Data("orphan".utf8)))",
        ]
        for orphan in orphans { try Data("orphan".utf8).write(to: env.paths.absolute(orphan)) }
        let auditBefore: Int64 = try await env.database.scalar("SELECT MAX(id) FROM auditEvent") ?? 0

        let report = try await MediaRecovery.run(database: env.database, paths: env.paths)
        #expect(report.expiredUploads == 1)
        #expect(report.orphanFiles == orphans.count)
        #expect(report.missingFiles == 2)

        for orphan in orphans { #expect(!FileManager.default.fileExists(atPath: env.paths.absolute(orphan).path), "\(orphan) stayed") }
        #expect(!env.files(in: "uploads").contains(ids.expired))
        #expect(try await env.database.scalar("SELECT COUNT(*) FROM upload WHERE id = ?", [ids.expired]) as Int? == 0)
        // The live upload keeps its row, its file and its bytes.
        #expect(env.files(in: "uploads").contains(ids.live))
        #expect(try await env.database.scalar("SELECT offset FROM upload WHERE id = ?", [ids.live]) as Int? == 1000)
        #expect(try FileManager.default.attributesOfItem(atPath: env.paths.upload(ids.live).path)[.size] as? Int == 1000)

        for id in [ids.lost, ids.lostPending] {
            let asset = try await env.asset(id)
            #expect(asset.scanStatus == .error)
            #expect(asset.scanDetail.contains("missing"))
        }
        #expect(
            try await env.database.scalar("SELECT COUNT(*) FROM scanJob WHERE assetId = ?", [ids.lostPending]) as Int? == 0,
            "a job for a missing file stayed queued"
        )
        let actions: [String] = try await env.database.read {
            try String.fetchAll($0, sql: "SELECT action FROM auditEvent WHERE id > ? AND action = 'asset.missing'", arguments: [auditBefore])
        }
        #expect(actions.count == 2)
        let kept = try await env.asset(ids.clean)
        let pending = try await env.asset(ids.pending)
        #expect(kept.scanStatus == .clean && FileManager.default.fileExists(atPath: env.paths.absolute(kept.storedPath).path))
        #expect(pending.scanStatus == .pending && FileManager.default.fileExists(atPath: env.paths.absolute(pending.storedPath).path))

        // A second run finds nothing to do; the pending asset is scanned as usual afterwards.
        await #expect(try MediaRecovery.run(database: env.database, paths: env.paths) == MediaRecovery.Report())
        #expect(await env.scanAll() == 1)
        await #expect(try env.asset(ids.pending).scanStatus == .clean)
        try await env.app.test { client in
            let preview = try await client.execute(uri: "/assets/\(ids.lost)/content", method: .get, headers: [.authorization: "Bearer \(token)"])
            #expect(preview.status == .forbidden)
        }
    }

    @Test(
        "A tus upload whose file lost acknowledged bytes (a power cut before the flush) is rewound, resumes from HEAD and ends with the file's SHA-256"
    )
    func tusUploadRewoundToTheBytesOnDisk() async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let contents = (7...9).map { MediaFixtures.png(size: 6000, seed: $0) }
        let (short, gone, whole) = try await env.app.application.test(.router) { client in
            var ids: [String] = []
            for content in contents {
                let location = try #require(try await client.tusCreate(env, token: token, length: content.count).location)
                let patched = try await client.tus(.patch, location, token: token, offset: 0, body: content.prefix(4000))
                #expect(patched.status == .noContent)
                ids.append(String(location.split(separator: "/").last!))
            }
            return (ids[0], ids[1], ids[2])
        }
        // What a power cut can leave: the first file lost its tail, the second file is gone, the third is whole.
        let handle = try FileHandle(forWritingTo: env.paths.upload(short))
        try handle.truncate(atOffset: 1500)
        try handle.close()
        try FileManager.default.removeItem(at: env.paths.upload(gone))

        let report = try await MediaRecovery.run(database: env.database, paths: env.paths)
        #expect(report.rewoundUploads == 2)
        #expect(report.expiredUploads == 0 && report.orphanFiles == 0)
        #expect(try await env.database.scalar("SELECT offset FROM upload WHERE id = ?", [whole]) as Int? == 4000)
        await #expect(try MediaRecovery.run(database: env.database, paths: env.paths) == MediaRecovery.Report())

        try await env.app.test { client in
            for (id, onDisk, content) in [(short, 1500, contents[0]), (gone, 0, contents[1]), (whole, 4000, contents[2])] {
                let location = "\(TusTests.endpoint)/\(id)"
                let head = try await client.tus(.head, location, token: token)
                #expect(head.headers[.uploadOffset] == "\(onDisk)", "\(id)")
                // The acknowledged offset is refused; the one HEAD tells is taken, and the asset is the whole file.
                if onDisk < 4000 {
                    #expect(try await client.tus(.patch, location, token: token, offset: 4000, body: content.suffix(2000)).status == .conflict)
                }
                let patched = try await client.tus(.patch, location, token: token, offset: onDisk, body: content.suffix(from: onDisk))
                #expect(patched.status == .noContent)
                let assetId = try #require(patched.headers[.assetId].flatMap { Int64($0) })
                await #expect(try env.asset(assetId).sha256 == MediaFixtures.sha256(content))
            }
        }
    }
}

struct RecoveryIds: Sendable {
    let clean: Int64, lost: Int64, lostPending: Int64, pending: Int64
    let live: String, expired: String
}
