import Foundation
import GRDB
import HTTPTypes

/// What stops a tour from being submitted, in words a ranger understands.
/// In the API: 422 `not_ready`, each problem as `checklist.N`.
struct NotReadyToPublish: AppError {
    let problems: [String]
    var status: HTTPResponse.Status { .unprocessableContent }
    var code: String { "not_ready" }
    var message: String { "The tour is not ready to publish: " + problems.joined(separator: " ") }
    var fieldMessages: [String: String]? {
        Dictionary(uniqueKeysWithValues: problems.enumerated().map { ("checklist.\($0.offset + 1)", $0.element) })
    }
}

extension AppDatabase {
    // MARK: Readiness

    /// The checklist shown before submission; empty means ready.
    /// - Parameter tiles: the tile settings in force (``TileSettingsStore``), for the tile cap.
    func publishChecklist(tourId: Int64, tiles: TileSettings) async throws -> [String] {
        try await read { db in try Self.readiness(db, tourId: tourId, tiles: tiles).problems }
    }

    /// The checklist and the warnings beside it (what the site only recommends), from one read: the tour page.
    func publishReadiness(tourId: Int64, tiles: TileSettings) async throws -> (problems: [String], warnings: [String]) {
        try await read { db in try Self.readiness(db, tourId: tourId, tiles: tiles) }
    }

    /// What accessible media lacks, one line per file: images without alt text (WCAG 1.1.1), videos without captions
    /// (1.2.2), audio without a transcript (1.2.1). Refusals under the site's `required` rule, warnings under `recommended`.
    static func accessibilityGaps(assets: [Asset], companions: [Int64: AssetCompanions], waypoints: [Waypoint]) -> [String] {
        assets.compactMap { asset in
            let waypoint = waypoints.first { $0.id == asset.waypointId }?.name ?? "?"
            let own = companions[asset.id] ?? AssetCompanions()
            switch asset.kind {
            case .image where asset.altText.isEmpty:
                return "Image “\(asset.originalName)” at “\(waypoint)” has no alt text: describe it on the waypoint's page."
            case .video where own.captions == nil:
                return "Video “\(asset.originalName)” at “\(waypoint)” has no captions: add a WebVTT file on the waypoint's page."
            case .audio where own.transcript == nil:
                return "Audio “\(asset.originalName)” at “\(waypoint)” has no transcript: add one on the waypoint's page."
            default:
                return nil
            }
        }
    }

    /// Problems refuse a submission; warnings are shown beside them (accessibility gaps where the site only
    /// recommends accessible media).
    static func readiness(_ db: Database, tourId: Int64, tiles: TileSettings) throws -> (problems: [String], warnings: [String]) {
        guard let tour = try Tour.fetchOne(db, id: tourId) else { throw NotFound() }
        var problems: [String] = []
        var warnings: [String] = []
        let waypoints = try Waypoint.inTour(tourId).fetchAll(db)
        // Every item at once: a missing frame does not hide the files that are not clean yet.
        if tour.frame == nil { problems.append("Set the map frame.") }
        if waypoints.isEmpty { problems.append("Add at least one waypoint.") }
        if let frame = tour.frame {
            for waypoint in waypoints where !frame.contains(latitude: waypoint.latitude, longitude: waypoint.longitude) {
                problems.append("Waypoint “\(waypoint.name)” is outside the frame.")
            }
        }
        // Media files and their captions and transcripts: every one must be clean.
        let files = try Asset.fetchAll(
            db,
            sql: """
                SELECT asset.* FROM asset JOIN waypoint ON waypoint.id = asset.waypointId WHERE waypoint.tourId = ? ORDER BY waypoint.position, asset.position
                """,
            arguments: [tourId]
        )
        for asset in files where asset.scanStatus != .clean {
            let waypoint = waypoints.first { $0.id == asset.waypointId }?.name ?? "?"
            problems.append("File “\(asset.originalName)” at “\(waypoint)” is \(asset.scanStatus.rawValue), not clean.")
        }
        // A file whose phone-sized copy could not be made (it does not decode, or it is over a limit) would reach
        // visitors as it is, or not play at all: the ranger replaces it or decides to ship the original.
        let copies = try Self.copiesByAsset(db, tourId: tourId)
        for asset in files where !asset.useOriginal {
            guard let copy = copies[asset.id], copy.state == .failed, copy.sourceSha256 == asset.sha256 else { continue }
            let waypoint = waypoints.first { $0.id == asset.waypointId }?.name ?? "?"
            problems.append(
                "File “\(asset.originalName)” at “\(waypoint)” could not be optimized for phones: \(copy.message) "
                    + "Replace it, or choose “Keep original” on the waypoint's page."
            )
        }
        let gaps = Self.accessibilityGaps(
            assets: files.filter { $0.companionOf == nil },
            companions: AssetCompanions.grouped(files),
            waypoints: waypoints
        )
        let site = try Site.fetchOne(db, id: tour.siteId)
        if site?.mediaAccessibility == .recommended { warnings += gaps } else { problems += gaps }
        let languageGaps = Self.languageGaps(tour: tour, waypoints: waypoints)
        if site?.requireCompleteLanguages == true { problems += languageGaps } else { warnings += languageGaps }
        if let frame = tour.frame {
            problems += try tileChecklist(db, tour: tour, frame: frame, settings: tiles)
        }
        return (problems, warnings)
    }

    // MARK: startPublish

    /// Freezes the tour, locks it, and queues the build. Returns the new request.
    /// - Parameter tiles: the tile settings in force (``TileSettingsStore``), frozen into the snapshot.
    func startPublish(tourId: Int64, actor: AuditActor, tiles: TileSettings) async throws -> PublishRequest {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            let problems = try Self.readiness(db, tourId: tourId, tiles: tiles).problems
            // A tour without a frame is among the problems ("Set the map frame."), so the refusal is never empty.
            guard problems.isEmpty, let frame = tour.frame else { throw NotReadyToPublish(problems: problems) }
            guard let site = try Site.fetchOne(db, id: tour.siteId) else { throw NotFound() }
            var snapshot = try Self.snapshot(db, tour: tour, frame: frame, site: site)
            snapshot.tiles = try Self.tileSource(db, tour: tour, settings: tiles)
            let now = Date()
            let package: PackageRecord
            if let existing = try PackageRecord.filter(Column("tourId") == tourId).fetchOne(db) {
                package = existing
            } else {
                package = PackageRecord(
                    id: UUID().uuidString.lowercased(),
                    tourId: tourId,
                    siteId: site.id,
                    currentVersion: nil,
                    isVisible: false,
                    createdAt: now,
                    updatedAt: now
                )
                try package.insert(db)
            }
            let lastVersion = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM packageVersion WHERE packageId = ?", arguments: [package.id]) ?? 0
            let request = PublishRequest(
                id: UUID().uuidString.lowercased(),
                tourId: tourId,
                siteId: site.id,
                packageId: package.id,
                version: lastVersion + 1,
                authorId: actor.userId,
                state: .building,
                snapshot: snapshot,
                requiredApprovals: site.requiredApprovals,
                filesDone: 0,
                filesTotal: snapshot.fileCount,
                bytesDone: 0,
                bytesTotal: snapshot.totalBytes,
                createdAt: now,
                updatedAt: now
            )
            try request.insert(db)
            try db.execute(sql: "INSERT INTO buildJob (requestId, queuedAt) VALUES (?, ?)", arguments: [request.id, now.dbTime])
            try db.execute(
                sql: "UPDATE tour SET state = ?, reviewComment = NULL, updatedAt = ? WHERE id = ?",
                arguments: [TourState.inReview, now.dbTime, tourId]
            )
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: site.id,
                objectId: request.id,
                action: .publishStart,
                detail: "\(tour.name) as version \(request.version)"
            )
            return request
        }
    }

    /// The tour as it ships, in `frame` (its frame, which a tour must have to be published or exported as a build).
    static func snapshot(_ db: Database, tour: Tour, frame: Frame, site: Site) throws -> TourSnapshot {
        let waypoints = try Waypoint.inTour(tour.id).fetchAll(db)
        let copies = try Self.copiesByAsset(db, tourId: tour.id)
        // The file that ships: the optimized copy when ready (unless the ranger keeps the original), else the original;
        // a copy still being made is waited for by the build.
        func entry(_ asset: Asset, companions: AssetCompanions) -> TourSnapshot.AssetEntry {
            var entry = TourSnapshot.AssetEntry(
                assetId: asset.id,
                kind: asset.kind.rawValue,
                mimeType: asset.mimeType,
                size: asset.size,
                sha256: asset.sha256,
                originalName: asset.originalName,
                storedPath: asset.storedPath,
                durationSeconds: asset.durationSeconds,
                title: asset.title.isEmpty ? nil : asset.title,
                altText: asset.altText.isEmpty ? nil : asset.altText,
                captions: frozen(companions.captions),
                transcript: frozen(companions.transcript),
                language: asset.language
            )
            guard !asset.useOriginal, let copy = copies[asset.id], copy.sourceSha256 == asset.sha256 else { return entry }
            if copy.state == .pending { entry.awaitingCopy = true } else { entry.resolve(copy) }
            return entry
        }
        func frozen(_ file: Asset?) -> TourSnapshot.CompanionEntry? {
            file.map {
                .init(
                    assetId: $0.id,
                    mimeType: $0.mimeType,
                    size: $0.size,
                    sha256: $0.sha256,
                    originalName: $0.originalName,
                    storedPath: $0.storedPath
                )
            }
        }
        return TourSnapshot(
            tourId: tour.id,
            name: tour.name,
            description: tour.description,
            mapName: tour.mapName,
            siteName: site.name,
            siteSlug: site.slug,
            frame: frame,
            minZoom: tour.minZoom,
            maxZoom: tour.maxZoom,
            waypoints: try waypoints.map { waypoint in
                let files = try Asset.filter(Asset.Columns.waypointId == waypoint.id).order(Asset.Columns.position).fetchAll(db)
                let assets = files.filter { $0.companionOf == nil }
                let companions = AssetCompanions.grouped(files)
                return TourSnapshot.WaypointEntry(
                    name: waypoint.name,
                    order: waypoint.position,
                    latitude: waypoint.latitude,
                    longitude: waypoint.longitude,
                    description: waypoint.description,
                    assets: assets.map { entry($0, companions: companions[$0.id] ?? AssetCompanions()) },
                    triggerRadiusMeters: waypoint.triggerRadiusMeters,
                    localized: waypoint.localized.isEmpty ? nil : waypoint.localized,
                    waypointId: waypoint.id
                )
            },
            route: tour.route,
            paceKmh: tour.paceKmh,
            languages: tour.languages,
            localized: tour.localized.isEmpty ? nil : tour.localized,
            terrain: try Self.terrainFacts(db, tourId: tour.id),
            accessibility: tour.accessibility
        )
    }

    // MARK: Build outcome (called by the build service)

    func publishRequest(id: String) async throws -> PublishRequest? { try await read { try PublishRequest.fetchOne($0, key: id) } }

    func queuedBuilds() async throws -> [PublishRequest] {
        try await read { db in
            try PublishRequest.fetchAll(
                db,
                sql: """
                    SELECT publishRequest.* FROM buildJob JOIN publishRequest ON publishRequest.id = buildJob.requestId ORDER BY buildJob.queuedAt
                    """
            )
        }
    }

    /// Stores the snapshot whose awaited optimized copies were resolved by the build, with its new byte total.
    func recordShippedSnapshot(requestId: String, _ snapshot: TourSnapshot) async throws {
        let encoded = String(decoding: try PublishRequest.databaseJSONEncoder(for: "snapshot").encode(snapshot), as: UTF8.self)
        try await write { db in
            try db.execute(
                sql: "UPDATE publishRequest SET snapshot = ?, bytesTotal = ?, filesTotal = ?, updatedAt = ? WHERE id = ? AND state = ?",
                arguments: [encoded, snapshot.totalBytes, snapshot.fileCount, Date().dbTime, requestId, PublishState.building]
            )
        }
    }

    /// Counts an attempt; returns the number of attempts so far.
    func beginBuildAttempt(requestId: String) async throws -> Int {
        try await write { db in
            try db.execute(sql: "UPDATE buildJob SET attempts = attempts + 1 WHERE requestId = ?", arguments: [requestId])
            return try Int.fetchOne(db, sql: "SELECT attempts FROM buildJob WHERE requestId = ?", arguments: [requestId]) ?? 0
        }
    }

    func recordBuildProgress(requestId: String, filesDone: Int, bytesDone: Int64) async throws {
        try await write { db in
            // Never past the totals: the package's own files (manifest, GeoJSON, tiles) are not in them.
            try db.execute(
                sql:
                    "UPDATE publishRequest SET filesDone = MIN(?, filesTotal), bytesDone = MIN(?, bytesTotal), updatedAt = ? WHERE id = ? AND state = ?",
                arguments: [filesDone, bytesDone, Date().dbTime, requestId, PublishState.building]
            )
        }
    }

    /// building → pending. False when the request left `building` meanwhile (withdrawn).
    func completeBuild(
        requestId: String,
        sha256: String,
        size: Int64,
        signature: String,
        manifestJSON: String,
        scanReport: [ScanReportEntry]
    ) async throws -> Bool {
        // Encoded as GRDB encodes the record's JSON column, so `PublishRequest` reads it back.
        let scanReport = String(decoding: try PublishRequest.databaseJSONEncoder(for: "scanReport").encode(scanReport), as: UTF8.self)
        return try await write { db in
            try db.execute(
                sql: """
                    UPDATE publishRequest SET
                      state = CASE
                        -- A rebuild after a crash (recovery re-queues an open request whose zip vanished) yields the same bytes:
                        -- the approvals given to those bytes still hold, so an approved request is ready again, not pending.
                        WHEN zipSha256 = :sha AND (SELECT COUNT(*) FROM review WHERE review.requestId = publishRequest.id AND decision = :approve) >= requiredApprovals
                        THEN :ready ELSE :pending END,
                      zipSha256 = :sha, zipSize = :size, signature = :signature, manifestJSON = :manifest, scanReport = :report,
                      filesDone = filesTotal, bytesDone = bytesTotal, updatedAt = :now WHERE id = :id AND state = :building
                    """,
                arguments: [
                    "approve": ReviewDecision.approve, "ready": PublishState.ready, "pending": PublishState.pending,
                    "building": PublishState.building, "sha": sha256, "size": size, "signature": signature, "manifest": manifestJSON,
                    "report": scanReport,
                    "now": Date().dbTime, "id": requestId,
                ]
            )
            let changed = db.changesCount == 1
            try db.execute(sql: "DELETE FROM buildJob WHERE requestId = ?", arguments: [requestId])
            if changed, let request = try PublishRequest.fetchOne(db, key: requestId) {
                try AuditEvent.record(
                    db,
                    actor: .server(.builder),
                    siteId: request.siteId,
                    objectId: requestId,
                    action: .publishBuilt,
                    detail: "\(size) bytes, SHA-256 \(sha256)"
                )
            }
            return changed
        }
    }

    /// building → failed, with the reason; the tour is editable again.
    func failBuild(requestId: String, reason: String) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE publishRequest SET state = ?, failureReason = ?, updatedAt = ? WHERE id = ? AND state = ?",
                arguments: [PublishState.failed, String(reason.prefix(1000)), Date().dbTime, requestId, PublishState.building]
            )
            let changed = db.changesCount == 1
            try db.execute(sql: "DELETE FROM buildJob WHERE requestId = ?", arguments: [requestId])
            guard changed, let request = try PublishRequest.fetchOne(db, key: requestId) else { return }
            try Self.unlockTour(db, request: request, comment: nil)
            try AuditEvent.record(
                db,
                actor: .server(.builder),
                siteId: request.siteId,
                objectId: requestId,
                action: .publishFailed,
                detail: reason
            )
        }
    }

    static func unlockTour(_ db: Database, request: PublishRequest, comment: String?) throws {
        guard let tourId = request.tourId else { return }
        let hasRelease = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM packageVersion WHERE packageId = ?", arguments: [request.packageId]) ?? 0
        try db.execute(
            sql: "UPDATE tour SET state = ?, reviewComment = ?, updatedAt = ? WHERE id = ?",
            arguments: [hasRelease > 0 ? TourState.published : TourState.draft, comment, Date().dbTime, tourId]
        )
    }

    // MARK: Review

    enum ReviewOutcome: Sendable, Equatable {
        /// The approval counted; `becameReady` when it was the last one needed.
        case approved(approvals: Int, becameReady: Bool)
        case denied
    }

    /// One transaction: the state check, the once-per-reviewer rule and the move to `ready` see the same data,
    /// so concurrent approvals end in exactly one transition.
    func approve(requestId: String, reviewer: AuthenticatedUser, comment: String, actor: AuditActor) async throws -> ReviewOutcome {
        try await write { db in
            let request = try Self.reviewableRequest(db, id: requestId, reviewer: reviewer)
            guard request.state == .pending else {
                throw Conflict("This request is \(request.state.label.lowercased()); it can no longer be approved.")
            }
            if try Review.fetchOne(db, key: ["requestId": requestId, "reviewerId": reviewer.id]) != nil {
                throw Conflict("You have already reviewed this request; each reviewer counts once.")
            }
            // An approval counts a person: an account anyone could have made from a shown invitation link is not one yet.
            if try Bool.fetchOne(db, sql: "SELECT addressProven FROM user WHERE id = ?", arguments: [reviewer.id]) == false {
                throw Forbidden(
                    "Your email address is not confirmed yet, so your approval cannot count. Sign in once with your agency account, or ask an administrator to confirm your address."
                )
            }
            try Review(
                requestId: requestId,
                reviewerId: reviewer.id,
                decision: .approve,
                comment: String(comment.trimmed.prefix(5000)),
                createdAt: Date()
            ).insert(db)
            let approvals = try Review.filter(Column("requestId") == requestId && Column("decision") == ReviewDecision.approve).fetchCount(db)
            var becameReady = false
            if approvals >= request.requiredApprovals {
                try db.execute(
                    sql: "UPDATE publishRequest SET state = ?, updatedAt = ? WHERE id = ? AND state = ?",
                    arguments: [PublishState.ready, Date().dbTime, requestId, PublishState.pending]
                )
                becameReady = db.changesCount == 1
            }
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: request.siteId,
                objectId: requestId,
                action: becameReady ? .publishApproveReady : .publishApprove,
                detail: "\(approvals) of \(request.requiredApprovals)"
            )
            return .approved(approvals: approvals, becameReady: becameReady)
        }
    }

    func deny(requestId: String, reviewer: AuthenticatedUser, comment: String, actor: AuditActor) async throws {
        let comment = comment.trimmed
        guard !comment.isEmpty else { throw ValidationErrors(["comment": "Say what must change: a denial needs a comment."]) }
        try await write { db in
            let request = try Self.reviewableRequest(db, id: requestId, reviewer: reviewer)
            guard PublishState.reviewable.contains(request.state) else {
                throw Conflict("This request is \(request.state.label.lowercased()); it can no longer be denied.")
            }
            if try Review.fetchOne(db, key: ["requestId": requestId, "reviewerId": reviewer.id]) != nil {
                throw Conflict("You have already reviewed this request.")
            }
            try Review(
                requestId: requestId,
                reviewerId: reviewer.id,
                decision: .deny,
                comment: String(comment.prefix(5000)),
                createdAt: Date()
            ).insert(db)
            try db.execute(
                literal: """
                    UPDATE publishRequest SET state = \(PublishState.denied), denialComment = \(String(comment.prefix(5000))), updatedAt = \(Date().dbTime)
                    WHERE id = \(requestId) AND state IN \(PublishState.reviewable)
                    """
            )
            guard db.changesCount == 1 else { throw Conflict("This request changed meanwhile; reload the page.") }
            try Self.unlockTour(db, request: request, comment: comment)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: request.siteId,
                objectId: requestId,
                action: .publishDeny,
                detail: comment
            )
        }
    }

    /// Reviewers and managers of the request's site, never its author.
    static func reviewableRequest(_ db: Database, id: String, reviewer: AuthenticatedUser) throws -> PublishRequest {
        guard let request = try PublishRequest.fetchOne(db, key: id) else { throw NotFound() }
        try Self.access(db, user: reviewer, siteId: request.siteId).require(.review, to: "review its requests")
        guard request.authorId != reviewer.id else { throw Forbidden("You submitted this request, so someone else must review it.") }
        return request
    }

    // MARK: Withdraw and push

    func withdraw(requestId: String, user: AuthenticatedUser, actor: AuditActor) async throws -> PublishRequest {
        try await write { db in
            let request = try Self.requestForAuthorOrManager(db, id: requestId, user: user)
            try db.execute(
                literal: """
                    UPDATE publishRequest SET state = \(PublishState.withdrawn), updatedAt = \(Date().dbTime) WHERE id = \(requestId) AND state IN \(PublishState.open)
                    """
            )
            guard db.changesCount == 1 else {
                throw Conflict("Only an open request can be withdrawn (this one is \(request.state.label.lowercased())).")
            }
            try db.execute(sql: "DELETE FROM buildJob WHERE requestId = ?", arguments: [requestId])
            try Self.unlockTour(db, request: request, comment: nil)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: request.siteId,
                objectId: requestId,
                action: .publishWithdraw,
                detail: ""
            )
            return request
        }
    }

    static func requestForAuthorOrManager(_ db: Database, id: String, user: AuthenticatedUser) throws -> PublishRequest {
        guard let request = try PublishRequest.fetchOne(db, key: id) else { throw NotFound() }
        let access = try Self.access(db, user: user, siteId: request.siteId)
        try access.require(.view, to: "see this request")
        guard request.authorId == user.id || access.allows(.manage) else {
            throw Forbidden("Only the request's author or a manager of the site can do this.")
        }
        return request
    }

    /// ready → published: the staged zip becomes version n at `packages/<id>/<n>.zip` (moved by `place` inside the transaction,
    /// before the commit, so no row ever points at a missing file).
    func push(
        requestId: String,
        user: AuthenticatedUser,
        actor: AuditActor,
        place: @Sendable (PublishRequest) throws -> Void
    ) async throws -> PackageVersion {
        try await write { db in
            let request = try Self.requestForAuthorOrManager(db, id: requestId, user: user)
            guard request.state == .ready else {
                throw Conflict(
                    request.state == .pending
                        ? "This request still needs approvals before it can be released."
                        : "Only an approved request can be released (this one is \(request.state.label.lowercased()))."
                )
            }
            guard let sha = request.zipSha256, let size = request.zipSize, let signature = request.signature, let manifest = request.manifestJSON
            else {
                throw Conflict("This request has no built package.")
            }
            let snapshot = request.snapshot
            try db.execute(
                sql: "UPDATE publishRequest SET state = ?, updatedAt = ? WHERE id = ? AND state = ?",
                arguments: [PublishState.published, Date().dbTime, requestId, PublishState.ready]
            )
            guard db.changesCount == 1 else { throw Conflict("This request changed meanwhile; reload the page.") }
            let now = Date()
            let version = PackageVersion(
                packageId: request.packageId,
                version: request.version,
                requestId: requestId,
                name: snapshot.name,
                description: snapshot.description,
                mapName: snapshot.mapName,
                sha256: sha,
                size: size,
                signature: signature,
                manifestJSON: manifest,
                releasedBy: user.id,
                createdAt: now,
                verifiedCount: 0
            )
            try version.insert(db)
            try db.execute(
                sql: "UPDATE package SET currentVersion = ?, isVisible = 1, updatedAt = ? WHERE id = ?",
                arguments: [request.version, now.dbTime, request.packageId]
            )
            if let tourId = request.tourId {
                try db.execute(
                    sql: "UPDATE tour SET state = ?, reviewComment = NULL, updatedAt = ? WHERE id = ?",
                    arguments: [TourState.published, now.dbTime, tourId]
                )
            }
            try Self.bumpCatalog(db, reason: .release)
            try place(request)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: request.siteId,
                objectId: request.packageId,
                action: .publishPush,
                detail: "version \(request.version), \(size) bytes"
            )
            return version
        }
    }

    /// Every change of what the catalog lists goes through here: the catalog version moves on, and a durable job to
    /// mirror it to object storage is written in the same transaction (see `DistributionSync`).
    static func bumpCatalog(_ db: Database, reason: DistributionJob.Reason) throws {
        try db.execute(sql: "UPDATE catalogState SET version = version + 1 WHERE id = 1")
        let version = try Int.fetchOne(db, sql: "SELECT version FROM catalogState WHERE id = 1") ?? 0
        try db.execute(
            sql: "INSERT INTO distributionJob (catalogVersion, reason, createdAt) VALUES (?, ?, ?)",
            arguments: [version, reason.rawValue, Date().dbTime]
        )
    }

    func catalogVersion() async throws -> Int {
        try await read { try Int.fetchOne($0, sql: "SELECT version FROM catalogState WHERE id = 1") ?? 0 }
    }

    // MARK: Packages

    func package(id: String) async throws -> PackageRecord? { try await read { try PackageRecord.fetchOne($0, key: id) } }

    func packageVersions(packageId: String) async throws -> [PackageVersion] {
        try await read { try PackageVersion.filter(Column("packageId") == packageId).order(Column("version").desc).fetchAll($0) }
    }

    func packageVersion(packageId: String, version: Int) async throws -> PackageVersion? {
        try await read { try PackageVersion.fetchOne($0, key: ["packageId": packageId, "version": version]) }
    }

    func packages(siteId: Int64) async throws -> [PackageRecord] {
        try await read { try PackageRecord.filter(Column("siteId") == siteId).fetchAll($0) }
    }

    func package(tourId: Int64) async throws -> PackageRecord? {
        try await read { try PackageRecord.ofTour(tourId).fetchOne($0) }
    }

    /// Hide from (false) or show again in (true) the mobile API.
    func setPackageVisible(id: String, visible: Bool, actor: AuditActor) async throws {
        try await write { db in
            guard let package = try PackageRecord.fetchOne(db, key: id) else { throw NotFound() }
            guard package.currentVersion != nil else { throw Conflict("This package has no released version yet.") }
            try db.execute(
                sql: "UPDATE package SET isVisible = ?, updatedAt = ? WHERE id = ? AND isVisible = ?",
                arguments: [visible, Date().dbTime, id, !visible]
            )
            guard db.changesCount == 1 else { throw Conflict(visible ? "The package is already published." : "The package is already unpublished.") }
            try Self.bumpCatalog(db, reason: visible ? .publish : .unpublish)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: package.siteId,
                objectId: id,
                action: visible ? .packagePublish : .packageUnpublish,
                detail: ""
            )
        }
    }

    /// Serve an earlier version again (rollback), or a later one after a rollback.
    func setCurrentVersion(packageId: String, version: Int, actor: AuditActor) async throws {
        try await write { db in
            guard let package = try PackageRecord.fetchOne(db, key: packageId) else { throw NotFound() }
            guard try PackageVersion.exists(db, key: ["packageId": packageId, "version": version]) else {
                throw ValidationErrors(["version": "Version \(version) does not exist."])
            }
            guard package.currentVersion != version else { throw Conflict("Version \(version) is already the one served.") }
            try db.execute(sql: "UPDATE package SET currentVersion = ?, updatedAt = ? WHERE id = ?", arguments: [version, Date().dbTime, packageId])
            try Self.bumpCatalog(db, reason: .rollback)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: package.siteId,
                objectId: packageId,
                action: .packageRollback,
                detail: "now serving version \(version) (was \(package.currentVersion ?? 0))"
            )
        }
    }

    // MARK: Queue

    struct QueueRow: Sendable {
        let request: PublishRequest
        let tourName: String
        let authorName: String
        let approvals: Int
        let siteName: String
        let reviewedByMe: Bool
    }

    /// Pending requests of the sites where the user reviews, oldest first.
    func reviewQueue(for user: AuthenticatedUser) async throws -> [QueueRow] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                SQLRequest(
                    literal: """
                        SELECT publishRequest.*, site.name AS siteName, COALESCE(user.displayName, 'unknown') AS authorName,
                          (SELECT COUNT(*) FROM review WHERE review.requestId = publishRequest.id AND decision = \(ReviewDecision.approve)) AS approvals,
                          (SELECT COUNT(*) FROM review WHERE review.requestId = publishRequest.id AND reviewerId = \(user.id)) AS mine
                        FROM publishRequest
                        JOIN site ON site.id = publishRequest.siteId
                        LEFT JOIN user ON user.id = publishRequest.authorId
                        WHERE \(Self.inReviewQueue(of: user))
                        ORDER BY publishRequest.createdAt
                        """
                )
            )
            return try rows.map { row in
                let request = try PublishRequest(row: row)
                return QueueRow(
                    request: request,
                    tourName: request.snapshot.name,
                    authorName: row["authorName"],
                    approvals: row["approvals"],
                    siteName: row["siteName"],
                    reviewedByMe: (row["mine"] as Int) > 0
                )
            }
        }
    }

    /// Publish requests waiting for this user's decision (not their own, not yet reviewed by them): the navigation
    /// badge, counted by SQLite on every page instead of loading the queue.
    func reviewQueueCount(for user: AuthenticatedUser) async throws -> Int {
        try await read { db in
            try Int.fetchOne(
                db,
                SQLRequest(
                    literal: """
                        SELECT COUNT(*) FROM publishRequest
                        WHERE \(Self.inReviewQueue(of: user))
                          AND publishRequest.authorId IS NOT \(user.id)
                          AND NOT EXISTS (SELECT 1 FROM review WHERE review.requestId = publishRequest.id AND review.reviewerId = \(user.id))
                        """
                )
            ) ?? 0
        }
    }

    /// The queue's rule, written once: pending requests of the sites where the user reviews (every site for admins).
    static func inReviewQueue(of user: AuthenticatedUser) -> SQL {
        """
        publishRequest.state = \(PublishState.pending)
          AND (\(user.isAdmin) OR publishRequest.siteId IN (SELECT siteId FROM membership WHERE userId = \(user.id) AND role IN \(SiteRole.reviewing)))
        """
    }

    func reviews(requestId: String) async throws -> [(review: Review, reviewerName: String)] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT review.*, COALESCE(user.displayName, 'unknown') AS reviewerName FROM review LEFT JOIN user ON user.id = review.reviewerId
                    WHERE requestId = ? ORDER BY review.createdAt
                    """,
                arguments: [requestId]
            ).map { (try Review(row: $0), $0["reviewerName"]) }
        }
    }

    func requests(tourId: Int64) async throws -> [PublishRequest] {
        try await read {
            try PublishRequest.filter(PublishRequest.Columns.tourId == tourId).order(PublishRequest.Columns.createdAt.desc).fetchAll($0)
        }
    }

    func openRequest(tourId: Int64) async throws -> PublishRequest? {
        try await read { try PublishRequest.open(tourId: tourId).fetchOne($0) }
    }
}

extension PublishRequest {
    /// The tour's request that is not yet released, denied or withdrawn (at most one).
    static func open(tourId: Int64) -> QueryInterfaceRequest<PublishRequest> {
        filter(Columns.tourId == tourId && PublishState.open.contains(Columns.state))
    }
}

extension PackageRecord {
    /// The package a tour is released as (none before its first release).
    static func ofTour(_ tourId: Int64) -> QueryInterfaceRequest<PackageRecord> {
        filter(Column("tourId") == tourId)
    }
}

extension AppDatabase {
    /// Ids of the requests not yet released, denied or withdrawn: their staging folders are in use.
    func openPublishRequestIds() async throws -> Set<String> {
        try await read { db in
            Set(try String.fetchAll(db, SQLRequest(literal: "SELECT id FROM publishRequest WHERE state IN \(PublishState.open)")))
        }
    }
}

// Recovery after a crash (`PublishingRecovery`).
extension AppDatabase {
    /// Request id → state of every open request.
    func openPublishRequestStates() async throws -> [String: String] {
        try await read { db in
            try Row.fetchAll(db, SQLRequest(literal: "SELECT id, state FROM publishRequest WHERE state IN \(PublishState.open)"))
                .reduce(into: [String: String]()) { $0[$1["id"]] = $1["state"] }
        }
    }

    /// A request whose built zip is gone goes back to building, its job queued again.
    func rebuildLostPackage(requestId: String) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE publishRequest SET state = ?, updatedAt = ? WHERE id = ?",
                arguments: [PublishState.building, Date().dbTime, requestId]
            )
            try db.execute(sql: "INSERT OR IGNORE INTO buildJob (requestId, queuedAt) VALUES (?, ?)", arguments: [requestId, Date().dbTime])
        }
    }

    /// `packages/<id>/<n>.zip` of every released version.
    func releasedZipPaths() async throws -> Set<String> {
        try await read { db in
            Set(try String.fetchAll(db, sql: "SELECT 'packages/' || packageId || '/' || version || '.zip' FROM packageVersion"))
        }
    }
}
