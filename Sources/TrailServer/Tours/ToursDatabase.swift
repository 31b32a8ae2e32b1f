import Foundation
import GRDB

extension AppDatabase {
    // MARK: Reads

    func tour(id: Int64) async throws -> Tour? { try await read { try Tour.fetchOne($0, id: id) } }

    func tours(siteId: Int64) async throws -> [Tour] {
        try await read { try Tour.filter(Tour.Columns.siteId == siteId).order(Tour.Columns.name).fetchAll($0) }
    }

    func waypoints(tourId: Int64) async throws -> [Waypoint] {
        try await read { try Waypoint.inTour(tourId).fetchAll($0) }
    }

    /// One waypoint of the tour (nil when the id is another tour's or none).
    func waypoint(tourId: Int64, id: Int64) async throws -> Waypoint? {
        try await read { try Waypoint.filter(Waypoint.Columns.tourId == tourId && Waypoint.Columns.id == id).fetchOne($0) }
    }

    /// How many tours each site has, by site id (a site without tours is absent).
    func tourCounts() async throws -> [Int64: Int] {
        try await read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT siteId, COUNT(*) AS n FROM tour GROUP BY siteId")
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["siteId"] as Int64, $0["n"] as Int) })
        }
    }

    func waypointCounts(siteId: Int64) async throws -> [Int64: Int] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT tour.id, COUNT(waypoint.id) AS n FROM tour LEFT JOIN waypoint ON waypoint.tourId = tour.id
                    WHERE tour.siteId = ? GROUP BY tour.id
                    """,
                arguments: [siteId]
            )
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as Int64, $0["n"] as Int) })
        }
    }

    /// One page of a site's tours in list order (name without regard to case, then id): the `limit` after `after`, or
    /// the `limit` just before `before` (a "Previous" link), with whether more follow in that direction. Each row's
    /// counts come from the same query, so a page costs the same at 1 tour as at 1,000 (migration 0018's indexes).
    func tourList(
        siteId: Int64,
        filter: TourListFilter,
        after: TourListPosition? = nil,
        before: TourListPosition? = nil,
        limit: Int
    ) async throws -> (rows: [TourListRow], hasMore: Bool) {
        let (sql, arguments) = Self.tourListQuery(siteId: siteId, filter: filter, after: after, before: before, limit: limit + 1)
        let rows = try await read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                TourListRow(
                    id: row["id"],
                    name: row["name"],
                    mapName: row["mapName"],
                    state: row["state"],
                    // GRDB's `Date` reads seconds since 1970 (what the app writes) and also a date text, which raw
                    // SQL (the demo sample's, an operator's) may have left: a list must not fail on either.
                    updatedAt: row["updatedAt"] as Date,
                    hasFrame: row["hasFrame"],
                    waypointCount: row["waypointCount"],
                    assetCount: row["assetCount"]
                )
            }
        }
        let page = Array(rows.prefix(limit))
        return (before == nil ? page : page.reversed(), rows.count > limit)
    }

    /// The SQL of `tourList` (also run under `EXPLAIN QUERY PLAN` by the tests: each variant must search an index).
    /// The position is a row value, which SQLite turns into a range on `tour_site_name` / `tour_site_state_name`; the
    /// companion files (captions, transcripts) are not counted as assets of their own.
    static func tourListQuery(
        siteId: Int64,
        filter: TourListFilter,
        after: TourListPosition?,
        before: TourListPosition?,
        limit: Int
    ) -> (String, StatementArguments) {
        var sql = """
            SELECT tour.id, tour.name, tour.mapName, tour.state, tour.updatedAt,
                (tour.frameNorth IS NOT NULL AND tour.frameSouth IS NOT NULL AND tour.frameEast IS NOT NULL
                    AND tour.frameWest IS NOT NULL) AS hasFrame,
                (SELECT COUNT(*) FROM waypoint WHERE waypoint.tourId = tour.id) AS waypointCount,
                (SELECT COUNT(*) FROM waypoint JOIN asset ON asset.waypointId = waypoint.id
                    WHERE waypoint.tourId = tour.id AND asset.companionOf IS NULL) AS assetCount
            FROM tour WHERE tour.siteId = ?
            """
        var arguments: StatementArguments = [siteId]
        if let state = filter.state {
            sql += " AND tour.state = ?"
            arguments += [state.rawValue]
        }
        if !filter.query.isEmpty {
            sql += #" AND tour.name LIKE ? ESCAPE '\'"#
            arguments += [TourListFilter.likePattern(filter.query)]
        }
        if let before {
            sql += " AND (tour.name, tour.id) < (? COLLATE NOCASE, ?) ORDER BY tour.name COLLATE NOCASE DESC, tour.id DESC"
            arguments += [before.name, before.id]
        } else if let after {
            sql += " AND (tour.name, tour.id) > (? COLLATE NOCASE, ?) ORDER BY tour.name COLLATE NOCASE, tour.id"
            arguments += [after.name, after.id]
        } else {
            sql += " ORDER BY tour.name COLLATE NOCASE, tour.id"
        }
        sql += " LIMIT ?"
        arguments += [limit]
        return (sql, arguments)
    }

    // MARK: Tours

    func createTour(siteId: Int64, _ input: TourInput, actor: AuditActor) async throws -> Tour {
        let valid = try TourValidation.validate(input).get()
        let now = Date()
        return try await write { db in
            guard try Site.exists(db, id: siteId) else { throw NotFound() }
            let tour = try Tour.New(
                siteId: siteId,
                name: valid.name,
                description: valid.description,
                mapName: valid.mapName,
                minZoom: 12,
                maxZoom: 16,
                state: .draft,
                createdBy: actor.userId,
                createdAt: now,
                updatedAt: now,
                paceKmh: valid.paceKmh ?? Tour.defaultPaceKmh
            ).inserted(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(tour.id)",
                action: .tourCreate,
                detail: tour.name
            )
            return tour
        }
    }

    func updateTour(id: Int64, _ input: TourInput, actor: AuditActor) async throws -> Tour {
        try await editTour(id: id, details: input, frame: nil, maxAreaKm2: .infinity, actor: actor)
    }

    /// Sets frame and zoom range; refused when a waypoint would end up outside, naming the waypoints.
    func setFrame(tourId: Int64, _ input: FrameInput, maxAreaKm2: Double, actor: AuditActor) async throws -> Tour {
        try await editTour(id: tourId, details: nil, frame: input, maxAreaKm2: maxAreaKm2, actor: actor)
    }

    /// Details and frame in one transaction (one PATCH of the API): both are saved, or neither, with every problem reported at once.
    func editTour(id: Int64, details: TourInput?, frame frameInput: FrameInput?, maxAreaKm2: Double, actor: AuditActor) async throws -> Tour {
        let checkedDetails = details.map(TourValidation.validate)
        let checkedFrame = frameInput.map { TourValidation.validate($0, maxAreaKm2: maxAreaKm2) }
        var errors = checkedDetails?.errors ?? ValidationErrors()
        errors.fields.merge(checkedFrame?.errors.fields ?? [:]) { detail, _ in detail }
        try errors.throwIfAny()
        let (validDetails, validFrame) = (try checkedDetails?.get(), try checkedFrame?.get())
        return try await write { db in
            var tour = try Self.editableTour(db, id: id)
            if let valid = validDetails {
                tour.name = valid.name
                tour.description = valid.description
                tour.mapName = valid.mapName
                if let pace = valid.paceKmh { tour.paceKmh = pace }
                try Self.saveChangedTour(db, &tour, actor: actor, action: .tourUpdate, detail: tour.name)
            }
            if let (frame, minZoom, maxZoom) = validFrame.map({ ($0.frame, $0.minZoom, $0.maxZoom) }) {
                let outside = try Waypoint.inTour(id).fetchAll(db)
                    .filter { !frame.contains(latitude: $0.latitude, longitude: $0.longitude) }
                if !outside.isEmpty {
                    let names = outside.map { "“\($0.name)”" }.joined(separator: ", ")
                    throw ValidationErrors([
                        "frame":
                            "This frame would leave \(outside.count == 1 ? "a waypoint" : "\(outside.count) waypoints") outside: \(names). Move \(outside.count == 1 ? "it" : "them") first, or make the frame larger."
                    ])
                }
                tour.frameNorth = frame.north
                tour.frameSouth = frame.south
                tour.frameEast = frame.east
                tour.frameWest = frame.west
                tour.minZoom = minZoom
                tour.maxZoom = maxZoom
                try Self.saveChangedTour(
                    db,
                    &tour,
                    actor: actor,
                    action: .tourFrame,
                    detail: DisplayFormat.frame(frame) + ", zoom \(minZoom)–\(maxZoom)"
                )
            }
            return tour
        }
    }

    func deleteTour(id: Int64, actor: AuditActor) async throws {
        try await write { db in
            let tour = try Self.editableTour(db, id: id)
            try tour.delete(db)
            try AuditEvent.record(db, actor: actor, tour: tour, action: .tourDelete, detail: tour.name)
        }
    }

    static func editableTour(_ db: Database, id: Int64) throws -> Tour {
        guard let tour = try Tour.fetchOne(db, id: id) else { throw NotFound() }
        if tour.isLocked {
            throw Conflict("“\(tour.name)” is locked while its publish request is open. Withdraw the request to edit it.")
        }
        return tour
    }

    // MARK: Waypoints

    func createWaypoint(tourId: Int64, _ input: WaypointInput, actor: AuditActor) async throws -> Waypoint {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            let checked = TourValidation.validate(input, frame: tour.frame)
            var errors = checked.errors
            var existing = try Waypoint.inTour(tourId).fetchAll(db)
            if Self.nameTaken(input.name, in: existing, except: nil) {
                errors["name"] = "Another waypoint in this tour is already called “\(input.name.trimmed)”."
            }
            if let order = input.order, order < 1 || order > existing.count + 1 {
                errors["order"] = "Order must be between 1 and \(existing.count + 1)."
            }
            try errors.throwIfAny()
            let valid = try checked.get()
            let now = Date()
            var waypoint = try Waypoint.New(
                tourId: tourId,
                name: valid.name,
                position: existing.count + 1,
                latitude: valid.latitude,
                longitude: valid.longitude,
                description: valid.description,
                createdAt: now,
                updatedAt: now,
                triggerRadiusMeters: valid.triggerRadiusMeters ?? TriggerZone.defaultRadius
            ).inserted(db)
            if let order = valid.order, order != waypoint.position {
                existing.insert(waypoint, at: order - 1)
                try Self.renumber(db, existing.map { $0.id })
                waypoint.position = order
            }
            try Self.changedWaypoint(
                db,
                tour: tour,
                waypointId: waypoint.id,
                actor: actor,
                action: .waypointCreate,
                detail: "\(waypoint.name) in tour \(tourId)"
            )
            return waypoint
        }
    }

    func updateWaypoint(tourId: Int64, waypointId: Int64, _ input: WaypointInput, actor: AuditActor) async throws -> Waypoint {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            var all = try Waypoint.inTour(tourId).fetchAll(db)
            guard var waypoint = all.first(where: { $0.id == waypointId }) else { throw NotFound() }
            let checked = TourValidation.validate(input, frame: tour.frame)
            var errors = checked.errors
            if Self.nameTaken(input.name, in: all, except: waypointId) {
                errors["name"] = "Another waypoint in this tour is already called “\(input.name.trimmed)”."
            }
            if let order = input.order, order < 1 || order > all.count { errors["order"] = "Order must be between 1 and \(all.count)." }
            try errors.throwIfAny()
            let valid = try checked.get()
            waypoint.name = valid.name
            waypoint.description = valid.description
            waypoint.latitude = valid.latitude
            waypoint.longitude = valid.longitude
            if let metres = valid.triggerRadiusMeters { waypoint.triggerRadiusMeters = metres }
            waypoint.updatedAt = Date()
            try waypoint.update(db)
            if let order = valid.order, order != waypoint.position {
                all.removeAll { $0.id == waypointId }
                all.insert(waypoint, at: order - 1)
                try Self.renumber(db, all.map { $0.id })
                waypoint.position = order
            }
            try Self.changedWaypoint(db, tour: tour, waypointId: waypointId, actor: actor, action: .waypointUpdate, detail: waypoint.name)
            return waypoint
        }
    }

    /// Moves a waypoint (a marker dragged on the map) without touching its other fields.
    func moveWaypoint(tourId: Int64, waypointId: Int64, latitude: Double?, longitude: Double?, actor: AuditActor) async throws -> Waypoint {
        guard let current = try await read({ try Waypoint.fetchOne($0, id: waypointId) }), current.tourId == tourId else { throw NotFound() }
        return try await updateWaypoint(
            tourId: tourId,
            waypointId: waypointId,
            WaypointInput(name: current.name, description: current.description, latitude: latitude, longitude: longitude),
            actor: actor
        )
    }

    func deleteWaypoint(tourId: Int64, waypointId: Int64, actor: AuditActor) async throws {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            guard let waypoint = try Waypoint.fetchOne(db, id: waypointId), waypoint.tourId == tourId else { throw NotFound() }
            try waypoint.delete(db)
            let rest = try Waypoint.inTour(tourId).fetchAll(db)
            try Self.renumber(db, rest.map { $0.id })
            try Self.changedWaypoint(db, tour: tour, waypointId: waypointId, actor: actor, action: .waypointDelete, detail: waypoint.name)
        }
    }

    /// Sets the whole order at once (drag and drop). `ids` must name every waypoint of the tour exactly once.
    func reorderWaypoints(tourId: Int64, ids: [Int64], actor: AuditActor) async throws {
        try await write { db in
            let tour = try Self.editableTour(db, id: tourId)
            let current = try Int64.fetchAll(db, sql: "SELECT id FROM waypoint WHERE tourId = ? ORDER BY position", arguments: [tourId])
            guard ids.count == current.count, Set(ids) == Set(current) else {
                throw ValidationErrors(["order": "The new order must list every waypoint of this tour exactly once."])
            }
            try Self.renumber(db, ids)
            try Self.touch(db, tourId: tourId)
            try AuditEvent.record(db, actor: actor, tour: tour, action: .waypointReorder, detail: ids.map(String.init).joined(separator: ","))
        }
    }

    /// One step up (-1) or down (+1): the keyboard and no-JavaScript way to reorder.
    func shiftWaypoint(tourId: Int64, waypointId: Int64, by step: Int, actor: AuditActor) async throws {
        var ids = try await read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM waypoint WHERE tourId = ? ORDER BY position", arguments: [tourId])
        }
        guard let index = ids.firstIndex(of: waypointId) else { throw NotFound() }
        let target = index + step
        guard ids.indices.contains(target) else { return }
        ids.swapAt(index, target)
        try await reorderWaypoints(tourId: tourId, ids: ids, actor: actor)
    }

    /// Positions are unique per tour, so move everything out of the way (negative) first, then into place.
    static func renumber(_ db: Database, _ ids: [Int64]) throws {
        for (index, id) in ids.enumerated() {
            try db.execute(sql: "UPDATE waypoint SET position = ? WHERE id = ?", arguments: [-(index + 1), id])
        }
        try db.execute(
            sql: "UPDATE waypoint SET position = -position WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))",
            arguments: StatementArguments(ids)
        )
    }

    static func nameTaken(_ name: String, in waypoints: [Waypoint], except id: Int64?) -> Bool {
        let wanted = name.trimmed.lowercased()
        return waypoints.contains { $0.id != id && $0.name.lowercased() == wanted }
    }

    /// Saves a changed tour (its `updatedAt` moved on) with the audit event of the change, in the caller's transaction.
    static func saveChangedTour(_ db: Database, _ tour: inout Tour, actor: AuditActor, action: AuditAction, detail: String) throws {
        tour.updatedAt = Date()
        try tour.update(db)
        try AuditEvent.record(db, actor: actor, tour: tour, action: action, detail: detail)
    }

    /// A waypoint of `tour` changed (created, edited, its texts, deleted): the tour's `updatedAt` moves on and the
    /// audit event is recorded, in the caller's transaction.
    static func changedWaypoint(_ db: Database, tour: Tour, waypointId: Int64, actor: AuditActor, action: AuditAction, detail: String) throws {
        try touch(db, tourId: tour.id)
        try AuditEvent.record(
            db,
            actor: actor,
            siteId: tour.siteId,
            objectId: "\(waypointId)",
            action: action,
            detail: detail
        )
    }

    static func touch(_ db: Database, tourId: Int64) throws {
        try db.execute(sql: "UPDATE tour SET updatedAt = ? WHERE id = ?", arguments: [Date().dbTime, tourId])
    }
}

extension Waypoint {
    /// A tour's waypoints in their order.
    static func inTour(_ tourId: Int64) -> QueryInterfaceRequest<Waypoint> {
        filter(Columns.tourId == tourId).order(Columns.position)
    }
}

/// What the tour page shows besides the tour itself, read in one transaction: one moment's state.
struct TourPageState: Sendable {
    var waypoints: [Waypoint]
    var readiness: (problems: [String], warnings: [String])
    var openRequest: PublishRequest?
    var package: PackageRecord?
    var duration: DurationEstimate
    var tileset: TourTileset?
    var mediaSize: MediaDownloadSize
    /// When the tour's latest version was released (nil: never): the tour changed since when its `updatedAt` is later.
    var latestRelease: Date? = nil
    /// The stored trail facts (nil only for a moment after an upgrade, until the start-up pass has worked them out).
    var terrain: TerrainFacts? = nil
}

extension AppDatabase {
    func tourPageState(tour: Tour, tiles: TileSettings) async throws -> TourPageState {
        try await read { db in
            TourPageState(
                waypoints: try Waypoint.inTour(tour.id).fetchAll(db),
                readiness: try Self.readiness(db, tourId: tour.id, tiles: tiles),
                openRequest: try PublishRequest.open(tourId: tour.id).fetchOne(db),
                package: try PackageRecord.ofTour(tour.id).fetchOne(db),
                duration: try Self.estimatedDuration(db, tour: tour),
                tileset: try TourTileset.fetchOne(db, key: tour.id),
                mediaSize: try Self.downloadSize(db, tourId: tour.id),
                latestRelease: try Double.fetchOne(
                    db,
                    sql: """
                        SELECT MAX(packageVersion.createdAt) FROM packageVersion
                        JOIN package ON package.id = packageVersion.packageId WHERE package.tourId = ?
                        """,
                    arguments: [tour.id]
                ).map(Date.init(timeIntervalSince1970:)),
                terrain: try Self.terrainFacts(db, tourId: tour.id)
            )
        }
    }
}
