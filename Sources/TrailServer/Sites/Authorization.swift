import Foundation
import Hummingbird

/// Checks on the object, not only the route: every handler that touches a site or a tour goes through here.
/// Someone who may not see an object gets `NotFound`, so ids cannot be probed.
/// The answers are labelled tuples: a handler destructures them, or names `.access` to check more.
struct Authorization: Sendable {
    let database: AppDatabase

    func site(slug: String, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess) {
        guard let found = try await database.siteAccess(slug: slug, user: user) else { throw NotFound() }
        try found.access.require(.view, to: "see it")
        return found
    }

    func site(id: Int64, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess) {
        guard let found = try await database.siteAccess(id: id, user: user) else { throw NotFound() }
        try found.access.require(.view, to: "see it")
        return found
    }

    /// The tour, its site and the user's access, from one read, when the user may do what `need` says with it.
    func tour(id: Int64, user: AuthenticatedUser, need: TourAccessNeed) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        guard let found = try await database.tourAccess(id: id, user: user) else { throw NotFound() }
        try need.check(found.access)
        return found
    }

    /// The tour, its site and the user's access, from one read.
    func tour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        try await tour(id: id, user: user, need: .view)
    }

    /// The tour, when the user may change it (author or manager of its site, or admin).
    func editableTour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        try await tour(id: id, user: user, need: .edit)
    }

    /// The tour as `tour(id:user:need:)` gives it, and its waypoint `waypointId` from the same read (nil when the
    /// tour has no such waypoint, or there is no id to look for).
    func waypoint(
        tourId: Int64,
        waypointId: Int64?,
        user: AuthenticatedUser,
        need: TourAccessNeed
    ) async throws -> (tour: Tour, site: Site, access: SiteAccess, waypoint: Waypoint?) {
        guard let found = try await database.waypointAccess(tourId: tourId, waypointId: waypointId, user: user) else { throw NotFound() }
        try need.check(found.access)
        return found
    }
}

/// Reads the `{slug}` route's site and the user's access once and makes the `SiteMemberContext` of a site's routes;
/// a site the user may not see is a 404 before any handler runs.
struct SiteMemberMiddleware: ContextMiddleware {
    let authorization: Authorization

    func context(for request: Request, from parent: SignedInContext) async throws -> SiteMemberContext {
        let (site, access) = try await authorization.site(slug: parent.parameters.require("slug"), user: parent.user)
        return SiteMemberContext(coreContext: parent.coreContext, user: parent.user, site: site, access: access, app: parent.app)
    }
}

extension RouterMethods<SignedInContext> {
    /// The routes below `/sites/{slug}`, each handed a `SiteMemberContext`.
    func siteGroup(_ authorization: Authorization) -> RouterGroup<SiteMemberContext> {
        group("sites/{slug}", context: SiteMemberMiddleware(authorization: authorization))
    }
}
