import Foundation
import GRDB
import PackageFormat

extension AppDatabase {
    /// Stores a checked alert of `siteId`; the tour and its stops are checked here, in the same transaction as the
    /// insert, the catalog bump and the audit event, so a tour or stop deleted meanwhile cannot slip in. `notify` (nil
    /// without email) writes the message the site's other managers are sent; it is queued in the same transaction.
    func postAlert(
        _ input: ValidAlert,
        siteId: Int64,
        actor: AuditActor,
        notify: AlertMessage? = nil,
        now: Date = Date()
    ) async throws -> Alert {
        try await write { db in
            var errors = ValidationErrors()
            if let tourId = input.tourId {
                let tourSite = try Int64.fetchOne(db, sql: "SELECT siteId FROM tour WHERE id = ?", arguments: [tourId])
                if tourSite != siteId {
                    errors["tourId"] = "Tour \(tourId) is not a tour of this site."
                } else if !input.closedWaypointIds.isEmpty {
                    let stops = Set(try Int64.fetchAll(db, sql: "SELECT id FROM waypoint WHERE tourId = ?", arguments: [tourId]))
                    let foreign = input.closedWaypointIds.filter { !stops.contains($0) }
                    if !foreign.isEmpty {
                        errors["closedWaypointIds"] =
                            "Not stops of this tour: \(foreign.map(String.init).joined(separator: ", ")). Close only stops of the chosen tour."
                    }
                }
            }
            try errors.throwIfAny()
            let live =
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM alert WHERE siteId = ? AND endedAt IS NULL AND retiredAt IS NULL AND endsAt > ?",
                    arguments: [siteId, now.dbTime]
                ) ?? 0
            if live >= Alert.liveLimitPerSite {
                throw Conflict(
                    "This site already has \(Alert.liveLimitPerSite) current and scheduled alerts, the most it may hold. End one that no longer applies first."
                )
            }
            let alert = try Alert.New(
                siteId: siteId,
                tourId: input.tourId,
                severity: input.severity,
                title: input.title,
                message: input.message,
                closedWaypointIds: input.closedWaypointIds,
                startsAt: input.startsAt,
                endsAt: input.endsAt,
                createdBy: actor.userId,
                createdAt: now
            ).inserted(db)
            try Self.bumpCatalog(db, reason: .alert)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(alert.id)",
                action: .alertPost,
                detail: "\(input.severity.rawValue): \(input.title)"
                    + (input.closedWaypointIds.isEmpty ? "" : ", closes stops \(input.closedWaypointIds.map(String.init).joined(separator: ", "))")
                    + ", until \(Manifest.timestamp(input.endsAt))"
            )
            if let notify, let site = try Site.fetchOne(db, id: siteId) {
                let tourName = try input.tourId.flatMap { try String.fetchOne(db, sql: "SELECT name FROM tour WHERE id = ?", arguments: [$0]) }
                let stopNames =
                    input.closedWaypointIds.isEmpty
                    ? []
                    : try String.fetchAll(
                        db,
                        sql:
                            "SELECT name FROM waypoint WHERE id IN (\(input.closedWaypointIds.map { _ in "?" }.joined(separator: ", "))) ORDER BY position",
                        arguments: StatementArguments(input.closedWaypointIds)
                    )
                let facts = AlertMailFacts(alert: alert, site: site, tourName: tourName, closedStopNames: stopNames)
                try Self.queueNotification(db, kind: .alert, to: try Self.siteManagers(db, siteId: siteId), causedBy: actor.userId) { _ in
                    notify(facts)
                }
            }
            return alert
        }
    }

    /// Ends a current or scheduled alert now: the next catalog (signed at once) no longer lists it.
    func endAlert(id: Int64, actor: AuditActor, now: Date = Date()) async throws -> Alert {
        try await write { db in
            guard var alert = try Alert.fetchOne(db, key: id) else { throw NotFound() }
            try db.execute(
                sql: "UPDATE alert SET endedAt = ?, endedBy = ?, retiredAt = ? WHERE id = ? AND endedAt IS NULL AND retiredAt IS NULL AND endsAt > ?",
                arguments: [now.dbTime, actor.userId, now.dbTime, id, now.dbTime]
            )
            guard db.changesCount == 1 else { throw Conflict("This alert has already ended.") }
            alert.endedAt = now
            alert.endedBy = actor.userId
            alert.retiredAt = now
            try Self.bumpCatalog(db, reason: .alert)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: alert.siteId,
                objectId: "\(id)",
                action: .alertEnd,
                detail: "ended early: \(alert.title)"
            )
            return alert
        }
    }

    func alert(id: Int64) async throws -> Alert? { try await read { try Alert.fetchOne($0, key: id) } }

    /// Alerts that ran out since the last catalog are retired, and the catalog version moves on once for all of them,
    /// so every change of the listed alerts is a new catalog version (clients keep the highest one they verified).
    /// Answers whether anything changed.
    @discardableResult
    func retireEndedAlerts(now: Date = Date()) async throws -> Bool {
        // A read first: nearly every call finds nothing and must not take the write lock.
        let due = try await read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM alert WHERE retiredAt IS NULL AND endsAt <= ?)", arguments: [now.dbTime])
                ?? false
        }
        guard due else { return false }
        return try await write { db in
            try db.execute(sql: "UPDATE alert SET retiredAt = ? WHERE retiredAt IS NULL AND endsAt <= ?", arguments: [now.dbTime, now.dbTime])
            guard db.changesCount > 0 else { return false }
            try Self.bumpCatalog(db, reason: .alert)
            return true
        }
    }

    /// Current and scheduled alerts (not ended, `endsAt` ahead of `now`), of one site or all, soonest end first.
    func liveAlerts(siteId: Int64? = nil, tourId: Int64? = nil, now: Date = Date()) async throws -> [AlertRow] {
        try await read { db in try Self.liveAlerts(db, siteId: siteId, tourId: tourId, now: now) }
    }

    static func liveAlerts(_ db: Database, siteId: Int64?, tourId: Int64? = nil, now: Date) throws -> [AlertRow] {
        var sql = """
            SELECT alert.*, site.slug AS siteSlug, package.id AS packageId, tour.name AS tourName
            FROM alert JOIN site ON site.id = alert.siteId
            LEFT JOIN tour ON tour.id = alert.tourId
            LEFT JOIN package ON package.tourId = alert.tourId
            WHERE alert.endedAt IS NULL AND alert.retiredAt IS NULL AND alert.endsAt > ?
            """
        var arguments: StatementArguments = [now.dbTime]
        if let siteId {
            sql += " AND alert.siteId = ?"
            arguments += [siteId]
        }
        if let tourId {
            // A tour's alerts: its own and the site-wide ones.
            sql += " AND (alert.tourId = ? OR alert.tourId IS NULL)"
            arguments += [tourId]
        }
        sql += " ORDER BY alert.endsAt, alert.id"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            AlertRow(alert: try Alert(row: row), siteSlug: row["siteSlug"], packageId: row["packageId"], tourName: row["tourName"])
        }
    }

    /// What the signed catalog lists: every live alert but one scoped to a tour that has no release yet. Phones know a
    /// tour by its package, so such an alert, listed with no package, would read as one for the whole site; it joins
    /// the catalog with the tour's first release (which signs a new catalog).
    func catalogAlerts(now: Date = Date()) async throws -> [AlertRow] {
        try await liveAlerts(now: now).filter { $0.alert.tourId == nil || $0.packageId != nil }
    }

    /// The site's slug and the tour's package id of one alert, for answers.
    func alertRow(_ alert: Alert) async throws -> AlertRow {
        try await read { db in
            let slug = try String.fetchOne(db, sql: "SELECT slug FROM site WHERE id = ?", arguments: [alert.siteId]) ?? ""
            var packageId: String?
            var tourName: String?
            if let tourId = alert.tourId {
                packageId = try String.fetchOne(db, sql: "SELECT id FROM package WHERE tourId = ?", arguments: [tourId])
                tourName = try String.fetchOne(db, sql: "SELECT name FROM tour WHERE id = ?", arguments: [tourId])
            }
            return AlertRow(alert: alert, siteSlug: slug, packageId: packageId, tourName: tourName)
        }
    }
}
