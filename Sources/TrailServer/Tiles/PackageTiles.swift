import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import PackageFormat

/// The MBTiles of built packages, for the review map and the phone preview: `tiles/map.mbtiles` is taken out of the
/// package's own zip (so the reviewer sees exactly the offline map the visitor gets), checked against the manifest's
/// SHA-256, kept in `tile-previews/<sha256>.mbtiles` and opened once.
final class PackageTilesStore: Sendable {
    let paths: DataPaths
    private let readers = NIOLockedValueBox<[String: MBTilesReader]>([:])
    static let maxOpen = 16

    init(paths: DataPaths) { self.paths = paths }

    func previewFile(_ sha256: String) -> URL { paths.tilePreviews.appendingPathComponent("\(sha256).mbtiles") }

    /// The reader of a package's tiles; throws `NotFound` when the zip or its tiles entry is missing.
    func reader(zip: URL, tiles: Manifest.Tiles) async throws -> MBTilesReader {
        if let open = readers.withLockedValue({ $0[tiles.sha256] }) { return open }
        let file = previewFile(tiles.sha256)
        let reader: MBTilesReader = try await BlockingWork.short {
            if !FileManager.default.fileExists(atPath: file.path) { try Self.extract(zip: zip, tiles: tiles, to: file) }
            return try MBTilesReader(url: file)
        }
        return readers.withLockedValue { open in
            if let existing = open[tiles.sha256] { return existing }
            if open.count >= Self.maxOpen, let victim = open.keys.first { open[victim] = nil }
            open[tiles.sha256] = reader
            return reader
        }
    }

    /// Takes the entry out of the zip, checked against the manifest's size and SHA-256 (`ZipEntryExport`).
    static func extract(zip: URL, tiles: Manifest.Tiles, to file: URL) throws {
        let size: Int64
        if let listed = tiles.size {
            size = listed
        } else {
            // Packages built before the manifest listed the tiles' size: the zip's own figure, still hash-checked.
            guard let entry = try PackageArchiveReader(url: zip).entry(named: tiles.path) else { throw NotFound() }
            size = Int64(entry.uncompressedSize)
        }
        try ZipEntryExport.write(
            zip: zip,
            path: tiles.path,
            size: size,
            sha256: tiles.sha256,
            to: file,
            mismatch: "The package's map tiles do not match its manifest."
        )
    }

    /// Forgets open readers and removes preview files whose SHA-256 no open request or released version names.
    func prune(keeping: Set<String>) {
        readers.withLockedValue { open in for key in open.keys where !keeping.contains(key) { open[key] = nil } }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: paths.tilePreviews.path)) ?? [] {
            let sha = name.hasSuffix(".mbtiles") ? String(name.dropLast(".mbtiles".count)) : name
            if !keeping.contains(sha) { try? FileManager.default.removeItem(at: paths.tilePreviews.appendingPathComponent(name)) }
        }
    }
}
