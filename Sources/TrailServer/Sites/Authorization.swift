import Foundation

/// Checks on the object, not only the route: every handler that touches a site or a tour goes through here.
/// Someone who may not see an object gets `NotFound`, so ids cannot be probed.
/// The answers are labelled tuples: a handler destructures them, or names `.access` to check more.
struct Authorization: Sendable {
    let database: AppDatabase

    func site(slug: String, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess) {
        try await database.perform { database in
            guard let site = try database.site(slug: slug) else { throw NotFound() }
            return try (site, Self.visible(site, user: user, in: database))
        }
    }

    func site(id: Int64, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess) {
        try await database.perform { database in try Self.site(id: id, user: user, in: database) }
    }

    /// The lookups of one request run in one call off the cooperative threads (``AppDatabase/perform(_:)``).
    func tour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        try await database.perform { database in
            guard let tour = try database.tour(id: id) else { throw NotFound() }
            let (site, access) = try Self.site(id: tour.siteId, user: user, in: database)
            return (tour, site, access)
        }
    }

    /// The tour, when the user may change it (author or manager of its site, or admin).
    func editableTour(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess) {
        let result = try await tour(id: id, user: user)
        try result.access.require(.author, to: "change its tours")
        return result
    }

    private static func site(id: Int64, user: AuthenticatedUser, in database: AppDatabase) throws -> (site: Site, access: SiteAccess) {
        guard let site = try database.site(id: id) else { throw NotFound() }
        return try (site, visible(site, user: user, in: database))
    }

    /// The user's access to a site they may see (`NotFound` otherwise).
    private static func visible(_ site: Site, user: AuthenticatedUser, in database: AppDatabase) throws -> SiteAccess {
        let access = try database.access(user: user, site: site)
        try access.require(.view, to: "see it")
        return access
    }
}
