import Foundation
import GRDB

/// A tour's media as uploaded and as it ships (the tour page's download size).
struct MediaDownloadSize: Sendable, Equatable {
    var originalBytes: Int64 = 0
    var shippedBytes: Int64 = 0
    var pendingCopies = 0

    /// "Media: 1.4 GiB as uploaded, 212.0 MiB for phones, about 29 min on a slow link (1 Mbit/s)."
    var summary: String {
        var text =
            "Media: \(ByteFormat.string(originalBytes)) as uploaded, \(ByteFormat.string(shippedBytes)) to download: "
            + "\(DisplayFormat.slowLinkTime(shippedBytes)) on a slow phone link (1 Mbit/s)."
        if pendingCopies > 0 { text += " \(pendingCopies) file(s) still being optimized; the size drops as they finish." }
        return text
    }
}

/// What a finished conversion brings to the database.
struct OptimizeResult: Sendable {
    var state: OptimizeState
    var storedPath: String? = nil
    var size: Int64? = nil
    var sha256: String? = nil
    var mimeType: String? = nil
    var width: Int? = nil
    var height: Int? = nil
    var durationSeconds: Double? = nil
    var encoder: String = ""
    var message: String = ""
}

extension AppDatabase {
    /// Queues a copy of `asset` (a pending row is the job), replacing one made from another original or other settings.
    /// A building block of the scan's verdict and of `media optimize`, inside their transactions.
    static func queueOptimization(_ db: Database, asset: Asset, settings: String) throws {
        guard OptimizedCopy.applies(to: asset.kind), asset.companionOf == nil, asset.scanStatus == .clean else { return }
        let now = Date()
        try OptimizedCopy(assetId: asset.id, state: .pending, sourceSha256: asset.sha256, settings: settings, queuedAt: now, updatedAt: now)
            .insert(db, onConflict: .replace)
    }

    func optimizedCopy(assetId: Int64) async throws -> OptimizedCopy? {
        try await read { try OptimizedCopy.fetchOne($0, key: assetId) }
    }

    /// The copies of every file of a tour, by asset.
    func optimizedCopies(tourId: Int64) async throws -> [Int64: OptimizedCopy] {
        try await read { db in try Self.copiesByAsset(db, tourId: tourId) }
    }

    static func copiesByAsset(_ db: Database, tourId: Int64) throws -> [Int64: OptimizedCopy] {
        try OptimizedCopy.fetchAll(
            db,
            sql: """
                SELECT optimizedCopy.* FROM optimizedCopy JOIN asset ON asset.id = optimizedCopy.assetId
                JOIN waypoint ON waypoint.id = asset.waypointId WHERE waypoint.tourId = ?
                """,
            arguments: [tourId]
        ).reduce(into: [:]) { $0[$1.assetId] = $1 }
    }

    func optimizedCopies(assetIds: [Int64]) async throws -> [Int64: OptimizedCopy] {
        try await read { db in
            try OptimizedCopy.filter(keys: assetIds).fetchAll(db).reduce(into: [:]) { $0[$1.assetId] = $1 }
        }
    }

    /// The oldest pending jobs with their assets.
    func pendingOptimizations(limit: Int) async throws -> [(OptimizedCopy, Asset)] {
        try await read { db in
            try OptimizedCopy.filter(OptimizedCopy.Columns.state == OptimizeState.pending).order(OptimizedCopy.Columns.queuedAt).limit(limit)
                .fetchAll(db).compactMap { copy in try Asset.fetchOne(db, id: copy.assetId).map { (copy, $0) } }
        }
    }

    func pendingOptimizationCount() async throws -> Int {
        try await read { try OptimizedCopy.filter(OptimizedCopy.Columns.state == OptimizeState.pending).fetchCount($0) }
    }

    func recordOptimizeProgress(assetId: Int64, progress: Double) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE optimizedCopy SET progress = ?, updatedAt = ? WHERE assetId = ? AND state = ?",
                arguments: [min(1, max(0, progress)), Date().dbTime, assetId, OptimizeState.pending]
            )
        }
    }

    /// Ends a job. Ignored when the job changed meanwhile (the file was replaced or deleted, or queued again with other
    /// settings): `accepted` is false, and the caller removes the copy it made unless something else uses it.
    /// `released` is the copy this one replaced (made with older settings) when nothing uses it any more.
    @discardableResult
    func finishOptimization(
        assetId: Int64,
        sourceSha256: String,
        settings: String,
        _ result: OptimizeResult
    ) async throws -> (accepted: Bool, released: String?) {
        try await write { db in
            guard var copy = try OptimizedCopy.fetchOne(db, key: assetId), copy.state == .pending, copy.sourceSha256 == sourceSha256,
                copy.settings == settings
            else { return (false, nil) }
            let previous = copy.storedPath
            copy.state = result.state
            copy.progress = result.state == .pending ? copy.progress : 1
            copy.storedPath = result.storedPath
            copy.size = result.size
            copy.sha256 = result.sha256
            copy.mimeType = result.mimeType
            copy.width = result.width
            copy.height = result.height
            copy.durationSeconds = result.durationSeconds
            copy.encoder = String(result.encoder.prefix(200))
            copy.message = String(result.message.prefix(500))
            copy.updatedAt = Date()
            try copy.update(db)
            let siteId = try Int64.fetchOne(
                db,
                sql: """
                    SELECT tour.siteId FROM asset JOIN waypoint ON waypoint.id = asset.waypointId JOIN tour ON tour.id = waypoint.tourId WHERE asset.id = ?
                    """,
                arguments: [assetId]
            )
            let detail =
                switch result.state {
                case .ready: "\(result.size ?? 0) bytes, SHA-256 \(result.sha256 ?? "")"
                default: result.message
                }
            try AuditEvent.record(
                db,
                actor: .server(.optimizer),
                siteId: siteId,
                objectId: "\(assetId)",
                action: .optimize(result.state),
                detail: detail
            )
            guard let previous, previous != result.storedPath, try !Self.isReferenced(db, storedPath: previous) else { return (true, nil) }
            return (true, previous)
        }
    }

    /// The ranger's "keep original" choice for one file; refused while the tour is locked for review.
    @discardableResult
    func setUseOriginal(assetId: Int64, _ useOriginal: Bool, actor: AuditActor) async throws -> Asset {
        try await write { db in
            guard var asset = try Asset.fetchOne(db, id: assetId), let waypoint = try Waypoint.fetchOne(db, id: asset.waypointId) else {
                throw NotFound()
            }
            let tour = try Self.editableTour(db, id: waypoint.tourId)
            guard asset.companionOf == nil, OptimizedCopy.applies(to: asset.kind) else {
                throw ValidationErrors(["useOriginal": "Only video, audio and image files have an optimized copy to choose against."])
            }
            guard asset.useOriginal != useOriginal else { return asset }
            asset.useOriginal = useOriginal
            try asset.update(db)
            try Self.touch(db, tourId: tour.id)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: tour.siteId,
                objectId: "\(assetId)",
                action: useOriginal ? .assetKeepOriginal : .assetUseOptimized,
                detail: asset.originalName
            )
            return asset
        }
    }

    /// Queues copies for clean media files (of one site, or all) that have none made with `settings` from their
    /// current original: files uploaded before copies existed, and copies of older settings. Returns the assets queued.
    func queueMissingOptimizations(siteId: Int64?, settings: String, dryRun: Bool) async throws -> [Asset] {
        try await write { db in
            let assets = try Asset.fetchAll(
                db,
                sql: """
                    SELECT asset.* FROM asset JOIN waypoint ON waypoint.id = asset.waypointId JOIN tour ON tour.id = waypoint.tourId
                    LEFT JOIN optimizedCopy ON optimizedCopy.assetId = asset.id
                    WHERE asset.companionOf IS NULL AND asset.kind IN ('video', 'audio', 'image') AND asset.scanStatus = 'clean'
                      AND (? IS NULL OR tour.siteId = ?)
                      AND (optimizedCopy.assetId IS NULL OR optimizedCopy.settings <> ? OR optimizedCopy.sourceSha256 <> asset.sha256
                           OR optimizedCopy.state = 'pending')
                    ORDER BY asset.id
                    """,
                arguments: [siteId, siteId, settings]
            )
            guard !dryRun else { return assets }
            for asset in assets where try OptimizedCopy.fetchOne(db, key: asset.id)?.state != .pending {
                try Self.queueOptimization(db, asset: asset, settings: settings)
            }
            if !assets.isEmpty {
                try AuditEvent.record(
                    db,
                    actor: .server(.cli),
                    siteId: siteId,
                    objectId: "optimize",
                    action: .mediaOptimizeQueue,
                    detail: "\(assets.count) file(s)"
                )
            }
            return assets
        }
    }

    /// At start: copies made with other settings than today's are made again (only those: a new ffmpeg alone changes
    /// nothing, so published files keep their SHA-256). Returns how many were queued.
    func requeueOutdatedOptimizations(settings: String) async throws -> Int {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE optimizedCopy SET state = 'pending', progress = 0, settings = ?, message = '', queuedAt = ?, updatedAt = ?
                    WHERE settings <> ?
                    """,
                arguments: [settings, Date().dbTime, Date().dbTime, settings]
            )
            return db.changesCount
        }
    }

    /// What a tour's files weigh as uploaded and as they would ship now (optimized copies where ready and not kept as
    /// original; captions and transcripts in both), and how many copies are still being made.
    static func downloadSize(_ db: Database, tourId: Int64) throws -> MediaDownloadSize {
        let files = try Asset.fetchAll(
            db,
            sql: "SELECT asset.* FROM asset JOIN waypoint ON waypoint.id = asset.waypointId WHERE waypoint.tourId = ?",
            arguments: [tourId]
        )
        let copies = try Self.copiesByAsset(db, tourId: tourId)
        var size = MediaDownloadSize()
        for file in files {
            size.originalBytes += file.size
            size.shippedBytes += ShippedFile(asset: file, copy: copies[file.id]).size
            if copies[file.id]?.state == .pending { size.pendingCopies += 1 }
        }
        return size
    }

    /// Whether an optimized copy lives at `storedPath` (``isReferenced(_:storedPath:)`` asks it too).
    static func isReferencedCopy(_ db: Database, storedPath: String) throws -> Bool {
        (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM optimizedCopy WHERE storedPath = ?", arguments: [storedPath]) ?? 0) > 0
    }

    /// The stored copies of these assets, read before they are deleted, so their files can go too.
    static func copyPaths(_ db: Database, assetIds: [Int64]) throws -> [String] {
        try OptimizedCopy.filter(keys: assetIds).fetchAll(db).compactMap(\.storedPath)
    }
}
