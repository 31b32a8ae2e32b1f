import Foundation
import GRDB
import PackageFormat
import TourFormats

// The imports and exports of a tour, as database reads and writes.

extension AppDatabase {
    /// The import and its pictures as one outcome: the waypoints, route, frame and audit event, then each staged
    /// picture as a pending asset of its waypoint (with its scan job), in one transaction. A picture already on its
    /// waypoint (the same file imported again) is left out. Returns the pictures attached.
    func applyImport(
        tourId: Int64,
        imported: ImportedTour,
        plan: ImportPlan,
        pictures: [StagedPicture],
        actor: AuditActor
    ) async throws
        -> [Asset]
    {
        try await write { db in
            try Self.applyImport(db, tourId: tourId, imported: imported, plan: plan, actor: actor)
            let waypoints = try Waypoint.inTour(tourId).fetchAll(db)
            var attached: [Asset] = []
            for picture in pictures {
                guard let waypoint = waypoints.first(where: { $0.name.lowercased() == picture.waypointName.lowercased() }) else { continue }
                let present = try Asset.filter(Asset.Columns.waypointId == waypoint.id && Asset.Columns.sha256 == picture.sha256).fetchCount(db)
                guard present == 0 else { continue }
                let new = NewAsset(
                    tourId: tourId,
                    waypointId: waypoint.id,
                    replacesAssetId: nil,
                    detected: picture.detected,
                    originalName: picture.originalName,
                    size: picture.size,
                    sha256: picture.sha256,
                    uploadId: picture.uploadId
                )
                attached.append(try Self.addAsset(db, new, actor: actor).0)
            }
            return attached
        }
    }

    /// The building block of an import: waypoints added and changed, the route and frame, and the audit event.
    static func applyImport(_ db: Database, tourId: Int64, imported: ImportedTour, plan: ImportPlan, actor: AuditActor) throws {
        var tour = try Self.editableTour(db, id: tourId)
        if plan.setsFrame, let frame = plan.frame {
            tour.frameNorth = frame.north
            tour.frameSouth = frame.south
            tour.frameEast = frame.east
            tour.frameWest = frame.west
        }
        if let route = imported.routePath { tour.route = route }
        tour.updatedAt = Date()
        try tour.update(db)
        var existing = try Waypoint.inTour(tourId).fetchAll(db)
        let now = Date()
        for item in plan.waypoints {
            guard let point = imported.points.first(where: { $0.name == item.name }) else { continue }
            switch item.action {
            case .add:
                let waypoint = try Waypoint.New(
                    tourId: tourId,
                    name: point.name,
                    position: existing.count + 1,
                    latitude: point.latitude,
                    longitude: point.longitude,
                    description: point.description,
                    createdAt: now,
                    updatedAt: now,
                    triggerRadiusMeters: point.triggerRadiusMeters ?? TriggerZone.defaultRadius,
                    // Texts in the tour's further languages; those in languages it does not have are left out.
                    localized: point.localized.filter { tour.furtherLanguages.contains($0.key) }.mapValues(\.localizedText)
                ).inserted(db)
                existing.append(waypoint)
            case .change:
                guard var waypoint = existing.first(where: { $0.name.lowercased() == point.name.lowercased() }) else { continue }
                waypoint.latitude = point.latitude
                waypoint.longitude = point.longitude
                if !point.description.isEmpty { waypoint.description = point.description }
                if let radius = point.triggerRadiusMeters { waypoint.triggerRadiusMeters = radius }
                // Field by field, as for the default language: an empty description in the file keeps the saved one.
                for (tag, text) in point.localized where tour.furtherLanguages.contains(tag) {
                    let saved = waypoint.localized[tag] ?? LocalizedText()
                    waypoint.localized[tag] = LocalizedText(
                        name: text.name.nonEmpty ?? saved.name,
                        description: text.description.nonEmpty ?? saved.description
                    )
                }
                waypoint.updatedAt = now
                try waypoint.update(db)
            case .skip: continue
            }
        }
        try AuditEvent.record(
            db,
            actor: actor,
            tour: tour,
            action: .tourImport,
            detail:
                "\(plan.format.map { "\($0): " } ?? "")\(plan.added) added, \(plan.changed) changed, \(plan.skipped) skipped, route \(plan.routePoints) points"
                + (plan.setsFrame ? ", frame set" : "")
        )
    }

    /// Saves (or, with nil, removes) the tour's route.
    func setRoute(tourId: Int64, route: RoutePath?, actor: AuditActor) async throws {
        try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            tour.route = route
            try Self.saveChangedTour(
                db,
                &tour,
                actor: actor,
                action: .tourRoute,
                detail: route.map { "\($0.points.count) points, \(Int($0.lengthMeters)) m" } ?? "removed"
            )
        }
    }

    func durationEstimate(tour: Tour) async throws -> DurationEstimate {
        try await read { try Self.estimatedDuration($0, tour: tour) }
    }

    /// The walk along the route (or from waypoint to waypoint) at the tour's pace, plus the play time of each
    /// waypoint's audio and video.
    static func estimatedDuration(_ db: Database, tour: Tour) throws -> DurationEstimate {
        let waypoints = try Waypoint.inTour(tour.id).fetchAll(db)
        // One read of the tour's listed files, not one per waypoint (a tour page's most expensive read at 30 stops).
        let files = try Asset.filter(waypoints.compactMap(\.id).contains(Asset.Columns.waypointId) && Asset.listed).fetchAll(db)
        let byWaypoint = Dictionary(grouping: files, by: \.waypointId)
        let dwell = waypoints.map { waypoint -> Double? in
            // One language's worth: files for every language and those for the default one.
            let seconds = (byWaypoint[waypoint.id] ?? [])
                .filter { ($0.kind == .audio || $0.kind == .video) && ($0.language == nil || $0.language == tour.defaultLanguage) }
                .compactMap(\.durationSeconds)
            return seconds.isEmpty ? nil : seconds.reduce(0, +)
        }
        // The climb from the stored facts (the terrain model's, when the route has no heights of its own).
        let terrain = try Self.terrainFacts(db, tourId: tour.id)
        return DurationEstimate.estimate(
            waypoints: waypoints.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) },
            route: tour.route,
            ascentMeters: terrain.map(\.ascentMeters) ?? tour.route?.ascentMeters,
            paceKmh: tour.paceKmh,
            dwellSeconds: dwell
        )
    }
}

extension AppDatabase {
    /// One read transaction: the tour, its waypoints and their files as of one moment.
    func exportGeoJSON(tour: Tour, site: Site) async throws -> Data {
        try await read { db in
            guard let current = try Tour.fetchOne(db, id: tour.id) else { throw NotFound() }
            return try TourExport.geoJSON(db, tour: current, site: site)
        }
    }

    /// The tour as GPX, from the same manifest as the GeoJSON export.
    func exportGPX(tour: Tour, site: Site) async throws -> Data {
        try await read { db in
            guard let current = try Tour.fetchOne(db, id: tour.id) else { throw NotFound() }
            return TourExport.gpx(try TourExport.manifest(db, tour: current, site: site))
        }
    }
}
