import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// Delta updates: files by SHA-256, signed manifests per version, the update plan; and an update from v1 to v3 by an
/// independent Python client that knows only the documented routes.
@Suite(.scratch) struct DeltaUpdateTests {
    static func manifestBytes(_ zip: URL) throws -> Data {
        let archive = try PackageArchiveReader(url: zip)
        let entry = try #require(archive.entry(named: "manifest.json"))
        var data = Data()
        try archive.read(entry, limit: 16 << 20) { data.append($0) }
        return data
    }

    /// Two releases of the seed's tour (the second adds an image and a text), with their manifests.
    struct TwoReleases: Sendable {
        let env: TestEnv
        let first: ReleasedPackage
        let second: ReleasedPackage
        let old: Manifest
        let new: Manifest
        /// The second version's files whose hash the first lacks: what an update from v1 fetches.
        var fresh: [Manifest.ListedFile] { DeltaUpdateTests.fresh(from: old, to: new) }
        var freshBytes: Int64 { DeltaUpdateTests.bytes(fresh) }
    }

    static func fresh(from old: Manifest, to new: Manifest) -> [Manifest.ListedFile] {
        let held = Set(old.listedFiles.map(\.sha256))
        return new.listedFiles.filter { !held.contains($0.sha256) }
    }

    /// Bytes of the files, each hash once.
    static func bytes(_ files: [Manifest.ListedFile]) -> Int64 {
        var seen = Set<String>()
        return files.filter { seen.insert($0.sha256).inserted }.reduce(0) { $0 + ($1.size ?? 0) }
    }

    func withTwoReleases(_ body: @Sendable (TwoReleases, any TestClientProtocol) async throws -> Void) async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let first = try await env.releaseThroughAPI(client)
            let second = try await env.releaseThroughAPI(client, seed: 31)
            try await body(
                TwoReleases(
                    env: env,
                    first: first,
                    second: second,
                    old: try Manifest.decode(try Self.manifestBytes(first.zip)),
                    new: try Manifest.decode(try Self.manifestBytes(second.zip))
                ),
                client
            )
        }
    }

    @Test("manifests per version: the exact signed bytes, Manifest-Signature, immutable, 304; the catalog names them")
    func signedManifests() async throws {
        try await withTwoReleases { releases, client in
            let env = releases.env
            let first = releases.first
            let second = releases.second
            let publicKey = env.app.dependencies.signingKey.publicKeyBase64
            for released in [first, second] {
                let uri = "/api/v1/packages/\(released.packageId)/versions/\(released.version)/manifest"
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok)
                #expect(response.data == (try Self.manifestBytes(released.zip)), "the exact bytes of the zip's manifest.json")
                let signature = try #require(response.headers[.manifestSignature].flatMap { Data(base64Encoded: $0) })
                #expect(SignatureCheck.verify(signature: signature, of: response.data, publicKeyBase64: publicKey))
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                #expect(response.headers[.contentType] == "application/json")
                let etag = try #require(response.headers[.eTag])
                #expect(etag == "\"\(SHA256.hash(data: response.data).hexString)\"")
                let again = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified)
                #expect(again.headers[.manifestSignature] == response.headers[.manifestSignature])
            }
            let catalog = try await client.execute(uri: "/api/v1/catalog", method: .get)
            let entry = try #require((catalog.jsonObject["packages"] as? [[String: Any]])?.first)
            #expect((entry["manifestURL"] as? String)?.hasSuffix("/api/v1/packages/\(first.packageId)/versions/2/manifest") == true, "\(entry)")
            #expect(try await client.execute(uri: "/api/v1/packages/\(first.packageId)/versions/9/manifest", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/api/v1/packages/nope/versions/1/manifest", method: .get).status == .notFound)
        }
    }

    @Test("the update plan: the new version's files whose hash the old one lacks; empty when current; 400/404 for a bad from")
    func updatePlan() async throws {
        try await withTwoReleases { releases, client in
            let env = releases.env
            let first = releases.first
            let second = releases.second
            let old = releases.old
            let new = releases.new
            let held = Set(old.listedFiles.map(\.sha256))
            let expected = new.listedFiles.filter { !held.contains($0.sha256) }
            #expect(!expected.isEmpty && expected.count < new.listedFiles.count, "the second release shares files with the first")

            let plan = try await client.execute(uri: "/api/v1/packages/\(first.packageId)/updates?from=1", method: .get)
            #expect(plan.status == .ok, "\(plan.text)")
            let body = plan.jsonObject
            #expect(body["from"] as? Int == 1 && body["to"] as? Int == 2)
            #expect((body["manifestURL"] as? String)?.hasSuffix("/versions/2/manifest") == true)
            let files = try #require(body["files"] as? [[String: Any]])
            #expect(files.map { $0["path"] as? String ?? "" } == expected.map(\.path))
            #expect(files.map { $0["sha256"] as? String ?? "" } == expected.map(\.sha256))
            #expect(files.allSatisfy { ($0["url"] as? String)?.hasSuffix("/api/v1/files/\($0["sha256"] as? String ?? "")") == true })
            #expect(body["downloadSize"] as? Int == Int(expected.reduce(0) { $0 + ($1.size ?? 0) }))
            #expect(body["fullSize"] as? Int == Int(second.size))
            #expect((body["removed"] as? [String])?.isEmpty == true)

            let current = try await client.execute(uri: "/api/v1/packages/\(first.packageId)/updates?from=2", method: .get)
            #expect((current.jsonObject["files"] as? [Any])?.isEmpty == true && current.jsonObject["downloadSize"] as? Int == 0)

            for (query, status) in [
                ("", HTTPResponse.Status.badRequest), ("?from=", .badRequest), ("?from=abc", .badRequest), ("?from=0", .badRequest),
                ("?from=-1", .badRequest), ("?from=1.5", .badRequest), ("?from=99", .notFound),
            ] {
                let response = try await client.execute(uri: "/api/v1/packages/\(first.packageId)/updates\(query)", method: .get)
                #expect(response.status == status, "\(query): \(response.status) \(response.text)")
                #expect(response.errorCode != nil, "\(query): a JSON error: \(response.text)")
            }

            // A rollback: the plan leads back down, and removes the files only the newer version had.
            let manager = try await env.token("manager@test.org")
            #expect(try await client.managePackage(first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            let down = try await client.execute(uri: "/api/v1/packages/\(first.packageId)/updates?from=2", method: .get).jsonObject
            #expect(down["to"] as? Int == 1)
            let newOnly = Set(new.listedFiles.map(\.path)).subtracting(old.listedFiles.map(\.path))
            #expect(Set(down["removed"] as? [String] ?? []) == newOnly)
        }
    }

    @Test("files by hash: every file of the current version, ranged, immutable; 404 for others; 400 for what is not a hash")
    func filesByHash() async throws {
        try await withTwoReleases { releases, client in
            let env = releases.env
            let first = releases.first
            let old = releases.old
            let new = releases.new
            #expect(new.geoJSON != nil)
            for file in new.listedFiles {
                let uri = "/api/v1/files/\(file.sha256)"
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok, "\(file.path)")
                #expect(SHA256.hash(data: response.data).hexString == file.sha256 && Int64(response.data.count) == file.size, "\(file.path)")
                #expect(response.headers[.eTag] == "\"\(file.sha256)\"")
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                #expect(response.headers[.acceptRanges] == "bytes")
                #expect(response.headers[.contentType] == "application/octet-stream")
                let head = try await client.execute(uri: uri, method: .head)
                #expect(head.status == .ok && head.headers[.contentLength] == "\(file.size ?? -1)" && head.data.isEmpty)
                let part = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=1-8"])
                #expect(part.status == .partialContent && part.data == response.data[1...8])
                let stale = try await client.execute(
                    uri: uri,
                    method: .get,
                    headers: [.range: "bytes=1-8", .ifRange: "\"\(String(repeating: "0", count: 64))\""]
                )
                #expect(stale.status == .ok && stale.data == response.data, "an If-Range that does not match: the whole file")
                let past = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=\(file.size ?? 0)-"])
                #expect(past.status == .rangeNotSatisfiable)
            }
            // Files that are not assets (GeoJSON) were taken out of the zip into files/, once.
            let geo = try #require(new.geoJSON)
            #expect(FileManager.default.fileExists(atPath: env.paths.files.appendingPathComponent(geo.sha256).path))

            for bad in [
                "abc", String(repeating: "A", count: 64), String(repeating: "g", count: 64), String(repeating: "a", count: 63),
                String(repeating: "a", count: 65), "..", "%2E%2E", "..%2F..%2Ftrail.sqlite", "%2Fetc%2Fpasswd",
            ] {
                let response = try await client.execute(uri: "/api/v1/files/\(bad)", method: .get)
                #expect(response.status == .badRequest, "\(bad): \(response.status)")
                #expect(response.errorCode != nil)
            }
            #expect(try await client.execute(uri: "/api/v1/files/\(String(repeating: "0", count: 64))", method: .get).status == .notFound)

            // After a rollback only version 1's files are served; after an unpublish none.
            let manager = try await env.token("manager@test.org")
            #expect(try await client.managePackage(first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            let oldHashes = Set(old.listedFiles.map(\.sha256))
            for file in new.listedFiles {
                let status = try await client.execute(uri: "/api/v1/files/\(file.sha256)", method: .get).status
                #expect(status == (oldHashes.contains(file.sha256) ? .ok : .notFound), "\(file.path) after the rollback: \(status)")
            }
            #expect(try await client.managePackage(first.packageId, "unpublish", token: manager).status == .ok)
            for file in old.listedFiles {
                #expect(
                    try await client.execute(uri: "/api/v1/files/\(file.sha256)", method: .get).status == .notFound,
                    "\(file.path) after unpublish"
                )
            }
            // The copies in files/ that nothing serves are removed.
            try await env.app.dependencies.files.prune()
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: env.paths.files.path)) ?? []).isEmpty)
        }
    }

    @Test("the package page and the release page say what an app on each earlier version downloads to update")
    func panelShowsUpdateCosts() async throws {
        try await withTwoReleases { releases, client in
            let env = releases.env
            let first = releases.first
            let second = releases.second
            let old = releases.old
            let new = releases.new
            let held = Set(old.listedFiles.map(\.sha256))
            let bytes = new.listedFiles.filter { !held.contains($0.sha256) }.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            let line = "v1 → v2: \(ByteFormat.string(bytes)) of \(ByteFormat.string(second.size))"
            let author = try await client.signIn("author@test.org")
            let page = try await client.get("/packages/\(first.packageId)", session: author)
            #expect(page.status == .ok)
            #expect(page.text.contains("<td class=\"update-cost small\">\(line)</td>"), "package page: \(line)")
            // The next release's page, before it is released: what an app on v1 and on v2 downloads.
            let author2 = try await env.token("author@test.org")
            try await client.addCleanMediaForRelease(env, token: author2, seed: 47)
            let requestId = try await client.publishSubmit(env, token: author2)
            #expect(await env.buildAll() == 1)
            let request = try await client.get("/requests/\(requestId)", session: author)
            #expect(request.text.contains("What an app downloads to update"))
            #expect(request.text.contains("v2 → v3: ") && request.text.contains("v1 → v3: "), "release page lists both earlier versions")
        }
    }

    @Test("an independent Python client (urllib + cryptography) updates v1 to v3 with the documented routes only")
    func pythonClientUpdates() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.application.testLive { client in
            let port = try #require(client.port)
            let first = try await env.releaseThroughAPI(client)
            _ = try await env.releaseThroughAPI(client, seed: 31)
            let third = try await env.releaseThroughAPI(client, seed: 47)
            let new = try Manifest.decode(try Self.manifestBytes(third.zip))
            let old = try Manifest.decode(try Self.manifestBytes(first.zip))
            let held = Set(old.listedFiles.map(\.sha256))
            var fresh = Set<String>()
            var freshBytes: Int64 = 0
            for file in new.listedFiles where !held.contains(file.sha256) && fresh.insert(file.sha256).inserted { freshBytes += file.size ?? 0 }
            let work = env.folder.appendingPathComponent("python-update")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let output = try await TestScripts.python(
                "delta_update.py",
                ["http://localhost:\(port)", first.packageId, first.zip.path, work.path]
            )
            try #require(output.status == 0, "delta_update.py failed: \(output.stderr)")
            let result = output.lastLineJSON
            #expect(result["version"] as? Int == 3)
            #expect(result["files"] as? Int == new.listedFiles.count)
            #expect(result["downloaded"] as? Int == Int(freshBytes), "only the files v1 lacks: \(result)")
            #expect(result["planDownloadSize"] as? Int == Int(freshBytes))
            #expect((result["reused"] as? Int ?? 0) > 0)
        }
    }
}
