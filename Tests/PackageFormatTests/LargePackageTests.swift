import Foundation
import PackageFormat
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let environment = ProcessInfo.processInfo.environment

/// A tour whose media are the given files (all `video/mp4`, stored), several per waypoint.
private func manifestForFiles(_ files: [(path: String, url: URL)], hashes: [String: (String, Int64)]) -> Manifest {
    var waypoints: [Manifest.Waypoint] = []
    let perWaypoint = 4
    for (index, chunk) in stride(from: 0, to: files.count, by: perWaypoint).enumerated() {
        let slice = files[chunk..<min(chunk + perWaypoint, files.count)]
        waypoints.append(
            Manifest.Waypoint(
                name: "Stop \(index + 1)",
                order: index + 1,
                coordinates: .init(latitude: 44.4, longitude: -122.1 + Double(index) * 0.001),
                description: "",
                assets: slice.map { file in
                    let (sha, size) = hashes[file.path]!
                    return Manifest.Asset(type: .video, path: file.path, mimeType: "video/mp4", size: size, sha256: sha)
                }
            )
        )
    }
    return Manifest(
        packageId: "large",
        version: 1,
        createdAt: "2026-11-22T10:00:00Z",
        packageName: "Large",
        park: "Park",
        mapName: "large",
        bounds: .init(north: 45, south: 44, east: -121, west: -123),
        description: "",
        waypoints: waypoints
    )
}

/// Peak resident set size of this process, in bytes (Linux).
private func peakRSS() -> Int64? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kib = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
        return kib.map { $0 * 1024 }
    }
    return nil
}

/// Resets the peak RSS counter (Linux 4.0+: writing 5 to clear_refs).
private func resetPeakRSS() {
    try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
}

@Suite("Large packages")
struct LargePackageTests {
    /// Writes more than 4 GiB into the zip: a sparse 4 GiB + 4 MiB file (cheap to make and
    /// read) is stored, and a small file comes after it, so the zip needs ZIP64 sizes in the
    /// first entry, a ZIP64 offset in the central directory and a ZIP64 end record.
    @Test(
        .enabled(if: environment["TRAIL_SLOW_TESTS"] == "1", "set TRAIL_SLOW_TESTS=1 (CI does)"),
        .timeLimit(.minutes(20))
    )
    func zip64PackageOver4GiB() async throws {
        try await DiskHeavyLock.hold { try await writeAndReadBack() }
    }

    func writeAndReadBack() async throws {
        let folder = try TemporaryFolder("zip64")
        defer { folder.remove() }
        let big = folder.file("big.mp4")
        let bigSize: Int64 = (4 << 30) + (4 << 20)
        _ = FileManager.default.createFile(atPath: big.path, contents: nil)
        let handle = try FileHandle(forWritingTo: big)
        try handle.write(contentsOf: Data([0, 0, 0, 0x20]) + Data("ftypisom".utf8))
        try handle.seek(toOffset: UInt64(bigSize) - 8)
        try handle.write(contentsOf: Data("THE-END!".utf8))
        try handle.close()
        let small = folder.file("after.mp4")
        try Data("a file after the 4 GiB mark".utf8).write(to: small)

        let files = [(path: "waypoints/01-stop-1/big.mp4", url: big), (path: "waypoints/01-stop-1/zz-after.mp4", url: small)]
        var hashes: [String: (String, Int64)] = [:]
        for file in files {
            let (sha, size) = try await offPool { try PackageHashing.sha256(ofFileAt: file.url) }
            hashes[file.path] = (sha, size)
        }
        #expect(hashes[files[0].path]?.1 == bigSize)
        let manifest = manifestForFiles(files, hashes: hashes)
        let key = SigningKey.generate()
        let zip = folder.file("large.zip")
        let started = Date()
        let built = try await offPool {
            try PackageBuilder.build(
                manifest: manifest,
                geoJSON: try TourGeoJSON.make(manifest: manifest),
                media: files.map { PackageEntrySource(path: $0.path, fileURL: $0.url, mimeType: "video/mp4") },
                tilesFile: nil,
                signingKey: key,
                to: zip
            )
        }
        print("ZIP64 package: \(built.size) bytes in \(Date().timeIntervalSince(started)) s")
        #expect(built.size > bigSize)

        // Python's zipfile: every entry, its size and SHA-256 (and CRC-32 on the way).
        let listing = try await offPool { try pythonZipListing(zip) }
        #expect(listing.zip64EndRecord)
        #expect(listing.entries.map(\.name) == ["manifest.json", "manifest.sig", "waypoints.geojson"] + files.map(\.path))
        for file in files {
            let entry = try #require(listing.entries.first { $0.name == file.path })
            #expect(entry.size == hashes[file.path]?.1)
            #expect(entry.sha256 == hashes[file.path]?.0)
            #expect(entry.method == 0)
        }
        #expect(listing.fileSHA256 == built.sha256)

        // Info-ZIP's test of every entry.
        let unzip = try await ChildProcess.run("unzip", ["-t", "-qq", zip.path])
        #expect(unzip.status == 0, "\(unzip.stderr)")

        // Our own verifier (and the ZIPFoundation reading it cross-checks).
        let report = try await offPool { PackageVerifier.verify(zipAt: zip, publicKeyBase64: key.publicKeyBase64) }
        #expect(report.problems == [])
        #expect(report.usesZIP64)
        #expect(report.verifiedBytes >= bigSize)
    }

    /// Benchmark, run by `scripts/bench/bench-package.sh` (TRAIL_BENCH=1): builds a package from the
    /// files in TRAIL_BENCH_MEDIA (a folder) into TRAIL_BENCH_OUTPUT and prints the time,
    /// throughput and RSS growth (the script compares the time with `zip -0 -r`). Checks that
    /// the zip holds all the media and that RSS grew by less than 64 MiB.
    @Test(.enabled(if: environment["TRAIL_BENCH"] == "1", "set TRAIL_BENCH=1 (scripts/bench/bench-package.sh)"))
    func benchmarkBuild() throws {
        let mediaFolder = try #require(
            environment["TRAIL_BENCH_MEDIA"].map { URL(fileURLWithPath: $0) },
            "TRAIL_BENCH_MEDIA must name the media folder"
        )
        let output = try #require(
            environment["TRAIL_BENCH_OUTPUT"].map { URL(fileURLWithPath: $0) },
            "TRAIL_BENCH_OUTPUT must name the zip to write"
        )
        let names = try FileManager.default.contentsOfDirectory(atPath: mediaFolder.path).sorted()
        // Four files per waypoint, in the waypoint folders the server would use.
        let files = names.enumerated().map { index, name in
            (
                path: PackageLayout.waypointFolder(order: index / 4 + 1, name: "Stop \(index / 4 + 1)") + "/"
                    + PackageLayout.safeFileName(name, fallbackExtension: "mp4"),
                url: mediaFolder.appendingPathComponent(name)
            )
        }
        // Asset hashes are known before building (the server has them from the upload).
        var hashes: [String: (String, Int64)] = [:]
        let hashStarted = Date()
        for file in files { hashes[file.path] = try PackageHashing.sha256(ofFileAt: file.url) }
        let hashSeconds = Date().timeIntervalSince(hashStarted)
        let manifest = manifestForFiles(files, hashes: hashes)
        let media = files.map { PackageEntrySource(path: $0.path, fileURL: $0.url, mimeType: "video/mp4") }
        let totalBytes = manifest.allAssets.reduce(Int64(0)) { $0 + $1.size }

        try? FileManager.default.removeItem(at: output)
        let rssBefore = peakRSS() ?? 0
        resetPeakRSS()
        let rssBaseline = peakRSS() ?? 0
        let started = Date()
        let built = try PackageBuilder.build(
            manifest: manifest,
            geoJSON: try TourGeoJSON.make(manifest: manifest),
            media: media,
            tilesFile: nil,
            signingKey: SigningKey.generate(),
            to: output,
            inputCheck: environment["TRAIL_BENCH_INPUT_CHECK"] == "size" ? .sizeOnly : .sha256
        )
        let seconds = Date().timeIntervalSince(started)
        let rssPeak = peakRSS() ?? 0
        let growth = rssPeak - rssBaseline
        let mib = Double(totalBytes) / 1_048_576
        print(
            String(
                format: "BENCH media_mib=%.0f files=%d build_seconds=%.2f throughput_mib_s=%.0f zip_bytes=%lld "
                    + "rss_before_mib=%.1f rss_peak_mib=%.1f rss_growth_mib=%.1f prehash_seconds=%.2f",
                mib,
                files.count,
                seconds,
                mib / seconds,
                built.size,
                Double(rssBefore) / 1_048_576,
                Double(rssPeak) / 1_048_576,
                Double(growth) / 1_048_576,
                hashSeconds
            )
        )
        #expect(built.size > totalBytes)
        #expect(growth < 64 << 20, "RSS grew by \(growth / 1_048_576) MiB")
    }
}
