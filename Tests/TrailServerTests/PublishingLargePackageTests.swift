import Foundation
import GRDB
import MalwareScan
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

#if canImport(Glibc)
import Glibc
#endif

/// A package above 4 GiB built by the server's build service (stage, re-scan with libclamav, write, verify), read back
/// by Python's zipfile and `unzip -t`: ZIP64 end to end. Slow: CI runs it (TRAIL_SLOW_TESTS=1).
@Suite("Publishing: a package above 4 GiB (ZIP64)", .scratch)
struct PublishingLargePackageTests {
    /// Three sparse "videos" of 1.5 GiB and a bit (4.5 GiB in all): an MP4 header and a few distinct bytes at both ends,
    /// holes in between. The builder and the scanner read every byte.
    static let fileSize: Int64 = (3 << 29) + (1 << 20)
    static let fileCount = 3

    static func writeSparseVideo(_ url: URL, size: Int64, seed: UInt8) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let header = Data([0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8))
        try handle.write(contentsOf: header + Data((0..<64).map { UInt8(truncatingIfNeeded: Int($0) &* 37 &+ Int(seed)) }))
        try handle.seek(toOffset: UInt64(size) / 2)
        try handle.write(contentsOf: Data("middle of file \(seed)".utf8))
        try handle.seek(toOffset: UInt64(size) - 16)
        try handle.write(contentsOf: Data(String(format: "END-OF-FILE-%04d", Int(seed)).utf8))
    }

    @Test(
        .enabled(if: ProcessInfo.processInfo.environment["TRAIL_SLOW_TESTS"] == "1", "slow: set TRAIL_SLOW_TESTS=1 (CI and scripts/test.sh do)"),
        .timeLimit(.minutes(20))
    )
    func packageAbove4GiB() async throws {
        try await DiskHeavyLock.hold { try await buildAndReadBack() }
    }

    func buildAndReadBack() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let clock = ContinuousClock()
        var timings: [(String, Duration)] = []
        var mark = clock.now
        func lap(_ name: String) {
            let now = clock.now
            timings.append((name, now - mark))
            mark = now
        }

        // The files land in data/assets/<sha256> as clean assets of the seed's waypoint, as the scan service leaves them.
        var hashes: [(sha: String, size: Int64)] = []
        for index in 0..<Self.fileCount {
            let temporary = env.paths.assets.appendingPathComponent("incoming-\(index)")
            try Self.writeSparseVideo(temporary, size: Self.fileSize + Int64(index), seed: UInt8(index + 1))
            let (sha, size) = try PackageHashing.sha256(ofFileAt: temporary)
            #expect(rename(temporary.path, env.paths.assets.appendingPathComponent(sha).path) == 0)
            hashes.append((sha, size))
        }
        lap("make and hash the inputs")
        let total = hashes.reduce(Int64(0)) { $0 + $1.size }
        #expect(total > Int64(UInt32.max), "the inputs must exceed 4 GiB")
        for (index, file) in hashes.enumerated() {
            try await env.sql(
                """
                INSERT INTO asset (waypointId, position, kind, originalName, mimeType, size, sha256, scanStatus, scanDetail, storedPath, createdAt)
                VALUES (?, ?, 'video', ?, 'video/mp4', ?, ?, 'clean', '', ?, ?)
                """,
                [env.seed.waypointId, index + 1, "part \(index + 1).mp4", file.size, file.sha, "assets/\(file.sha)", Date().timeIntervalSince1970]
            )
        }

        // The parts are bare test videos without captions: this test is about ZIP64, so the site only recommends them.
        try await env.sql("UPDATE site SET mediaAccessibility = 'recommended' WHERE id = ?", [env.seed.alphaId])

        // Through the server's build service: stage, re-scan (libclamav reads all 4.5 GiB), write, verify.
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        #expect(await env.buildAll() == 1)
        lap("build (stage, re-scan, write, verify)")
        let built = try await env.request(request.id)
        try #require(built.state == .pending, "the build failed: \(built.failureReason ?? "")")
        let zip = env.stagedZip(request.id)
        let size = try #require(built.zipSize)
        #expect(size > Int64(UInt32.max))

        // Python's zipfile: every entry, size and SHA-256 against the manifest, CRCs, the ZIP64 end record; then unzip -t.
        let listing = try await PythonZipListing.read(zip, timeout: .seconds(900))
        lap("Python zipfile read-back")
        #expect(listing.zip64, "no ZIP64 end of central directory record")
        #expect(listing.testzip == nil)
        #expect(listing.fileSHA256 == built.zipSha256)
        #expect(listing.fileSize == size)
        let media = listing.entries.filter { $0.name.hasPrefix("waypoints/") }
        #expect(media.count == Self.fileCount)
        #expect(Set(media.map(\.sha256)) == Set(hashes.map(\.sha)))
        #expect(Set(media.map(\.size)) == Set(hashes.map(\.size)))
        #expect(media.allSatisfy { $0.method == PythonZipListing.stored })
        #expect(listing.entries.map(\.name) == ["manifest.json", "manifest.sig", "waypoints.geojson"] + media.map(\.name))
        for file in listing.manifestFiles {
            let entry = listing.entries.first { $0.name == file.path }
            #expect(entry?.size == file.size && entry?.sha256 == file.sha256, "\(file.path)")
        }
        let unzip = try await ChildProcess.run("/usr/bin/unzip", ["-t", "-qq", zip.path], timeout: .seconds(900))
        lap("unzip -t")
        #expect(unzip.status == 0, "unzip -t: \(unzip.stdout) \(unzip.stderr)")

        let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: env.publicKey)
        #expect(report.isValid, "\(report.problems)")
        #expect(report.usesZIP64)
        lap("PackageVerifier")
        print("ZIP64 package of \(size) bytes: " + timings.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
    }
}
