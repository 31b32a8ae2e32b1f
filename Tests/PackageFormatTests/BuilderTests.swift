import Foundation
import PackageFormat
import TestSupport
import Testing

@Suite("PackageBuilder")
struct BuilderTests {
    @Test func pythonZipfileReadsBackExactlyWhatTheManifestSays() throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        let zip = fixture.folder.file("out/package.zip")
        let built = try fixture.build(to: zip)
        let listing = try pythonZipListing(zip)

        // Entry order: fixed files, media sorted by path, tiles.
        let mediaPaths = fixture.manifest.allAssets.map(\.path).sorted()
        let expectedNames = ["manifest.json", "manifest.sig", "waypoints.geojson"] + mediaPaths + ["tiles/map.mbtiles"]
        #expect(listing.entries.map(\.name) == expectedNames)
        #expect(built.entryPaths == expectedNames)

        // Every asset: size and SHA-256 as listed; nothing extra, nothing missing.
        let byName = Dictionary(uniqueKeysWithValues: listing.entries.map { ($0.name, $0) })
        for asset in fixture.manifest.allAssets {
            let entry = try #require(byName[asset.path], "\(asset.path) missing")
            #expect(entry.size == asset.size, "\(asset.path)")
            #expect(entry.sha256 == asset.sha256, "\(asset.path)")
        }
        let tiles = try #require(fixture.manifest.tiles)
        #expect(byName["tiles/map.mbtiles"]?.sha256 == tiles.sha256)
        #expect(byName["tiles/map.mbtiles"]?.size == tiles.size)
        #expect(byName["manifest.json"]?.sha256 == PackageHashing.sha256Hex(built.manifestBytes))
        #expect(byName["manifest.sig"]?.sha256 == PackageHashing.sha256Hex(built.signature))
        let geoJSON = try fixture.geoJSON
        #expect(byName["waypoints.geojson"]?.sha256 == PackageHashing.sha256Hex(geoJSON))
        #expect(
            built.manifest.geoJSON
                == .init(
                    path: "waypoints.geojson",
                    size: Int64(geoJSON.count),
                    sha256: PackageHashing.sha256Hex(geoJSON)
                )
        )

        // Compression: media that is already compressed is stored, text and JSON are deflated.
        let stored = 0
        let deflated = 8
        let expectedMethods: [String: Int] = [
            "manifest.json": deflated, "manifest.sig": stored, "waypoints.geojson": deflated,
            "waypoints/01-fish-lake/intro.mp4": stored, "waypoints/01-fish-lake/lake.jpg": stored,
            "waypoints/02-cafe-nandu-overlook/narration.mp3": stored,
            "waypoints/02-cafe-nandu-overlook/notes.txt": deflated,
            "waypoints/03-devils-punchbowl/birdsong.wav": deflated, "tiles/map.mbtiles": deflated,
        ]
        #expect(Dictionary(uniqueKeysWithValues: listing.entries.map { ($0.name, $0.method) }) == expectedMethods)
        let notes = try #require(byName["waypoints/02-cafe-nandu-overlook/notes.txt"])
        #expect(notes.compressedSize < notes.size / 4, "text really is deflated")

        // Safe names, fixed time stamps and permissions.
        for entry in listing.entries {
            #expect(!entry.name.hasPrefix("/") && !entry.name.contains("\\") && !entry.name.contains(".."))
            #expect(!entry.name.split(separator: "/").contains(".."))
            #expect(entry.dateTime == [2000, 1, 1, 0, 0, 0], "\(entry.name)")
            #expect(entry.externalAttr >> 16 == 0o100644, "\(entry.name)")
        }

        // The zip's own hash and size.
        #expect(built.sha256 == listing.fileSHA256)
        #expect(built.size == listing.fileSize)
        #expect(!FileManager.default.fileExists(atPath: zip.path + ".partial"))

        // Info-ZIP agrees that the archive is sound.
        let unzip = try ChildProcess.runBlocking("unzip", ["-t", "-qq", zip.path])
        #expect(unzip.status == 0, "\(unzip.stdout) \(unzip.stderr)")
    }

    @Test func manifestSignatureInTheZipVerifiesWithPython() throws {
        let fixture = try TourFixture.make(withTiles: false)
        defer { fixture.folder.remove() }
        let zip = fixture.folder.file("package.zip")
        try fixture.build(to: zip)
        let script = #"""
            import base64, sys, zipfile
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
            from cryptography.exceptions import InvalidSignature
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[2]))
            with zipfile.ZipFile(sys.argv[1]) as archive:
                manifest, signature = archive.read("manifest.json"), archive.read("manifest.sig")
            key.verify(signature, manifest)
            tampered = bytearray(manifest)
            tampered[len(tampered) // 2] ^= 1
            try:
                key.verify(signature, bytes(tampered))
                print("tampered manifest accepted")
            except InvalidSignature:
                print("ok")
            """#
        let output = try python(script, [zip.path, fixture.key.publicKeyBase64])
        #expect(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }

    @Test func sameInputsGiveTheSameBytes() throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        let first = try fixture.build(to: fixture.folder.file("a/package.zip"))

        // Same content from other files: other names, modes and modification times, other order.
        var copy = fixture
        let other = fixture.folder.url.appendingPathComponent("copies")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        copy.media = try fixture.media.reversed().enumerated().map { index, source in
            let url = other.appendingPathComponent("copy-\(index)")
            try FileManager.default.copyItem(at: source.fileURL, to: url)
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o600, .modificationDate: Date(timeIntervalSince1970: 1_400_000_000 + Double(index))],
                ofItemAtPath: url.path
            )
            return PackageEntrySource(path: source.path, fileURL: url, mimeType: source.mimeType)
        }
        let second = try copy.build(to: fixture.folder.file("b/other-name.zip"))
        #expect(first.sha256 == second.sha256)
        #expect(first.size == second.size)
        #expect(try Data(contentsOf: fixture.folder.file("a/package.zip")) == Data(contentsOf: fixture.folder.file("b/other-name.zip")))
    }

    @Test func progressReachesEveryEntryAndByte() throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        let calls = Locked<[(Int, Int64)]>([])
        let built = try fixture.build(to: fixture.folder.file("p.zip")) { files, bytes in
            calls.withLock { $0.append((files, bytes)) }
        }
        let recorded = calls.withLock { $0 }
        let mediaBytes = fixture.manifest.allAssets.reduce(Int64(0)) { $0 + $1.size } + (fixture.manifest.tiles?.size ?? 0)
        let fixedBytes = Int64(built.manifestBytes.count + built.signature.count) + (built.manifest.geoJSON?.size ?? 0)
        #expect(recorded.count == built.entryPaths.count)
        #expect(recorded.last?.0 == built.entryPaths.count)
        #expect(recorded.last?.1 == mediaBytes + fixedBytes)
        #expect(zip(recorded, recorded.dropFirst()).allSatisfy { $0.0 < $1.0 && $0.1 <= $1.1 })
    }

    // MARK: Refusals

    func expectRefusal(
        _ expected: PackageBuildError,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ change: (inout TourFixture) throws -> Void
    ) throws {
        var fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        try change(&fixture)
        let zip = fixture.folder.file("refused.zip")
        #expect(throws: expected, sourceLocation: sourceLocation) { try fixture.build(to: zip) }
        #expect(!FileManager.default.fileExists(atPath: zip.path), sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: zip.path + ".partial"), sourceLocation: sourceLocation)
    }

    @Test func aWrongChecksumIsRefusedAndLeavesNoFile() throws {
        let path = "waypoints/01-fish-lake/intro.mp4"
        let real = try TourFixture.manifest().allAssets[0].sha256
        try expectRefusal(.checksumMismatch(path: path, expected: String(repeating: "0", count: 64), actual: real)) {
            $0.manifest.waypoints[0].assets[0].sha256 = String(repeating: "0", count: 64)
        }
    }

    /// The same size, one byte different.
    static func flipMiddleByte(of url: URL) throws {
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: url)
    }

    @Test func aChangedMediaFileIsRefused() throws {
        let fixture = try TourFixture.make(withTiles: false)
        defer { fixture.folder.remove() }
        // Same size, one byte different (e.g. a staging copy that got corrupted).
        try Self.flipMiddleByte(of: fixture.media[1].fileURL)
        #expect {
            try fixture.build(to: fixture.folder.file("x.zip"))
        } throws: { error in
            guard case let .checksumMismatch(path, _, _) = error as? PackageBuildError else { return false }
            return path == fixture.media[1].path
        }
    }

    /// With `.sizeOnly` the builder leaves the content check to the verifier of the finished zip (what the server's
    /// build service does): the changed file is written, and `PackageVerifier` names it.
    @Test func sizeOnlyLeavesTheContentCheckToTheVerifier() throws {
        var fixture = try TourFixture.make(withTiles: false)
        defer { fixture.folder.remove() }
        try Self.flipMiddleByte(of: fixture.media[1].fileURL)
        let zip = fixture.folder.file("size-only.zip")
        _ = try fixture.build(to: zip, inputCheck: .sizeOnly)
        let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: fixture.key.publicKeyBase64)
        #expect(!report.isValid)
        #expect(
            report.issues.contains { if case let .checksumMismatch(path, _, _) = $0 { path == fixture.media[1].path } else { false } },
            "\(report.issues)"
        )
        // A size that differs is still refused by the builder itself.
        fixture.manifest.waypoints[0].assets[1].size += 1
        #expect(throws: PackageBuildError.self) { try fixture.build(to: fixture.folder.file("size.zip"), inputCheck: .sizeOnly) }
    }

    @Test func aWrongSizeIsRefused() throws {
        let real = try TourFixture.manifest().allAssets[1].size
        try expectRefusal(.sizeMismatch(path: "waypoints/01-fish-lake/lake.jpg", expected: real + 1, actual: real)) {
            $0.manifest.waypoints[0].assets[1].size += 1
        }
    }

    @Test func aMissingFileIsRefused() throws {
        let nowhere = "/nonexistent-trail-companion-test/asset-1"
        try expectRefusal(.missingFile(path: "waypoints/01-fish-lake/lake.jpg", file: nowhere)) {
            $0.media[1].fileURL = URL(fileURLWithPath: nowhere)
        }
    }

    @Test func anUnsafePathInTheManifestIsRefused() throws {
        var fixture = try TourFixture.make(withTiles: false)
        defer { fixture.folder.remove() }
        fixture.manifest.waypoints[0].assets[0].path = "waypoints/../../evil.mp4"
        fixture.media[0].path = "waypoints/../../evil.mp4"
        #expect {
            try fixture.build(to: fixture.folder.file("x.zip"))
        } throws: { error in
            guard case let .invalidManifest(problems) = error as? PackageBuildError else { return false }
            return problems.contains { $0.contains("unsafe path") }
        }
    }

    @Test func unsafeOrUnlistedMediaIsRefused() throws {
        try expectRefusal(.unsafeEntryPath("../outside.mp4")) {
            $0.media.append(PackageEntrySource(path: "../outside.mp4", fileURL: $0.media[0].fileURL, mimeType: "video/mp4"))
        }
        try expectRefusal(.unsafeEntryPath("waypoints\\01\\x.mp4")) {
            $0.media.append(PackageEntrySource(path: "waypoints\\01\\x.mp4", fileURL: $0.media[0].fileURL, mimeType: "video/mp4"))
        }
        try expectRefusal(.mediaNotInManifest("waypoints/01-fish-lake/extra.mp4")) {
            $0.media.append(
                PackageEntrySource(
                    path: "waypoints/01-fish-lake/extra.mp4",
                    fileURL: $0.media[0].fileURL,
                    mimeType: "video/mp4"
                )
            )
        }
        try expectRefusal(.duplicateEntryPath("waypoints/01-fish-lake/intro.mp4")) { $0.media.append($0.media[0]) }
        try expectRefusal(.missingMediaSource("waypoints/02-cafe-nandu-overlook/notes.txt")) { $0.media.remove(at: 3) }
        try expectRefusal(.mimeTypeMismatch(path: "waypoints/01-fish-lake/intro.mp4", manifest: "video/mp4", source: "text/plain")) {
            $0.media[0].mimeType = "text/plain"
        }
    }

    @Test func tilesAndGeoJSONMustMatchTheManifest() throws {
        try expectRefusal(.tilesMismatch("the manifest lists tiles but no tiles file was given")) { $0.tilesFile = nil }
        try expectRefusal(.tilesMismatch("a tiles file was given but the manifest has no tiles")) { $0.manifest.tiles = nil }
        var fixture = try TourFixture.make(withTiles: false)
        defer { fixture.folder.remove() }
        fixture.manifest.geoJSON = .init(path: "waypoints.geojson", size: 1, sha256: String(repeating: "1", count: 64))
        #expect(throws: PackageBuildError.self) { try fixture.build(to: fixture.folder.file("g.zip")) }
    }

    @Test func cancellationStopsTheBuildAndRemovesThePartialFile() async throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        let zip = fixture.folder.file("cancelled.zip")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try fixture.build(to: zip)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!FileManager.default.fileExists(atPath: zip.path))
        #expect(!FileManager.default.fileExists(atPath: zip.path + ".partial"))
    }
}
