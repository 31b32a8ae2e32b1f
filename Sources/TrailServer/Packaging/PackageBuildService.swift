import Foundation
import Logging
import MalwareScan
import NIOConcurrencyHelpers
import NIOPosix
import OpenMap
import PackageFormat
import ServiceLifecycle

/// Builds queued publish requests (table `buildJob`) in the background: stage the frozen files, re-scan them
/// with the current signatures, write the signed zip, read it back and check every entry, then mark `pending`.
/// A job survives restarts; a request left half-built by a crash is rebuilt from its snapshot (same bytes).
final class PackageBuildService: Service, Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let scanner: any MalwareScanner
    let signingKey: SigningKey
    let logger: Logger
    /// Makes `tiles/map.mbtiles` when the snapshot has a tile source (nil: packages without tiles).
    let tiles: TilePackager?
    /// Waited for when a snapshot froze files whose optimized copy was still being made (nil: copies are off).
    let media: MediaOptimizer?
    /// Draws `map/basemap.geojson` from the OpenStreetMap extract and the terrain model (nil: no drawn map).
    let openMap: OpenDataMap?
    static let maxAttempts = 3
    private let worker: JobWorker

    init(
        database: AppDatabase,
        paths: DataPaths,
        scanner: any MalwareScanner,
        signingKey: SigningKey,
        logger: Logger = Logger(label: "trail.build"),
        tiles: TilePackager? = nil,
        media: MediaOptimizer? = nil,
        openMap: OpenDataMap? = nil
    ) {
        self.tiles = tiles
        self.openMap = openMap
        self.media = media
        self.database = database
        self.paths = paths
        self.scanner = scanner
        self.signingKey = signingKey
        self.logger = logger
        worker = JobWorker(queue: "build", logger: logger)
    }

    func wake() { worker.wake() }

    func run() async throws {
        // On SIGTERM the running build is not waited for: its task is cancelled, the request stays `building` with its
        // job queued, and recovery builds it again at the next start (a stop must not take as long as a 2 GB zip).
        await worker.run(onStop: .cancel) { _ = await self.drain() }
    }

    /// Builds every queued request, one at a time; returns how many were handled. Tests call this directly.
    @discardableResult
    func drain() async -> Int {
        await worker.drain(
            batch: { try await Array(database.queuedBuilds().prefix(1)) },
            work: {
                await self.build($0)
                return true
            }
        )
    }

    func stagingFolder(_ requestId: String) -> URL { paths.staging.appendingPathComponent(requestId) }
    func stagedZip(_ requestId: String) -> URL { stagingFolder(requestId).appendingPathComponent("package.zip") }

    func build(_ request: PublishRequest) async {
        let staging = stagingFolder(request.id)
        do {
            let attempts = try await database.beginBuildAttempt(requestId: request.id)
            guard attempts <= Self.maxAttempts else {
                throw BuildFailure("the build was interrupted \(attempts - 1) times; giving up")
            }
            let snapshot = try await shippedSnapshot(request)
            let staged = try await BlockingWork.files { try self.stage(snapshot, into: staging) }
            var report = try await rescan(staged, snapshot: snapshot)
            // The map tiles, before the zip: fetched or cut from the uploaded file into staging/<id>/tiles/map.mbtiles.
            let builtTiles = try await tiles?.build(snapshot, scanner: scanner, staging: staging)
            var drawnManifest = ManifestMaker.manifest(for: request, snapshot: snapshot, tiles: builtTiles?.entry)
            // The drawn map of the frame, from the open data in force at this build (what the reviewer then sees).
            var drawn: Basemap?
            if let openMap, case .drawn(let map, _) = await openMap.basemap(frame: snapshot.frame, maxZoom: snapshot.maxZoom) { drawn = map }
            let basemap = drawn?.data
            if let map = drawn {
                drawnManifest.basemap = Manifest.Basemap(
                    sha256: PackageHashing.sha256Hex(map.data),
                    size: Int64(map.data.count),
                    attribution: map.attribution,
                    layers: map.layers
                )
            }
            let manifest = drawnManifest
            if let scan = builtTiles?.scan { report.append(ScanReportEntry(file: scan.file, sha256: scan.sha256, verdict: scan.verdict)) }
            let geoJSON = try TourGeoJSON.make(manifest: manifest)
            let sources = ManifestMaker.sources(snapshot: snapshot, manifest: manifest, staged: staged)
            // Each tile's SHA-256, listed in the signed manifest, for readers that cannot open the MBTiles (the web player).
            let tilesIndex: Data? =
                if let builtTiles {
                    try await BlockingWork.files { try TileIndex.make(mbtiles: builtTiles.file, format: builtTiles.entry.format) }
                } else {
                    nil
                }
            let progress = BuildProgressRecorder(database: database, requestId: request.id)
            let built = try await BlockingWork.files {
                try PackageBuilder.build(
                    manifest: manifest,
                    geoJSON: geoJSON,
                    media: sources,
                    tilesFile: builtTiles?.file,
                    tilesIndex: tilesIndex,
                    basemap: basemap,
                    signingKey: self.signingKey,
                    to: self.stagedZip(request.id),
                    progress: { files, bytes in progress.record(files: files, bytes: bytes) },
                    // The zip is verified whole right after (every entry's SHA-256 against the signed manifest):
                    // hashing each input on the way in as well would only spend a second core on the same bytes.
                    inputCheck: .sizeOnly
                )
            }
            try Task.checkCancellation()
            let verification = await Self.verify(stagedZip(request.id), publicKey: signingKey.publicKeyBase64)
            guard verification.isValid else {
                throw BuildFailure("the written package did not verify: " + verification.problems.map(\.description).joined(separator: "; "))
            }
            try Task.checkCancellation()
            let completed = try await database.completeBuild(
                requestId: request.id,
                sha256: built.sha256,
                size: built.size,
                signature: built.signature.base64EncodedString(),
                manifestJSON: String(decoding: built.manifestBytes, as: UTF8.self),
                scanReport: report
            )
            if !completed { try? FileManager.default.removeItem(at: staging) }  // withdrawn while building
            logger.info("built request \(request.id): \(built.size) bytes")
        } catch  where Task.isCancelled {
            // The server is stopping: left `building`, with its job, for the next start to build again.
            logger.notice("build of request \(request.id) interrupted by the shutdown; it is built again at the next start")
        } catch {
            let reason = (error as? BuildFailure)?.message ?? (error as? TileBuildFailure)?.message ?? String(describing: error)
            logger.error("build of request \(request.id) failed: \(reason)")
            try? FileManager.default.removeItem(at: staging)
            try? await database.failBuild(requestId: request.id, reason: reason)
        }
    }

    /// The request's snapshot with every file that waited for its optimized copy resolved: the copy once it is ready,
    /// the original when it was skipped or the ranger keeps it, and a build failure when it could not be made. The
    /// resolved snapshot is stored with the request, so a rebuild after a crash ships the same bytes.
    func shippedSnapshot(_ request: PublishRequest) async throws -> TourSnapshot {
        var snapshot = request.snapshot
        let waiting = snapshot.waypoints.flatMap(\.assets).filter { $0.awaitingCopy == true }.map(\.assetId)
        guard !waiting.isEmpty else { return snapshot }
        try await media?.waitForCopies(of: waiting)
        let copies = try await database.optimizedCopies(assetIds: waiting)
        for w in snapshot.waypoints.indices {
            for a in snapshot.waypoints[w].assets.indices where snapshot.waypoints[w].assets[a].awaitingCopy == true {
                let entry = snapshot.waypoints[w].assets[a]
                let copy = copies[entry.assetId]
                if copy?.state == .failed {
                    throw BuildFailure(
                        "“\(entry.originalName)” could not be optimized: \(copy?.message ?? ""). Replace it, or choose “Keep original”, and publish again."
                    )
                }
                snapshot.waypoints[w].assets[a].resolve(copy)
            }
        }
        try await database.recordShippedSnapshot(requestId: request.id, snapshot)
        return snapshot
    }

    static func verify(_ zip: URL, publicKey: String) async -> PackageVerificationReport {
        (try? await BlockingWork.files { PackageVerifier.verify(zipAt: zip, publicKeyBase64: publicKey) })
            ?? PackageVerifier.verify(zipAt: zip, publicKeyBase64: publicKey)
    }

    /// Copies (hard links where possible: assets are immutable) every frozen file into `staging/<id>/files/<sha256>`
    /// and checks its size and hash. Returns sha256 → staged URL.
    func stage(_ snapshot: TourSnapshot, into staging: URL) throws -> [String: URL] {
        let fileManager = FileManager.default
        try? fileManager.removeItem(at: staging)
        let files = staging.appendingPathComponent("files")
        try fileManager.createDirectory(at: files, withIntermediateDirectories: true)
        var staged: [String: URL] = [:]
        for asset in snapshot.frozenFiles where staged[asset.sha256] == nil {
            var source = paths.absolute(asset.storedPath)
            if !fileManager.fileExists(atPath: source.path) {
                // The asset may have moved since the snapshot (a rescan); its content address is the same.
                source = paths.assets.appendingPathComponent(asset.sha256)
            }
            guard fileManager.fileExists(atPath: source.path) else {
                throw BuildFailure("the file “\(asset.originalName)” is missing from the data folder")
            }
            let target = files.appendingPathComponent(asset.sha256)
            if link(source.path, target.path) != 0 {
                try fileManager.copyItem(at: source, to: target)
            }
            let (sha, size) = try PackageHashing.sha256(ofFileAt: target)
            guard sha == asset.sha256, size == asset.size else {
                throw BuildFailure("the file “\(asset.originalName)” changed on disk since it was scanned")
            }
            staged[asset.sha256] = target
        }
        return staged
    }

    /// Every staged file again, with today's signatures: a file that was clean last month may not be now.
    func rescan(_ staged: [String: URL], snapshot: TourSnapshot) async throws -> [ScanReportEntry] {
        await scanner.reloadIfChanged()
        guard await scanner.hasSignatures else {
            throw BuildFailure("the malware scanner has no signature database, so the files cannot be re-scanned")
        }
        var report: [ScanReportEntry] = []
        for asset in snapshot.frozenFiles {
            guard let url = staged[asset.sha256] else { continue }
            let verdict = await scanner.scan(fileAt: url.path)
            report.append(ScanReportEntry(file: asset.originalName, sha256: asset.sha256, verdict: verdict.description))
            guard verdict.isClean else {
                try? await database.queueRescan(assetId: asset.assetId, actor: .server(.builder))
                throw BuildFailure("the re-scan found a problem in “\(asset.originalName)”: \(verdict)")
            }
        }
        return report
    }
}

struct BuildFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Writes build progress to the request at most twice a second.
final class BuildProgressRecorder: Sendable {
    let database: AppDatabase
    let requestId: String
    private let last = NIOLockedValueBox<Double>(0)

    init(database: AppDatabase, requestId: String) {
        self.database = database
        self.requestId = requestId
    }

    /// The builder writes manifest.json, manifest.sig and waypoints.geojson before the media; the request's totals
    /// count the media only (the tiles entry comes last and is clamped away by the database).
    static let leadingEntries = 3

    /// Called by the zip builder on its own thread: the write is awaited in a task of its own (the figure is advisory).
    func record(files: Int, bytes: Int64) {
        let files = max(0, files - Self.leadingEntries)
        let now = Date().timeIntervalSince1970
        let due = last.withLockedValue { previous in
            if now - previous < 0.5 { return false }
            previous = now
            return true
        }
        guard due else { return }
        let (database, requestId) = (self.database, self.requestId)
        Task { try? await database.recordBuildProgress(requestId: requestId, filesDone: files, bytesDone: bytes) }
    }
}

/// The manifest of format version 1 (docs/package-format.md), made from a snapshot.
enum ManifestMaker {
    static func manifest(for request: PublishRequest, snapshot: TourSnapshot, tiles: Manifest.Tiles?) -> Manifest {
        var manifest = manifest(for: request, snapshot: snapshot)
        manifest.tiles = tiles
        return manifest
    }

    static func manifest(for request: PublishRequest, snapshot: TourSnapshot) -> Manifest {
        // Fixed from the request, not the clock: the same snapshot always yields the same bytes.
        manifest(packageId: request.packageId, version: request.version, createdAt: request.createdAt, snapshot: snapshot)
    }

    /// Also used by the tour's GeoJSON export, so the export is the document the package's `waypoints.geojson` will be.
    static func manifest(packageId: String, version: Int, createdAt time: Date, snapshot: TourSnapshot) -> Manifest {
        let frame = snapshot.frame
        let estimate = estimate(snapshot)
        let route = snapshot.route
        let createdAt = Manifest.timestamp(time)  // whole seconds
        var manifest = Manifest(
            packageId: packageId,
            version: version,
            createdAt: createdAt,
            packageName: snapshot.name,
            park: snapshot.siteName,
            mapName: snapshot.mapName,
            bounds: Manifest.Bounds(north: frame.north, south: frame.south, east: frame.east, west: frame.west),
            description: snapshot.description,
            waypoints: snapshot.waypoints.enumerated().map { index, waypoint in
                var stop = Manifest.Waypoint(
                    name: waypoint.name,
                    order: waypoint.order,
                    coordinates: Manifest.Coordinates(latitude: waypoint.latitude, longitude: waypoint.longitude),
                    description: waypoint.description,
                    assets: assetPaths(waypoint).map { asset, path in
                        var entry = Manifest.Asset(
                            type: Manifest.AssetType(asset.kind),
                            path: path,
                            mimeType: asset.mimeType,
                            size: asset.size,
                            sha256: asset.sha256,
                            title: asset.title,
                            altText: asset.altText
                        )
                        entry.language = asset.language
                        entry.width = asset.width
                        entry.height = asset.height
                        // Milliseconds are plenty and keep the JSON short (no binary fractions).
                        entry.durationSeconds = asset.durationSeconds.map { ($0 * 1000).rounded() / 1000 }
                        for (role, companion) in asset.companions {
                            // The text's language: its media file's, or the tour's default when the tour has several.
                            let language = asset.language ?? ((snapshot.languages?.count ?? 0) > 1 ? snapshot.languages?.first : nil)
                            let file = Manifest.CompanionFile(
                                path: companionPath(role, of: path, mimeType: companion.mimeType),
                                size: companion.size,
                                sha256: companion.sha256,
                                language: language
                            )
                            if role == .captions { entry.captions = file } else { entry.transcript = file }
                        }
                        return entry
                    },
                    distanceFromPreviousMeters: (estimate.distancesFromPrevious[index] * 10).rounded() / 10,
                    triggerRadiusMeters: waypoint.triggerRadiusMeters,
                    localized: waypoint.localized.map { $0.mapValues { Manifest.WaypointText(name: $0.name, description: $0.description) } }
                )
                // Stable across versions, so an alert's closed stops name the same stop in every saved copy.
                stop.id = waypoint.waypointId
                stop.elevationMeters = waypoint.waypointId.flatMap { snapshot.terrain?.elevation(ofWaypoint: $0) }
                return stop
            },
            route: route.map { routePoints($0, terrain: snapshot.terrain) },
            estimatedDurationMinutes: estimate.totalMinutes
        )
        manifest.languages = snapshot.languages
        manifest.localized = snapshot.localized.map { $0.mapValues { Manifest.TourText(packageName: $0.name, description: $0.description) } }
        // Requests frozen before trail facts ship without them, as their packages always did.
        manifest.trail = snapshot.terrain.map {
            TrailFacts(terrain: $0, walkingMinutes: estimate.totalMinutes, accessibility: snapshot.accessibility)
        }
        return manifest
    }

    /// The route's positions, each with its height when the trail facts have heights: the route's own, or the terrain
    /// model's at each vertex.
    static func routePoints(_ route: RoutePath, terrain: TerrainFacts?) -> [Manifest.RoutePoint] {
        let modelHeights = terrain?.elevationSource == "dem" ? terrain?.routeElevations : nil
        return route.points.enumerated().map { index, point in
            let elevation: Double? =
                switch terrain?.elevationSource {
                case "route": point.elevation
                case "dem": modelHeights.flatMap { index < $0.count ? $0[index] : nil }
                default: nil
                }
            return Manifest.RoutePoint(longitude: point.longitude, latitude: point.latitude, elevation: elevation)
        }
    }

    /// Walking time and distances of the frozen tour (route, pace and media play times as submitted).
    static func estimate(_ snapshot: TourSnapshot) -> DurationEstimate {
        DurationEstimate.estimate(
            waypoints: snapshot.waypoints.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) },
            route: snapshot.route,
            ascentMeters: snapshot.terrain.map(\.ascentMeters) ?? snapshot.route?.ascentMeters,
            paceKmh: snapshot.paceKmh ?? 4,
            dwellSeconds: snapshot.waypoints.map { waypoint in
                // A visitor hears one language: the files for every language and those for the default one.
                let seconds = waypoint.assets.filter {
                    ($0.kind == "audio" || $0.kind == "video") && ($0.language == nil || $0.language == snapshot.languages?.first)
                }
                .compactMap(\.durationSeconds)
                return seconds.isEmpty ? nil : seconds.reduce(0, +)
            }
        )
    }

    /// `waypoints/01-fish-lake/01-intro.mp4`: the position keeps names unique within the folder.
    static func assetPaths(_ waypoint: TourSnapshot.WaypointEntry) -> [(TourSnapshot.AssetEntry, String)] {
        let folder = PackageLayout.waypointFolder(order: waypoint.order, name: waypoint.name)
        return waypoint.assets.enumerated().map { index, asset in
            let number = index + 1 < 10 ? "0\(index + 1)" : "\(index + 1)"
            let name = PackageLayout.safeFileName(asset.originalName, fallbackExtension: fileExtension(asset.mimeType))
            return (asset, "\(folder)/\(number)-\(name)")
        }
    }

    /// Beside its media file, under the same number and name: `01-intro.mp4` → `01-intro-captions.vtt`,
    /// `01-intro-transcript.txt` (one dot per name, as ``PackageLayout/safeFileName(_:fallbackExtension:)`` makes them).
    static func companionPath(_ role: CompanionRole, of mediaPath: String, mimeType: String) -> String {
        let stem = mediaPath.lastIndex(of: ".").map { String(mediaPath[..<$0]) } ?? mediaPath
        return "\(stem)-\(role.rawValue).\(mimeType.hasPrefix("text/vtt") ? "vtt" : "txt")"
    }

    static func sources(snapshot: TourSnapshot, manifest: Manifest, staged: [String: URL]) -> [PackageEntrySource] {
        snapshot.waypoints.flatMap { waypoint in
            assetPaths(waypoint).flatMap { asset, path in
                [staged[asset.sha256].map { PackageEntrySource(path: path, fileURL: $0, mimeType: asset.mimeType) }]
                    + asset.companions.map { role, companion in
                        staged[companion.sha256].map {
                            PackageEntrySource(
                                path: companionPath(role, of: path, mimeType: companion.mimeType),
                                fileURL: $0,
                                mimeType: companion.mimeType
                            )
                        }
                    }
            }.compactMap { $0 }
        }
    }

    static func fileExtension(_ mimeType: String) -> String {
        switch mimeType.split(separator: ";")[0] {
        case "video/mp4": "mp4"
        case "video/quicktime": "mov"
        case "video/webm": "webm"
        case "audio/mpeg": "mp3"
        case "audio/mp4": "m4a"
        case "audio/aac": "aac"
        case "audio/ogg": "ogg"
        case "audio/wav": "wav"
        case "audio/flac": "flac"
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/webp": "webp"
        case "image/gif": "gif"
        default: "txt"
        }
    }
}
