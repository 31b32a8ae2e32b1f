import Foundation
import GRDB
import Logging
import MalwareScan
import NIOConcurrencyHelpers
import ServiceLifecycle
import _NIOFileSystem

/// Works through the durable scan queue (table `scanJob`) in the background, off the event loop.
/// Clean files move to `assets/<sha256>` (stored once however often uploaded), everything else to `quarantine/`.
/// Without signatures nothing is scanned: assets stay `pending` (fail closed) until a database appears.
final class ScanService: Service, Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let scanner: any MalwareScanner
    let logger: Logger
    private let ready = NIOLockedValueBox(false)
    /// Queues a phone-sized copy of each clean media file, when media optimization is on.
    private let optimizer = NIOLockedValueBox<MediaOptimizer?>(nil)
    private let worker: JobWorker

    init(database: AppDatabase, paths: DataPaths, scanner: any MalwareScanner, logger: Logger = Logger(label: "trail.scan")) {
        self.database = database
        self.paths = paths
        self.scanner = scanner
        self.logger = logger
        worker = JobWorker(queue: "scan", logger: logger)
    }

    /// True once the scanner has signatures; admins see a banner while it is false.
    var scannerReady: Bool { ready.withLockedValue { $0 } }

    /// New work arrived.
    func wake() { worker.wake() }

    /// From now on a clean video, audio file or image gets its optimized copy queued with its verdict.
    func attach(_ optimizer: MediaOptimizer) { self.optimizer.withLockedValue { $0 = optimizer } }

    func run() async throws {
        await scanner.reloadIfChanged()
        // Every 30 s: pick up changed signature folders and retry what waited for them.
        await worker.run(
            onStop: .finishBatch,
            ticker: { [scanner] in
                try? await Task.sleep(for: .seconds(30))
                await scanner.reloadIfChanged()
            },
            pass: { _ = await self.drain() }
        )
    }

    /// Scans every queued job (two at a time); returns how many finished. Tests call this directly.
    @discardableResult
    func drain() async -> Int {
        let hasSignatures = await scanner.hasSignatures
        ready.withLockedValue { $0 = hasSignatures }
        guard hasSignatures else { return 0 }
        let assets = await worker.drain(
            batch: { try await database.queuedScanJobs(limit: 2) },
            concurrency: 2,
            work: { (asset: Asset) in
                await self.process(asset)
                return true
            }
        )
        // The uploaded map tiles, in one read: one whose verdict cannot be recorded waits for the next pass instead of
        // being read again at once.
        var tilesetsRead = false
        let tilesets = await worker.drain(
            batch: {
                if tilesetsRead { return [] }
                tilesetsRead = true
                return try await database.pendingTilesets()
            },
            work: { (tileset: TourTileset) in
                await self.process(tileset)
                return true
            }
        )
        return assets + tilesets
    }

    func process(_ asset: Asset) async {
        let source = paths.absolute(asset.storedPath)
        do {
            guard FileManager.default.fileExists(atPath: source.path) else {
                _ = try await database.recordScan(
                    assetId: asset.id,
                    status: .error,
                    detail: "the stored file is missing",
                    storedPath: asset.storedPath
                )
                return
            }
            let verdict = await scanner.scan(fileAt: source.path)
            let status = ScanStatus(rawValue: verdict.statusName) ?? .error
            let target =
                status == .clean
                ? "assets/\(asset.sha256)"
                : (asset.storedPath.hasPrefix("quarantine/") ? asset.storedPath : "quarantine/\(UUID().uuidString.lowercased())")
            if target != asset.storedPath {
                try Self.place(source, at: paths.absolute(target))
            }
            let optimizer = self.optimizer.withLockedValue { $0 }
            if let released = try await database.recordScan(
                assetId: asset.id,
                status: status,
                detail: verdict.detail,
                storedPath: target,
                optimize: optimizer?.settingsID
            ) {
                try? FileManager.default.removeItem(at: paths.absolute(released))
            }
            if status == .clean { optimizer?.wake() }
            logger.info("scanned asset \(asset.id): \(verdict)")
        } catch {
            logger.error("scan of asset \(asset.id) failed: \(error)")
            _ = try? await database.recordScan(assetId: asset.id, status: .error, detail: "scan failed: \(error)", storedPath: asset.storedPath)
        }
    }

    /// Hard-links `source` at `target`, so the database can be switched before the old name goes.
    /// An existing target with the same content (content-addressed assets) is kept as it is.
    static func place(_ source: URL, at target: URL) throws {
        if link(source.path, target.path) == 0 { return }
        if errno == EEXIST { return }
        throw POSIXFailure(operation: "link \(source.lastPathComponent) → \(target.lastPathComponent)", code: errno)
    }
}
