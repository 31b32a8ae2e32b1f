import Foundation
import PackageFormat
import Testing

@testable import TrailClient

@Suite("TrailClient: package verification")
struct VerifyTests {
    @Test func goodPackageVerifies() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let check = TrailClient.verify(zip: fixture.zip, publicKey: fixture.key.publicKeyBase64, expectedSHA256: fixture.built.sha256)
        #expect(check.isValid, "\(check.problems)")
        #expect(check.isAuthentic)
        #expect(check.sha256 == fixture.built.sha256)
        #expect(check.size == fixture.built.size)
        #expect(check.sha256Matches == true)
        #expect(check.report.verifiedFileCount == 4)  // three media and waypoints.geojson
        // Without a key: intact, but not authentic.
        let unsigned = TrailClient.verify(zip: fixture.zip, publicKey: nil)
        #expect(unsigned.isValid && !unsigned.isAuthentic && unsigned.signatureValid == nil)
    }

    @Test func flippedByteFailsTheHashes() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let reader = try PackageArchiveReader(url: fixture.zip)
        let video = try #require(reader.entries.first { $0.path.hasSuffix("intro.mp4") })
        let tampered = fixture.folder.file("flipped.zip")
        try flipByte(of: fixture.zip, at: Int(video.dataOffset) + 1000, to: tampered)
        let check = TrailClient.verify(zip: tampered, publicKey: fixture.key.publicKeyBase64, expectedSHA256: fixture.built.sha256)
        #expect(!check.isValid)
        #expect(check.sha256Matches == false)
        #expect(check.signatureValid == true)  // the manifest is intact; the media is not
        #expect(
            check.report.issues.contains { if case .checksumMismatch(let path, _, _) = $0 { return path == video.path } else { return false } },
            "\(check.problems)"
        )
    }

    @Test func changedManifestFailsTheSignature() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let changed = Data(
            String(decoding: fixture.built.manifestBytes, as: UTF8.self)
                .replacingOccurrences(of: "\"packageName\":\"Fish Lake Loop\"", with: "\"packageName\":\"Fish Lake Loop!\"").utf8
        )
        #expect(changed != fixture.built.manifestBytes)
        let tampered = fixture.folder.file("manifest.zip")
        try craftZip(tampered, source: fixture.zip, replace: ["manifest.json": changed])
        let check = TrailClient.verify(zip: tampered, publicKey: fixture.key.publicKeyBase64)
        #expect(!check.isValid)
        #expect(check.signatureValid == false)
        #expect(check.report.issues.contains(.signatureMismatch))
        #expect(check.report.verifiedFileCount == 4, "the files themselves are intact")
        // Another key than the signer's fails the untouched package too.
        #expect(TrailClient.verify(zip: fixture.zip, publicKey: SigningKey.generate().publicKeyBase64).report.issues.contains(.signatureMismatch))
    }
}

@Suite("TrailClient: safe extraction")
struct ExtractTests {
    @Test func extractsAGoodPackage() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let target = fixture.folder.file("out/tour")
        let result = try TrailClient.extract(zip: fixture.zip, to: target)
        #expect(Set(result.files) == Set(fixture.built.entryPaths))
        for asset in fixture.built.manifest.allAssets {
            let data = try Data(contentsOf: target.appendingPathComponent(asset.path))
            #expect(PackageHashing.sha256Hex(data) == asset.sha256, "\(asset.path)")
        }
        #expect(try Data(contentsOf: target.appendingPathComponent("manifest.json")) == fixture.built.manifestBytes)
        #expect(try Data(contentsOf: target.appendingPathComponent("manifest.sig")) == fixture.built.signature)
        // A folder that is not empty is refused and left alone.
        #expect(throws: ExtractionError.destinationNotEmpty(target.path)) { try TrailClient.extract(zip: fixture.zip, to: target) }
        #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent("manifest.json").path))
    }

    /// Each hostile entry alone, and all together, next to a valid package's entries: refused, nothing written anywhere.
    @Test(arguments: ["dotdot", "absolute", "symlink", "backslash", "all"])
    func refusesHostileEntries(_ kind: String) throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let marker = "escape-\(UUID().uuidString.prefix(8))"
        let absolute = FileManager.default.temporaryDirectory.appendingPathComponent("\(marker)-absolute.txt")
        defer { try? FileManager.default.removeItem(at: absolute) }
        var entries: [CraftedEntry] = []
        if kind == "dotdot" || kind == "all" {
            entries.append(CraftedEntry(name: "../\(marker)-up.txt", data: Data("up".utf8)))
            entries.append(CraftedEntry(name: "waypoints/../../\(marker)-up2.txt", data: Data("up".utf8)))
        }
        if kind == "absolute" || kind == "all" { entries.append(CraftedEntry(name: absolute.path, data: Data("abs".utf8))) }
        if kind == "symlink" || kind == "all" {
            entries.append(CraftedEntry(name: "waypoints/01-fish-lake/link", data: Data("/etc/passwd".utf8), symlink: true))
            entries.append(CraftedEntry(name: "waypoints/01-fish-lake/link/\(marker).txt", data: Data("through the link".utf8)))
        }
        if kind == "backslash" || kind == "all" { entries.append(CraftedEntry(name: "..\\\(marker)-bs.txt", data: Data("bs".utf8))) }
        let hostile = fixture.folder.file("hostile.zip")
        try craftZip(hostile, source: fixture.zip, add: entries)

        let work = fixture.folder.file("work")
        let target = work.appendingPathComponent("tour")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        #expect {
            try TrailClient.extract(zip: hostile, to: target)
        } throws: { error in
            switch error as? ExtractionError {
            case .unsafePath?: return kind != "symlink"
            case .symbolicLink?: return kind == "symlink"
            default: return false
            }
        }
        #expect(!FileManager.default.fileExists(atPath: target.path), "the target folder was left behind")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty, "something was written next to the target")
        #expect(!FileManager.default.fileExists(atPath: absolute.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path).allSatisfy { !$0.contains(marker) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).allSatisfy { !$0.contains(marker) })
        // The verifier (and so `package verify`) refuses it too.
        let check = TrailClient.verify(zip: hostile, publicKey: fixture.key.publicKeyBase64)
        #expect(!check.isValid)
        #expect(check.report.issues.contains { if case .unsafeEntryPath = $0 { true } else if case .symbolicLink = $0 { true } else { false } })
    }

    @Test func stopsWritingPastTheListedSize() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        // The manifest lists 10 bytes for a text file; the zip's directory says 10 too, but the deflate stream holds 4 MiB.
        var manifest = fixture.built.manifest
        let real = Data("0123456789".utf8)
        let path = "waypoints/02-lava-overlook/bomb.txt"
        manifest.waypoints[1].assets.append(
            Manifest.Asset(
                type: .text,
                path: path,
                mimeType: "text/plain",
                size: 10,
                sha256: PackageHashing.sha256Hex(real)
            )
        )
        let bomb = fixture.folder.file("bomb.zip")
        try craftZip(
            bomb,
            source: fixture.zip,
            replace: ["manifest.json": try manifest.encoded()],
            add: [CraftedEntry(name: path, data: Data(repeating: 0x41, count: 4 << 20), deflate: true, declaredSize: 10)]
        )
        let target = fixture.folder.file("bomb-out")
        #expect(throws: ExtractionError.sizeLimitExceeded(path: path, limit: 10)) { try TrailClient.extract(zip: bomb, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(!TrailClient.verify(zip: bomb, publicKey: nil).isValid)
    }

    @Test func refusesUnlistedAndMissingEntries() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let extra = fixture.folder.file("extra.zip")
        try craftZip(extra, source: fixture.zip, add: [CraftedEntry(name: "waypoints/01-fish-lake/extra.bin", data: Data("x".utf8))])
        #expect(throws: ExtractionError.unlistedEntry("waypoints/01-fish-lake/extra.bin")) {
            try TrailClient.extract(zip: extra, to: fixture.folder.file("o1"))
        }
        let video = try #require(fixture.built.manifest.allAssets.first { $0.path.hasSuffix(".mp4") }).path
        let missing = fixture.folder.file("missing.zip")
        try craftZip(missing, source: fixture.zip, drop: [video])
        #expect(throws: ExtractionError.missingEntry(video)) { try TrailClient.extract(zip: missing, to: fixture.folder.file("o2")) }
        let twice = fixture.folder.file("case.zip")
        try craftZip(twice, source: fixture.zip, add: [CraftedEntry(name: "Manifest.json", data: Data("{}".utf8))])
        #expect(throws: ExtractionError.conflictingPaths("manifest.json", "Manifest.json")) {
            try TrailClient.extract(zip: twice, to: fixture.folder.file("o3"))
        }
        for name in ["o1", "o2", "o3"] { #expect(!FileManager.default.fileExists(atPath: fixture.folder.file(name).path)) }
    }

    @Test func changedMediaIsRemovedAgain() throws {
        let fixture = try PackageFixture.make()
        defer { fixture.folder.remove() }
        let text = try #require(fixture.built.manifest.allAssets.first { $0.path.hasSuffix(".txt") })
        let changed = fixture.folder.file("changed.zip")
        // Same size, other bytes: CRC-32 and sizes in the zip are consistent, the SHA-256 is not the listed one.
        try craftZip(changed, source: fixture.zip, replace: [text.path: Data(repeating: 0x2E, count: Int(text.size))])
        let target = fixture.folder.file("changed-out")
        #expect(throws: ExtractionError.checksumMismatch(path: text.path)) { try TrailClient.extract(zip: changed, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }
}
