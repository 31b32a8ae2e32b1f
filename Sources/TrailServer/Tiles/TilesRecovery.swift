import Foundation
import GRDB
import Logging

/// Start-up clean-up for tiles: uploaded MBTiles files no row names (a crash between writing and registering, a deleted
/// tour), rows whose file is gone, half-written files in the tile cache, and package previews nothing names any more.
enum TilesRecovery {
    struct Report: Sendable, Equatable {
        var orphanFiles = 0
        var missingFiles = 0
        var stalePreviews = 0
        /// Manifests (of open requests or released versions) that did not decode: previews were left alone.
        var unreadableManifests = 0
    }

    @discardableResult
    static func run(
        database: AppDatabase,
        paths: DataPaths,
        tileCache: URL? = nil,
        logger: Logger = Logger(label: "trail.recovery")
    ) async throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        let tilesets = try await database.allTilesets()
        let referenced = Set(tilesets.map(\.storedPath))
        for folder in ["tilesets", "tilesets/pending", "tilesets/quarantine"] {
            for name in (try? fileManager.contentsOfDirectory(atPath: paths.absolute(folder).path)) ?? [] {
                let relative = "\(folder)/\(name)"
                var isDirectory: ObjCBool = false
                guard fileManager.fileExists(atPath: paths.absolute(relative).path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    !referenced.contains(relative)
                else { continue }
                try? fileManager.removeItem(at: paths.absolute(relative))
                report.orphanFiles += 1
            }
        }
        for tileset in tilesets where tileset.scanStatus != .error && !fileManager.fileExists(atPath: paths.absolute(tileset.storedPath).path) {
            try await database.markTilesetMissing(tileset)
            report.missingFiles += 1
        }
        // Previews: keep those of open requests and released versions.
        let manifests = try await database.manifestsInUse()
        // A manifest that cannot be read might name any preview: then none is removed, and the log says why (a silent
        // skip would delete the preview of the very version whose manifest is damaged).
        var keep = Set<String>()
        var unreadable = 0
        for manifest in manifests {
            do {
                if let sha256 = try JSONDecoder().decode(TilesOnly.self, from: Data(manifest.utf8)).tiles?.sha256 { keep.insert(sha256) }
            } catch {
                unreadable += 1
                logger.error("tiles recovery: a stored manifest cannot be read (\(error)); no tile preview is removed")
            }
        }
        report.unreadableManifests = unreadable
        for name in unreadable > 0 ? [] : (try? fileManager.contentsOfDirectory(atPath: paths.tilePreviews.path)) ?? [] {
            let sha = name.hasSuffix(".mbtiles") ? String(name.dropLast(".mbtiles".count)) : name
            guard !keep.contains(sha) else { continue }
            try? fileManager.removeItem(at: paths.tilePreviews.appendingPathComponent(name))
            report.stalePreviews += 1
        }
        // Tiles the fetcher was writing when the server stopped (`.<y>.<id>.tmp`).
        if let tileCache, let walker = fileManager.enumerator(atPath: tileCache.path) {
            while let relative = walker.nextObject() as? String {
                if relative.hasSuffix(".tmp") { try? fileManager.removeItem(at: tileCache.appendingPathComponent(relative)) }
            }
        }
        if report != Report() { logger.notice("tiles recovery: \(report)") }
        return report
    }

    private struct TilesOnly: Decodable {
        struct Tiles: Decodable { let sha256: String }
        let tiles: Tiles?
    }
}
