import Foundation
import MalwareScan
import NIOPosix

extension ScanService {
    /// Scans an uploaded MBTiles file still `pending`, like an asset (``drain()`` reads them after the assets): clean
    /// files move to `tilesets/<sha256>.mbtiles`, anything else to `tilesets/quarantine/`.
    func process(_ tileset: TourTileset) async {
        let source = paths.absolute(tileset.storedPath)
        do {
            guard FileManager.default.fileExists(atPath: source.path) else {
                _ = try await database.recordTilesetScan(
                    tourId: tileset.tourId,
                    sha256: tileset.sha256,
                    status: .error,
                    detail: "the stored file is missing",
                    storedPath: tileset.storedPath
                )
                return
            }
            let verdict = await MBTilesScanning.scan(source, with: scanner)
            let status = ScanStatus(rawValue: verdict.statusName) ?? .error
            let target = status == .clean ? "tilesets/\(tileset.sha256).mbtiles" : "tilesets/quarantine/\(UUID().uuidString.lowercased())"
            try FileManager.default.createDirectory(at: paths.absolute(target).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.place(source, at: paths.absolute(target))
            let outcome = try await database.recordTilesetScan(
                tourId: tileset.tourId,
                sha256: tileset.sha256,
                status: status,
                detail: verdict.detail,
                storedPath: target
            )
            if let released = outcome.released { try? FileManager.default.removeItem(at: paths.absolute(released)) }
            // Replaced or deleted while it was scanned: the copy just made belongs to no one.
            if !outcome.recorded, try await !database.isTilesetPathReferenced(target) {
                try? FileManager.default.removeItem(at: paths.absolute(target))
            }
            logger.info("scanned the map tiles of tour \(tileset.tourId): \(verdict)")
        } catch {
            logger.error("scan of the map tiles of tour \(tileset.tourId) failed: \(error)")
            _ = try? await database.recordTilesetScan(
                tourId: tileset.tourId,
                sha256: tileset.sha256,
                status: .error,
                detail: "scan failed: \(error)",
                storedPath: tileset.storedPath
            )
        }
    }
}

/// libclamav recognises SQLite databases and then does not match body signatures in them (a file with the EICAR string
/// in a tile scans "clean"). So an MBTiles file is scanned as a copy whose 16-byte SQLite header is blanked: the engine
/// then reads every byte. Fails closed: a copy that cannot be made is an `.error` verdict.
enum MBTilesScanning {
    static func scan(_ url: URL, with scanner: any MalwareScanner) async -> ScanVerdict {
        let masked = url.deletingLastPathComponent().appendingPathComponent(".scan-\(UUID().uuidString.prefix(8)).bin")
        defer { unlink(masked.path) }
        do {
            try await BlockingWork.files { try Self.copyMasked(url, to: masked) }
        } catch {
            return .error(reason: "cannot prepare the file for scanning: \(error)")
        }
        return await scanner.scan(fileAt: masked.path)
    }

    static func copyMasked(_ source: URL, to target: URL) throws {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: target.path, contents: nil) else {
            throw POSIXFailure(operation: "create \(target.lastPathComponent)", code: errno)
        }
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        var first = true
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            var bytes = chunk
            if first {
                let count = min(16, bytes.count)
                bytes.replaceSubrange(bytes.startIndex..<bytes.startIndex + count, with: Data(count: count))
                first = false
            }
            try output.write(contentsOf: bytes)
        }
    }
}
