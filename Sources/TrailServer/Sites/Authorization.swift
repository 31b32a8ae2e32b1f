import Foundation

/// Checks on the object, not only the route: every handler that touches a site or a tour goes through here.
/// Someone who may not see an object gets `NotFound`, so ids cannot be probed.
struct Authorization: Sendable {
    let database: AppDatabase

    func site(slug: String, user: AuthenticatedUser) throws -> (Site, SiteAccess) {
        guard let site = try database.site(slug: slug) else { throw NotFound() }
        let access = try database.access(user: user, siteId: site.id!)
        guard access.canView else { throw NotFound() }
        return (site, access)
    }

    func site(id: Int64, user: AuthenticatedUser) throws -> (Site, SiteAccess) {
        guard let site = try database.site(id: id) else { throw NotFound() }
        let access = try database.access(user: user, siteId: id)
        guard access.canView else { throw NotFound() }
        return (site, access)
    }

    func tour(id: Int64, user: AuthenticatedUser) throws -> (Tour, Site, SiteAccess) {
        guard let tour = try database.tour(id: id) else { throw NotFound() }
        let (site, access) = try site(id: tour.siteId, user: user)
        return (tour, site, access)
    }

    /// The tour, when the user may change it (author or manager of its site, or admin).
    func editableTour(id: Int64, user: AuthenticatedUser) throws -> (Tour, Site, SiteAccess) {
        let result = try tour(id: id, user: user)
        guard result.2.canAuthor else { throw Forbidden("Only authors and managers of \(result.1.name) can change its tours.") }
        return result
    }
}
