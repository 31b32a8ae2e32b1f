import Foundation
import Logging
import MalwareScan
import NIOPosix
import PackageFormat

/// Makes a package's `tiles/map.mbtiles` in the request's staging folder, from the source frozen in the snapshot:
/// the tour's uploaded MBTiles (copied, re-scanned, cut to the frame) or the tile server (fetched through the cache).
/// Either way the file is written fresh: MBTiles 1.3 metadata, TMS rows, only tiles that intersect the frame, identical
/// images stored once, vacuumed. Nothing is fetched when the frame needs more tiles than the cap.
struct TilePackager: Sendable {
    let paths: DataPaths
    let cacheRoot: URL
    let options: TileFetchOptions
    let userAgent: String
    let logger: Logger

    init(paths: DataPaths, cacheRoot: URL, options: TileFetchOptions, userAgent: String, logger: Logger = Logger(label: "trail.tiles")) {
        self.paths = paths
        self.cacheRoot = cacheRoot
        self.options = options
        self.userAgent = userAgent
        self.logger = logger
    }

    struct Built: Sendable {
        let entry: Manifest.Tiles
        let file: URL
        /// The uploaded file's verdict at build time (for the request's scan report).
        let scan: (file: String, sha256: String, verdict: String)?
        let fetched: TileFetcher.Summary?
    }

    static let batchSize = 256

    /// Nil when the snapshot has no tile source.
    func build(
        _ snapshot: TourSnapshot,
        scanner: any MalwareScanner,
        staging: URL,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Built? {
        guard let source = snapshot.tiles else { return nil }
        let folder = staging.appendingPathComponent("tiles")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("map.mbtiles")
        do {
            switch source.kind {
            case .upload: return try await fromUpload(source, snapshot: snapshot, scanner: scanner, folder: folder, output: output)
            case .server: return try await fromServer(source, snapshot: snapshot, output: output, progress: progress)
            }
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    // MARK: Uploaded MBTiles

    func fromUpload(_ source: TileSourceSnapshot, snapshot: TourSnapshot, scanner: any MalwareScanner, folder: URL, output: URL) async throws -> Built
    {
        let name = source.originalName ?? "map tiles"
        guard let sha256 = source.sha256 else { throw TileBuildFailure("The map tiles file “\(name)” has no checksum; upload it again.") }
        var stored = source.storedPath.map(paths.absolute) ?? paths.tilesets.appendingPathComponent("\(sha256).mbtiles")
        if !FileManager.default.fileExists(atPath: stored.path) { stored = paths.tilesets.appendingPathComponent("\(sha256).mbtiles") }
        guard FileManager.default.fileExists(atPath: stored.path) else {
            throw TileBuildFailure("The map tiles file “\(name)” is missing from the data folder; upload it again.")
        }
        let copy = folder.appendingPathComponent("source.mbtiles")
        if link(stored.path, copy.path) != 0 { try FileManager.default.copyItem(at: stored, to: copy) }
        defer { try? FileManager.default.removeItem(at: copy) }
        let (actual, _) = try PackageHashing.sha256(ofFileAt: copy)
        guard actual == sha256 else { throw TileBuildFailure("The map tiles file “\(name)” changed on disk since it was scanned.") }
        // With today's signatures, like every other file of the package.
        await scanner.reloadIfChanged()
        guard await scanner.hasSignatures else {
            throw TileBuildFailure("the malware scanner has no signature database, so the map tiles file cannot be re-scanned")
        }
        let verdict = await MBTilesScanning.scan(copy, with: scanner)
        guard verdict.isClean else { throw TileBuildFailure("the re-scan found a problem in the map tiles file “\(name)”: \(verdict)") }

        let frame = snapshot.frame
        let entry: Manifest.Tiles = try await BlockingWork.files {
            let reader: MBTilesReader
            let info: MBTilesInfo
            do {
                reader = try MBTilesReader(url: copy)
                info = try reader.info()
            } catch let error as MBTilesError {
                throw TileBuildFailure("The map tiles file “\(name)”: \(error)")
            }
            defer { reader.close() }
            guard info.bounds.overlaps(frame) else {
                throw TileBuildFailure(
                    MBTilesError.boundsOutsideFrame(bounds: DisplayFormat.frame(info.bounds), frame: DisplayFormat.frame(frame)).description
                )
            }
            let writer = try MBTilesWriter(url: output)
            for zoom in info.minZoom...info.maxZoom {
                var batch: [(TileID, Data)] = []
                try reader.tiles(in: frame, zoom: zoom) { tile, data in
                    batch.append((tile, data))
                    if batch.count >= Self.batchSize {
                        try writer.add(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                try writer.add(batch)
            }
            guard writer.tileCount > 0 else {
                throw TileBuildFailure("The map tiles file “\(name)” has no tiles inside the frame.")
            }
            let zooms = info.minZoom...info.maxZoom
            try writer.finish(
                metadata: MBTilesWriter.metadata(
                    name: snapshot.name,
                    description: "Offline map of \(snapshot.name)",
                    format: info.format,
                    frame: frame,
                    zooms: zooms,
                    attribution: info.attribution.isEmpty ? source.attribution : info.attribution
                )
            )
            return try Self.entry(output, format: info.format, zooms: zooms, count: writer.tileCount)
        }
        // What the package will carry is what the scanner must see: the tiles as written out, not only the raw upload.
        let extracted = await MBTilesScanning.scan(output, with: scanner)
        guard extracted.isClean else {
            throw TileBuildFailure("the scan of the map tiles taken from “\(name)” found a problem: \(extracted)")
        }
        logger.info("tiles from “\(name)”: \(entry.tileCount) tiles, \(entry.size ?? 0) bytes")
        return Built(entry: entry, file: output, scan: (name, sha256, verdict.description), fetched: nil)
    }

    // MARK: Tile server

    func fromServer(_ source: TileSourceSnapshot, snapshot: TourSnapshot, output: URL, progress: (@Sendable (Int) -> Void)?) async throws -> Built {
        guard let template = source.urlTemplate, TileURLTemplate.problem(template) == nil else {
            throw TileBuildFailure("The tile server URL template is not usable; an admin must fix it in the map tile settings.")
        }
        let frame = snapshot.frame
        let zooms = source.zooms
        let cap = source.tileCap ?? TileSettings.defaultTileCap
        let count = TileMath.count(frame, zooms: zooms)
        guard count <= cap else {
            throw TileBuildFailure(
                "The frame needs \(DisplayFormat.grouped(count)) map tiles at zoom \(zooms.lowerBound)–\(zooms.upperBound), more than the cap of "
                    + "\(DisplayFormat.grouped(cap)); no tile was fetched. Make the frame smaller or lower the largest zoom."
            )
        }
        let tiles = TileMath.tiles(frame, zooms: zooms)
        let fetcher = TileFetcher(template: template, cacheRoot: cacheRoot, options: options, userAgent: userAgent, logger: logger)
        let summary = try await fetcher.fetch(tiles, progress: progress)
        var formats = Set<String>()
        for case let .file(_, format) in summary.outcomes.values { formats.insert(format) }
        guard let format = formats.first else {
            throw TileBuildFailure("The tile server \(TileFetcher.host(template)) has no tiles for this frame (every tile was missing).")
        }
        guard formats.count == 1 else {
            throw TileBuildFailure(
                "The tile server sent tiles in several formats (\(formats.sorted().joined(separator: ", "))); an MBTiles file holds one."
            )
        }
        let entry: Manifest.Tiles = try await BlockingWork.files {
            let writer = try MBTilesWriter(url: output)
            var batch: [(TileID, Data)] = []
            for tile in tiles {
                guard case let .file(url, _)? = summary.outcomes[tile] else { continue }
                batch.append((tile, try Data(contentsOf: url)))
                if batch.count >= Self.batchSize {
                    try writer.add(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try writer.add(batch)
            try writer.finish(
                metadata: MBTilesWriter.metadata(
                    name: snapshot.name,
                    description: "Offline map of \(snapshot.name)",
                    format: format,
                    frame: frame,
                    zooms: zooms,
                    attribution: source.attribution
                )
            )
            return try Self.entry(output, format: format, zooms: zooms, count: writer.tileCount)
        }
        logger.info(
            "tiles from \(TileFetcher.host(template)): \(entry.tileCount) tiles (\(summary.fromCache) cached, \(summary.fetched) fetched, \(summary.retries) retries)"
        )
        return Built(entry: entry, file: output, scan: nil, fetched: summary)
    }

    static func entry(_ file: URL, format: String, zooms: ClosedRange<Int>, count: Int) throws -> Manifest.Tiles {
        let (sha256, size) = try PackageHashing.sha256(ofFileAt: file)
        return Manifest.Tiles(format: format, minZoom: zooms.lowerBound, maxZoom: zooms.upperBound, tileCount: count, sha256: sha256, size: size)
    }
}
