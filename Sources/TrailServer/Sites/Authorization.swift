import Foundation

/// Checks on the object, not only the route: every handler that touches a site or a tour goes through here.
/// Someone who may not see an object gets `NotFound`, so ids cannot be probed.
/// The answers are labelled tuples: a handler destructures them, or names `.access` to check more.
struct Authorization: Sendable {
    let database: AppDatabase

    func site(slug: String, user: AuthenticatedUser) throws -> (site: Site, access: SiteAccess) {
        guard let site = try database.site(slug: slug) else { throw NotFound() }
        return try (site, visible(site, user: user))
    }

    func site(id: Int64, user: AuthenticatedUser) throws -> (site: Site, access: SiteAccess) {
        guard let site = try database.site(id: id) else { throw NotFound() }
        return try (site, visible(site, user: user))
    }

    func tour(id: Int64, user: AuthenticatedUser) throws -> (tour: Tour, site: Site, access: SiteAccess) {
        guard let tour = try database.tour(id: id) else { throw NotFound() }
        let (site, access) = try site(id: tour.siteId, user: user)
        return (tour, site, access)
    }

    /// The tour, when the user may change it (author or manager of its site, or admin).
    func editableTour(id: Int64, user: AuthenticatedUser) throws -> (tour: Tour, site: Site, access: SiteAccess) {
        let result = try tour(id: id, user: user)
        try result.access.require(.author, to: "change its tours")
        return result
    }

    /// The user's access to a site they may see (`NotFound` otherwise).
    private func visible(_ site: Site, user: AuthenticatedUser) throws -> SiteAccess {
        let access = try database.access(user: user, site: site)
        try access.require(.view, to: "see it")
        return access
    }
}
