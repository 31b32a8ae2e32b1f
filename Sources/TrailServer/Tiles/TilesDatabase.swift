import Foundation
import GRDB

// Uploaded tilesets: the named reads and writes.
extension AppDatabase {
    func tileset(tourId: Int64) async throws -> TourTileset? {
        try await read { try TourTileset.fetchOne($0, key: tourId) }
    }

    /// Puts a new (pending) tileset in place of the tour's old one. Returns the stored paths nothing references any more.
    func replaceTileset(_ tileset: TourTileset, actor: AuditActor) async throws -> [String] {
        try await write { db in
            let tour = try Self.editableTour(db, id: tileset.tourId)
            var released: [String] = []
            if let old = try TourTileset.fetchOne(db, key: tileset.tourId) {
                try old.delete(db)
                released.append(old.storedPath)
            }
            try tileset.insert(db)
            try Self.touch(db, tourId: tour.id)
            try AuditEvent.record(
                db,
                actor: actor,
                tour: tour,
                action: .tilesUpload,
                detail:
                    "\(tileset.originalName) (\(tileset.size) bytes, \(tileset.format), zoom \(tileset.minZoom)-\(tileset.maxZoom), \(tileset.tileCount) tiles)"
            )
            try Self.requireRoom(db, siteId: tour.siteId, excludingUpload: nil)
            return try released.filter { try !Self.isTilesetReferenced(db, storedPath: $0) }
        }
    }

    /// Removes the tour's tileset (the tile server is used again). Returns the stored path if nothing references it any more.
    /// A tour without one is left as it is, with no audit event: there was nothing to remove.
    func deleteTileset(tourId: Int64, actor: AuditActor) async throws -> [String] {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            guard let old = try TourTileset.fetchOne(db, key: tourId) else { return [] }
            try old.delete(db)
            try AuditEvent.record(db, actor: actor, tour: tour, action: .tilesDelete, detail: old.originalName)
            return try Self.isTilesetReferenced(db, storedPath: old.storedPath) ? [] : [old.storedPath]
        }
    }

    static func isTilesetReferenced(_ db: Database, storedPath: String) throws -> Bool {
        try TourTileset.filter(Column("storedPath") == storedPath).fetchCount(db) > 0
    }

    func pendingTilesets() async throws -> [TourTileset] {
        try await read { try TourTileset.filter(Column("scanStatus") == ScanStatus.pending.rawValue).order(Column("createdAt")).fetchAll($0) }
    }

    /// Records a verdict and the file's new place. Says whether it was recorded (the row may have been replaced while
    /// the file was scanned: only the same upload gets the verdict) and the old path if nothing references it any more.
    func recordTilesetScan(
        tourId: Int64,
        sha256: String,
        status: ScanStatus,
        detail: String,
        storedPath: String
    ) async throws
        -> (recorded: Bool, released: String?)
    {
        try await write { db in
            guard var tileset = try TourTileset.fetchOne(db, key: tourId), tileset.sha256 == sha256, tileset.scanStatus == .pending else {
                return (false, nil)
            }
            let previous = tileset.storedPath
            tileset.scanStatus = status
            tileset.scanDetail = String(detail.prefix(500))
            tileset.storedPath = storedPath
            tileset.scannedAt = Date()
            try tileset.update(db)
            let siteId = try Int64.fetchOne(db, sql: "SELECT siteId FROM tour WHERE id = ?", arguments: [tourId])
            try AuditEvent.record(
                db,
                actor: .server(.scanner),
                siteId: siteId,
                objectId: "\(tourId)",
                action: .tilesScan(status),
                detail: detail.isEmpty ? tileset.originalName : detail
            )
            guard previous != storedPath else { return (true, nil) }
            return (true, try Self.isTilesetReferenced(db, storedPath: previous) ? nil : previous)
        }
    }

    // MARK: Publishing

    /// Checklist lines about the tiles: the uploaded file must be clean and cover the frame; tiles from the tile server
    /// must stay under the cap.
    static func tileChecklist(_ db: Database, tour: Tour, frame: Frame, settings: TileSettings) throws -> [String] {
        if let tileset = try TourTileset.fetchOne(db, key: tour.id) {
            var problems: [String] = []
            if tileset.scanStatus != .clean {
                problems.append("The map tiles file “\(tileset.originalName)” is \(tileset.scanStatus.rawValue), not clean.")
            }
            if !tileset.bounds.overlaps(frame) {
                problems.append("The map tiles file “\(tileset.originalName)” does not cover the frame: upload one for this area or delete it.")
            }
            return problems
        }
        guard settings.usableTemplate != nil else { return [] }
        let zooms = tour.minZoom...max(tour.minZoom, tour.maxZoom)
        let count = TileMath.count(frame, zooms: zooms)
        guard count > settings.tileCap else { return [] }
        return [
            "The frame exceeds the tile cap: it needs \(DisplayFormat.grouped(count)) map tiles at zoom \(zooms.lowerBound)–\(zooms.upperBound), more than the cap of \(DisplayFormat.grouped(settings.tileCap)). Make the frame smaller or lower the largest zoom."
        ]
    }

    /// The tile source frozen into a snapshot: the tour's clean uploaded file, else the tile server, else none.
    static func tileSource(_ db: Database, tour: Tour, settings: TileSettings) throws -> TileSourceSnapshot? {
        if let tileset = try TourTileset.fetchOne(db, key: tour.id), tileset.scanStatus == .clean {
            return TileSourceSnapshot(
                kind: .upload,
                minZoom: tileset.minZoom,
                maxZoom: tileset.maxZoom,
                attribution: tileset.attribution,
                originalName: tileset.originalName,
                sha256: tileset.sha256,
                size: tileset.size,
                storedPath: tileset.storedPath,
                format: tileset.format
            )
        }
        guard let template = settings.usableTemplate else { return nil }
        return TileSourceSnapshot(
            kind: .server,
            minZoom: tour.minZoom,
            maxZoom: max(tour.minZoom, tour.maxZoom),
            attribution: settings.attribution,
            urlTemplate: template,
            tileCap: settings.tileCap
        )
    }
}

// Recovery after a crash (`TilesRecovery`).
extension AppDatabase {
    /// Every tour's uploaded tileset (recovery checks each one's file).
    func allTilesets() async throws -> [TourTileset] {
        try await read { try TourTileset.fetchAll($0) }
    }

    /// A tileset whose stored file is gone: marked as a scan error, audited.
    func markTilesetMissing(_ tileset: TourTileset) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE tourTileset SET scanStatus = ?, scanDetail = 'the stored file is missing' WHERE tourId = ?",
                arguments: [ScanStatus.error, tileset.tourId]
            )
            try AuditEvent.record(
                db,
                actor: .server(.recovery),
                objectId: "\(tileset.tourId)",
                action: .tilesMissing,
                detail: tileset.storedPath
            )
        }
    }

    /// The manifests of requests under review and of released versions: the tile previews they name are kept.
    func manifestsInUse() async throws -> [String] {
        try await read { db in
            try String.fetchAll(
                db,
                SQLRequest(
                    literal: """
                        SELECT manifestJSON FROM publishRequest WHERE manifestJSON IS NOT NULL AND state IN \(PublishState.reviewable)
                        UNION ALL SELECT manifestJSON FROM packageVersion
                        """
                )
            )
        }
    }
}

extension AppDatabase {
    func isTilesetPathReferenced(_ storedPath: String) async throws -> Bool {
        try await read { try Self.isTilesetReferenced($0, storedPath: storedPath) }
    }
}
