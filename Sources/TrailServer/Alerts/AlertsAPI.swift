import Foundation
import Hummingbird
import PackageFormat
import TrailAPI

/// `/api/v1/manage` routes for alerts and closures (docs/api.md, "Alerts"): a site's managers and admins post, list
/// and end them. Posting and ending each sign a new catalog version at once, so phones see the change at their next
/// check.
struct AlertsAPI: Sendable {
    let alerts: AlertsService

    /// The body of `POST /manage/sites/{slug}/alerts`. Times are RFC 3339 text, read by `AlertDraft`.
    struct PostBody: Decodable {
        let title: String?
        let message: String?
        let severity: String?
        let tourId: Int64?
        let closedWaypointIds: [Int64]?
        let startsAt: String?
        let endsAt: String?
    }

    /// Each handler is named after its operationId in openapi.json.
    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        router.post("/sites/{slug}/alerts", use: postAlert)
        router.get("/sites/{slug}/alerts", use: listAlerts)
        router.delete("/alerts/{id}", use: endAlert)
    }

    func postAlert(_ request: Request, _ context: SignedInContext) async throws -> EditedResponse<AlertBody> {
        let slug = try context.parameters.require("slug")
        let body = try await request.decode(as: PostBody.self, context: context)
        let draft = AlertDraft(
            title: body.title,
            message: body.message,
            severity: body.severity,
            tourId: body.tourId,
            closedWaypointIds: body.closedWaypointIds,
            startsAt: body.startsAt,
            endsAt: body.endsAt
        )
        let row = try await alerts.post(draft, siteSlug: slug, user: context.user, actor: context.actor)
        return EditedResponse(status: .created, response: AlertBody(row, now: Date()))
    }

    func listAlerts(_ request: Request, _ context: SignedInContext) async throws -> [AlertBody] {
        let slug = try context.parameters.require("slug")
        let now = Date()
        let rows = try await alerts.list(siteSlug: slug, user: context.user, now: now)
        return rows.map { AlertBody($0, now: now) }
    }

    func endAlert(_ request: Request, _ context: SignedInContext) async throws -> AlertBody {
        guard let id = context.parameters.get("id", as: Int64.self) else { throw NotFound() }
        let row = try await alerts.end(id: id, user: context.user, actor: context.actor)
        return AlertBody(row, now: Date())
    }
}

/// An alert in the management API's answers.
struct AlertBody: ResponseEncodable {
    let id: Int64
    let site: String
    let tourId: Int64?
    let packageId: String?
    let closedWaypointIds: [Int64]
    let severity: String
    let title: String
    let message: String
    let startsAt: Date
    let endsAt: Date
    let createdAt: Date
    let endedAt: Date?
    /// `scheduled`, `current` or `ended`.
    let state: String

    init(_ row: AlertRow, now: Date) {
        id = row.alert.id
        site = row.siteSlug
        tourId = row.alert.tourId
        packageId = row.packageId
        closedWaypointIds = row.alert.closedWaypointIds
        severity = row.alert.severity.rawValue
        title = row.alert.title
        message = row.alert.message
        startsAt = row.alert.startsAt
        endsAt = row.alert.endsAt
        createdAt = row.alert.createdAt
        endedAt = row.alert.endedAt
        state = row.alert.state(at: now)
    }
}

/// The rules of alerts, shared by the API and the panel: who may post and end them (a site's managers and admins).
struct AlertsService: Sendable {
    let database: AppDatabase
    /// Tells the site's other managers of each new alert (when SMTP is set up).
    let mailer: Mailer

    /// The site, when `user` manages it (or is an admin). As on every site route, someone who is not a member gets 404
    /// (an alert not yet started names a site and a plan nobody outside should learn of); its authors and reviewers 403.
    func managedSite(slug: String, user: AuthenticatedUser) async throws -> Site {
        guard let (site, access) = try await database.siteAccess(slug: slug, user: user) else { throw NotFound() }
        try access.require(.manage, to: "post or end its alerts")
        return site
    }

    func post(_ draft: AlertDraft, siteSlug: String, user: AuthenticatedUser, actor: AuditActor) async throws -> AlertRow {
        let site = try await managedSite(slug: siteSlug, user: user)
        let valid = try draft.validated(now: Date())
        let alert = try await database.postAlert(valid, siteId: site.id, actor: actor, notify: mailer.alertMessage(by: user))
        mailer.outbox?.wake()
        return try await database.alertRow(alert)
    }

    func list(siteSlug: String, user: AuthenticatedUser, now: Date) async throws -> [AlertRow] {
        let site = try await managedSite(slug: siteSlug, user: user)
        return try await database.liveAlerts(siteId: site.id, now: now)
    }

    func end(id: Int64, user: AuthenticatedUser, actor: AuditActor) async throws -> AlertRow {
        guard let alert = try await database.alert(id: id) else { throw NotFound() }
        guard let (_, access) = try await database.siteAccess(id: alert.siteId, user: user) else { throw NotFound() }
        try access.require(.manage, to: "post or end its alerts")
        return try await database.alertRow(try await database.endAlert(id: id, actor: actor))
    }
}

extension Components.Schemas.CatalogAlert {
    /// An alert as the signed catalog lists it (docs/api.md, "Alerts in the catalog").
    init(_ row: AlertRow) {
        self.init(
            id: row.alert.id,
            site: row.siteSlug,
            packageId: row.packageId,
            closedWaypoints: row.alert.closedWaypointIds,
            severity: row.alert.severity.rawValue,
            title: row.alert.title,
            message: row.alert.message,
            startsAt: row.alert.startsAt,
            endsAt: row.alert.endsAt
        )
    }
}
