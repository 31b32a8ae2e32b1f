import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import ObjectStorage
import PackageFormat
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The distribution tree mirrored to a real S3 server (SeaweedFS, and moto as a second implementation).
@Suite(.serialized, .scratch) struct StorageSyncTests {
    static let prefix = "parks/north"

    static func settings(_ store: ObjectStore, credentials: S3Credentials? = nil, bucket: String? = nil) -> StorageSettings {
        var settings = StorageSettings(
            location: StorageLocation(bucket: bucket ?? store.info.bucket, prefix: prefix),
            endpoint: store.endpoint,
            credentials: credentials ?? store.credentials,
            publicDownloadURL: "\(store.info.endpoint)/\(store.info.bucket)/\(prefix)"
        )
        settings.connectTimeout = .seconds(2)
        settings.readTimeout = .seconds(10)
        settings.firstRetryDelay = .milliseconds(200)
        settings.longestRetryDelay = .seconds(1)
        return settings
    }

    /// Reads a URL without credentials, as a phone behind the CDN does.
    static func fetch(_ url: String) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return (data, response as! HTTPURLResponse)
    }

    static func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while try await !condition() {
            guard clock.now < deadline else { throw WaitTimeout(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    struct WaitTimeout: Error, CustomStringConvertible { let description: String }

    @Test(
        "a release puts every object of the tree in the bucket with its bytes and headers; the catalog goes last and verifies; the API redirects there",
        arguments: ObjectStore.Kind.allCases
    )
    func releaseMirrorsTheTree(kind: ObjectStore.Kind) async throws {
        let store = try await ObjectStore.start(kind)
        defer { store.stop() }
        let settings = Self.settings(store)
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.storage = settings })
        let sync = try #require(env.app.dependencies.makeDistributionSync())
        defer { Task { await sync.shutdown() } }
        let client = store.client()
        defer { Task { await client.shutdown() } }
        try await sync.checkBucket()

        try await env.app.test { api in
            let released = try await env.releaseThroughAPI(api)
            // Before the sync: the job waits, the API still streams the zip itself.
            #expect(try await env.database.waitingDistributionJobs().map(\.reason) == [.release])
            #expect(try await api.execute(uri: "/api/v1/packages/\(released.packageId)/download", method: .get).status == .ok)

            let report = try await sync.syncOnce()
            #expect(report.catalogUploaded)
            #expect(try await env.database.waitingDistributionJobs().isEmpty)
            let zipPath = "packages/\(released.packageId)/\(released.version).zip"
            #expect(report.uploaded.last != "catalog.json" && report.uploaded.contains(zipPath))

            // Every object of the tree, with the bytes the server holds, the type and the cache policy.
            let items = try await env.database.distributionItems(paths: env.paths, signingKey: env.app.dependencies.signingKey)
            #expect(items.count >= 5)
            for item in items {
                let key = "\(Self.prefix)/\(item.path)"
                let info = try #require(try await client.headObject(key), "\(key) is not in the bucket")
                #expect(info.size == item.size && info.sha256 == item.sha256, "\(key)")
                #expect(info.cacheControl == "public, max-age=31536000, immutable", "\(key)")
                #expect(info.contentType == item.contentType, "\(key)")
                #expect(SHA256.hash(data: try await client.getObject(key, limit: 64 << 20)).hexString == item.sha256, "\(key)")
            }
            let zipInfo = try #require(try await client.headObject("\(Self.prefix)/\(zipPath)"))
            #expect(zipInfo.contentType == "application/zip" && zipInfo.size == released.size)

            // The catalog: the exact bytes GET /catalog serves now, signed, naming the bucket's URLs.
            let catalogInfo = try #require(try await client.headObject("\(Self.prefix)/catalog.json"))
            #expect(catalogInfo.cacheControl == "no-cache")
            let body = try await client.getObject("\(Self.prefix)/catalog.json")
            let signature = String(decoding: try await client.getObject("\(Self.prefix)/catalog.json.sig"), as: UTF8.self)
            #expect(SignatureCheck.verify(signature: try #require(Data(base64Encoded: signature)), of: body, publicKeyBase64: env.publicKey))
            let served = try await api.execute(uri: "/api/v1/catalog", method: .get)
            #expect(Data(buffer: served.body) == body)
            #expect(served.headers[.catalogSignature] == signature)
            let catalog = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let entry = try #require((catalog["packages"] as? [[String: Any]])?.first)
            #expect(entry["url"] as? String == "\(settings.publicDownloadURL!)/\(zipPath)")
            #expect(
                entry["manifestURL"] as? String == "\(settings.publicDownloadURL!)/packages/\(released.packageId)/\(released.version)/manifest.json"
            )

            // The API answers 302 to the same immutable object, which anyone can read.
            for uri in [
                "/api/v1/packages/\(released.packageId)/download", "/api/v1/packages/\(released.packageId)/versions/\(released.version)/download",
            ] {
                let redirect = try await api.execute(uri: uri, method: .get)
                #expect(redirect.status == .found, "\(uri)")
                #expect(redirect.headers[.location] == "\(settings.publicDownloadURL!)/\(zipPath)")
            }
            let (zipBytes, zipResponse) = try await Self.fetch("\(settings.publicDownloadURL!)/\(zipPath)")
            #expect(zipResponse.statusCode == 200)
            #expect(SHA256.hash(data: zipBytes).hexString == released.sha256)
            let manifest = try Manifest.decode(try DeltaUpdateTests.manifestBytes(released.zip))
            let file = try #require(manifest.listedFiles.first)
            let fileRedirect = try await api.execute(uri: "/api/v1/files/\(file.sha256)", method: .get)
            #expect(fileRedirect.status == .found)
            let (fileBytes, _) = try await Self.fetch(try #require(fileRedirect.headers[.location]))
            #expect(SHA256.hash(data: fileBytes).hexString == file.sha256)

            // Nothing changed: a second pass uploads nothing.
            let again = try await sync.syncOnce()
            #expect(again.uploaded.isEmpty && !again.catalogUploaded)
            #expect(try await sync.compare() == [])

            // Unpublish: only the catalog changes, at once; the version's objects stay for a rollback.
            let manager = try await env.token("manager@test.org")
            #expect(try await api.managePackage(released.packageId, "unpublish", token: manager).status == .ok)
            let afterUnpublish = try await sync.syncOnce()
            #expect(afterUnpublish.uploaded.isEmpty && afterUnpublish.catalogUploaded)
            let emptied = try JSONSerialization.jsonObject(with: try await client.getObject("\(Self.prefix)/catalog.json")) as? [String: Any]
            #expect((emptied?["packages"] as? [Any])?.isEmpty == true)
            #expect(try await client.headObject("\(Self.prefix)/\(zipPath)") != nil)
        }
    }

    @Test("wrong keys, a missing bucket, an endpoint that does not answer: a clear error at start and on the waiting job; nothing half-published")
    func unusableBuckets() async throws {
        let store = try await ObjectStore.start(.seaweedfs)
        defer { store.stop() }
        let good = store.client()
        defer { Task { await good.shutdown() } }
        let cases: [(String, StorageSettings, String)] = [
            ("wrong keys", Self.settings(store, credentials: S3Credentials(accessKeyId: "nobody", secretAccessKey: "nothing")), "access denied"),
            ("missing bucket", Self.settings(store, bucket: "no-such-bucket"), "does not exist"),
            (
                "no answer",
                {
                    var s = Self.settings(store)
                    s.endpoint = URL(string: "http://127.0.0.1:9")!
                    return s
                }(), "does not answer"
            ),
        ]
        for (name, settings, words) in cases {
            let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.storage = settings })
            let sync = try #require(env.app.dependencies.makeDistributionSync())
            defer { Task { await sync.shutdown() } }
            do {
                try await sync.checkBucket()
                Issue.record("\(name): the check passed")
            } catch {
                #expect("\(error)".contains(words), "\(name): \(error)")
            }
            try await env.app.test { api in
                let released = try await env.releaseThroughAPI(api)
                await #expect(throws: S3Error.self) { try await sync.syncOnce() }
                let job = try #require(try await env.database.waitingDistributionJobs().first, "\(name)")
                #expect(job.attempts == 1 && job.failingSince != nil, "\(name)")
                #expect(job.lastError?.contains(words) == true, "\(name): \(job.lastError ?? "")")
                #expect(sync.state.lastFailure?.message.contains(words) == true, "\(name)")
                // The release itself went through: the server streams it.
                #expect(try await api.execute(uri: "/api/v1/packages/\(released.packageId)/download", method: .get).status == .ok, "\(name)")
            }
        }
        #expect(try await good.listObjects(prefix: "\(Self.prefix)/").isEmpty)
    }

    /// Reads the bucket's catalog directly (not through the server's path to it) and records every moment it names a
    /// package zip or manifest that is not in the bucket.
    ///
    /// SeaweedFS, loaded by a parallel test run, has answered a HEAD with 404 for an object that was there before and
    /// after (its S3 gateway serves lookups from a metadata cache). So, on that store only, a 404 is asked again: an
    /// object that is then there, last modified no later than the catalog that names it, went up first, and the 404
    /// is set aside as the store's. One that appears later than the catalog, or stays missing, is a problem. Moto
    /// answers from memory at once, and there every 404 counts.
    final class CatalogWatcher: @unchecked Sendable {
        private let lock = NSLock()
        private var problems: [String] = []
        private var storeLapses: [String] = []
        private var versions: [Int] = []
        private var task: Task<Void, Never>? = nil
        let askAgain: Bool

        init(kind: ObjectStore.Kind) { askAgain = kind == .seaweedfs }

        func start(_ client: S3Client) {
            task = Task {
                while !Task.isCancelled {
                    await self.look(client)
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }

        func look(_ client: S3Client) async {
            let catalogKey = "\(StorageSyncTests.prefix)/catalog.json"
            // HEAD, GET, HEAD: the same ETag twice, so the time read is that of the body read.
            guard let catalogInfo = try? await client.headObject(catalogKey),
                let body = try? await client.getObject(catalogKey),
                let after = try? await client.headObject(catalogKey), after.etag == catalogInfo.etag,
                let catalog = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            else { return }
            let version = catalog["catalogVersion"] as? Int ?? -1
            for entry in catalog["packages"] as? [[String: Any]] ?? [] {
                let id = entry["id"] as? String ?? ""
                let number = entry["version"] as? Int ?? 0
                for path in ["packages/\(id)/\(number).zip", "packages/\(id)/\(number)/manifest.json"] {
                    // Only a HEAD the bucket answered "not found" counts; one that failed (a slow machine timing out
                    // the watcher's own request) says nothing about the bucket.
                    let key = "\(StorageSyncTests.prefix)/\(path)"
                    do {
                        if try await client.headObject(key) != nil { continue }
                    } catch { continue }
                    let missing = "catalog version \(version) names \(path), which is not in the bucket"
                    guard askAgain, let later = await Self.lookAgain(client, key) else {
                        record(missing)
                        continue
                    }
                    // HTTP dates are whole seconds: "no later" is the ordering the sync keeps, to the second.
                    if let objectTime = later.lastModified, let catalogTime = catalogInfo.lastModified, objectTime <= catalogTime {
                        lock.withLock { storeLapses.append(missing) }
                    } else {
                        record("\(missing) (it came \(later.lastModified.map { "\($0)" } ?? "at an unknown time"), after the catalog)")
                    }
                }
            }
            lock.withLock { if versions.last != version { versions.append(version) } }
        }

        /// The object as HEAD reports it within two seconds, or nil while it stays missing.
        static func lookAgain(_ client: S3Client, _ key: String) async -> S3ObjectInfo? {
            for _ in 0..<20 {
                try? await Task.sleep(for: .milliseconds(100))
                if let info = try? await client.headObject(key) { return info }
            }
            return nil
        }

        func record(_ problem: String) { lock.withLock { problems.append(problem) } }
        var seenProblems: [String] { lock.withLock { problems } }
        var seenStoreLapses: [String] { lock.withLock { storeLapses } }
        var seenVersions: [Int] { lock.withLock { versions } }
        func stop() async {
            task?.cancel()
            await task?.value
        }
    }

    @Test(
        "the path to the bucket cut during a release: the release completes locally, the job waits with the error, the bucket's catalog never names a missing object, and all is sent once the path is back",
        arguments: ObjectStore.Kind.allCases
    )
    func outageDuringRelease(kind: ObjectStore.Kind) async throws {
        let store = try await ObjectStore.start(kind)
        defer { store.stop() }
        let proxy = try await TCPProxy.start(to: store.endpoint.port!)
        defer { proxy.stop() }
        let settings = {
            var settings = Self.settings(store)
            settings.endpoint = proxy.url
            return settings
        }()
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { [settings] in $0.storage = settings })
        let sync = try #require(env.app.dependencies.makeDistributionSync())
        let service = Task { try await sync.run() }
        defer { service.cancel() }
        let direct = store.client()
        defer { Task { await direct.shutdown() } }
        let watcher = CatalogWatcher(kind: kind)
        watcher.start(direct)

        try await env.app.test { api in
            let first = try await env.releaseThroughAPI(api)
            try await Self.waitFor("the first release in the bucket") {
                try await env.database.waitingDistributionJobs().isEmpty && watcher.seenVersions.last == 1
            }

            proxy.cut()
            let second = try await env.releaseThroughAPI(api, seed: 31)
            #expect(second.version == first.version + 1)
            // Served locally meanwhile: the second version is not in the bucket, so no redirect.
            let local = try await api.execute(uri: "/api/v1/packages/\(second.packageId)/versions/\(second.version)/download", method: .get)
            #expect(local.status == .ok)
            #expect(SHA256.hash(data: Data(buffer: local.body)).hexString == second.sha256)
            try await Self.waitFor("two failed attempts") { try await env.database.waitingDistributionJobs().first.map { $0.attempts >= 2 } ?? false }
            let waiting = try #require(try await env.database.waitingDistributionJobs().first)
            #expect(waiting.failingSince != nil)
            #expect(waiting.lastError?.contains("does not answer") == true, "\(waiting.lastError ?? "")")
            #expect(sync.state.lastFailure != nil)
            #expect(watcher.seenVersions.last == 1)
            // The panel: the package page says what waits and why; admins get a banner on every page.
            let admin = try await api.signIn("admin@test.org")
            let page = try await api.get("/packages/\(second.packageId)", session: admin)
            #expect(page.text.contains(#"id="distribution-state""#))
            #expect(page.text.contains("objects waiting, retrying since"), "\(page.text)")
            #expect(page.text.contains("does not answer"))
            #expect(page.text.contains(#"id="storage-warning""#))
            let author = try await api.signIn("author@test.org")
            let authorsPage = try await api.get("/packages/\(second.packageId)", session: author)
            #expect(authorsPage.status == .ok && !authorsPage.text.contains(#"id="storage-warning""#))

            proxy.restore()
            try await Self.waitFor("the second release in the bucket") {
                try await env.database.waitingDistributionJobs().isEmpty && watcher.seenVersions.last == 2
            }
            #expect(sync.state.lastFailure == nil)
            let admin2 = try await api.signIn("admin@test.org")
            let inSync = try await api.get("/packages/\(second.packageId)", session: admin2)
            #expect(inSync.text.contains("In sync with s3://"))
            #expect(!inSync.text.contains(#"id="storage-warning""#))
            let redirect = try await api.execute(uri: "/api/v1/packages/\(second.packageId)/download", method: .get)
            #expect(redirect.headers[.location] == "\(settings.publicDownloadURL!)/packages/\(second.packageId)/\(second.version).zip")
        }
        await watcher.stop()
        #expect(watcher.seenProblems == [])
        if !watcher.seenStoreLapses.isEmpty { print("the store answered 404 for objects it held: \(watcher.seenStoreLapses)") }
        // (Version 0, the empty catalog the sync sends when it starts, may or may not be seen first.)
        #expect(watcher.seenVersions.drop { $0 == 0 } == [1, 2])
    }

    @Test(
        "kill -9 of the server during a multipart upload of a large package: after a restart the upload continues from the parts in the bucket and ends with the right SHA-256",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: GracefulStopTests.binary.path),
            "needs .build/debug/trail-companion (swift build --build-tests)"
        ),
        .timeLimit(.minutes(10)),
        arguments: ObjectStore.Kind.allCases
    )
    func multipartResumesAfterKill(kind: ObjectStore.Kind) async throws {
        let store = try await ObjectStore.start(kind)
        defer { store.stop() }
        // A slow uplink (per connection), so the kill lands in the middle of the upload.
        let proxy = try await TCPProxy.start(to: store.endpoint.port!, bytesPerSecond: 2_000_000)
        defer { proxy.stop() }
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let box = NIOLockedValueBox<ReleasedPackage?>(nil)
        try await env.app.test { api in
            let released = try await env.releaseThroughAPI(api, videoSize: 24 * 1024 * 1024)
            box.withLockedValue { $0 = released }
        }
        let released = try #require(box.withLockedValue { $0 })
        #expect(released.size > 20 * 1024 * 1024)
        let zipPath = "packages/\(released.packageId)/\(released.version).zip"
        let location = "s3://\(store.info.bucket)/\(Self.prefix)"

        let server = TrailServerProcess(
            binary: GracefulStopTests.binary,
            data: env.dataFolder,
            signatures: env.signatures,
            log: env.folder.appendingPathComponent("server.log")
        )
        defer { server.killNow() }
        server.serveArguments = ["--storage", location, "--s3-endpoint", proxy.url.absoluteString, "--s3-part-size", "5M"]
        server.environment = ["AWS_ACCESS_KEY_ID": store.info.accessKey, "AWS_SECRET_ACCESS_KEY": store.info.secretKey]
        try await server.start()
        #expect(server.logText.contains("Object storage: \(location) answers and takes writes."), "\(server.logText)")

        // Wait for parts in the bucket (read directly, past the slow proxy), then the crash.
        let direct = store.client()
        defer { Task { await direct.shutdown() } }
        func uploadId() async throws -> String? {
            try await env.database.read {
                try String.fetchOne($0, sql: "SELECT uploadId FROM distributionUpload WHERE path = ?", arguments: [zipPath])
            }
        }
        // Only whole parts count: a store may list a part whose request the kill cut short, and the restart rightly
        // sends that one again (kept parts must match the file's size and MD5).
        let partSize: Int64 = 5 * 1024 * 1024
        var partsBeforeKill = 0
        try await Self.waitFor("a whole part of \(zipPath) in the bucket", timeout: .seconds(120)) {
            guard let id = try await uploadId(), let parts = try await direct.listParts("\(Self.prefix)/\(zipPath)", uploadId: id) else {
                return false
            }
            partsBeforeKill = parts.filter { $0.size == DistributionSync.partRange($0.number, partSize: partSize, size: released.size).count }.count
            return partsBeforeKill >= 1
        }
        server.killNow()
        await server.waitForExit()
        await #expect(try uploadId() != nil, "the upload under way is recorded")
        #expect(try await direct.headObject("\(Self.prefix)/\(zipPath)") == nil, "not finished before the kill")

        try await server.start()
        try await Self.waitFor("the sync to finish after the restart", timeout: .seconds(180)) {
            try await env.database.waitingDistributionJobs().isEmpty
        }
        await server.stop()
        let log = server.logText
        let continued = try #require(log.range(of: "continuing the upload of \(zipPath) with "), "\(log)")
        let kept = Int(log[continued.upperBound...].prefix { $0.isNumber }) ?? 0
        // The restart must continue the upload (at least one part kept), and what it keeps is checked part by part
        // (size and MD5). Once, under a loaded machine, moto listed four whole-sized parts before the kill and the
        // restart kept three: a part that does not match is sent again, and the SHA-256 of the result below decides.
        #expect(kept >= 1, "kept \(kept) parts (\(partsBeforeKill) whole ones listed before the kill)")
        await #expect(try uploadId() == nil)
        let info = try #require(try await direct.headObject("\(Self.prefix)/\(zipPath)"))
        #expect(info.size == released.size && info.sha256 == released.sha256)
        #expect(SHA256.hash(data: try await direct.getObject("\(Self.prefix)/\(zipPath)", limit: 64 << 20)).hexString == released.sha256)
    }

    @Test(
        "TrailClient and aria2c download a package from the bucket's public URL and verify it; TrailClient follows the API's 302 to the same bytes",
        arguments: ObjectStore.Kind.allCases
    )
    func clientsDownloadFromTheBucket(kind: ObjectStore.Kind) async throws {
        let store = try await ObjectStore.start(kind)
        defer { store.stop() }
        let settings = Self.settings(store)
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.storage = settings })
        let sync = try #require(env.app.dependencies.makeDistributionSync())
        defer { Task { await sync.shutdown() } }
        let folder = env.folder.appendingPathComponent("client")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await env.app.application.testLive { client in
            let released = try await env.releaseThroughAPI(client, videoSize: 3 * 1024 * 1024)
            try await sync.syncOnce()
            let trail = TrailClient(baseURL: URL(string: "http://localhost:\(try #require(client.port))")!)
            let entry = try #require(try await trail.catalog(pinnedPublicKey: env.publicKey, lastSeenVersion: nil).catalog.packages.first)
            #expect(entry.url.hasPrefix(settings.publicDownloadURL!))

            // TrailClient straight from the bucket, as the catalog names it.
            let direct = folder.appendingPathComponent("direct.zip")
            let fetched = try await trail.download(from: URL(string: entry.url)!, to: direct, expectedSize: entry.size, expectedSHA256: entry.sha256)
            #expect(fetched.sha256 == released.sha256)
            let report = PackageVerifier.verify(zipAt: direct, publicKeyBase64: env.publicKey)
            #expect(report.isValid, "\(report.problems)")

            // TrailClient through the API: the 302 leads to the same bytes.
            let viaAPI = folder.appendingPathComponent("via-api.zip")
            #expect(try await trail.downloadPackage(id: released.packageId, to: viaAPI).sha256 == released.sha256)

            // aria2c (Debian's aria2), which knows nothing of this project, checks the SHA-256 itself.
            let aria = try await ChildProcess.run(
                "/usr/bin/aria2c",
                [
                    "--quiet=true", "--allow-overwrite=true", "--dir", folder.path, "--out", "aria.zip",
                    "--checksum=sha-256=\(entry.sha256)", entry.url,
                ],
                timeout: .seconds(120)
            )
            #expect(aria.status == 0, "aria2c: \(aria.stdout) \(aria.stderr)")
            let ariaZip = folder.appendingPathComponent("aria.zip")
            #expect(PackageVerifier.verify(zipAt: ariaZip, publicKeyBase64: env.publicKey).isValid)
        }
    }

    /// The CLI (`CLI.run` waits for it off the cooperative pool).
    static func cli(_ arguments: [String], data: URL, environment: [String: String]) async throws -> CLI.Result {
        try await CLI.run(arguments, data: data, environment: environment)
    }

    @Test(
        "storage check lists what the bucket lacks; storage sync sends it, then the catalog; --all sends everything again; bad settings are named",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: GracefulStopTests.binary.path),
            "needs .build/debug/trail-companion (swift build --build-tests)"
        )
    )
    func storageCommands() async throws {
        let store = try await ObjectStore.start(.seaweedfs)
        defer { store.stop() }
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let box = NIOLockedValueBox<ReleasedPackage?>(nil)
        try await env.app.test { api in
            let released = try await env.releaseThroughAPI(api)
            box.withLockedValue { $0 = released }
        }
        let released = try #require(box.withLockedValue { $0 })
        let zipPath = "packages/\(released.packageId)/\(released.version).zip"
        let keys = ["AWS_ACCESS_KEY_ID": store.info.accessKey, "AWS_SECRET_ACCESS_KEY": store.info.secretKey]
        let flags = ["--storage", "s3://\(store.info.bucket)/\(Self.prefix)", "--s3-endpoint", store.info.endpoint]
        func storage(_ arguments: [String], environment: [String: String] = keys) async throws -> CLI.Result {
            try await Self.cli(["storage"] + arguments, data: env.dataFolder, environment: environment)
        }

        let before = try await storage(["check"] + flags)
        #expect(before.status == 1)
        #expect(before.output.contains("missing: \(zipPath)") && before.output.contains("missing: catalog.json"), "\(before.output)")

        let synced = try await storage(["sync"] + flags)
        #expect(synced.status == 0, "\(synced.output) \(synced.errors)")
        #expect(synced.output.contains("then catalog version 1. In sync."), "\(synced.output)")
        #expect(try await env.database.waitingDistributionJobs().isEmpty)
        let after = try await storage(["check"] + flags)
        #expect(after.status == 0, "\(after.output) \(after.errors)")
        #expect(after.output.contains("is in sync"))

        // An object lost from the bucket (someone's clean-up): check names it; sync --all puts it back.
        let direct = store.client()
        defer { Task { await direct.shutdown() } }
        try await direct.deleteObject("\(Self.prefix)/\(zipPath)")
        let lost = try await storage(["check"] + flags)
        #expect(lost.status == 1)
        #expect(lost.output.contains("missing: \(zipPath)") && lost.output.contains("catalog.json names \(zipPath)"), "\(lost.output)")
        let again = try await storage(["sync", "--all"] + flags)
        #expect(again.status == 0 && again.output.contains("uploaded"), "\(again.output) \(again.errors)")
        #expect(try await direct.headObject("\(Self.prefix)/\(zipPath)")?.sha256 == released.sha256)
        #expect(try await storage(["check"] + flags).status == 0)

        // Settings that cannot work are named before anything is sent.
        let noKeys = try await storage(["sync"] + flags, environment: [:])
        #expect(noKeys.status != 0 && (noKeys.output + noKeys.errors).contains("AWS_ACCESS_KEY_ID"), "\(noKeys.errors)")
        let badLocation = try await storage(["sync", "--storage", "http://bucket", "--s3-endpoint", store.info.endpoint])
        #expect(badLocation.status != 0 && badLocation.errors.contains("s3://BUCKET/PREFIX"), "\(badLocation.errors)")
        let smallParts = try await storage(["sync", "--s3-part-size", "1M"] + flags)
        #expect(smallParts.status != 0 && smallParts.errors.contains("5M"), "\(smallParts.errors)")
        let wrongKeys = try await storage(["check"] + flags, environment: ["AWS_ACCESS_KEY_ID": "nobody", "AWS_SECRET_ACCESS_KEY": "nothing"])
        #expect(wrongKeys.status == 1 && wrongKeys.output.contains("access denied"), "\(wrongKeys.output)")
    }

    @Test("doctor checks the bucket: ok with a public URL, a warning without, a failure with a fix for wrong keys")
    func doctorChecksTheBucket() async throws {
        let store = try await ObjectStore.start(.seaweedfs)
        defer { store.stop() }
        func check(_ settings: StorageSettings) async -> Doctor.Check? {
            var config = AppConfig()
            config.storage = settings
            return await Doctor(config: config).objectStorage(settings)
        }
        #expect(await check(Self.settings(store))?.status == .ok)
        var mirrorOnly = Self.settings(store)
        mirrorOnly.publicDownloadURL = nil
        #expect(await check(mirrorOnly)?.status == .warning)
        let refused = await check(Self.settings(store, credentials: S3Credentials(accessKeyId: "nobody", secretAccessKey: "nothing")))
        #expect(refused?.status == .failure)
        #expect(refused?.fix?.contains("AWS_ACCESS_KEY_ID") == true, "\(String(describing: refused))")
    }
}
