import Foundation
import PackageFormat
import Testing

/// `tiles/index.json`: an additive, listed, signed file beside the MBTiles, for readers that cannot open SQLite.
@Suite("Tile index")
struct TileIndexTests {
    static let index = Data(#"{"format":"png","tiles":{"10/163/366":"\#(String(repeating: "ab", count: 32))"}}"#.utf8 + [0x0A])

    @Test func theIndexIsListedSignedAndVerifiedAndTheBytesAreDeterministic() throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        func build(_ name: String) throws -> BuiltPackage {
            try PackageBuilder.build(
                manifest: fixture.manifest,
                geoJSON: try fixture.geoJSON,
                media: fixture.media,
                tilesFile: fixture.tilesFile,
                tilesIndex: Self.index,
                signingKey: fixture.key,
                to: fixture.folder.file(name)
            )
        }
        let built = try build("one.zip")
        let reference = try #require(built.manifest.tiles?.index)
        #expect(
            reference
                == Manifest.FileReference(
                    path: "tiles/index.json",
                    size: Int64(Self.index.count),
                    sha256: PackageHashing.sha256Hex(Self.index)
                )
        )
        #expect(built.entryPaths.last == "tiles/index.json")
        #expect(built.manifest.listedFiles.contains { $0.path == "tiles/index.json" && $0.sha256 == reference.sha256 })
        let report = PackageVerifier.verify(zipAt: fixture.folder.file("one.zip"), publicKeyBase64: fixture.key.publicKeyBase64)
        #expect(report.isValid, "\(report.issues)")
        #expect(try build("two.zip").sha256 == built.sha256, "the same inputs give the same bytes")

        // Without an index the package is as before: no entry, no key in the manifest.
        let plain = try fixture.build(to: fixture.folder.file("plain.zip"))
        #expect(plain.manifest.tiles?.index == nil)
        #expect(!String(decoding: plain.manifestBytes, as: UTF8.self).contains("index"))
    }

    @Test func anIndexThatDoesNotMatchTheManifestIsRefused() throws {
        let fixture = try TourFixture.make(withTiles: true)
        defer { fixture.folder.remove() }
        var manifest = fixture.manifest
        manifest.tiles?.index = Manifest.FileReference(path: "tiles/index.json", size: 3, sha256: String(repeating: "0", count: 64))
        #expect(throws: PackageBuildError.self) {
            try PackageBuilder.build(
                manifest: manifest,
                geoJSON: try fixture.geoJSON,
                media: fixture.media,
                tilesFile: fixture.tilesFile,
                tilesIndex: Self.index,
                signingKey: fixture.key,
                to: fixture.folder.file("bad.zip")
            )
        }
        #expect(throws: PackageBuildError.self) {
            try PackageBuilder.build(
                manifest: manifest,
                geoJSON: try fixture.geoJSON,
                media: fixture.media,
                tilesFile: fixture.tilesFile,
                signingKey: fixture.key,
                to: fixture.folder.file("missing.zip")
            )
        }
    }
}
