import Foundation
import MalwareScan

extension ScanService {
    /// Scans every uploaded MBTiles file still `pending`, like an asset: clean files move to `tilesets/<sha256>.mbtiles`,
    /// anything else to `tilesets/quarantine/`. Returns how many were scanned.
    func drainTilesets() async -> Int {
        let pending: [TourTileset]
        do { pending = try database.pendingTilesets() } catch {
            logger.error("cannot read the tileset scan queue: \(error)")
            return 0
        }
        for tileset in pending { await process(tileset) }
        return pending.count
    }

    func process(_ tileset: TourTileset) async {
        let source = paths.absolute(tileset.storedPath)
        do {
            guard FileManager.default.fileExists(atPath: source.path) else {
                _ = try database.recordTilesetScan(tourId: tileset.tourId, sha256: tileset.sha256, status: .error,
                                                   detail: "the stored file is missing", storedPath: tileset.storedPath)
                return
            }
            let verdict = await scanner.scan(fileAt: source.path)
            let status = ScanStatus(rawValue: verdict.statusName) ?? .error
            let target = status == .clean ? "tilesets/\(tileset.sha256).mbtiles" : "tilesets/quarantine/\(UUID().uuidString.lowercased())"
            try FileManager.default.createDirectory(at: paths.absolute(target).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.place(source, at: paths.absolute(target))
            let outcome = try database.recordTilesetScan(tourId: tileset.tourId, sha256: tileset.sha256, status: status,
                                                         detail: verdict.detail, storedPath: target)
            if let released = outcome.released { try? FileManager.default.removeItem(at: paths.absolute(released)) }
            // Replaced or deleted while it was scanned: the copy just made belongs to no one.
            if !outcome.recorded, try !database.isTilesetPathReferenced(target) {
                try? FileManager.default.removeItem(at: paths.absolute(target))
            }
            logger.info("scanned the map tiles of tour \(tileset.tourId): \(verdict)")
        } catch {
            logger.error("scan of the map tiles of tour \(tileset.tourId) failed: \(error)")
            _ = try? database.recordTilesetScan(tourId: tileset.tourId, sha256: tileset.sha256, status: .error,
                                                detail: "scan failed: \(error)", storedPath: tileset.storedPath)
        }
    }
}

extension AppDatabase {
    func isTilesetPathReferenced(_ storedPath: String) throws -> Bool {
        try writer.read { try Self.isTilesetReferenced($0, storedPath: storedPath) }
    }
}
