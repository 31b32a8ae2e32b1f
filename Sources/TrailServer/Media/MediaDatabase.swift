import Foundation
import GRDB

/// What a finished upload brings to the database.
struct NewAsset: Sendable {
    let tourId: Int64
    let waypointId: Int64
    let replacesAssetId: Int64?
    let detected: FileTypeDetector.Detected
    let originalName: String
    let size: Int64
    let sha256: String
    /// The received file, uploads/<uploadId> under the data folder; a tus upload's row of that id is still open.
    let uploadId: String
    var durationSeconds: Double? = nil
    var storedPath: String { "uploads/\(uploadId)" }
}

extension AppDatabase {
    func assets(waypointId: Int64) async throws -> [Asset] {
        try await read { try Asset.filter(Asset.Columns.waypointId == waypointId && Asset.listed).order(Asset.Columns.position).fetchAll($0) }
    }

    /// The captions and transcripts of a waypoint's files, by the file they belong to.
    func companions(waypointId: Int64) async throws -> [Int64: AssetCompanions] {
        AssetCompanions.grouped(try await read { try Asset.filter(Asset.Columns.waypointId == waypointId && !Asset.listed).fetchAll($0) })
    }

    /// The captions and transcripts of every file of a tour, by the file they belong to.
    func companions(tourId: Int64) async throws -> [Int64: AssetCompanions] {
        AssetCompanions.grouped(
            try await read { db in
                try Asset.filter(sql: "companionOf IS NOT NULL AND waypointId IN (SELECT id FROM waypoint WHERE tourId = ?)", arguments: [tourId])
                    .fetchAll(db)
            }
        )
    }

    /// One file's captions and transcript.
    func companions(of assetId: Int64) async throws -> AssetCompanions {
        AssetCompanions.grouped(try await read { try Asset.filter(Asset.Columns.companionOf == assetId).fetchAll($0) })[assetId] ?? AssetCompanions()
    }

    /// Every file of a tour's waypoints, by waypoint, each list in order (one query for the whole tour).
    func assets(tourId: Int64) async throws -> [Int64: [Asset]] {
        try await read { db in
            try Asset.filter(sql: "companionOf IS NULL AND waypointId IN (SELECT id FROM waypoint WHERE tourId = ?)", arguments: [tourId])
                .order(Asset.Columns.waypointId, Asset.Columns.position).fetchAll(db)
        }.reduce(into: [:]) { $0[$1.waypointId, default: []].append($1) }
    }

    func asset(id: Int64) async throws -> Asset? { try await read { try Asset.fetchOne($0, id: id) } }

    /// An asset with the tour it belongs to, in one read (`nil` when either is gone).
    func assetWithTour(id: Int64) async throws -> (asset: Asset, tourId: Int64)? {
        try await read { db in
            guard let asset = try Asset.fetchOne(db, id: id),
                let tourId = try Int64.fetchOne(
                    db,
                    sql: "SELECT waypoint.tourId FROM asset JOIN waypoint ON waypoint.id = asset.waypointId WHERE asset.id = ?",
                    arguments: [id]
                )
            else { return nil }
            return (asset, tourId)
        }
    }

    /// What a multipart upload to this tour may still carry before its site's quota is reached (nil: no quota, or no
    /// such tour): the site, its quota and the bytes committed or reserved, from one read.
    func uploadRoom(tourId: Int64, excludingUpload: String?) async throws -> (site: Site, quota: Int64, committed: Int64)? {
        try await read { db in
            guard let tour = try Tour.fetchOne(db, id: tourId), let site = try Site.fetchOne(db, id: tour.siteId),
                let quota = site.storageQuotaBytes
            else { return nil }
            return (site, quota, try Self.usedOrReservedBytes(db, siteId: site.id, excludingUpload: excludingUpload))
        }
    }

    /// Bytes stored for a site (every asset not yet deleted), for the quota.
    func storedBytes(siteId: Int64) async throws -> Int64 {
        try await read { try Self.bytesOfStoredFiles($0, siteId: siteId) }
    }

    static func bytesOfStoredFiles(_ db: Database, siteId: Int64) throws -> Int64 {
        // Media files and uploaded map tiles (MBTiles) both count.
        try Int64.fetchOne(
            db,
            sql: """
                SELECT (SELECT COALESCE(SUM(asset.size), 0) FROM asset JOIN waypoint ON waypoint.id = asset.waypointId
                        JOIN tour ON tour.id = waypoint.tourId WHERE tour.siteId = ?)
                     + (SELECT COALESCE(SUM(tourTileset.size), 0) FROM tourTileset JOIN tour ON tour.id = tourTileset.tourId
                        WHERE tour.siteId = ?)
                """,
            arguments: [siteId, siteId]
        ) ?? 0
    }

    /// What counts against a site's quota: stored files (``storedBytes(siteId:)``) plus the full `Upload-Length` of every
    /// unfinished tus upload to its tours, so open uploads cannot together overrun it. `excludingUpload` leaves out the
    /// upload that is becoming an asset (its bytes are counted as the asset's).
    func committedBytes(siteId: Int64, excludingUpload: String? = nil) async throws -> Int64 {
        try await read { try Self.usedOrReservedBytes($0, siteId: siteId, excludingUpload: excludingUpload) }
    }

    /// The one query behind ``committedBytes(siteId:excludingUpload:)``, also run inside `createUpload`'s transaction.
    static func usedOrReservedBytes(_ db: Database, siteId: Int64, excludingUpload: String?) throws -> Int64 {
        let reserved =
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(upload.length), 0) FROM upload JOIN tour ON tour.id = upload.tourId
                    WHERE tour.siteId = ? AND upload.id IS NOT ?
                    """,
                arguments: [siteId, excludingUpload]
            ) ?? 0
        return try bytesOfStoredFiles(db, siteId: siteId) + reserved
    }

    /// The site's quota, checked in the write transaction that commits a file, after its row went in and the rows of
    /// what it replaces went out: two files written at once cannot both pass a check made before either was stored.
    /// The earlier checks (a multipart request's budget, a tus upload's reservation, a tileset's size) stop a large
    /// upload before its bytes are written; this one decides. `excludingUpload`: the tus upload becoming this file,
    /// whose reservation would count its bytes twice.
    static func requireRoom(_ db: Database, siteId: Int64, excludingUpload: String?) throws {
        guard let site = try Site.fetchOne(db, id: siteId), let quota = site.storageQuotaBytes else { return }
        if try usedOrReservedBytes(db, siteId: siteId, excludingUpload: excludingUpload) > quota {
            throw OverQuota(site: site, quota: quota)
        }
    }

    /// Adds a pending asset and its scan job in one transaction. A replaced asset is removed and the new one takes its place.
    /// Returns the asset and the stored paths that may have become unreferenced.
    func addAsset(_ new: NewAsset, actor: AuditActor) async throws -> (Asset, [String]) {
        try await write { db in try Self.addAsset(db, new, actor: actor) }
    }

    /// The building block of `addAsset`, for a caller whose transaction holds more (an import with its pictures).
    static func addAsset(_ db: Database, _ new: NewAsset, actor: AuditActor) throws -> (Asset, [String]) {
        let tour = try Self.editableTour(db, id: new.tourId)
        guard let waypoint = try Waypoint.fetchOne(db, id: new.waypointId), waypoint.tourId == new.tourId else { throw NotFound() }
        var position =
            (try Int.fetchOne(
                db,
                sql: "SELECT MAX(position) FROM asset WHERE waypointId = ? AND companionOf IS NULL",
                arguments: [new.waypointId]
            ) ?? 0) + 1
        var released: [String] = []
        var replacedAsset: Asset?
        if let replaced = new.replacesAssetId {
            guard let old = try Asset.fetchOne(db, id: replaced), old.waypointId == new.waypointId, old.companionOf == nil else {
                throw NotFound()
            }
            position = old.position
            replacedAsset = old
        }
        var asset = try Asset.New(
            waypointId: new.waypointId,
            position: position,
            kind: new.detected.kind,
            originalName: String(new.originalName.prefix(255)),
            mimeType: new.detected.mimeType,
            size: new.size,
            sha256: new.sha256,
            storedPath: new.storedPath,
            uploadedBy: actor.userId,
            createdAt: Date(),
            durationSeconds: new.durationSeconds
        ).inserted(db)
        try db.execute(sql: "INSERT INTO scanJob (assetId, queuedAt) VALUES (?, ?)", arguments: [asset.id, Date().dbTime])
        if let old = replacedAsset {
            // A new take of the same narration keeps its transcript and captions (the ranger replaces those
            // separately if the words changed); a file of another kind cannot use them, so they go with the old one.
            // (Each kept when the new file's kind takes its role: an audio take replaced by a video keeps its transcript.)
            for companion in try Asset.filter(Asset.Columns.companionOf == old.id).fetchAll(db) {
                if let role = companion.companionRole, role.accepts(asset.kind) {
                    try db.execute(sql: "UPDATE asset SET companionOf = ? WHERE id = ?", arguments: [asset.id, companion.id])
                } else {
                    released.append(companion.storedPath)
                }
            }
            // The new take is for the same language as the old one.
            if let language = old.language {
                asset.language = language
                try asset.update(db)
            }
            released += try Self.copyPaths(db, assetIds: [old.id])
            try old.delete(db)
            released.append(old.storedPath)
        }
        try Self.touch(db, tourId: new.tourId)
        try AuditEvent.record(
            db,
            actor: actor,
            siteId: tour.siteId,
            objectId: "\(asset.id)",
            action: new.replacesAssetId == nil ? .assetUpload : .assetReplace,
            detail: "\(asset.kind.rawValue) \(asset.originalName) (\(asset.size) bytes) on waypoint \(waypoint.name)"
        )
        try Self.requireRoom(db, siteId: tour.siteId, excludingUpload: new.uploadId)
        return (asset, try released.filter { try !Self.isReferenced(db, storedPath: $0) })
    }

    func deleteAsset(id: Int64, actor: AuditActor) async throws -> [String] {
        try await write { db in
            guard let asset = try Asset.fetchOne(db, id: id), let waypoint = try Waypoint.fetchOne(db, id: asset.waypointId) else { throw NotFound() }
            let tour = try Self.editableTour(db, id: waypoint.tourId)
            // Its captions and transcript go with it (ON DELETE CASCADE); their files too, unless shared.
            let companions = try Asset.filter(Asset.Columns.companionOf == id).fetchAll(db)
            let copies = try Self.copyPaths(db, assetIds: [id])
            try asset.delete(db)
            if asset.companionOf == nil {
                let rest = try Asset.filter(Asset.Columns.waypointId == asset.waypointId && Asset.listed).order(Asset.Columns.position).fetchAll(db)
                try Self.renumberAssets(db, rest.map { $0.id })
            }
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: tour.siteId,
                objectId: "\(id)",
                action: .assetDelete,
                detail: asset.companionRole.map { "\($0.label) \(asset.originalName)" } ?? asset.originalName
            )
            return try (([asset] + companions).map(\.storedPath) + copies).filter { try !Self.isReferenced(db, storedPath: $0) }
        }
    }

    /// Sets a file's title and, for images, its alt text (nil leaves one as it is). Refused with field messages:
    /// alt text on anything but an image, a title over 200 or alt text over 1,000 characters.
    @discardableResult
    /// `language` (when given: a tag of the tour's, or nil for every language) is saved in the same transaction.
    /// `useOriginal` (when given) is the "keep original" choice of a video, audio file or image.
    func describeAsset(
        id: Int64,
        title: String?,
        altText: String?,
        language: String?? = .none,
        useOriginal: Bool? = nil,
        actor: AuditActor
    ) async throws -> Asset {
        try await write { db in
            guard var asset = try Asset.fetchOne(db, id: id), let waypoint = try Waypoint.fetchOne(db, id: asset.waypointId) else { throw NotFound() }
            let tour = try Self.editableTour(db, id: waypoint.tourId)
            let title = title?.trimmingCharacters(in: .whitespacesAndNewlines)
            let altText = altText?.trimmingCharacters(in: .whitespacesAndNewlines)
            var errors = ValidationErrors()
            // Counted in Unicode scalars, as SQLite's length() in the CHECK counts them (a flag emoji is one Swift
            // Character but two scalars): text past the CHECK gets this message, never a constraint error.
            if let title, title.unicodeScalars.count > 200 {
                errors["title"] = "Keep the title to 200 characters (this one has \(title.unicodeScalars.count))."
            }
            if let altText, !altText.isEmpty, asset.kind != .image {
                errors["altText"] =
                    "Alt text is for images; a \(asset.kind.rawValue) file gets \(asset.kind == .video ? "captions" : asset.kind == .audio ? "a transcript" : "no alt text")."
            } else if let altText, altText.unicodeScalars.count > 1000 {
                errors["altText"] =
                    "Keep the alt text to 1,000 characters (this one has \(altText.unicodeScalars.count)): say what the image shows, briefly."
            }
            var tag: String?
            if case .some(let language) = language {
                do { tag = try Self.assetLanguage(language, tour: tour) } catch let refused as ValidationErrors {
                    errors.fields.merge(refused.fields) { $1 }
                }
            }
            if useOriginal != nil, asset.companionOf != nil || !OptimizedCopy.applies(to: asset.kind) {
                errors["useOriginal"] = "Only video, audio and image files have an optimized copy to choose against."
            }
            try errors.throwIfAny()
            if let useOriginal, useOriginal != asset.useOriginal {
                asset.useOriginal = useOriginal
                try AuditEvent.record(
                    db,
                    actor: actor,
                    siteId: tour.siteId,
                    objectId: "\(id)",
                    action: useOriginal ? .assetKeepOriginal : .assetUseOptimized,
                    detail: asset.originalName
                )
            }
            if let title { asset.title = title }
            if let altText { asset.altText = altText }
            if case .some = language { asset.language = tag }
            try asset.update(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: tour.siteId,
                objectId: "\(id)",
                action: .assetDescribe,
                detail: "title \(asset.title.count) chars, alt text \(asset.altText.count) chars"
            )
            return asset
        }
    }

    func shiftAsset(id: Int64, by step: Int, actor: AuditActor) async throws {
        try await write { db in
            guard let asset = try Asset.fetchOne(db, id: id), let waypoint = try Waypoint.fetchOne(db, id: asset.waypointId) else { throw NotFound() }
            let tour = try Self.editableTour(db, id: waypoint.tourId)
            var ids = try Int64.fetchAll(
                db,
                sql: "SELECT id FROM asset WHERE waypointId = ? AND companionOf IS NULL ORDER BY position",
                arguments: [asset.waypointId]
            )
            guard let index = ids.firstIndex(of: id), ids.indices.contains(index + step) else { return }
            ids.swapAt(index, index + step)
            try Self.renumberAssets(db, ids)
            try AuditEvent.record(db, actor: actor, siteId: tour.siteId, objectId: "\(id)", action: .assetReorder, detail: "")
        }
    }

    static func renumberAssets(_ db: Database, _ ids: [Int64]) throws {
        for (index, id) in ids.enumerated() {
            try db.execute(sql: "UPDATE asset SET position = ? WHERE id = ?", arguments: [index + 1, id])
        }
    }

    /// Whether a row still names `storedPath` (a file no row names may be removed).
    func isMediaPathReferenced(_ storedPath: String) async throws -> Bool {
        try await read { try Self.isReferenced($0, storedPath: storedPath) }
    }

    /// Whether a file under the data folder is still used: as an asset's original, or as an optimized copy (a copy
    /// and an original can be the same bytes, hence the same content-addressed path).
    static func isReferenced(_ db: Database, storedPath: String) throws -> Bool {
        try Asset.filter(Asset.Columns.storedPath == storedPath).fetchCount(db) > 0 || isReferencedCopy(db, storedPath: storedPath)
    }
}

// Recovery after a crash (`MediaRecovery`).
extension AppDatabase {
    /// Every asset row, captions and transcripts included (recovery checks each one's file).
    func allAssets() async throws -> [Asset] {
        try await read { try Asset.fetchAll($0) }
    }

    /// Every upload in progress and the offset acknowledged for it.
    func uploadOffsets() async throws -> [(id: String, offset: Int64)] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT id, offset FROM upload").map { (id: $0["id"] as String, offset: $0["offset"] as Int64) }
        }
    }

    /// Every data-folder path a row names: assets' originals, uploads in progress, optimized copies.
    func referencedMediaPaths() async throws -> Set<String> {
        try await read { db in
            Set(
                try String.fetchAll(db, sql: "SELECT storedPath FROM asset") + (try String.fetchAll(db, sql: "SELECT 'uploads/' || id FROM upload"))
                    + (try String.fetchAll(db, sql: "SELECT storedPath FROM optimizedCopy WHERE storedPath IS NOT NULL"))
            )
        }
    }
}

extension AppDatabase {
    /// An asset whose stored file is gone can never ship: marked as a scan error with the reason, its scan job dropped,
    /// audited.
    func markAssetMissing(_ asset: Asset) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE asset SET scanStatus = ?, scanDetail = 'the stored file is missing' WHERE id = ?",
                arguments: [ScanStatus.error, asset.id]
            )
            try db.execute(sql: "DELETE FROM scanJob WHERE assetId = ?", arguments: [asset.id])
            try AuditEvent.record(
                db,
                actor: .server(.recovery),
                objectId: "\(asset.id)",
                action: .assetMissing,
                detail: asset.storedPath
            )
        }
    }
}
