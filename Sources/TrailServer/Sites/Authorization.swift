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

    /// The tour, its site and the user's access, from one read.
    func tour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        guard let found = try await database.tourAccess(id: id, user: user) else { throw NotFound() }
        try found.access.require(.view, to: "see it")
        return found
    }

    /// The tour, when the user may change it (author or manager of its site, or admin).
    func editableTour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        let result = try await tour(id: id, user: user)
        try result.access.require(.author, to: "change its tours")
        return result
    }
}

/// Reads the `{slug}` route's site and the user's access once, for the handlers of a site's routes
/// (`SiteMemberContext`); a site the user may not see is a 404 before any handler runs.
struct SiteMemberMiddleware: RouterMiddleware {
    typealias Context = SignedInContext
    let authorization: Authorization

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.siteMember = try await authorization.site(slug: context.parameters.require("slug"), user: context.user)
        return try await next(request, context)
    }
}

extension RouterMethods<SignedInContext> {
    /// The routes below `/sites/{slug}`, each handed a `SiteMemberContext`.
    func siteGroup(_ authorization: Authorization) -> RouterGroup<SiteMemberContext> {
        group("sites/{slug}").add(middleware: SiteMemberMiddleware(authorization: authorization)).group(context: SiteMemberContext.self)
    }
}
