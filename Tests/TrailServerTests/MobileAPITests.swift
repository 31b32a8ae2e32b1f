import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import Testing
import TrailClient

@testable import TrailServer

/// The mobile routes on a package released through the real flow (upload, scan, submit, build, approve, push).
@Suite("Mobile API: downloads, lists, catalog, verify", .scratch)
struct MobileAPITests {
    /// One released package per test; the body gets the env, the client, the release and the zip's bytes.
    func withRelease(_ body: @Sendable (TestEnv, any TestClientProtocol, ReleasedPackage, Data) async throws -> Void) async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let released = try await env.releaseThroughAPI(client)
            try await body(env, client, released, try Data(contentsOf: released.zip))
        }
    }

    static let intMax = "9223372036854775807"
    static let intMaxPlusOne = "9223372036854775808"

    enum Expected: Sendable {
        case partial(Int, Int)
        case whole
        case unsatisfiable
    }

    @Test func rangesFollowRFC9110() async throws {
        try await withRelease { _, client, released, zip in
            let size = zip.count
            #expect(Int64(size) == released.size)
            let cases: [(String, Expected)] = [
                ("bytes=0-0", .partial(0, 0)),
                ("bytes=-5", .partial(size - 5, size - 1)),
                ("bytes=5-", .partial(5, size - 1)),
                ("bytes=100-199", .partial(100, 199)),
                ("bytes=\(size - 1)-", .partial(size - 1, size - 1)),
                ("bytes=\(size)-", .unsatisfiable),
                ("bytes=\(size + 1000)-", .unsatisfiable),
                ("bytes=\(size)-\(size + 10)", .unsatisfiable),
                ("bytes=-0", .unsatisfiable),
                ("bytes=100-10", .whole),
                ("bytes=0-\(Self.intMax)", .partial(0, size - 1)),
                ("bytes=-\(Self.intMax)", .partial(0, size - 1)),
                ("bytes=\(Self.intMaxPlusOne)-", .unsatisfiable),
                ("bytes=0-1,5-9", .whole),
                ("bytes=0-0, -1", .whole),
                ("bytes=abc", .whole),
                ("items=0-5", .whole),
            ]
            for uri in ["/api/v1/packages/\(released.packageId)/download", "/api/v1/packages/\(released.packageId)/versions/1/download"] {
                for (range, expected) in cases {
                    let response = try await client.execute(uri: uri, method: .get, headers: [.range: range])
                    let label = "\(uri) \(range)"
                    #expect(response.headers[.acceptRanges] == "bytes", "\(label)")
                    switch expected {
                    case let .partial(first, last):
                        #expect(response.status == .partialContent, "\(label): \(response.status)")
                        #expect(response.headers[.contentRange] == "bytes \(first)-\(last)/\(size)", "\(label)")
                        #expect(response.headers[.contentLength] == "\(last - first + 1)", "\(label)")
                        #expect(response.data == zip[first...last], "\(label): wrong bytes")
                        #expect(response.headers[.eTag] == released.etag, "\(label)")
                    case .whole:
                        #expect(response.status == .ok, "\(label): \(response.status)")
                        #expect(response.headers[.contentRange] == nil, "\(label)")
                        #expect(response.headers[.contentLength] == "\(size)", "\(label)")
                        #expect(response.data == zip, "\(label): not the whole file")
                    case .unsatisfiable:
                        #expect(response.status == .rangeNotSatisfiable, "\(label): \(response.status)")
                        #expect(response.headers[.contentRange] == "bytes */\(size)", "\(label)")
                        #expect(response.errorCode == "range_not_satisfiable", "\(label): \(response.text)")
                        #expect(!response.data.starts(with: Data("PK".utf8)), "\(label): zip bytes in a 416")
                    }
                }
            }
        }
    }

    @Test func conditionalRequestsAndHead() async throws {
        try await withRelease { _, client, released, zip in
            let uri = "/api/v1/packages/\(released.packageId)/download"
            // If-Range with the current ETag resumes; with a stale one the whole (current) file comes back.
            let resume = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=10-", .ifRange: released.etag])
            #expect(resume.status == .partialContent)
            #expect(resume.data == zip[10...])
            let stale = "\"\(String(repeating: "0", count: 64))\""
            for ifRange in [stale, "W/\(released.etag)", "Sat, 21 Nov 2026 10:00:00 GMT"] {
                let whole = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=10-", .ifRange: ifRange])
                #expect(whole.status == .ok, "If-Range \(ifRange): \(whole.status)")
                #expect(whole.headers[.contentRange] == nil)
                #expect(whole.data == zip, "If-Range \(ifRange): not the whole file")
            }
            // If-None-Match: 304 without a body for the current ETag (also in a list, or *), 200 for another.
            for value in [released.etag, "\(stale), \(released.etag)", "*"] {
                let notModified = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: value])
                #expect(notModified.status == .notModified, "If-None-Match \(value): \(notModified.status)")
                #expect(notModified.body.readableBytes == 0)
                #expect(notModified.headers[.eTag] == released.etag)
            }
            let changed = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: stale])
            #expect(changed.status == .ok)
            #expect(changed.data == zip)
            // HEAD: the headers of a GET, no body; with a range, the 206 headers.
            let head = try await client.execute(uri: uri, method: .head)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == "\(zip.count)")
            #expect(head.headers[.eTag] == released.etag)
            #expect(head.headers[.contentType] == "application/zip")
            #expect(head.body.readableBytes == 0)
            let headRange = try await client.execute(uri: uri, method: .head, headers: [.range: "bytes=-5"])
            #expect(headRange.status == .partialContent)
            #expect(headRange.headers[.contentRange] == "bytes \(zip.count - 5)-\(zip.count - 1)/\(zip.count)")
            #expect(headRange.body.readableBytes == 0)
        }
    }

    @Test func downloadHeaders() async throws {
        try await withRelease { env, client, released, zip in
            let mapName = try await env.tour().mapName
            let latest = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/download", method: .get)
            #expect(latest.status == .ok)
            #expect(latest.data == zip)
            #expect(latest.headers[.contentType] == "application/zip")
            #expect(latest.headers[.eTag] == released.etag)
            #expect(MediaFixtures.sha256(latest.data) == released.sha256)
            #expect(latest.headers[.contentDisposition] == "attachment; filename=\"\(mapName)-v1.zip\"")
            #expect(latest.headers[.cacheControl] == "no-cache")
            #expect(latest.headers[.packageVersion] == "1")
            let versioned = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/versions/1/download", method: .get)
            #expect(versioned.status == .ok)
            #expect(versioned.data == zip)
            #expect(versioned.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(versioned.headers[.contentDisposition] == "attachment; filename=\"\(mapName)-v1.zip\"")
            #expect(versioned.headers[.packageVersion] == "1")
            // The download is the package the build verified: signature with the published key, every entry's hash.
            let key = try await client.execute(uri: "/api/v1/signing-key", method: .get)
            #expect(key.jsonObject["algorithm"] as? String == "ed25519")
            #expect(key.jsonObject["publicKey"] as? String == env.publicKey)
            let check = TrailClient.verify(zip: released.zip, publicKey: env.publicKey, expectedSHA256: released.sha256)
            #expect(check.isAuthentic, "\(check.problems)")
            // Versions that do not exist, and ids that do not exist: 404 with a JSON error.
            for uri in [
                "/api/v1/packages/\(released.packageId)/versions/2/download", "/api/v1/packages/\(released.packageId)/versions/x/download",
                "/api/v1/packages/no-such-package", "/api/v1/packages/no-such-package/download", "/api/v1/packages/no-such-package/hash",
                "/api/v1/packages/no-such-package/versions/1/download", "/api/v1/sites/no-such-site/packages",
            ] {
                let missing = try await client.execute(uri: uri, method: .get)
                #expect(missing.status == .notFound, "\(uri): \(missing.status)")
                #expect(missing.headers[.contentType]?.hasPrefix("application/json") == true, "\(uri)")
                #expect(missing.errorCode == "not_found", "\(uri): \(missing.text)")
            }
            let verifyMissing = try await client.api(
                .post,
                "/api/v1/packages/no-such-package/verify",
                token: nil,
                json: #"{"sha256":"\#(released.sha256)","version":1}"#
            )
            #expect(verifyMissing.status == .notFound)
        }
    }

    @Test func listsMetadataAndUpdateChecks() async throws {
        try await withRelease { env, client, released, _ in
            let sites = try await client.execute(uri: "/api/v1/sites", method: .get)
            #expect(sites.status == .ok)
            let alpha = try #require(sites.jsonArray.first { $0["slug"] as? String == "alpha" })
            #expect(alpha["packageCount"] as? Int == 1)
            #expect(sites.jsonArray.first { $0["slug"] as? String == "bravo" }?["packageCount"] as? Int == 0)
            let packages = try await client.execute(uri: "/api/v1/sites/alpha/packages", method: .get)
            #expect(packages.status == .ok)
            let item = try #require(packages.jsonArray.first)
            #expect(packages.jsonArray.count == 1)
            #expect(Set(item.keys) == ["id", "name", "description", "size", "version", "sha256", "updatedAt"])
            #expect(item["id"] as? String == released.packageId)
            #expect(item["sha256"] as? String == released.sha256)
            #expect((item["size"] as? NSNumber)?.int64Value == released.size)
            #expect(item["version"] as? Int == 1)
            #expect(item["name"] as? String == "Ridge Walk")
            #expect(Manifest.parseTimestamp(item["updatedAt"] as? String ?? "") != nil)
            let detail = try await client.execute(uri: "/api/v1/packages/\(released.packageId)", method: .get)
            #expect(detail.status == .ok)
            #expect(detail.jsonObject["park"] as? String == "Alpha District")
            #expect(detail.jsonObject["waypointCount"] as? Int == 1)
            #expect(detail.jsonObject["bounds"] is [String: Any])
            let manifest = try #require(detail.jsonObject["manifest"] as? [String: Any])
            #expect(manifest["packageId"] as? String == released.packageId)
            #expect((detail.jsonObject["signature"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 64)
            let hash = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/hash", method: .get)
            #expect(hash.jsonObject["sha256"] as? String == released.sha256)
            #expect(hash.jsonObject["version"] as? Int == 1)
            #expect((hash.jsonObject["size"] as? NSNumber)?.int64Value == released.size)

            // ETags on the lists and the metadata: 304 while nothing changed.
            var etags: [String: String] = [:]
            let uris = ["/api/v1/sites", "/api/v1/sites/alpha/packages", "/api/v1/packages/\(released.packageId)"]
            for uri in uris {
                let first = try await client.execute(uri: uri, method: .get)
                let etag = try #require(first.headers[.eTag], "\(uri) has no ETag")
                etags[uri] = etag
                let again = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified, "\(uri)")
                #expect(again.body.readableBytes == 0)
                let other = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"something-else\""])
                #expect(other.status == .ok, "\(uri)")
            }
            // A new version changes the package list and the metadata (the old ETag gets the new body); the site list
            // (slug, name, description, count) is the same, so it stays 304.
            let second = try await env.releaseThroughAPI(client, seed: 21)
            #expect(second.version == 2 && second.packageId == released.packageId)
            for uri in uris {
                let response = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: etags[uri]!])
                #expect(response.status == (uri == "/api/v1/sites" ? .notModified : .ok), "\(uri) after a release: \(response.status)")
            }
            let list = try await client.execute(uri: "/api/v1/sites/alpha/packages", method: .get)
            #expect(list.jsonArray.first?["version"] as? Int == 2)
            #expect(list.jsonArray.first?["sha256"] as? String == second.sha256)
        }
    }

    @Test func unpublishRollbackAndCatalogVersions() async throws {
        try await withRelease { env, client, released, _ in
            let manager = try await env.token("manager@test.org")
            let afterFirst = try await client.catalogVersion()
            #expect(afterFirst >= 1)
            // Release: +1.
            let second = try await env.releaseThroughAPI(client, seed: 31)
            #expect(try await client.catalogVersion() == afterFirst + 1)
            let latest = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/download", method: .head)
            #expect(latest.headers[.packageVersion] == "2")
            #expect(latest.headers[.eTag] == second.etag)
            // Rollback to version 1: +1, the latest URL serves version 1 again, version 2 stays downloadable by its URL.
            let rollback = try await client.managePackage(released.packageId, "rollback", token: manager, json: #"{"version":1}"#)
            #expect(rollback.status == .ok, "rollback: \(rollback.text)")
            #expect(try await client.catalogVersion() == afterFirst + 2)
            let rolledBack = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/download", method: .head)
            #expect(rolledBack.headers[.packageVersion] == "1")
            #expect(rolledBack.headers[.eTag] == released.etag)
            let v2 = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/versions/2/download", method: .head)
            #expect(v2.status == .ok)
            #expect(v2.headers[.eTag] == second.etag)

            // Unpublish: +1, 410 on every package route, gone from the lists and the catalog.
            let unpublish = try await client.managePackage(released.packageId, "unpublish", token: manager)
            #expect(unpublish.status == .ok, "unpublish: \(unpublish.text)")
            #expect(try await client.catalogVersion() == afterFirst + 3)
            for uri in [
                "/api/v1/packages/\(released.packageId)/download", "/api/v1/packages/\(released.packageId)/versions/1/download",
                "/api/v1/packages/\(released.packageId)",
            ] {
                let gone = try await client.execute(uri: uri, method: .get)
                #expect(gone.status == .gone, "\(uri): \(gone.status)")
                #expect(gone.errorCode == "gone", "\(uri): \(gone.text)")
                #expect(!gone.data.starts(with: Data("PK".utf8)))
            }
            let list = try await client.execute(uri: "/api/v1/sites/alpha/packages", method: .get)
            #expect(list.status == .ok)
            #expect(list.jsonArray.isEmpty, "\(list.text)")
            let sites = try await client.execute(uri: "/api/v1/sites", method: .get)
            #expect(sites.jsonArray.first { $0["slug"] as? String == "alpha" }?["packageCount"] as? Int == 0)
            let catalog = try await client.execute(uri: "/api/v1/catalog", method: .get)
            #expect((catalog.jsonObject["packages"] as? [[String: Any]])?.isEmpty == true, "\(catalog.text)")
            // Published again: back in the lists, +1.
            let republish = try await client.managePackage(released.packageId, "publish", token: manager)
            #expect(republish.status == .ok)
            #expect(try await client.catalogVersion() == afterFirst + 4)
            #expect(try await client.execute(uri: "/api/v1/sites/alpha/packages", method: .get).jsonArray.count == 1)
        }
    }

    @Test func catalogIsSignedWithThePublishedKey() async throws {
        try await withRelease { env, client, released, _ in
            let key = try await client.execute(uri: "/api/v1/signing-key", method: .get)
            let publicKey = try #require(key.jsonObject["publicKey"] as? String)
            let response = try await client.execute(uri: "/api/v1/catalog", method: .get)
            #expect(response.status == .ok)
            let signature = try #require(response.headers[.catalogSignature])
            let verified = try TrailClient.verifyCatalog(body: response.data, signature: signature, pinnedPublicKey: publicKey, lastSeenVersion: nil)
            let entry = try #require(verified.catalog.packages.first)
            #expect(verified.catalog.packages.count == 1)
            #expect(entry.id == released.packageId)
            #expect(entry.site == "alpha")
            #expect(entry.version == 1)
            #expect(entry.size == released.size)
            #expect(entry.sha256 == released.sha256)
            #expect(entry.url.hasSuffix("/api/v1/packages/\(released.packageId)/versions/1/download"))
            // About seven days of validity by default.
            let lifetime = verified.catalog.expiresAt.timeIntervalSince(verified.catalog.generatedAt)
            #expect(abs(lifetime - env.config.catalogLifetime) < 2)
            // A signature of other bytes, or by another key, does not verify.
            #expect(throws: CatalogError.invalidSignature) {
                try TrailClient.verifyCatalog(
                    body: response.data + Data(" ".utf8),
                    signature: signature,
                    pinnedPublicKey: publicKey,
                    lastSeenVersion: nil
                )
            }
            #expect(throws: CatalogError.invalidSignature) {
                try TrailClient.verifyCatalog(
                    body: response.data,
                    signature: signature,
                    pinnedPublicKey: SigningKey.generate().publicKeyBase64,
                    lastSeenVersion: nil
                )
            }
            // If-None-Match on the catalog's ETag.
            let etag = try #require(response.headers[.eTag])
            let again = try await client.execute(uri: "/api/v1/catalog", method: .get, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
        }
    }

    @Test func verifyCountsValidDownloadsPerVersion() async throws {
        try await withRelease { env, client, released, _ in
            func verify(_ sha: String, _ version: Int) async throws -> TestResponse {
                try await client.api(
                    .post,
                    "/api/v1/packages/\(released.packageId)/verify",
                    token: nil,
                    json: #"{"sha256":"\#(sha)","version":\#(version)}"#
                )
            }
            let good = try await verify(released.sha256, 1)
            #expect(good.status == .ok)
            #expect(good.jsonObject["valid"] as? Bool == true)
            let expected = try #require(good.jsonObject["expected"] as? [String: Any])
            #expect(expected["sha256"] as? String == released.sha256)
            #expect(expected["version"] as? Int == 1)
            await #expect(try env.verifiedCount(released.packageId, version: 1) == 1)
            // The same caller again, and again: still one, so a loop cannot inflate the count.
            for _ in 0..<3 { #expect(try await verify(released.sha256.uppercased(), 1).jsonObject["valid"] as? Bool == true) }
            await #expect(try env.verifiedCount(released.packageId, version: 1) == 1)
            // Wrong hash, wrong version: not valid, not counted.
            let bad = try await verify(String(repeating: "0", count: 64), 1)
            #expect(bad.jsonObject["valid"] as? Bool == false)
            let wrongVersion = try await verify(released.sha256, 7)
            #expect(wrongVersion.jsonObject["valid"] as? Bool == false)
            await #expect(try env.verifiedCount(released.packageId, version: 1) == 1)
            // After version 2, a download of version 1 still verifies against version 1; counts are per version.
            let second = try await env.releaseThroughAPI(client, seed: 41)
            #expect(try await verify(released.sha256, 1).jsonObject["valid"] as? Bool == true)
            #expect(try await verify(second.sha256, 2).jsonObject["valid"] as? Bool == true)
            #expect(try await verify(released.sha256, 2).jsonObject["valid"] as? Bool == false)
            await #expect(try env.verifiedCount(released.packageId, version: 1) == 1)
            await #expect(try env.verifiedCount(released.packageId, version: 2) == 1)
            // Malformed bodies are 400, not 500.
            let malformed = try await client.api(.post, "/api/v1/packages/\(released.packageId)/verify", token: nil, json: #"{"sha256":1}"#)
            #expect(malformed.status == .badRequest, "\(malformed.status) \(malformed.text)")
        }
    }
}

/// The verified-download count takes each caller once per version and day.
@Suite(.scratch) struct VerifiedDownloadsTests {
    @Test("once per (address, version, day); an IPv6 caller by its /64; bounded")
    func oncePerCallerVersionAndDay() {
        let seen = VerifiedDownloads(capacity: 4)
        let today = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(seen.isFirst(address: "203.0.113.7", packageId: "p", version: 1, now: today))
        #expect(!seen.isFirst(address: "203.0.113.7", packageId: "p", version: 1, now: today))
        #expect(seen.isFirst(address: "203.0.113.8", packageId: "p", version: 1, now: today), "another address counts")
        #expect(seen.isFirst(address: "203.0.113.7", packageId: "p", version: 2, now: today), "another version counts")
        #expect(seen.isFirst(address: "2001:db8:1:2::1", packageId: "p", version: 1, now: today))
        #expect(!seen.isFirst(address: "2001:db8:1:2:ffff::9", packageId: "p", version: 1, now: today), "the same /64")
        // Full: a new caller is not counted today; one already held still answers "seen".
        #expect(!seen.isFirst(address: "198.51.100.1", packageId: "p", version: 1, now: today))
        #expect(!seen.isFirst(address: "203.0.113.7", packageId: "p", version: 1, now: today))
        // The next day, everyone counts once again.
        let tomorrow = today.addingTimeInterval(86_400)
        #expect(seen.isFirst(address: "203.0.113.7", packageId: "p", version: 1, now: tomorrow))
        #expect(seen.isFirst(address: "198.51.100.1", packageId: "p", version: 1, now: tomorrow))
        #expect(!seen.isFirst(address: "198.51.100.1", packageId: "p", version: 1, now: tomorrow))
    }
}

// `errorCode` comes from TestFixtures.swift (one definition for every suite).
