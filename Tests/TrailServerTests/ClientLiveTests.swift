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

/// TrailClient (URLSession, as an app uses it) against a live server on a real socket, with packages released
/// through the real flow; and `trail-companion package verify` on the results.
@Suite("TrailClient against a live server", .serialized, .scratch)
struct ClientLiveTests {
    struct Live {
        let env: TestEnv
        let client: any TestClientProtocol
        let trail: TrailClient
        let baseURL: String
        let released: ReleasedPackage
        let folder: URL

        func file(_ name: String) -> URL { folder.appendingPathComponent(name) }
    }

    /// A live server with one released package (with a video of `videoSize` bytes, so downloads take many chunks).
    func withLiveRelease(videoSize: Int? = nil, _ body: @Sendable (Live) async throws -> Void) async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let folder = env.folder.appendingPathComponent("client")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The release goes through the router in process (no sockets): the live test client gives up after its read
        // time-out without an answer, and an upload's fsync can wait longer than that behind the disk writes of the tests
        // running beside this one, even for a small upload, while other suites write gigabytes.
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client, videoSize: videoSize) }
        let released = try #require(box.released)
        try await env.app.application.testLive { client in
            let port = try #require(client.port)
            let baseURL = "http://localhost:\(port)"
            try await body(
                Live(
                    env: env,
                    client: client,
                    trail: TrailClient(baseURL: URL(string: baseURL)!),
                    baseURL: baseURL,
                    released: released,
                    folder: folder
                )
            )
        }
    }

    // MARK: Listing

    @Test func listsAndMetadata() async throws {
        try await withLiveRelease { live in
            let sites = try await live.trail.sites()
            #expect(sites.first { $0.slug == "alpha" }?.packageCount == 1)
            let packages = try await live.trail.packages(site: "alpha")
            #expect(packages.map(\.id) == [live.released.packageId])
            #expect(packages.first?.sha256 == live.released.sha256)
            #expect(packages.first?.size == live.released.size)
            // Released a moment ago: the ISO 8601 `updatedAt` decodes to a `Date` (seconds, no fraction).
            #expect(try abs(#require(packages.first).updatedAt.timeIntervalSinceNow) < 600)
            let detail = try await live.trail.package(id: live.released.packageId)
            #expect(detail.manifest.packageId == live.released.packageId)
            #expect(detail.version == 1 && detail.waypointCount == 1 && detail.park == "Alpha District")
            #expect(
                try await live.trail.packageHash(id: live.released.packageId)
                    == PackageHash(
                        sha256: live.released.sha256,
                        version: 1,
                        size: live.released.size
                    )
            )
            #expect(try await live.trail.releasedVersion(packageId: live.released.packageId, version: 1).sha256 == live.released.sha256)
            let key = try await live.trail.signingKey()
            #expect(key.algorithm == "ed25519" && key.publicKeyBase64 == live.env.publicKey)
            // Update checks: 304 while nothing changed.
            guard case let .modified(list, etag) = try await live.trail.packages(site: "alpha", ifNoneMatch: nil) else {
                Issue.record("no list")
                return
            }
            #expect(list == packages)
            let etagValue = try #require(etag)
            guard case .notModified = try await live.trail.packages(site: "alpha", ifNoneMatch: etagValue) else {
                Issue.record("expected 304 for an unchanged list")
                return
            }
            // Errors come back typed, with the server's code.
            await #expect {
                _ = try await live.trail.package(id: "no-such-package")
            } throws: { error in
                guard case let .http(status, code, message)? = error as? TrailClientError else { return false }
                return status == 404 && code == "not_found" && message?.isEmpty == false
            }
            await #expect {
                _ = try await live.trail.packages(site: "no-such-site")
            } throws: { ($0 as? TrailClientError)?.status == 404 }
        }
    }

    // MARK: Visitor events

    @Test func sendsVisitorEventsThatAreCountedAndHearsWhyABatchIsRefused() async throws {
        try await withLiveRelease { live in
            let detail = try await live.trail.package(id: live.released.packageId)
            let stop = try #require(detail.manifest.waypoints.first?.id)
            let day = VisitorEvent.day()
            let events = [
                VisitorEvent(kind: .opened, packageId: live.released.packageId, version: 1, source: "north-gate", day: day),
                VisitorEvent(kind: .stopPlayed, packageId: live.released.packageId, version: 1, waypointId: stop, day: day),
            ]
            #expect(try await live.trail.sendEvents(events) == EventsAnswer(counted: 2, dropped: 0))
            let stored = try await live.env.database.read {
                try Int.fetchOne($0, sql: "SELECT SUM(count) FROM visitCount WHERE packageId = ?", arguments: [live.released.packageId])
            }
            #expect(stored == 2)
            await #expect {
                try await live.trail.sendEvents([
                    VisitorEvent(kind: .stopOpened, packageId: live.released.packageId, version: 1, day: day)
                ])
            } throws: { error in
                guard case let .http(status, code, message)? = error as? TrailClientError else { return false }
                return status == 422 && code == "validation_failed" && message?.contains("waypointId") == true
            }
        }
    }

    // MARK: Resume

    @Test func cancelledDownloadResumesAndVerifies() async throws {
        try await withLiveRelease(videoSize: 6_000_000) { live in
            let released = live.released
            #expect(released.size > 6_000_000)
            let target = live.file("tour.zip")
            let cutAt: Int64 = 1_000_000
            let first = await Self.downloadCancelled(live.trail, released: released, to: target, after: cutAt)
            guard case let .cancelled(received)? = first else {
                Issue.record("expected a cancelled download, got \(String(describing: first))")
                return
            }
            let partial = try Self.size(of: target)
            #expect(partial == received)
            #expect(partial >= cutAt && partial < released.size, "partial file of \(partial) bytes")
            #expect(FileManager.default.fileExists(atPath: target.path + ".resume"), "no record of the partial's ETag")
            let zip = try Data(contentsOf: released.zip)
            #expect(try Data(contentsOf: target) == zip.prefix(Int(partial)))

            let progress = ProgressLog()
            let result = try await live.trail.download(
                packageId: released.packageId,
                to: target,
                expectedSize: released.size,
                expectedSHA256: released.sha256,
                progress: { progress.add($0) }
            )
            #expect(result.status == 206)
            #expect(result.resumedFrom == partial)
            #expect(!result.restarted)
            #expect(result.sha256 == released.sha256 && result.size == released.size)
            #expect(result.packageVersion == 1)
            #expect(result.etag == released.etag)
            #expect(try Data(contentsOf: target) == zip)
            #expect(!FileManager.default.fileExists(atPath: target.path + ".resume"))
            let steps = progress.all
            #expect(steps.first.map { $0.resumedFrom == partial && $0.receivedBytes > partial } == true)
            #expect(steps.last?.receivedBytes == released.size)
            #expect(zip.count > 0 && steps.map(\.receivedBytes) == steps.map(\.receivedBytes).sorted())

            // Verified completely, extracted, and reported.
            let check = TrailClient.verify(zip: target, publicKey: live.env.publicKey, expectedSHA256: released.sha256)
            #expect(check.isAuthentic, "\(check.problems)")
            let extracted = try TrailClient.extract(zip: target, to: live.file("tour"))
            #expect(extracted.files.contains { $0.hasSuffix(".mp4") })
            #expect(extracted.bytesWritten > 6_000_000)
            let answer = try await live.trail.reportVerified(packageId: released.packageId, sha256: result.sha256, version: 1)
            #expect(answer.valid)
            #expect(answer.expected == PackageHash(sha256: released.sha256, version: 1, size: released.size))
            await #expect(try live.env.verifiedCount(released.packageId, version: 1) == 1)
            let wrong = try await live.trail.reportVerified(packageId: released.packageId, sha256: String(repeating: "1", count: 64), version: 1)
            #expect(!wrong.valid)
            await #expect(try live.env.verifiedCount(released.packageId, version: 1) == 1)
            // A finished file downloaded again: nothing to fetch, hash checked.
            let again = try await live.trail.download(
                packageId: released.packageId,
                to: target,
                expectedSize: released.size,
                expectedSHA256: released.sha256,
                etag: released.etag
            )
            #expect(again.sha256 == released.sha256)
        }
    }

    @Test func connectionCutMidwayResumes() async throws {
        try await withLiveRelease(videoSize: 3_000_000) { live in
            let released = live.released
            try await LyingServer.run(released: released) { lying in
                let target = live.file("cut.zip")
                await #expect {
                    _ = try await live.trail.download(
                        from: URL(string: "\(lying)/cut")!,
                        to: target,
                        expectedSize: released.size,
                        expectedSHA256: released.sha256
                    )
                } throws: { error in
                    switch error as? DownloadError {
                    case .transport?, .incomplete?: return true
                    default: return false
                    }
                }
                let partial = try Self.size(of: target)
                #expect(partial > 0 && partial < released.size, "kept \(partial) bytes")
                // Resumed from the real server: 206 from where the cut happened, spliced only because the ETag matched.
                let result = try await live.trail.download(
                    packageId: released.packageId,
                    to: target,
                    expectedSize: released.size,
                    expectedSHA256: released.sha256
                )
                #expect(result.status == 206)
                #expect(result.resumedFrom == partial)
                #expect(try Data(contentsOf: target) == Data(contentsOf: released.zip))
            }
        }
    }

    @Test func newVersionBetweenRestartsTheResume() async throws {
        try await withLiveRelease(videoSize: 3_000_000) { live in
            let v1 = live.released
            let target = live.file("tour.zip")
            guard case .cancelled? = await Self.downloadCancelled(live.trail, released: v1, to: target, after: 500_000) else {
                Issue.record("the first download was not cut")
                return
            }
            let partial = try Self.size(of: target)
            #expect(partial > 0 && partial < v1.size)

            let v2 = try await live.env.releaseThroughAPI(live.client, seed: 77)
            #expect(v2.version == 2 && v2.sha256 != v1.sha256)

            // With the old listing (size and SHA-256 of version 1) on the latest URL: the server sends version 2 whole,
            // the client sees another version and stops; the partial file is left as it was, never spliced.
            await #expect(throws: DownloadError.checksumMismatch(expected: v1.sha256, actual: v2.sha256)) {
                _ = try await live.trail.download(packageId: v1.packageId, to: target, expectedSize: v1.size, expectedSHA256: v1.sha256)
            }
            #expect(try Self.size(of: target) == partial)

            // With the new listing: If-Range carries version 1's ETag, the server answers 200 with version 2, the client
            // starts from zero.
            let result = try await live.trail.download(packageId: v1.packageId, to: target, expectedSize: v2.size, expectedSHA256: v2.sha256)
            #expect(result.status == 200)
            #expect(result.restarted)
            #expect(result.resumedFrom == 0)
            #expect(result.packageVersion == 2)
            #expect(result.sha256 == v2.sha256)
            #expect(try Data(contentsOf: target) == Data(contentsOf: v2.zip))
            #expect(TrailClient.verify(zip: target, publicKey: live.env.publicKey).isAuthentic)

            // Version 1's immutable URL still resumes a version 1 partial after version 2 came out.
            let old = live.file("v1.zip")
            guard case .cancelled? = await Self.downloadCancelled(live.trail, released: v1, to: old, after: 500_000, versioned: true) else {
                Issue.record("the versioned download was not cut")
                return
            }
            let resumed = try await live.trail.download(
                from: live.trail.apiURL("packages/\(v1.packageId)/versions/1/download"),
                to: old,
                expectedSize: v1.size,
                expectedSHA256: v1.sha256
            )
            #expect(resumed.status == 206 && resumed.resumedFrom > 0)
            #expect(try Data(contentsOf: old) == Data(contentsOf: v1.zip))
            // downloadPackage(id:) takes whatever is current.
            let current = try await live.trail.downloadPackage(id: v1.packageId, to: live.file("current.zip"))
            #expect(current.sha256 == v2.sha256 && current.packageVersion == 2)
        }
    }

    // MARK: Tampering

    @Test func tamperedPackagesFail() async throws {
        try await withLiveRelease { live in
            let released = live.released
            let good = live.file("good.zip")
            let downloaded = try await live.trail.downloadPackage(id: released.packageId, to: good)
            #expect(downloaded.sha256 == released.sha256)
            let key = try await live.trail.signingKey().publicKeyBase64
            #expect(TrailClient.verify(zip: good, publicKey: key, expectedSHA256: released.sha256).isAuthentic)

            // One byte flipped inside a media entry: the zip's SHA-256 and the entry's hash fail.
            let flipped = live.file("flipped.zip")
            try ZipTamper.flipByte(of: good, at: try ZipTamper.dataOffset(in: good, entrySuffix: ".png") + 200, to: flipped)
            let flippedCheck = TrailClient.verify(zip: flipped, publicKey: key, expectedSHA256: released.sha256)
            #expect(!flippedCheck.isValid)
            #expect(flippedCheck.sha256Matches == false)
            #expect(flippedCheck.report.issues.contains { if case .checksumMismatch = $0 { true } else { false } }, "\(flippedCheck.problems)")
            #expect(try await !live.trail.reportVerified(packageId: released.packageId, sha256: flippedCheck.sha256, version: 1).valid)

            // manifest.json changed (still valid JSON): the signature fails.
            let edited = live.file("manifest.zip")
            try await ZipTamper.changeManifest(of: good, to: edited)
            let editedCheck = TrailClient.verify(zip: edited, publicKey: key)
            #expect(!editedCheck.isValid)
            #expect(editedCheck.signatureValid == false)
            #expect(editedCheck.report.issues.contains(.signatureMismatch))

            // `../` entries, an absolute path and a symbolic link: the extractor refuses and writes nothing anywhere.
            let marker = "live-\(UUID().uuidString.prefix(8))"
            let hostile = live.file("hostile.zip")
            try await ZipTamper.addHostileEntries(to: good, destination: hostile, marker: marker)
            let work = live.file("work")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            #expect {
                try TrailClient.extract(zip: hostile, to: work.appendingPathComponent("tour"))
            } throws: { error in
                switch error as? ExtractionError {
                case .unsafePath?, .symbolicLink?: return true
                default: return false
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: "/tmp/\(marker)-absolute.txt"))
            #expect(!FileManager.default.fileExists(atPath: live.folder.appendingPathComponent("\(marker)-up.txt").path))
            #expect(!FileManager.default.fileExists(atPath: live.folder.deletingLastPathComponent().appendingPathComponent("\(marker)-up2.txt").path))
            #expect(!TrailClient.verify(zip: hostile, publicKey: key).isValid)
            // The good one extracts.
            #expect(try TrailClient.extract(zip: good, to: work.appendingPathComponent("good")).files.count > 3)
        }
    }

    @Test func catalogChecks() async throws {
        try await withLiveRelease { live in
            let key = live.env.publicKey
            let first = try await live.trail.catalog(pinnedPublicKey: key, lastSeenVersion: nil)
            #expect(first.catalog.packages.map(\.id) == [live.released.packageId])
            #expect(first.catalog.packages.first?.sha256 == live.released.sha256)
            let version = first.catalog.catalogVersion
            #expect(try await live.trail.catalog(pinnedPublicKey: key, lastSeenVersion: version).catalog.catalogVersion == version)
            // The app has seen a newer catalog: this one is older (a replay), refused.
            await #expect(throws: CatalogError.olderThanLastSeen(received: version, lastSeen: version + 1)) {
                _ = try await live.trail.catalog(pinnedPublicKey: key, lastSeenVersion: version + 1)
            }
            // Past its expiry (the default lifetime is seven days).
            let later = Date().addingTimeInterval(live.env.config.catalogLifetime + 60)
            await #expect {
                _ = try await live.trail.catalog(pinnedPublicKey: key, lastSeenVersion: nil, now: later)
            } throws: { error in
                if case .expired? = error as? CatalogError { return true }
                return false
            }
            // Pinned to another key: refused.
            await #expect(throws: CatalogError.invalidSignature) {
                _ = try await live.trail.catalog(pinnedPublicKey: SigningKey.generate().publicKeyBase64, lastSeenVersion: nil)
            }
            // A change on the server: a newer version, accepted over the last seen one.
            let manager = try await live.env.token("manager@test.org")
            #expect(try await live.client.managePackage(live.released.packageId, "unpublish", token: manager).status == .ok)
            let next = try await live.trail.catalog(pinnedPublicKey: key, lastSeenVersion: version)
            #expect(next.catalog.catalogVersion == version + 1)
            #expect(next.catalog.packages.isEmpty)
            await #expect {
                _ = try await live.trail.package(id: live.released.packageId)
            } throws: { ($0 as? TrailClientError)?.status == 410 }
        }
    }

    @Test func serverSendingMoreThanListedIsCutOff() async throws {
        try await withLiveRelease { live in
            try await LyingServer.run(released: live.released) { lying in
                // An endless body without Content-Length.
                let endless = live.file("endless.zip")
                let started = ContinuousClock.now
                await #expect(throws: DownloadError.tooManyBytes(limit: 100_000)) {
                    _ = try await live.trail.download(from: URL(string: "\(lying)/endless")!, to: endless, expectedSize: 100_000, expectedSHA256: nil)
                }
                #expect(ContinuousClock.now - started < .seconds(30))
                #expect(!FileManager.default.fileExists(atPath: endless.path), "the oversized download was kept")
                // A Content-Length larger than listed: refused before the body.
                let announced = live.file("announced.zip")
                await #expect(throws: DownloadError.tooManyBytes(limit: 1000)) {
                    _ = try await live.trail.download(
                        from: URL(string: "\(lying)/announced")!,
                        to: announced,
                        expectedSize: 1000,
                        expectedSHA256: nil
                    )
                }
                #expect(!FileManager.default.fileExists(atPath: announced.path))
                // A 206 for another range than asked for is never appended.
                let partial = live.file("range.zip")
                try Data(repeating: 7, count: 500).write(to: partial)
                await #expect {
                    _ = try await live.trail.download(
                        from: URL(string: "\(lying)/wrong-range")!,
                        to: partial,
                        expectedSize: 1000,
                        expectedSHA256: nil,
                        etag: "\"e\""
                    )
                } throws: { error in
                    if case .unexpectedPartialResponse? = error as? DownloadError { return true }
                    return false
                }
                #expect(!FileManager.default.fileExists(atPath: partial.path))
                // A body shorter than listed is incomplete (kept for a resume).
                let short = live.file("short.zip")
                await #expect(throws: DownloadError.incomplete(received: 10, expected: 1000)) {
                    _ = try await live.trail.download(from: URL(string: "\(lying)/short")!, to: short, expectedSize: 1000, expectedSHA256: nil)
                }
            }
        }
    }

    // MARK: package verify (the CLI)

    @Test func packageVerifyCommand() async throws {
        let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the CLI first (swift build --build-tests)")
        try await withLiveRelease { live in
            let key = live.env.publicKey
            let good = live.file("good.zip")
            _ = try await live.trail.downloadPackage(id: live.released.packageId, to: good)
            let flipped = live.file("flipped.zip")
            try ZipTamper.flipByte(of: good, at: try ZipTamper.dataOffset(in: good, entrySuffix: ".png") + 100, to: flipped)
            let edited = live.file("edited.zip")
            try await ZipTamper.changeManifest(of: good, to: edited)
            let hostile = live.file("hostile.zip")
            try await ZipTamper.addHostileEntries(to: good, destination: hostile, marker: "cli")
            let truncated = live.file("truncated.zip")
            try Data(contentsOf: good).prefix(1000).write(to: truncated)

            func verify(_ arguments: [String]) async throws -> ChildProcess.Output {
                try await ChildProcess.run(binary, ["package", "verify"] + arguments, timeout: .seconds(60))
            }
            for source in [["--key", key], ["--server", live.baseURL]] {
                let ok = try await verify([good.path] + source)
                #expect(ok.status == 0, "\(source): \(ok.stdout) \(ok.stderr)")
                #expect(ok.stdout.contains("Result: VALID"), "\(ok.stdout)")
                #expect(ok.stdout.contains(live.released.sha256))
                #expect(ok.stdout.contains("[ok]   manifest.sig is a valid Ed25519 signature"))
                #expect(!ok.stdout.contains("[FAIL]"))
                if source[0] == "--server" { #expect(ok.stdout.contains("[ok]   the server's version 1"), "\(ok.stdout)") }

                for (zip, expected) in [
                    (flipped, "SHA-256"), (edited, "not a valid signature"), (hostile, "unsafe entry path"),
                    (truncated, "cannot be read"),
                ] {
                    let bad = try await verify([zip.path] + source)
                    #expect(bad.status == 1, "\(zip.lastPathComponent) \(source[0]): exit \(bad.status)\n\(bad.stdout)\(bad.stderr)")
                    #expect(bad.stdout.contains("Result: INVALID"), "\(bad.stdout)")
                    #expect(bad.stdout.contains(expected), "\(zip.lastPathComponent): \(bad.stdout)")
                    #expect(bad.stdout.contains("[FAIL]"))
                }
            }
            // With --server, a zip that differs from the released copy fails even on that count alone.
            let flippedServer = try await verify([flipped.path, "--server", live.baseURL])
            #expect(flippedServer.stdout.contains("[FAIL] the server's version 1 has SHA-256 \(live.released.sha256)"), "\(flippedServer.stdout)")
            // Another key: the signature fails.
            let otherKey = try await verify([good.path, "--key", SigningKey.generate().publicKeyBase64])
            #expect(otherKey.status == 1)
            #expect(otherKey.stdout.contains("not a valid signature"))
            // No key: integrity only, said plainly.
            let noKey = try await verify([good.path])
            #expect(noKey.status == 0)
            #expect(noKey.stdout.contains("signature NOT checked"))
            #expect(try await verify([flipped.path]).status == 1)
            // Unusable key or server: exit 2.
            #expect(try await verify([good.path, "--key", "not-a-key"]).status == 2)
            #expect(try await verify([good.path, "--server", "http://127.0.0.1:9"]).status == 2)
            #expect(try await verify([good.path, "--key", key, "--server", live.baseURL]).status != 0)
            #expect(try await verify([live.file("missing.zip").path, "--key", key]).status == 1)
        }
    }

    // MARK: Helpers

    static func size(of url: URL) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? -1
    }

    /// Starts a download of the latest (or versioned) URL and cancels its task once `bytes` have arrived.
    static func downloadCancelled(
        _ trail: TrailClient,
        released: ReleasedPackage,
        to target: URL,
        after bytes: Int64,
        versioned: Bool = false
    ) async -> DownloadError? {
        let canceller = Canceller()
        let url =
            versioned
            ? trail.apiURL("packages/\(released.packageId)/versions/\(released.version)/download")
            : trail.apiURL("packages/\(released.packageId)/download")
        let task = Task {
            try await trail.download(
                from: url,
                to: target,
                expectedSize: released.size,
                expectedSHA256: released.sha256,
                progress: { if $0.receivedBytes >= bytes { canceller.cancel() } }
            )
        }
        canceller.set(task)
        do {
            _ = try await task.value
            return nil
        } catch {
            return error as? DownloadError
        }
    }
}

/// Cancels a task from a progress callback (which may run before the task is known).
final class Canceller: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<DownloadResult, any Error>?
    private var wanted = false

    func set(_ task: Task<DownloadResult, any Error>) {
        let cancelNow = lock.withLock {
            self.task = task
            return wanted
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock {
            wanted = true
            return self.task
        }
        task?.cancel()
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [DownloadProgress] = []
    func add(_ step: DownloadProgress) { lock.withLock { steps.append(step) } }
    var all: [DownloadProgress] { lock.withLock { steps } }
}

/// A tiny server that misbehaves: cuts a download midway, sends more than listed, answers another range.
enum LyingServer {
    struct Cut: Error {}

    static func run(released: ReleasedPackage, _ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        let zipURL = released.zip
        let etag = released.etag
        router.get("/cut") { _, _ in
            let zip = try Data(contentsOf: zipURL)
            return Response(
                status: .ok,
                headers: [.contentType: "application/zip", .eTag: etag, .contentLength: "\(zip.count)"],
                body: ResponseBody(contentLength: zip.count) { writer in
                    try await writer.write(ByteBuffer(bytes: zip.prefix(zip.count / 2)))
                    throw Cut()
                }
            )
        }
        router.get("/endless") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/zip", .eTag: "\"endless\""],
                body: ResponseBody { writer in
                    let chunk = ByteBuffer(repeating: 0x41, count: 64 * 1024)
                    for _ in 0..<16_384 { try await writer.write(chunk) }  // at most 1 GiB, until the client hangs up
                    try await writer.finish(nil)
                }
            )
        }
        router.get("/announced") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/zip", .contentLength: "5000"],
                body: .init(byteBuffer: ByteBuffer(repeating: 0x42, count: 5000))
            )
        }
        router.get("/wrong-range") { _, _ in
            Response(
                status: .partialContent,
                headers: [
                    .contentType: "application/zip", .eTag: "\"e\"", .contentRange: "bytes 0-99/1000",
                    .contentLength: "100",
                ],
                body: .init(byteBuffer: ByteBuffer(repeating: 0x43, count: 100))
            )
        }
        router.get("/short") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/zip", .eTag: "\"s\""],
                body: .init(byteBuffer: ByteBuffer(repeating: 0x44, count: 10))
            )
        }
        try await Application(router: router).testLive { client in
            try await body("http://localhost:\(try #require(client.port))")
        }
    }
}
