import Foundation
import PackageFormat
import TestSupport
import Testing

@Suite("PackageVerifier")
struct VerifierTests {
    /// A built package and its fixture; `remove()` cleans up.
    struct Built {
        var fixture: TourFixture
        var zip: URL
        var package: BuiltPackage
        var key: String { fixture.key.publicKeyBase64 }
        func remove() { fixture.folder.remove() }
        func file(_ name: String) -> URL { fixture.folder.file(name) }
    }

    static func build(withTiles: Bool = true) throws -> Built {
        let fixture = try TourFixture.make(withTiles: withTiles)
        do {
            let zip = fixture.folder.file("package.zip")
            let package = try fixture.build(to: zip)
            return Built(fixture: fixture, zip: zip, package: package)
        } catch {
            fixture.folder.remove()
            throw error
        }
    }

    @Test func aBuiltPackageIsValid() throws {
        let built = try Self.build()
        defer { built.remove() }
        let report = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: built.key)
        #expect(report.problems == [])
        #expect(report.isValid)
        #expect(report.signatureValid == true)
        #expect(report.manifest == built.package.manifest)
        #expect(report.manifestBytes == built.package.manifestBytes)
        #expect(report.entryCount == built.package.entryPaths.count)
        // 5 assets + tiles + waypoints.geojson, all hashed.
        #expect(report.listedFileCount == 7)
        #expect(report.verifiedFileCount == 7)
        #expect(report.archiveSize == UInt64(built.package.size))
        #expect(!report.usesZIP64)
    }

    @Test func withoutAKeyTheSignatureIsNotJudged() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let report = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: nil)
        #expect(report.isValid)
        #expect(report.signatureValid == nil)
    }

    @Test func anotherKeyOrAGarbageKeyFails() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let other = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: SigningKey.generate().publicKeyBase64)
        #expect(other.issues == [.signatureMismatch])
        #expect(other.signatureValid == false)
        let garbage = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: "AAAA")
        #expect(garbage.issues == [.invalidPublicKey])
    }

    @Test func oneChangedByteInManifestJSONBreaksTheSignature() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        var manifest = built.package.manifestBytes
        let range = try #require(manifest.range(of: Data("Santiam".utf8)))
        manifest[range.lowerBound] = UInt8(ascii: "X")
        let tampered = built.file("tampered.zip")
        try pythonRewrite(built.zip, to: tampered, replace: ["manifest.json": manifest])
        let report = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: built.key)
        #expect(report.issues == [.signatureMismatch])
        #expect(report.manifest?.packageName == "Xantiam Wagon Road")
    }

    @Test func aFlippedByteInAMediaEntryIsReported() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let path = "waypoints/01-fish-lake/intro.mp4"
        // Flip one byte of the stored data in place, behind the zip's back (CRC now wrong too).
        let reader = try PackageArchiveReader(url: built.zip)
        let entry = try #require(reader.entry(named: path))
        let handle = try FileHandle(forUpdating: built.zip)
        try handle.seek(toOffset: entry.dataOffset + 1000)
        var byte = try #require(try handle.read(upToCount: 1))
        byte[0] ^= 0x01
        try handle.seek(toOffset: entry.dataOffset + 1000)
        try handle.write(contentsOf: byte)
        try handle.close()

        let report = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: built.key)
        #expect(report.issues.count == 1)
        guard case let .checksumMismatch(reportedPath, expected, _) = report.issues.first else {
            Issue.record("expected a checksum mismatch, got \(report.problems)")
            return
        }
        #expect(reportedPath == path)
        #expect(expected == built.fixture.manifest.allAssets[0].sha256)
        #expect(report.signatureValid == true, "the manifest itself is intact")
    }

    @Test func aReplacedMediaEntryWithAValidCRCIsStillCaught() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let path = "waypoints/02-cafe-nandu-overlook/notes.txt"
        var text = try Data(contentsOf: built.fixture.media[3].fileURL)
        text[0] ^= 0x20
        let tampered = built.file("tampered.zip")
        try pythonRewrite(built.zip, to: tampered, replace: [path: text])
        let report = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: built.key)
        #expect(report.issues.map(\.description).count == 1)
        guard case .checksumMismatch(path, _, PackageHashing.sha256Hex(text)) = report.issues.first else {
            Issue.record("expected a checksum mismatch for \(path), got \(report.problems)")
            return
        }
    }

    @Test func anExtraEntryIsReported() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let tampered = built.file("extra.zip")
        try pythonRewrite(built.zip, to: tampered, add: [("waypoints/01-fish-lake/payload.bin", Data("x".utf8), false)])
        let report = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: built.key)
        #expect(report.issues == [.unlistedEntry("waypoints/01-fish-lake/payload.bin")])
    }

    @Test func aMissingEntryIsReported() throws {
        let built = try Self.build(withTiles: true)
        defer { built.remove() }
        let tampered = built.file("missing.zip")
        try pythonRewrite(built.zip, to: tampered, drop: ["waypoints/01-fish-lake/lake.jpg", "tiles/map.mbtiles"])
        let report = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: built.key)
        #expect(report.issues == [.missingEntry("waypoints/01-fish-lake/lake.jpg"), .missingEntry("tiles/map.mbtiles")])
    }

    @Test func missingManifestOrSignatureOrGeoJSON() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let noSignature = built.file("nosig.zip")
        try pythonRewrite(built.zip, to: noSignature, drop: ["manifest.sig"])
        #expect(PackageVerifier.verify(zipAt: noSignature, publicKeyBase64: built.key).issues == [.missingSignature])

        let noManifest = built.file("nomanifest.zip")
        try pythonRewrite(built.zip, to: noManifest, drop: ["manifest.json"])
        let report = PackageVerifier.verify(zipAt: noManifest, publicKeyBase64: built.key)
        #expect(report.issues == [.missingManifest])
        #expect(!report.isValid)

        let noGeoJSON = built.file("nogeojson.zip")
        try pythonRewrite(built.zip, to: noGeoJSON, drop: ["waypoints.geojson"])
        #expect(
            PackageVerifier.verify(zipAt: noGeoJSON, publicKeyBase64: built.key).issues
                == [.missingGeoJSON, .missingEntry("waypoints.geojson")]
        )
    }

    @Test func hostileEntriesAreReported() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let tampered = built.file("hostile.zip")
        try pythonRewrite(
            built.zip,
            to: tampered,
            add: [
                ("../evil.sh", Data("rm -rf ~".utf8), false),
                ("/etc/cron.d/evil", Data("x".utf8), false),
                ("waypoints\\..\\evil.txt", Data("x".utf8), false),
                ("waypoints/01-fish-lake/link.mp4", Data("/etc/passwd".utf8), true),
                ("waypoints/01-fish-lake/intro.mp4", Data("second copy".utf8), false),
            ]
        )
        let report = PackageVerifier.verify(zipAt: tampered, publicKeyBase64: built.key)
        let issues = report.issues
        #expect(issues.contains(.unsafeEntryPath("../evil.sh")))
        #expect(issues.contains(.unsafeEntryPath("/etc/cron.d/evil")))
        #expect(issues.contains(.unsafeEntryPath("waypoints\\..\\evil.txt")))
        #expect(issues.contains(.symbolicLink("waypoints/01-fish-lake/link.mp4")))
        #expect(issues.contains(.duplicateEntry("waypoints/01-fish-lake/intro.mp4")))
        #expect(issues.contains(.unlistedEntry("../evil.sh")))
        #expect(!report.isValid)
    }

    @Test func notAZipOrATruncatedZipIsReportedNotThrown() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let junk = built.file("junk.zip")
        var random = SeededBytes(seed: 9)
        try random.bytes(10_000).write(to: junk)
        let junkReport = PackageVerifier.verify(zipAt: junk, publicKeyBase64: built.key)
        #expect(junkReport.issues.count == 1)
        guard case .cannotOpen = junkReport.issues.first else {
            Issue.record("expected cannotOpen, got \(junkReport.problems)")
            return
        }
        let truncated = built.file("truncated.zip")
        try Data(contentsOf: built.zip).prefix(Int(built.package.size / 2)).write(to: truncated)
        #expect(!PackageVerifier.verify(zipAt: truncated, publicKeyBase64: built.key).isValid)
        #expect(!PackageVerifier.verify(zipAt: built.file("does-not-exist.zip"), publicKeyBase64: nil).isValid)
    }

    @Test func corruptDeflateDataIsReportedWithoutHanging() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let path = "waypoints/02-cafe-nandu-overlook/notes.txt"
        let reader = try PackageArchiveReader(url: built.zip)
        let entry = try #require(reader.entry(named: path))
        #expect(entry.isDeflated)
        // Overwrite the compressed stream with bytes that are not a valid deflate stream.
        let handle = try FileHandle(forUpdating: built.zip)
        try handle.seek(toOffset: entry.dataOffset)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: Int(entry.compressedSize)))
        try handle.close()
        let report = PackageVerifier.verify(zipAt: built.zip, publicKeyBase64: built.key)
        #expect(report.issues.count == 1)
        #expect(report.problems.first?.contains(path) == true, "\(report.problems)")
    }

    @Test func readerCapsOutputAtTheGivenLimit() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let reader = try PackageArchiveReader(url: built.zip)
        for path in ["waypoints/02-cafe-nandu-overlook/notes.txt", "waypoints/01-fish-lake/intro.mp4"] {
            let entry = try #require(reader.entry(named: path))
            var received = 0
            #expect(throws: ZipReadError.tooLarge(path: path, limit: 1000)) {
                try reader.read(entry, limit: 1000) { received += $0.count }
            }
            #expect(received <= 1000)
        }
    }

    @Test("a listed file read back whole: its bytes when they match the manifest, a mismatch named, nil when absent")
    func listedFilesAreReadAndChecked() throws {
        let built = try Self.build(withTiles: false)
        defer { built.remove() }
        let manifest = try JSONDecoder().decode(Manifest.self, from: built.package.manifestBytes)
        let listed = try #require(manifest.listedFiles.first { $0.path.hasSuffix("notes.txt") })
        let size = try #require(listed.size)
        let reader = try PackageArchiveReader(url: built.zip)
        let data = try #require(try reader.readListed(path: listed.path, size: size, sha256: listed.sha256))
        #expect(Int64(data.count) == size && String(decoding: data, as: UTF8.self).contains(" "))
        let other = String(repeating: "0", count: 64)
        let mismatch = #expect(throws: ListedFileMismatch.self) { try reader.readListed(path: listed.path, size: size, sha256: other) }
        #expect(mismatch?.description == "\(listed.path) does not match the package's manifest.")
        #expect(try reader.readListed(path: "map/basemap.geojson", size: 1, sha256: other) == nil)
    }

    @Test func zip64StructuresAreRead() throws {
        // Python writes real ZIP64 records (ZIP64 end of central directory, 0xFFFFFFFF sizes
        // and offsets with ZIP64 extra fields) when its limits are lowered; sizes stay small.
        let built = try Self.build(withTiles: true)
        defer { built.remove() }
        let zip64 = built.file("zip64.zip")
        let script = #"""
            import sys, zipfile
            zipfile.ZIP64_LIMIT = 1000
            zipfile.ZIP_FILECOUNT_LIMIT = 3
            with zipfile.ZipFile(sys.argv[1]) as original, zipfile.ZipFile(sys.argv[2], "w") as result:
                for info in original.infolist():
                    result.writestr(info, original.read(info))
            """#
        _ = try python(script, [built.zip.path, zip64.path])
        let listing = try pythonZipListing(zip64)
        #expect(listing.zip64EndRecord, "python wrote a ZIP64 end of central directory")
        let unzip = try ChildProcess.runBlocking("unzip", ["-t", "-qq", zip64.path])
        #expect(unzip.status == 0, "\(unzip.stderr)")

        let reader = try PackageArchiveReader(url: zip64)
        #expect(reader.isZIP64)
        #expect(reader.entries.map(\.path) == built.package.entryPaths)
        let report = PackageVerifier.verify(zipAt: zip64, publicKeyBase64: built.key)
        #expect(report.problems == [])
        #expect(report.usesZIP64)
        #expect(report.verifiedFileCount == 7)
    }
}
