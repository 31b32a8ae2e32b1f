import Foundation
import Hummingbird
import PackageFormat

/// The panel's alerts page of a site (`/sites/{slug}/alerts`: the post form, the current and scheduled alerts, an
/// End button each) and the tour page's card of the alerts that apply to a tour. Same rules as the API
/// (`AlertsService`): the site's managers and admins post and end them.
struct AlertsPages: Sendable {
    let alerts: AlertsService
    let database: AppDatabase
    let pages: PageResponder
    let catalogLifetime: TimeInterval

    struct AlertItem: Sendable {
        let id: Int64
        let severity: String
        let severityLabel: String
        let badge: String
        let title: String
        let message: String
        let scope: String
        /// "2. Overlook, 3. Falls" (empty when none).
        let closedStops: String
        let startsAt: String
        let endsAt: String
        let scheduled: Bool
    }

    struct StopOption: Sendable {
        let id: Int64
        let order: Int
        let name: String
        let checked: Bool
    }

    struct TourOption: Sendable {
        let id: Int64
        let name: String
        let selected: Bool
        let stops: [StopOption]
        let hasStops: Bool
    }

    struct SeverityOption: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }

    struct Page: Sendable {
        let slug: String
        let name: String
        let alerts: [AlertItem]
        let tours: [TourOption]
        let severities: [SeverityOption]
        /// The time now in the site's time zone, and the zone's name: the form's times are read in it.
        let now: String
        let zoneName: String
        /// How long a phone that stays offline keeps showing what it last fetched (the signed catalog's lifetime).
        let offlineDays: Int
        var form: [String: String] = [:]
        var errors: [String: String] = [:]
        var errorSummary: ErrorSummary? = nil
    }

    static let formFields: KeyValuePairs<String, String> = [
        "title": "alert-title", "message": "alert-message", "severity": "alert-severity", "tourId": "alert-tour",
        "closedWaypointIds": "alert-stops", "startsAt": "alert-starts", "endsAt": "alert-ends",
    ]

    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        router.get("/sites/{slug}/alerts", use: showAlerts)
        router.post("/sites/{slug}/alerts", use: postAlert)
        router.post("/alerts/{id}/end", use: endAlert)
    }

    func showAlerts(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let site = try await alerts.managedSite(slug: context.parameters.require("slug"), user: context.user)
        let page = try await makePage(site, form: [:], closed: [])
        return await pages.render("alerts", title: "Alerts of \(site.name)", page: page, request: request, context: context)
    }

    func postAlert(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let site = try await alerts.managedSite(slug: context.parameters.require("slug"), user: context.user)
        let form = try await request.decode(as: AlertForm.self, context: context)
        let closedText = form.closedWaypointIds
        let closed = closedText.compactMap { Int64($0) }
        do {
            var errors = ValidationErrors()
            let tourText = form.tourId.trimmingCharacters(in: .whitespaces)
            let tourId = Int64(tourText)
            if !tourText.isEmpty, tourId == nil { errors["tourId"] = "Choose a tour from the list." }
            if closed.count != closedText.count { errors["closedWaypointIds"] = "Choose stops from the list." }
            try errors.throwIfAny()
            let draft = AlertDraft(
                title: form.title,
                message: form.message,
                severity: form.severity,
                tourId: tourId,
                closedWaypointIds: closed,
                startsAt: form.startsAt,
                endsAt: form.endsAt,
                localZone: site.zone
            )
            let row = try await alerts.post(draft, siteSlug: site.slug, user: context.user, actor: context.actor)
            return pages.redirect(to: PanelURL.siteAlerts(site.slug), notice: "Posted: \(row.alert.title). Phones see it at their next check.")
        } catch let refusal as any AppError where refusal is ValidationErrors || refusal is Conflict {
            // A conflict (the site's cap of live alerts) is shown where the title is: the form stays as typed.
            let fields = (refusal as? ValidationErrors)?.fields ?? ["title": refusal.message]
            let errors = ValidationErrors(fields)
            var page = try await makePage(site, form: form.typed, closed: Set(closed))
            page.errors = errors.fields
            page.errorSummary = ErrorSummary(errors.fields, fields: Self.formFields, fallbackId: "alert-title")
            return await pages.render(
                "alerts",
                title: "Alerts of \(site.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    func endAlert(_ request: Request, _ context: SignedInContext) async throws -> Response {
        guard let id = context.parameters.get("id", as: Int64.self) else { throw NotFound() }
        let row = try await alerts.end(id: id, user: context.user, actor: context.actor)
        return pages.redirect(to: PanelURL.siteAlerts(row.siteSlug), notice: "Ended: \(row.alert.title). Phones drop it at their next check.")
    }

    func makePage(_ site: Site, form: [String: String], closed: Set<Int64>) async throws -> Page {
        let now = Date()
        let rows = try await database.liveAlerts(siteId: site.id, now: now)
        let tours = try await database.tours(siteId: site.id)
        var options: [TourOption] = []
        var stopNames: [Int64: String] = [:]
        for tour in tours {
            let stops = try await database.waypoints(tourId: tour.id)
            for stop in stops { stopNames[stop.id] = "\(stop.position). \(stop.name)" }
            options.append(
                TourOption(
                    id: tour.id,
                    name: tour.name,
                    selected: form["tourId"] == "\(tour.id)",
                    stops: stops.map { StopOption(id: $0.id, order: $0.position, name: $0.name, checked: closed.contains($0.id)) },
                    hasStops: !stops.isEmpty
                )
            )
        }
        let chosen = AlertSeverity(rawValue: form["severity"] ?? "") ?? .warning
        return Page(
            slug: site.slug,
            name: site.name,
            alerts: rows.map { Self.item($0, stopNames: stopNames, now: now, zone: site.zone) },
            tours: options,
            severities: AlertSeverity.allCases.map { SeverityOption(value: $0.rawValue, label: $0.label, selected: $0 == chosen) },
            now: Self.minutes(now, in: site.zone),
            zoneName: site.timeZone,
            offlineDays: Int((catalogLifetime / 86_400).rounded(.up)),
            form: form
        )
    }

    static func item(_ row: AlertRow, stopNames: [Int64: String], now: Date, zone: TimeZone) -> AlertItem {
        let alert = row.alert
        return AlertItem(
            id: alert.id,
            severity: alert.severity.rawValue,
            severityLabel: alert.severity.label,
            badge: badge(alert.severity),
            title: alert.title,
            message: alert.message,
            scope: row.tourName.map { "Tour: \($0)" } ?? "Every tour of the site",
            closedStops: alert.closedWaypointIds.map { stopNames[$0] ?? "stop \($0)" }.joined(separator: ", "),
            startsAt: minutes(alert.startsAt, in: zone),
            endsAt: minutes(alert.endsAt, in: zone),
            scheduled: alert.startsAt > now
        )
    }

    static func badge(_ severity: AlertSeverity) -> String {
        switch severity {
        case .closure: "bg-danger"
        case .warning: "bg-warning text-dark"
        case .info: "bg-info text-dark"
        }
    }

    /// `2026-11-27 14:30 MST`: a time as the site's people read it, in its time zone (the form's times are read in
    /// the same zone), with the zone's abbreviation.
    static func minutes(_ date: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date) + " " + (zone.abbreviation(for: date) ?? zone.identifier)
    }
}

/// The tour page's card: the alerts that apply to the tour now (its own and the site-wide ones), for everyone who
/// may see the tour; managers get a link to the site's alerts page.
struct TourAlertsCard: Sendable {
    let items: [AlertsPages.AlertItem]
    let hasAlerts: Bool
    let canManage: Bool
    let siteSlug: String

    static func make(database: AppDatabase, tour: Tour, site: Site, access: SiteAccess) async throws -> TourAlertsCard {
        let now = Date()
        let rows = try await database.liveAlerts(siteId: site.id, tourId: tour.id, now: now)
        let stops = try await database.waypoints(tourId: tour.id)
        let names = Dictionary(uniqueKeysWithValues: stops.map { ($0.id, "\($0.position). \($0.name)") })
        return TourAlertsCard(
            items: rows.map { AlertsPages.item($0, stopNames: names, now: now, zone: site.zone) },
            hasAlerts: !rows.isEmpty,
            canManage: access.canManage,
            siteSlug: site.slug
        )
    }
}

/// The post form of the alerts page; the stops to close are a checkbox group (`closedWaypointIds[]`).
struct AlertForm: PanelForm {
    @Field var title: String
    @Field var message: String
    @Field var severity: String
    @Field var tourId: String
    @Field var startsAt: String
    @Field var endsAt: String
    var closedWaypointIds: [String] = []

    /// The fields as typed, for the page shown again with its messages.
    var typed: [String: String] {
        ["title": title, "message": message, "severity": severity, "tourId": tourId, "startsAt": startsAt, "endsAt": endsAt]
    }
}
