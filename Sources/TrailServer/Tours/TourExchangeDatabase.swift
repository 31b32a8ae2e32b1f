import Foundation
import GRDB
import PackageFormat

// The imports and exports of a tour, as database reads and writes.

extension AppDatabase {
    /// Applies an import plan in one transaction: frame (if it sets one), waypoint adds and changes, the route.
    func applyImport(tourId: Int64, imported: ImportedTour, plan: ImportPlan, actor: AuditActor) async throws {
        try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            if plan.setsFrame, let frame = plan.frame {
                tour.frameNorth = frame.north
                tour.frameSouth = frame.south
                tour.frameEast = frame.east
                tour.frameWest = frame.west
            }
            if let route = imported.route { tour.route = route }
            tour.updatedAt = Date()
            try tour.update(db)
            var existing = try Waypoint.inTour(tourId).fetchAll(db)
            let now = Date()
            for item in plan.waypoints {
                guard let point = imported.points.first(where: { $0.name == item.name }) else { continue }
                switch item.action {
                case "add":
                    var waypoint = Waypoint(
                        id: nil,
                        tourId: tourId,
                        name: point.name,
                        position: existing.count + 1,
                        latitude: point.latitude,
                        longitude: point.longitude,
                        description: point.description,
                        createdAt: now,
                        updatedAt: now
                    )
                    if let radius = point.triggerRadiusMeters { waypoint.triggerRadiusMeters = radius }
                    // Texts in the tour's further languages; those in languages it does not have are left out.
                    waypoint.localized = point.localized.filter { tour.furtherLanguages.contains($0.key) }
                    try waypoint.insert(db)
                    existing.append(waypoint)
                case "change":
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
                default: continue
                }
            }
            try AuditEvent.record(
                db,
                actor: actor,
                tour: tour,
                action: "tour.import",
                detail:
                    "\(plan.format.isEmpty ? "" : "\(plan.format): ")\(plan.added) added, \(plan.changed) changed, \(plan.skipped) skipped, route \(plan.routePoints) points"
                    + (plan.setsFrame ? ", frame set" : "")
            )
        }
    }

    /// Saves (or, with nil, removes) the tour's route.
    public func setRoute(tourId: Int64, route: RoutePath?, actor: AuditActor) async throws {
        try await write { db in
            var tour = try Self.editableTour(db, id: tourId)
            tour.route = route
            try Self.saveChangedTour(
                db,
                &tour,
                actor: actor,
                action: "tour.route",
                detail: route.map { "\($0.points.count) points, \(Int($0.lengthMeters)) m" } ?? "removed"
            )
        }
    }

    public func durationEstimate(tour: Tour) async throws -> DurationEstimate {
        try await read { try Self.estimatedDuration($0, tour: tour) }
    }

    /// The walk along the route (or from waypoint to waypoint) at the tour's pace, plus the play time of each
    /// waypoint's audio and video.
    static func estimatedDuration(_ db: Database, tour: Tour) throws -> DurationEstimate {
        let waypoints = try Waypoint.inTour(tour.id!).fetchAll(db)
        let dwell = try waypoints.map { waypoint -> Double? in
            // One language's worth: files for every language and those for the default one.
            let seconds = try Asset.filter(Asset.Columns.waypointId == waypoint.id! && Asset.listed).fetchAll(db)
                .filter { ($0.kind == .audio || $0.kind == .video) && ($0.language == nil || $0.language == tour.defaultLanguage) }
                .compactMap(\.durationSeconds)
            return seconds.isEmpty ? nil : seconds.reduce(0, +)
        }
        return DurationEstimate.estimate(
            waypoints: waypoints.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) },
            route: tour.route,
            paceKmh: tour.paceKmh,
            dwellSeconds: dwell
        )
    }
}

extension AppDatabase {
    /// One read transaction: the tour, its waypoints and their files as of one moment.
    func exportGeoJSON(tour: Tour, site: Site) async throws -> Data {
        try await read { db in
            guard let current = try Tour.fetchOne(db, id: tour.id!) else { throw NotFound() }
            return try TourExport.geoJSON(db, tour: current, site: site)
        }
    }
}
