import Foundation
import Hummingbird
import HummingbirdTesting
import PackageFormat
import Testing
import TrailClient
@testable import TrailServer

/// `TrailClient.update` against a live server: only changed files travel, the folder is never a mix of versions.
@Suite struct ClientUpdateTests {
    struct Setup {
        let env: PublishEnv
        let trail: TrailClient
        let folder: URL
        let first: ReleasedPackage
        var installed: URL { folder.appendingPathComponent("tour") }
    }

    /// A live server with version 1 released and installed (extracted) on the "phone".
    func withInstalled(videoSize: Int? = nil, _ body: @Sendable (Setup, any TestClientProtocol) async throws -> Void) async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        let folder = env.folder.appendingPathComponent("phone")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await env.app.application.test(.live) { client in
            let port = try #require(client.port)
            let first = try await env.releaseThroughAPI(client, videoSize: videoSize)
            let setup = Setup(env: env, trail: TrailClient(baseURL: URL(string: "http://localhost:\(port)")!), folder: folder, first: first)
            _ = try TrailClient.extract(zip: first.zip, to: setup.installed)
            try await body(setup, client)
        }
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
            let (old, _) = try Self.manifest(setup.first.zip), (new, _) = try Self.manifest(second.zip)
            let held = Set(old.listedFiles.map(\.sha256))
            let fresh = new.listedFiles.filter { !held.contains($0.sha256) }
            let result = try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: setup.env.publicKey)
            #expect(result.fromVersion == 1 && result.toVersion == 2)
            #expect(result.fetchedFiles == fresh.count && result.reusedFiles == new.listedFiles.count - fresh.count)
            #expect(result.downloadedBytes == fresh.reduce(0) { $0 + ($1.size ?? 0) })
            #expect(result.downloadedBytes < second.size / 2, "\(result.downloadedBytes) of \(second.size)")
            try Self.expectFolder(setup.installed, is: second.zip)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: setup.folder.path).filter { $0 != "tour" }
            #expect(leftovers.isEmpty, "\(leftovers)")
            let again = try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: setup.env.publicKey)
            #expect(again.fromVersion == 2 && again.toVersion == 2 && again.downloadedBytes == 0)

            // A rollback on the server: the same flow, down to version 1.
            let manager = try setup.env.token("manager@test.org")
            #expect(try await client.managePackage(setup.first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            let down = try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: setup.env.publicKey)
            let heldNow = Set(new.listedFiles.map(\.sha256))
            let back = old.listedFiles.filter { !heldNow.contains($0.sha256) }.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            #expect(down.toVersion == 1 && down.downloadedBytes == back, "only what version 2 lacks (its GeoJSON): \(down.downloadedBytes) vs \(back)")
            try Self.expectFolder(setup.installed, is: setup.first.zip)
        }
    }

    @Test("a file served with one byte flipped is refused and the installed version stays whole; fixed, the next call completes")
    func tamperedFileIsRefused() async throws {
        try await withInstalled { setup, client in
            let second = try await setup.env.releaseThroughAPI(client, seed: 31)
            let (old, _) = try Self.manifest(setup.first.zip), (new, _) = try Self.manifest(second.zip)
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
            let result = try await setup.trail.update(packageId: setup.first.packageId, installedAt: setup.installed, pinnedPublicKey: setup.env.publicKey)
            #expect(result.toVersion == 2)
            try Self.expectFolder(setup.installed, is: second.zip)
        }
    }

    @Test("cancelled during a file, and stopped after the downloads before the swap: the old version stays whole, the next call completes")
    func interruptedUpdatesResume() async throws {
        try await withInstalled { setup, client in
            let second = try await setup.env.releaseThroughAPI(client, seed: 31, videoSize: 6_000_000)
            let key = setup.env.publicKey, trail = setup.trail, installed = setup.installed, id = setup.first.packageId
            // 1. Cancelled once a megabyte of the video has arrived.
            let task = Task<UpdateResult, any Error> {
                try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key) { step in
                    if step.downloadedBytes >= 1_000_000 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            await #expect(throws: (any Error).self) { _ = try await task.value }
            try Self.expectFolder(installed, is: setup.first.zip)
            // 2. The downloads complete but the swap never happens (as if the app died there): the staged folder is
            //    complete and the installed one untouched.
            let staged = setup.folder.appendingPathComponent(".tour.update-v2")
            #expect(FileManager.default.fileExists(atPath: staged.path), "the staged folder is kept for the next call")
            // 3. The next call continues: the video's bytes so far are not fetched again.
            let result = try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key)
            #expect(result.toVersion == 2)
            let (new, _) = try Self.manifest(second.zip), (old, _) = try Self.manifest(setup.first.zip)
            let held = Set(old.listedFiles.map(\.sha256))
            let all = new.listedFiles.filter { !held.contains($0.sha256) }.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
            #expect(result.downloadedBytes < all, "resumed: \(result.downloadedBytes) of \(all)")
            try Self.expectFolder(installed, is: second.zip)
            // 4. A crash between the two renames of the swap: the next call puts the folder back before anything else.
            let retired = setup.folder.appendingPathComponent(".tour.retired")
            try FileManager.default.moveItem(at: installed, to: retired)
            let noop = try await trail.update(packageId: id, installedAt: installed, pinnedPublicKey: key)
            #expect(noop.toVersion == 2 && noop.downloadedBytes == 0)
            try Self.expectFolder(installed, is: second.zip)
        }
    }
}
