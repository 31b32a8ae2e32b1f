import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `TrailClient.update` against a live server: only changed files travel, the folder is never a mix of versions.
@Suite(.scratch) struct ClientUpdateTests {
    struct Setup {
        let env: TestEnv
        let trail: TrailClient
        let folder: URL
        let first: ReleasedPackage
        var installed: URL { folder.appendingPathComponent("tour") }
    }

    /// A live server with version 1 released and installed (extracted) on the "phone".
    func withInstalled(videoSize: Int? = nil, _ body: @Sendable (Setup, any TestClientProtocol) async throws -> Void) async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let folder = env.folder.appendingPathComponent("phone")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The release goes through the router in process (no sockets): the live test client gives up after its read
        // time-out without an answer, and an upload's fsync can wait longer than that behind the disk writes of the tests
        // running beside this one, even for a small upload, while other suites write gigabytes.
        final class Box: @unchecked Sendable { var first: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.first = try await env.releaseThroughAPI(client, videoSize: videoSize) }
        let first = try #require(box.first)
        try await env.app.application.testLive { client in
            let port = try #require(client.port)
            let setup = Setup(env: env, trail: TrailClient(baseURL: URL(string: "http://localhost:\(port)")!), folder: folder, first: first)
            _ = try TrailClient.extract(zip: first.zip, to: setup.installed)
            try await body(setup, client)
        }
    }

    /// `trail_download_bytes_total{route=…}` as the server counted it.
    static func bytesSent(_ env: TestEnv, route: String) -> Int64 {
        let prefix = "trail_download_bytes_total{route=\"\(route)\"} "
        let text = env.app.dependencies.metrics.registry.emitToString()
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int64($0.dropFirst(prefix.count)) } ?? 0
    }

    static func manifest(_ zip: URL) throws -> (Manifest, Data) {
        let bytes = try DeltaUpdateTests.manifestBytes(zip)
        return (try Manifest.decode(bytes), bytes)
    }

    /// Every file of the folder is the manifest's, byte for byte, and nothing else is there.
    static func expectFolder(_ folder: URL, is zip: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (manifest, bytes) = try manifest(zip)
        #expect(try Data(contentsOf: folder.appendingPathComponent("manifest.json")) == bytes, "manifest.json", sourceLocation: sourceLocation)
        var present = Set<String>()
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                present.insert(String(url.path.dropFirst(folder.path.count + 1)))
            }
        }
        #expect(present == Set(manifest.listedFiles.map(\.path) + ["manifest.json", "manifest.sig"]), sourceLocation: sourceLocation)
        for file in manifest.listedFiles {
            let hashed = try PackageHashing.sha256(ofFileAt: folder.appendingPathComponent(file.path))
            #expect(hashed.0 == file.sha256, "\(file.path)", sourceLocation: sourceLocation)
        }
    }

    @Test("after a release that adds files, update fetches only those, reuses the rest, and ends on the new version; again: nothing to do")
    func updateFetchesOnlyWhatChanged() async throws {
        try await withInstalled { setup, client in
            let second = try await setup.env.releaseThroughAPI(client, seed: 31)
            let (old, _) = try Self.manifest(setup.first.zip)
            let (new, _) = try Self.manifest(second.zip)
            let held = Set(old.listedFiles.map(\.sha256))
            let fresh = new.listedFiles.filter { !held.contains($0.sha256) }
            let (filesBefore, manifestsBefore, packagesBefore) = (
                Self.bytesSent(setup.env, route: "file"),
                Self.bytesSent(setup.env, route: "manifest"), Self.bytesSent(setup.env, route: "package")
            )
            let result = try await setup.trail.update(
                packageId: setup.first.packageId,
                installedAt: setup.installed,
                pinnedPublicKey: setup.env.publicKey
            )
            #expect(result.fromVersion == 1 && result.toVersion == 2)
            // Counted by the server: the new files and the new manifest, and not one byte of a package zip.
            let newManifestBytes = Int64(try Self.manifest(second.zip).1.count)
            #expect(Self.bytesSent(setup.env, route: "file") - filesBefore == fresh.reduce(0) { $0 + ($1.size ?? 0) })
            #expect(Self.bytesSent(setup.env, route: "manifest") - manifestsBefore == newManifestBytes)
            #expect(Self.bytesSent(setup.env, route: "package") == packagesBefore)
            #expect(result.fetchedFiles == fresh.count && result.reusedFiles == new.listedFiles.count - fresh.count)
            #expect(result.downloadedBytes == fresh.reduce(0) { $0 + ($1.size ?? 0) })
            #expect(result.downloadedBytes < second.size / 2, "\(result.downloadedBytes) of \(second.size)")
            try Self.expectFolder(setup.installed, is: second.zip)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: setup.folder.path).filter { $0 != "tour" }
            #expect(leftovers.isEmpty, "\(leftovers)")
            let again = try await setup.trail.update(
                packageId: setup.first.packageId,
                installedAt: setup.installed,
                pinnedPublicKey: setup.env.publicKey
            )
            #expect(again.fromVersion == 2 && again.toVersion == 2 && again.downloadedBytes == 0)

            // A rollback on the server: the same flow, down to version 1.
            let manager = try await setup.env.token("manager@test.org")
            #expect(try await client.managePackage(setup.first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            let down = try await setup.trail.update(
                packageId: setup.first.packageId,
                installedAt: setup.installed,
                pinnedPublicKey: setup.env.publicKey
            )
            let heldNow = Set(new.listedFiles.map(\.sha256))
            let back = old.listedFiles.filter { !heldNow.contains($0.sha256) }.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            #expect(
                down.toVersion == 1 && down.downloadedBytes == back,
                "only what version 2 lacks (its GeoJSON): \(down.downloadedBytes) vs \(back)"
            )
            try Self.expectFolder(setup.installed, is: setup.first.zip)
        }
    }

    @Test("a file served with one byte flipped is refused and the installed version stays whole; fixed, the next call completes")
    func tamperedFileIsRefused() async throws {
        try await withInstalled { setup, client in
            let second = try await setup.env.releaseThroughAPI(client, seed: 31)
            let (old, _) = try Self.manifest(setup.first.zip)
            let (new, _) = try Self.manifest(second.zip)
            let held = Set(old.listedFiles.map(\.sha256))
            let victim = try #require(new.allAssets.first { !held.contains($0.sha256) })
            let stored = setup.env.paths.assets.appendingPathComponent(victim.sha256)
            let original = try Data(contentsOf: stored)
            var flipped = original
            flipped[flipped.count / 2] ^= 0x01
            try flipped.write(to: stored)
            await #expect(throws: UpdateError.self) {
                try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: setup.env.publicKey)
            }
            try Self.expectFolder(setup.installed, is: setup.first.zip)
            // A wrong pinned key: refused before anything is fetched.
            let otherKey = SigningKey.generate().publicKeyBase64
            await #expect(throws: (any Error).self) {
                try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: otherKey)
            }
            try original.write(to: stored)
            let result = try await setup.trail.update(
                packageId: setup.first.packageId,
                installedAt: setup.installed,
                pinnedPublicKey: setup.env.publicKey
            )
            #expect(result.toVersion == 2)
            try Self.expectFolder(setup.installed, is: second.zip)
        }
    }

    @Test("cancelled during a file, and stopped after the downloads before the swap: the old version stays whole, the next call completes")
    func interruptedUpdatesResume() async throws {
        try await withInstalled { setup, client in
            let second = try await setup.env.releaseThroughAPI(client, seed: 31, videoSize: 6_000_000)
            let key = setup.env.publicKey
            let trail = setup.trail
            let installed = setup.installed
            let id = setup.first.packageId
            let (new, _) = try Self.manifest(second.zip)
            let (old, _) = try Self.manifest(setup.first.zip)
            let held = Set(old.listedFiles.map(\.sha256))
            let all = new.listedFiles.filter { !held.contains($0.sha256) }.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            // An update to a version the catalog no longer names, left behind by an earlier run: swept.
            let stale = setup.folder.appendingPathComponent(".tour.update-v9")
            try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
            try Data("old".utf8).write(to: stale.appendingPathComponent("left.bin"))

            // 1. Cancelled once a megabyte of the video has arrived.
            let task = Task<UpdateResult, any Error> {
                try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key) { step in
                    if step.downloadedBytes >= 1_000_000 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            await #expect(throws: (any Error).self) { _ = try await task.value }
            try Self.expectFolder(installed, is: setup.first.zip)
            let staged = setup.folder.appendingPathComponent(".tour.update-v2")
            #expect(FileManager.default.fileExists(atPath: staged.path), "the staged folder is kept for the next call")
            #expect(!FileManager.default.fileExists(atPath: stale.path), "the stale update folder is removed")

            // 2. The next call resumes the video (the server sends less than all of it again), and is stopped as its
            //    last bytes arrive: after the downloads, before the swap (as if the app died there).
            let sentBefore = Self.bytesSent(setup.env, route: "file")
            let second2 = Task<UpdateResult, any Error> {
                try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key) { step in
                    if step.stage == .installing { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            await #expect(throws: CancellationError.self) { _ = try await second2.value }
            let resumedBytes = Self.bytesSent(setup.env, route: "file") - sentBefore
            #expect(resumedBytes > 0 && resumedBytes < all, "resumed: \(resumedBytes) of \(all)")
            try Self.expectFolder(installed, is: setup.first.zip)
            for file in new.listedFiles {
                #expect(try PackageHashing.sha256(ofFileAt: staged.appendingPathComponent(file.path)).0 == file.sha256, "staged \(file.path)")
            }

            // 3. The next call has nothing left to fetch: it swaps, and the server sends no file byte.
            let sentBeforeSwap = Self.bytesSent(setup.env, route: "file")
            let result = try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key)
            #expect(result.toVersion == 2 && result.downloadedBytes == 0 && result.fetchedFiles == 0)
            #expect(Self.bytesSent(setup.env, route: "file") == sentBeforeSwap)
            try Self.expectFolder(installed, is: second.zip)

            // 4. A crash between the two renames of the swap: the next call puts the folder back before anything else.
            let retired = setup.folder.appendingPathComponent(".tour.retired")
            try FileManager.default.moveItem(at: installed, to: retired)
            let noop = try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key)
            #expect(noop.toVersion == 2 && noop.downloadedBytes == 0)
            try Self.expectFolder(installed, is: second.zip)
        }
    }

    @Test("trail-companion package install, then package update after a release: the CLI an operator or a benchmark uses")
    func installAndUpdateCommands() async throws {
        let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the CLI first (swift build --build-tests)")
        try await withInstalled { setup, client in
            let server = "http://localhost:\(try #require(client.port))"
            let folder = setup.folder.appendingPathComponent("cli-tour")
            let state = setup.folder.appendingPathComponent("state").path
            let install = try await ChildProcess.run(
                binary,
                ["package", "install", setup.first.packageId, folder.path, "--server", server, "--key", setup.env.publicKey, "--state", state],
                timeout: .seconds(60)
            )
            #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
            #expect(install.stdout.contains("installed \(setup.first.packageId) v1"), "\(install.stdout)")
            try Self.expectFolder(folder, is: setup.first.zip)

            let second = try await setup.env.releaseThroughAPI(client, seed: 31)
            let update = try await ChildProcess.run(
                binary,
                [
                    "package", "update", setup.first.packageId, folder.path, "--server", server,
                    "--state", state,
                ],
                timeout: .seconds(60)
            )
            #expect(update.status == 0, "\(update.stdout) \(update.stderr)")
            #expect(update.stdout.contains("updated v1 -> v2: downloaded"), "\(update.stdout)")
            try Self.expectFolder(folder, is: second.zip)
            let again = try await ChildProcess.run(
                binary,
                [
                    "package", "update", setup.first.packageId, folder.path, "--server", server,
                    "--state", state,
                ],
                timeout: .seconds(60)
            )
            #expect(again.stdout.contains("up to date at v2"), "\(again.stdout)")
            // Another key pinned: refused, the folder untouched.
            let refused = try await ChildProcess.run(
                binary,
                [
                    "package", "update", setup.first.packageId, setup.installed.path, "--server", server,
                    "--key", SigningKey.generate().publicKeyBase64, "--state", state,
                ],
                timeout: .seconds(60)
            )
            #expect(refused.status != 0)
            try Self.expectFolder(setup.installed, is: setup.first.zip)
        }
    }

    @Test(
        "package update refuses a replayed older catalog (validly signed, not expired) and stays on the newer version; a rollback the server signs in a newer catalog is followed"
    )
    func replayedCatalogIsRefused() async throws {
        let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the CLI first (swift build --build-tests)")
        try await withInstalled { setup, client in
            let server = "http://localhost:\(try #require(client.port))"
            let folder = setup.folder.appendingPathComponent("cli-tour")
            let state = setup.folder.appendingPathComponent("state").path
            @Sendable func package(_ arguments: [String], server: String = server) async throws -> ChildProcess.Output {
                try await ChildProcess.run(
                    binary,
                    ["package"] + arguments + ["--server", server, "--key", setup.env.publicKey, "--state", state],
                    timeout: .seconds(60)
                )
            }
            // The catalog naming version 1, as the server signed it: what a replay sends later.
            let old = try await client.execute(uri: "/api/v1/catalog", method: .get)
            let oldBody = Data(buffer: old.body)
            let oldSignature = try #require(old.headers[.catalogSignature])
            let install = try await package(["install", setup.first.packageId, folder.path])
            #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
            let second = try await setup.env.releaseThroughAPI(client, seed: 31)
            let update = try await package(["update", setup.first.packageId, folder.path])
            #expect(update.stdout.contains("updated v1 -> v2"), "\(update.stdout) \(update.stderr)")

            // Whoever answers for the server now replays the old catalog; manifests come from the real server.
            let router = Router()
            router.get("/api/v1/catalog") { _, _ in
                Response(
                    status: .ok,
                    headers: [.contentType: "application/json", .catalogSignature: oldSignature],
                    body: .init(byteBuffer: ByteBuffer(bytes: oldBody))
                )
            }
            router.get("/api/v1/packages/{id}/versions/{n}/manifest") { request, _ in
                let (data, response) = try await URLSession.shared.data(from: URL(string: server + request.uri.path)!)
                let signature = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Manifest-Signature") ?? ""
                return Response(
                    status: .ok,
                    headers: [.contentType: "application/json", HTTPField.Name("Manifest-Signature")!: signature],
                    body: .init(byteBuffer: ByteBuffer(bytes: data))
                )
            }
            try await Application(router: router).testLive { replayer in
                let replayed = try await package(
                    ["update", setup.first.packageId, folder.path],
                    server: "http://localhost:\(try #require(replayer.port))"
                )
                #expect(replayed.status == 1, "\(replayed.stdout) \(replayed.stderr)")
                #expect(
                    replayed.stdout.contains("the catalog is refused: catalog version") && replayed.stdout.contains("is older than version"),
                    "\(replayed.stdout)"
                )
            }
            try Self.expectFolder(folder, is: second.zip)

            // A rollback on the server is a newer catalog: followed.
            let manager = try await setup.env.token("manager@test.org")
            #expect(try await client.managePackage(setup.first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            let down = try await package(["update", setup.first.packageId, folder.path])
            #expect(down.stdout.contains("updated v2 -> v1"), "\(down.stdout) \(down.stderr)")
            try Self.expectFolder(folder, is: setup.first.zip)
        }
    }

    @Test("the catalog version store keeps the highest version per key, across instances")
    func catalogVersionStore() throws {
        let folder = TestScratch.folder("trail-catalog-state")
        let store = CatalogVersionStore(folder: folder)
        let key = SigningKey.generate().publicKeyBase64
        let other = SigningKey.generate().publicKeyBase64
        #expect(store.highest(publicKey: key) == nil)
        try store.record(5, publicKey: key)
        try store.record(3, publicKey: key)
        #expect(CatalogVersionStore(folder: folder).highest(publicKey: key) == 5, "never lowered, and read back from the file")
        #expect(store.highest(publicKey: other) == nil)
        try store.record(6, publicKey: key)
        #expect(store.highest(publicKey: key) == 6)
    }

    /// What a hostile or broken server serves: a catalog and a manifest, each signed with `key` (or another).
    final class FakeServerState: @unchecked Sendable {
        let lock = NSLock()
        var catalog = Data(), catalogSignature = "", manifest = Data(), manifestSignature = ""
        func set(catalog: Data, catalogSignature: String, manifest: Data, manifestSignature: String) {
            lock.withLock {
                (self.catalog, self.catalogSignature, self.manifest, self.manifestSignature) = (
                    catalog, catalogSignature, manifest, manifestSignature
                )
            }
        }
        var snapshot: (Data, String, Data, String) { lock.withLock { (catalog, catalogSignature, manifest, manifestSignature) } }
    }

    @Test(
        "a manifest for another package, an older version than the catalog's, a bad signature, or with .., absolute, backslash or case-clashing paths: refused before anything is written"
    )
    func hostileManifestsAreRefused() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let phone = env.folder.appendingPathComponent("phone")
        let installed = phone.appendingPathComponent("tour")
        final class Box: @unchecked Sendable { var value: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.value = try await env.releaseThroughAPI(client) }
        let released = try #require(box.value)
        _ = try TrailClient.extract(zip: released.zip, to: installed)
        let (base, _) = try Self.manifest(released.zip)
        let key = SigningKey.generate()
        let otherKey = SigningKey.generate()
        let state = FakeServerState()
        let router = Router()
        router.get("/api/v1/catalog") { _, _ in
            let (body, signature, _, _) = state.snapshot
            return Response(
                status: .ok,
                headers: [.contentType: "application/json", HTTPField.Name("Catalog-Signature")!: signature],
                body: .init(byteBuffer: ByteBuffer(bytes: body))
            )
        }
        router.get("/api/v1/packages/{id}/versions/{n}/manifest") { _, _ in
            let (_, _, body, signature) = state.snapshot
            return Response(
                status: .ok,
                headers: [.contentType: "application/json", HTTPField.Name("Manifest-Signature")!: signature],
                body: .init(byteBuffer: ByteBuffer(bytes: body))
            )
        }
        @Sendable func serve(catalogVersion: Int, manifest: Manifest, signedBy signer: SigningKey) throws {
            let entry: [String: Any] = [
                "id": released.packageId, "site": "alpha", "name": "Tour", "version": catalogVersion, "size": 1000,
                "sha256": String(repeating: "a", count: 64), "url": "http://x/zip", "manifestURL": "http://x/manifest",
            ]
            let catalog = try JSONSerialization.data(withJSONObject: [
                "catalogVersion": 9, "generatedAt": Manifest.timestamp(Date()), "expiresAt": Manifest.timestamp(Date().addingTimeInterval(86_400)),
                "packages": [entry],
            ])
            let bytes = try manifest.encoded()
            state.set(
                catalog: catalog,
                catalogSignature: try key.sign(catalog).base64EncodedString(),
                manifest: bytes,
                manifestSignature: try signer.sign(bytes).base64EncodedString()
            )
        }
        func withPath(_ path: String, clash: Bool = false) -> Manifest {
            var manifest = base
            manifest.version = 2
            manifest.waypoints[0].assets[0].path = path
            if clash { manifest.waypoints[0].assets[1].path = path.uppercased() }
            return manifest
        }
        var otherPackage = base
        otherPackage.packageId = "someone-else"
        otherPackage.version = 2
        var older = base
        older.version = 2
        let cases: [(String, Int, Manifest, SigningKey, UpdateError)] = [
            ("another package", 2, otherPackage, key, .wrongManifest("it is package someone-else")),
            ("older than the catalog's", 3, older, key, .wrongManifest("it is version 2, the catalog names 3")),
            ("signed by another key", 2, older, otherKey, .invalidSignature),
            ("..", 2, withPath("waypoints/../../escape.png"), key, .unsafePath("waypoints/../../escape.png")),
            ("absolute", 2, withPath("/etc/escape.png"), key, .unsafePath("/etc/escape.png")),
            ("backslash", 2, withPath("waypoints\\escape.png"), key, .unsafePath("waypoints\\escape.png")),
            ("case clash", 2, withPath("waypoints/01-a/same.png", clash: true), key, .unsafePath("WAYPOINTS/01-A/SAME.PNG")),
        ]
        try await Application(router: router).testLive { client in
            let trail = TrailClient(baseURL: URL(string: "http://localhost:\(try #require(client.port))")!)
            for (name, catalogVersion, manifest, signer, expected) in cases {
                try serve(catalogVersion: catalogVersion, manifest: manifest, signedBy: signer)
                await #expect(throws: expected, "\(name)") {
                    try await trail.update(packageId: released.packageId, installedAt: installed, pinnedPublicKey: key.publicKeyBase64)
                }
                try Self.expectFolder(installed, is: released.zip)
                let written = try FileManager.default.contentsOfDirectory(atPath: phone.path).filter { $0 != "tour" }
                #expect(written.isEmpty, "\(name): \(written)")
            }
        }
    }
}
