import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// Uploads scanned by a real libclamav engine loaded from the EICAR body signature the test writes.
@Suite("Media: malware scanning (real libclamav engine)", .scratch)
struct MediaScanTests {
    @Test("EICAR ends infected in quarantine, never in assets/, with an audit event; its signature shows to its uploader and admins only")
    func eicarIsQuarantined() async throws {
        let env = try await TestEnv.media()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(
                env,
                token: author,
                data: MediaFixtures.eicar,
                fileName: "eicar.txt",
                contentType: "text/plain"
            )
            #expect(response.status == .created, "\(response.text)")
            let id = try #require(response.mediaAssetId)
            #expect(response.mediaJSON["scanStatus"] as? String == "pending")
            #expect(env.files(in: "uploads").count == 1)
            let auditBefore: Int64 = try await env.database.read { try Int64.fetchOne($0, sql: "SELECT MAX(id) FROM auditEvent") ?? 0 }

            #expect(await env.scanAll() == 1)
            let asset = try await env.asset(id)
            #expect(asset.scanStatus == .infected)
            #expect(asset.scanDetail == EICAR.reportedSignatureName)
            #expect(asset.storedPath.hasPrefix("quarantine/"))
            #expect(env.files(in: "quarantine") == [String(asset.storedPath.dropFirst("quarantine/".count))])
            #expect(try env.contents(asset.storedPath) == MediaFixtures.eicar)
            #expect(env.files(in: "assets").isEmpty, "an infected file reached assets/")
            #expect(env.files(in: "uploads").isEmpty)
            #expect(try await env.database.scanJobCount() == 0)

            let events = try await env.database.rows("SELECT action, objectId, detail, siteId FROM auditEvent WHERE id > ?", [auditBefore])
            let event = events.first { ($0["action"] as String?) == "asset.scan.infected" }
            #expect(event != nil, "no audit event for the detection: \(events)")
            #expect((event?["objectId"] as String?) == "\(id)")
            #expect((event?["detail"] as String?)?.contains(EICAR.reportedSignatureName) == true)
            #expect((event?["siteId"] as Int64?) == env.seed.alphaId)

            // The signature's name: the uploader and admins see it, other members of the site do not.
            for (email, sees) in [("author", true), ("admin", true), ("manager", false), ("reviewer", false)] {
                let json = try await client.mediaAsset(id, token: try env.token("\(email)@test.org"))
                #expect(json["scanStatus"] as? String == "infected", "\(email)")
                #expect(json["scanDetail"] as? String == (sees ? EICAR.reportedSignatureName : nil), "\(email): \(json)")
                #expect(json["previewURL"] == nil, "\(email): an infected file offers a preview")

                let session = try await client.signIn("\(email)@test.org")
                let page = try await client.get(env.waypointPage, session: session)
                #expect(page.status == .ok)
                #expect(page.text.contains("id=\"asset-\(id)\""), "\(email) does not see the asset")
                #expect(page.text.contains(">infected<"))
                #expect(page.text.contains(EICAR.reportedSignatureName) == sees, "\(email): signature shown = \(!sees)")
                #expect(!page.text.contains("/assets/\(id)/content"), "\(email): a preview of an infected file is linked")

                let preview = try await client.get("/assets/\(id)/content", session: session)
                #expect(preview.status == .forbidden, "\(email): preview of an infected file answered \(preview.status)")
            }
        }
    }

    /// A scanner whose engine fails on every file (as libclamav does on CL_EMEM or a read error).
    struct FailingScanner: MalwareScanner {
        func scan(fileAt path: String) async -> ScanVerdict { .error(reason: "engine failure (CL_EMEM)") }
        var hasSignatures: Bool { get async { true } }
        var signatureCount: Int { get async { 1 } }
        func reloadIfChanged() async {}
    }

    @Test("A scanner error verdict: the asset is marked error (with the reason for its uploader), quarantined, never served or published")
    func scannerErrorQuarantines() async throws {
        let env = try await TestEnv.media(scanner: { _ in FailingScanner() })
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let upload = try await client.mediaAPIUpload(
                env,
                token: author,
                data: MediaFixtures.png(size: 30_000),
                fileName: "lake.png",
                contentType: "image/png"
            )
            let id = try #require(upload.mediaAssetId)
            #expect(await env.scanAll() == 1)
            let asset = try await env.asset(id)
            #expect(asset.scanStatus == .error && asset.scanDetail.contains("CL_EMEM"))
            #expect(asset.storedPath.hasPrefix("quarantine/"))
            #expect(env.files(in: "quarantine").count == 1)
            #expect(env.files(in: "assets").isEmpty && env.files(in: "uploads").isEmpty)
            let json = try await client.mediaAsset(id, token: author)
            #expect(json["scanStatus"] as? String == "error" && (json["scanDetail"] as? String)?.contains("CL_EMEM") == true)
            #expect(json["previewURL"] == nil)
            let session = try await client.signIn("author@test.org")
            let preview = try await client.get("/assets/\(id)/content", session: session)
            #expect(preview.status == .forbidden, "a file that was not scanned clean is never served: \(preview.status)")
            let checklist = try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            #expect(checklist.contains { $0.contains("lake.png") }, "the checklist names the file: \(checklist)")
        }
    }

    @Test("A clean file ends clean in assets/<sha256>; the same bytes uploaded twice are stored once")
    func cleanAndDeduplicated() async throws {
        let env = try await TestEnv.media()
        let author = try await env.token("author@test.org")
        let image = MediaFixtures.png(size: 50_000)
        let sha = MediaFixtures.sha256(image)
        try await env.app.test { client in
            let first = try await client.mediaAPIUpload(env, token: author, data: image, fileName: "lake.png", contentType: "image/png")
            #expect(first.status == .created)
            let firstId = try #require(first.mediaAssetId)
            #expect(first.mediaJSON["sha256"] as? String == sha)
            #expect(first.mediaJSON["size"] as? Int == image.count)
            #expect(await env.scanAll() == 1)
            var asset = try await env.asset(firstId)
            #expect(asset.scanStatus == .clean)
            #expect(asset.scanDetail == "")
            #expect(asset.storedPath == "assets/\(sha)")
            #expect(env.files(in: "assets") == [sha])
            #expect(try MediaFixtures.sha256(fileAt: env.paths.absolute(asset.storedPath)) == sha)
            #expect(env.files(in: "uploads").isEmpty)
            #expect(env.files(in: "quarantine").isEmpty)

            // The same bytes again (once while the first copy is already clean, once in the same scan batch as a third).
            let second = try await client.mediaAPIUpload(env, token: author, data: image, fileName: "lake again.png")
            let third = try await client.mediaAPIUpload(env, token: author, data: image, fileName: "lake third.png")
            let secondId = try #require(second.mediaAssetId)
            let thirdId = try #require(third.mediaAssetId)
            #expect(env.files(in: "uploads").count == 2)
            #expect(await env.scanAll() == 2)
            for id in [firstId, secondId, thirdId] {
                asset = try await env.asset(id)
                #expect(asset.scanStatus == .clean)
                #expect(asset.storedPath == "assets/\(sha)")
            }
            #expect(env.files(in: "assets") == [sha], "stored more than once: \(env.files(in: "assets"))")
            #expect(env.files(in: "uploads").isEmpty, "upload copies left behind")
            let json = try await client.mediaAsset(secondId, token: author)
            #expect(json["scanStatus"] as? String == "clean")
            #expect(json["previewURL"] as? String == "/assets/\(secondId)/content")

            // Deleting one of the three keeps the shared file; deleting the last one removes it.
            let session = try await client.signIn("author@test.org")
            for (index, id) in [firstId, secondId, thirdId].enumerated() {
                let deleted = try await client.post("/assets/\(id)/delete", form: [:], session: session)
                #expect(deleted.status == .seeOther, "\(deleted.status) \(deleted.text)")
                #expect(try await env.database.asset(id: id) == nil)
                #expect(env.files(in: "assets") == (index < 2 ? [sha] : []))
            }
        }
    }

    @Test("With a 1 MiB engine limit, a 2 MiB file with EICAR at its end is not clean (unscannable, quarantined)")
    func overTheEngineLimit() async throws {
        let env = try await TestEnv.media(engineMaxFileSize: 1024 * 1024)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let big = try await client.mediaAPIUpload(
                env,
                token: author,
                data: MediaFixtures.pngEndingWithEICAR(size: 2 * 1024 * 1024),
                fileName: "big.png"
            )
            #expect(big.status == .created)
            let small = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.png(size: 512 * 1024), fileName: "small.png")
            #expect(small.status == .created)
            #expect(await env.scanAll() == 2)

            let bigAsset = try await env.asset(try #require(big.mediaAssetId))
            #expect(bigAsset.scanStatus != .clean)
            #expect(bigAsset.scanStatus == .unscannable, "\(bigAsset.scanStatus): \(bigAsset.scanDetail)")
            #expect(bigAsset.scanDetail.contains("limit"), "\(bigAsset.scanDetail)")
            #expect(bigAsset.storedPath.hasPrefix("quarantine/"))
            // Under the limit the same engine says clean: the limit, not a broken engine, made the difference.
            let smallAsset = try await env.asset(try #require(small.mediaAssetId))
            #expect(smallAsset.scanStatus == .clean)
            #expect(env.files(in: "assets") == [smallAsset.sha256])
        }
    }

    @Test("With no signature files assets stay pending after drain() and admins see the scanner warning; signatures added, they are scanned")
    func noSignatures() async throws {
        let env = try await TestEnv.media(signatures: .none)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.text(), fileName: "notes.txt")
            #expect(response.status == .created)
            let id = try #require(response.mediaAssetId)
            #expect(await env.scanAll() == 0)
            #expect(env.scans.scannerReady == false)
            let asset = try await env.asset(id)
            #expect(asset.scanStatus == .pending)
            #expect(asset.storedPath.hasPrefix("uploads/"))
            #expect(try await env.database.scanJobCount() == 1, "the job must wait for signatures")
            #expect(env.files(in: "assets").isEmpty && env.files(in: "quarantine").isEmpty)

            let admin = try await client.signIn("admin@test.org")
            let adminPage = try await client.get(env.waypointPage, session: admin)
            #expect(adminPage.text.contains("id=\"scanner-warning\""), "admins must see the banner")
            #expect(adminPage.text.contains(">pending<"))
            let authorSession = try await client.signIn("author@test.org")
            let authorPage = try await client.get(env.waypointPage, session: authorSession)
            #expect(!authorPage.text.contains("id=\"scanner-warning\""), "the banner is for admins")
            let preview = try await client.get("/assets/\(id)/content", session: authorSession)
            #expect(preview.status == .forbidden)

            // Signatures arrive: the waiting job runs and the banner goes.
            try EICAR.writeTestSignatures(to: env.signatures)
            #expect(await env.scanAll() == 1)
            await #expect(try env.asset(id).scanStatus == .clean)
            #expect(env.scans.scannerReady)
            let after = try await client.get(env.waypointPage, session: admin)
            #expect(!after.text.contains("id=\"scanner-warning\""))
        }
    }

    @Test("/visit with nothing published says why while the scanner has no signatures, and stops once it has them")
    func visitSaysWhyNothingIsPublished() async throws {
        let env = try await TestEnv.media(signatures: .none)
        try await env.app.test { client in
            #expect(await env.scanAll() == 0)
            let waiting = try await client.get("/visit", session: nil)
            #expect(waiting.status == .ok)
            #expect(waiting.text.contains("No tours are published yet."))
            #expect(waiting.text.contains(#"id="visit-waiting""#))
            #expect(waiting.text.contains("this server's malware scanner has no signatures yet"))
            try EICAR.writeTestSignatures(to: env.signatures)
            _ = await env.scanAll()
            #expect(env.scans.scannerReady)
            let ready = try await client.get("/visit", session: nil)
            #expect(ready.text.contains("No tours are published yet."))
            #expect(!ready.text.contains(#"id="visit-waiting""#), "the cached page does not outlive the scanner's state")
        }
    }

    @Test("An admin's rescan runs the current signatures again; others may not ask for one")
    func rescan() async throws {
        let env = try await TestEnv.media()
        let author = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(env, token: author, data: MediaFixtures.text(), fileName: "notes.txt")
            let id = try #require(response.mediaAssetId)
            #expect(await env.scanAll() == 1)
            await #expect(try env.asset(id).scanStatus == .clean)

            let authorSession = try await client.signIn("author@test.org")
            let refused = try await client.post("/assets/\(id)/rescan", form: [:], session: authorSession)
            #expect(refused.status == .forbidden)
            #expect(try await env.database.scanJobCount() == 0)

            let admin = try await client.signIn("admin@test.org")
            let queued = try await client.post("/assets/\(id)/rescan", form: [:], session: admin)
            #expect(queued.status == .seeOther)
            #expect(try await env.database.scanJobCount() == 1)
            #expect(await env.scanAll() == 1)
            let asset = try await env.asset(id)
            #expect(asset.scanStatus == .clean)
            #expect(asset.storedPath == "assets/\(asset.sha256)")
            #expect(env.files(in: "assets") == [asset.sha256])
        }
    }
}
