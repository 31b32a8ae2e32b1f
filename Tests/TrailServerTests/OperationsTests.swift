import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import Testing

@testable import TrailServer

/// What the people who run the server set and watch: `/metrics`, site storage quotas, the signed catalog's lifetime.
@Suite(.scratch) struct OperationsTests {
    @Test("/metrics: Prometheus text for admins (session or token), with request counts and the stored state; others are sent to sign in or refused")
    func metricsForAdminsOnly() async throws {
        let (app, seed) = try await TestApp.seeded()
        let adminToken = try await app.token(for: "admin@test.org")
        let authorToken = try await app.token(for: "author@test.org")
        try await app.test { client in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            _ = try await client.api(.get, "/api/v1/manage/tours/999999", token: authorToken)
            let anonymous = try await client.execute(uri: "/metrics", method: .get)
            #expect(anonymous.status == .seeOther && anonymous.headers[.location]?.hasPrefix("/login") == true, "to the sign-in page")
            #expect(!anonymous.text.contains("trail_"))
            let forged = try await client.api(.get, "/metrics", token: "tc_forged")
            #expect(forged.status != .ok && !forged.text.contains("trail_"), "a forged token: \(forged.status)")
            #expect(try await client.api(.get, "/metrics", token: authorToken).status == .forbidden)

            let scrape = try await client.api(.get, "/metrics", token: adminToken)
            #expect(scrape.status == .ok)
            #expect(scrape.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = scrape.text
            #expect(text.contains(#"trail_http_requests_total{method="GET",status="200"}"#), "\(text.prefix(2000))")
            #expect(text.contains(#"trail_http_requests_total{method="GET",status="404"}"#))
            #expect(text.contains(#"trail_http_requests_total{method="GET",status="403"}"#))
            #expect(text.contains("# TYPE trail_http_request_duration_seconds histogram"))
            #expect(text.contains("trail_catalog_version 0"))
            #expect(text.contains("trail_packages_published 0"))
            #expect(text.contains(#"trail_publish_requests{state="pending"} 0"#))

            // The gauges follow the database.
            try await app.database.execute(
                "INSERT INTO asset (waypointId, position, kind, originalName, mimeType, size, sha256, scanStatus, storedPath, createdAt) VALUES (?, 99, 'text', 'a.txt', 'text/plain', 3, 'abc', 'infected', 'quarantine/x', 0)",
                [seed.waypointId]
            )
            let after = try await client.api(.get, "/metrics", token: adminToken).text
            #expect(after.contains(#"trail_assets{scan_status="infected"} 1"#), "\(after.prefix(3000))")
            // A signed-in admin's browser session works too.
            let browser = try await client.signIn("admin@test.org")
            #expect(try await client.get("/metrics", session: browser).status == .ok)
        }
    }

    @Test("the signed catalog is re-signed when less than a quarter of its lifetime is left, and when it changes")
    func catalogIsResignedBeforeItLapses() async throws {
        let app = try await TestApp.make { $0.catalogLifetime = 4 * 86_400 }
        let signer = app.dependencies.catalog
        let start = Date(timeIntervalSince1970: 1_900_000_000)
        let first = try await signer.current(now: start)
        #expect(first.expiresAt == start.addingTimeInterval(4 * 86_400))
        let halfway = try await signer.current(now: start.addingTimeInterval(2 * 86_400))
        #expect(halfway.body == first.body && halfway.signature == first.signature, "still fresh: the same signed bytes")
        let late = try await signer.current(now: start.addingTimeInterval(3.5 * 86_400))
        #expect(late.body != first.body, "under a quarter left: signed again")
        #expect(late.expiresAt == start.addingTimeInterval(7.5 * 86_400))
        let key = app.dependencies.signingKey
        #expect(SignatureCheck.verify(signature: Data(base64Encoded: late.signature)!, of: late.body, publicKeyBase64: key.publicKeyBase64))
        let body = try #require(try JSONSerialization.jsonObject(with: late.body) as? [String: Any])
        #expect(body["expiresAt"] as? String == Manifest.timestamp(start.addingTimeInterval(7.5 * 86_400)))
    }
}

/// Per-site storage quota: set by an admin (form) or the CLI, enforced on multipart and tus uploads.
@Suite(.scratch) struct SiteQuotaTests {
    @Test("an admin sets the quota in MB on the site form; a bad value is refused next to the field; empty means no limit")
    func adminSetsTheQuota() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("admin@test.org")
            let form = ["slug": "alpha", "name": "Alpha District", "description": "", "requiredApprovals": "1"]
            var bad = form
            bad["storageQuota"] = "-3"
            let refused = try await client.post("/admin/sites/\(seed.alphaId)", form: bad, session: browser)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("Enter a quota of at least 1 MB"))
            #expect(refused.text.contains(#"id="s-quota""#) && refused.text.contains("is-invalid"))
            #expect(try await app.database.site(id: seed.alphaId)?.storageQuotaBytes == nil, "nothing saved")

            var good = form
            good["storageQuota"] = "1.5"
            #expect(try await client.post("/admin/sites/\(seed.alphaId)", form: good, session: browser).status == .seeOther)
            #expect(try await app.database.site(id: seed.alphaId)?.storageQuotaBytes == 1_572_864)
            let edit = try await client.get("/admin/sites/\(seed.alphaId)", session: browser)
            #expect(edit.text.contains(#"value="1.50""#), "the form shows the quota in MB")

            good["storageQuota"] = ""
            #expect(try await client.post("/admin/sites/\(seed.alphaId)", form: good, session: browser).status == .seeOther)
            #expect(try await app.database.site(id: seed.alphaId)?.storageQuotaBytes == nil)
        }
    }

    @Test("over the quota: 413 with a message for multipart and for tus creation, and nothing is stored")
    func uploadsOverTheQuotaAreRefused() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let site = try #require(try await env.database.site(id: env.seed.alphaId))
        _ = try await env.database.updateSite(
            id: site.id,
            SiteInput(
                slug: site.slug,
                name: site.name,
                description: site.description,
                requiredApprovals: 1,
                storageQuotaBytes: 50_000
            ),
            actor: .system
        )
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            // 40 kB fits.
            _ = try await client.publishUpload(
                env,
                token: token,
                data: MediaFixtures.png(size: 40_000, seed: 3),
                fileName: "a.png",
                contentType: "image/png"
            )
            #expect(await env.scanAll() == 1)
            let before = try await env.database.snapshot()
            let assetsBefore: Int? = try await env.database.scalar("SELECT COUNT(*) FROM asset")
            let boundary = "quota-boundary"
            let over = try await client.execute(
                uri: "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)/assets",
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: PublishFixtures.multipart(
                    MediaFixtures.png(size: 20_000, seed: 4),
                    fileName: "b.png",
                    contentType: "image/png",
                    boundary: boundary
                )
            )
            #expect(over.status == .contentTooLarge)
            #expect(over.text.contains("storage quota"), "\(over.text)")
            var headers: HTTPFields = [.authorization: "Bearer \(token)"]
            headers[HTTPField.Name("Tus-Resumable")!] = "1.0.0"
            headers[HTTPField.Name("Upload-Length")!] = "20000"
            headers[HTTPField.Name("Upload-Metadata")!] =
                "filename \(Data("c.png".utf8).base64EncodedString()),tour \(Data("\(env.seed.tourId)".utf8).base64EncodedString()),waypoint \(Data("\(env.seed.waypointId)".utf8).base64EncodedString())"
            let tus = try await client.execute(uri: "/api/v1/manage/uploads", method: .post, headers: headers)
            #expect(tus.status == .contentTooLarge, "\(tus.status) \(tus.text)")
            try await env.database.expectUnchanged(since: before)
            #expect(try await env.database.scalar("SELECT COUNT(*) FROM asset") == assetsBefore)
            #expect(try FileManager.default.contentsOfDirectory(atPath: env.paths.uploads.path).isEmpty, "no upload left behind")
        }
    }
}
