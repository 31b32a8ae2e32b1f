import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import PackageFormat

/// The MBTiles of built packages, for the review map and the phone preview: `tiles/map.mbtiles` is taken out of the
/// package's own zip (so the reviewer sees exactly the offline map the visitor gets), checked against the manifest's
/// SHA-256, kept in `tile-previews/<sha256>.mbtiles` and opened once.
public final class PackageTilesStore: Sendable {
    let paths: DataPaths
    private let readers = NIOLockedValueBox<[String: MBTilesReader]>([:])
    static let maxOpen = 16

    public init(paths: DataPaths) { self.paths = paths }

    func previewFile(_ sha256: String) -> URL { paths.tilePreviews.appendingPathComponent("\(sha256).mbtiles") }

    /// The reader of a package's tiles; throws `NotFound` when the zip or its tiles entry is missing.
    func reader(zip: URL, tiles: Manifest.Tiles) async throws -> MBTilesReader {
        if let open = readers.withLockedValue({ $0[tiles.sha256] }) { return open }
        let file = previewFile(tiles.sha256)
        let reader: MBTilesReader = try await NIOThreadPool.singleton.runIfActive {
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

    /// Streams the entry out of the zip into a temporary file, checks its SHA-256, renames it into place.
    static func extract(zip: URL, tiles: Manifest.Tiles, to file: URL) throws {
        guard FileManager.default.fileExists(atPath: zip.path) else { throw NotFound() }
        let archive = try PackageArchiveReader(url: zip)
        guard let entry = archive.entry(named: tiles.path) else { throw NotFound() }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString.prefix(8)).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw POSIXFailure(operation: "create \(temporary.lastPathComponent)", code: errno)
        }
        defer { unlink(temporary.path) }
        let handle = try FileHandle(forWritingTo: temporary)
        var hasher = SHA256()
        do {
            try archive.read(entry, limit: UInt64(tiles.size ?? Int64(entry.uncompressedSize))) { chunk in
                hasher.update(data: chunk)
                try handle.write(contentsOf: chunk)
            }
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard hasher.finalize().map({ String(format: "%02x", $0) }).joined() == tiles.sha256 else {
            throw Conflict("The package's map tiles do not match its manifest.")
        }
        guard rename(temporary.path, file.path) == 0 else { throw POSIXFailure(operation: "rename preview tiles", code: errno) }
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
