import Foundation
import GRDB

// Sites and memberships: the named reads and writes.
extension AppDatabase {
    package func createSite(_ input: SiteInput, actor: AuditActor) async throws -> Site {
        try Self.validate(input).throwIfAny()
        return try await write { db in
            if try Site.filter(Site.Columns.slug == input.slug).fetchCount(db) > 0 {
                throw ValidationErrors(["slug": "A site with this slug already exists."])
            }
            let site = try Site.New(
                slug: input.slug,
                name: input.name.trimmed,
                description: input.description.trimmed,
                requiredApprovals: input.requiredApprovals,
                createdAt: Date(),
                storageQuotaBytes: input.storageQuotaBytes,
                mediaAccessibility: input.mediaAccessibility,
                requireCompleteLanguages: input.requireCompleteLanguages
            ).inserted(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: site.id,
                objectId: "\(site.id)",
                action: .siteCreate,
                detail: site.slug
            )
            return site
        }
    }

    /// Turns password sign-in for the site's members on or off (single sign-on only when off).
    func setPasswordSignIn(siteId: Int64, allowed: Bool, actor: AuditActor) async throws {
        try await write { db in
            guard var site = try Site.fetchOne(db, id: siteId) else { throw NotFound() }
            site.passwordSignIn = allowed
            try site.update(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(siteId)",
                action: .sitePasswordSignIn,
                detail: allowed ? "members may sign in with a password" : "members sign in through the agency's provider only"
            )
        }
    }

    /// The sites among the user's that allow no password sign-in (none for an administrator).
    func sitesWithoutPasswordSignIn(for user: User) async throws -> [Site] {
        guard !user.isAdmin else { return [] }
        let id = user.id
        return try await read { db in
            try Site.fetchAll(
                db,
                sql: """
                    SELECT site.* FROM site JOIN membership ON membership.siteId = site.id
                    WHERE membership.userId = ? AND site.passwordSignIn = 0 ORDER BY site.name
                    """,
                arguments: [id]
            )
        }
    }

    func updateSite(id: Int64, _ input: SiteInput, actor: AuditActor) async throws -> Site {
        try Self.validate(input).throwIfAny()
        return try await write { db in
            guard var site = try Site.fetchOne(db, id: id) else { throw NotFound() }
            if try Site.filter(Site.Columns.slug == input.slug && Column("id") != id).fetchCount(db) > 0 {
                throw ValidationErrors(["slug": "A site with this slug already exists."])
            }
            site.slug = input.slug
            site.name = input.name.trimmed
            site.description = input.description.trimmed
            site.requiredApprovals = input.requiredApprovals
            site.storageQuotaBytes = input.storageQuotaBytes
            site.mediaAccessibility = input.mediaAccessibility
            site.requireCompleteLanguages = input.requireCompleteLanguages
            try site.update(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: id,
                objectId: "\(id)",
                action: .siteUpdate,
                detail:
                    "\(site.slug), approvals \(site.requiredApprovals), quota \(site.storageQuotaBytes.map { "\($0) bytes" } ?? "none"), accessible media \(site.mediaAccessibility.rawValue), complete languages \(site.requireCompleteLanguages ? "required" : "recommended")"
            )
            return site
        }
    }

    static func validate(_ input: SiteInput) -> ValidationErrors {
        var errors = ValidationErrors()
        if !Slug.isValid(input.slug) { errors["slug"] = "Use 2 to 60 lowercase letters, digits and single hyphens, like sweet-home." }
        if input.name.trimmed.isEmpty || input.name.count > 120 { errors["name"] = "Enter a name of 1 to 120 characters." }
        if input.description.count > 5_000 { errors["description"] = "Keep the description under 5,000 characters." }
        if input.requiredApprovals < 1 || input.requiredApprovals > 20 {
            errors["requiredApprovals"] = "Required approvals must be between 1 and 20."
        }
        if let quota = input.storageQuotaBytes, quota < 1 {
            errors["storageQuota"] = "Enter a quota of at least 1 MB, or leave it empty for no limit."
        }
        return errors
    }

    package func site(slug: String) async throws -> Site? { try await read { try Site.filter(Site.Columns.slug == slug).fetchOne($0) } }
    func site(id: Int64) async throws -> Site? { try await read { try Site.fetchOne($0, id: id) } }
    func allSites() async throws -> [Site] { try await read { try Site.order(Site.Columns.name).fetchAll($0) } }

    /// Sites the user can see: all of them for an admin, else those with a membership.
    func visibleSites(for user: AuthenticatedUser) async throws -> [(site: Site, role: SiteRole?)] {
        try await read { db in
            if user.isAdmin {
                let roles = try Membership.filter(Membership.Columns.userId == user.id).fetchAll(db)
                return try Site.order(Site.Columns.name).fetchAll(db).map { site in (site, roles.first { $0.siteId == site.id }?.role) }
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT site.*, membership.role AS memberRole FROM site JOIN membership ON membership.siteId = site.id
                    WHERE membership.userId = ? ORDER BY site.name
                    """,
                arguments: [user.id]
            )
            return try rows.map { (try Site(row: $0), SiteRole(rawValue: $0["memberRole"])) }
        }
    }

    /// A site and the user's access to it, in one read: what every request that touches a site asks first.
    /// `nil` when there is no such site.
    func siteAccess(slug: String, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess)? {
        try await read { db in
            guard let site = try Site.filter(Site.Columns.slug == slug).fetchOne(db) else { return nil }
            return (site, SiteAccess(role: try Self.role(db, userId: user.id, siteId: site.id), isAdmin: user.isAdmin, siteName: site.name))
        }
    }

    /// The same by the site's id.
    func siteAccess(id: Int64, user: AuthenticatedUser) async throws -> (site: Site, access: SiteAccess)? {
        try await read { db in
            guard let site = try Site.fetchOne(db, id: id) else { return nil }
            return (site, SiteAccess(role: try Self.role(db, userId: user.id, siteId: id), isAdmin: user.isAdmin, siteName: site.name))
        }
    }

    /// A tour with its site and the user's access to that site, in one read. `nil` when there is no such tour.
    func tourAccess(id: Int64, user: AuthenticatedUser) async throws -> (tour: Tour, site: Site, access: SiteAccess)? {
        try await read { db in
            guard let tour = try Tour.fetchOne(db, id: id), let site = try Site.fetchOne(db, id: tour.siteId) else { return nil }
            return (tour, site, SiteAccess(role: try Self.role(db, userId: user.id, siteId: site.id), isAdmin: user.isAdmin, siteName: site.name))
        }
    }

    /// The same, and the tour's waypoint `waypointId` from the same read (nil when the tour has no such waypoint, or
    /// there is no id to look for).
    func waypointAccess(
        tourId: Int64,
        waypointId: Int64?,
        user: AuthenticatedUser
    ) async throws -> (tour: Tour, site: Site, access: SiteAccess, waypoint: Waypoint?)? {
        try await read { db in
            guard let tour = try Tour.fetchOne(db, id: tourId), let site = try Site.fetchOne(db, id: tour.siteId) else { return nil }
            let waypoint = try waypointId.flatMap {
                try Waypoint.filter(Waypoint.Columns.tourId == tourId && Waypoint.Columns.id == $0).fetchOne(db)
            }
            let access = SiteAccess(role: try Self.role(db, userId: user.id, siteId: site.id), isAdmin: user.isAdmin, siteName: site.name)
            return (tour, site, access, waypoint)
        }
    }

    /// A file, its tour, the tour's site and the user's access there, from one read (nil when any is gone).
    func assetAccess(id: Int64, user: AuthenticatedUser) async throws -> (asset: Asset, tour: Tour, site: Site, access: SiteAccess)? {
        try await read { db in
            guard let asset = try Asset.fetchOne(db, id: id),
                let tourId = try Int64.fetchOne(db, sql: "SELECT tourId FROM waypoint WHERE id = ?", arguments: [asset.waypointId]),
                let tour = try Tour.fetchOne(db, id: tourId),
                let site = try Site.fetchOne(db, id: tour.siteId)
            else { return nil }
            let access = SiteAccess(role: try Self.role(db, userId: user.id, siteId: site.id), isAdmin: user.isAdmin, siteName: site.name)
            return (asset, tour, site, access)
        }
    }

    /// The same inside a transaction, for the re-checks of database writes (the site's name for the message too).
    static func access(_ db: Database, user: AuthenticatedUser, siteId: Int64) throws -> SiteAccess {
        let name = try String.fetchOne(db, sql: "SELECT name FROM site WHERE id = ?", arguments: [siteId]) ?? "this site"
        return SiteAccess(role: try role(db, userId: user.id, siteId: siteId), isAdmin: user.isAdmin, siteName: name)
    }

    static func role(_ db: Database, userId: Int64, siteId: Int64) throws -> SiteRole? {
        try Membership.filter(Membership.Columns.userId == userId && Membership.Columns.siteId == siteId).fetchOne(db)?.role
    }

    // MARK: Memberships

    struct MemberRow: Sendable {
        let userId: Int64
        let email: String
        let displayName: String
        let role: SiteRole
        let isDisabled: Bool
    }

    func members(siteId: Int64) async throws -> [MemberRow] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT user.id, user.email, user.displayName, user.isDisabled, membership.role FROM membership
                    JOIN user ON user.id = membership.userId WHERE membership.siteId = ? ORDER BY user.displayName
                    """,
                arguments: [siteId]
            ).map {
                MemberRow(
                    userId: $0["id"],
                    email: $0["email"],
                    displayName: $0["displayName"],
                    role: SiteRole(rawValue: $0["role"]) ?? .author,
                    isDisabled: $0["isDisabled"]
                )
            }
        }
    }

    /// Adds the user to the site, or changes their role when they are already a member.
    package func setMembership(siteId: Int64, email: String, role: SiteRole, actor: AuditActor) async throws {
        try await write { db in
            guard let user = try User.filter(User.Columns.email == email.trimmed).fetchOne(db) else {
                throw ValidationErrors(["email": "No user has this email address. An admin can create the account first."])
            }
            guard try Site.exists(db, id: siteId) else { throw NotFound() }
            try Membership(userId: user.id, siteId: siteId, role: role).upsert(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(siteId):\(user.id)",
                action: .memberSet,
                detail: "\(user.email) as \(role.rawValue)"
            )
        }
    }

    func removeMembership(siteId: Int64, userId: Int64, actor: AuditActor) async throws {
        try await write { db in
            guard try Membership.deleteOne(db, key: ["userId": userId, "siteId": siteId]) else { throw NotFound() }
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(siteId):\(userId)",
                action: .memberRemove,
                detail: ""
            )
        }
    }

    /// Sets a site's home area and time zone (managers; re-checked in the transaction), audited; the site as saved.
    @discardableResult
    func setSiteMapSettings(siteId: Int64, _ settings: SiteMapSettings, user: AuthenticatedUser, actor: AuditActor) async throws -> Site {
        try settings.validate().throwIfAny()
        return try await write { db in
            try Self.access(db, user: user, siteId: siteId).require(.manage, to: "change its settings")
            guard var site = try Site.fetchOne(db, id: siteId) else { throw NotFound() }
            site.homeNorth = settings.home?.north
            site.homeSouth = settings.home?.south
            site.homeEast = settings.home?.east
            site.homeWest = settings.home?.west
            site.timeZone = settings.timeZone
            try site.update(db)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: siteId,
                objectId: "\(siteId)",
                action: .siteHome,
                detail: "home \(settings.home.map(DisplayFormat.frame) ?? "none"), time zone \(settings.timeZone)"
            )
            return site
        }
    }

    /// The frame of the site's first tour that has one (the oldest), which stands in for an unset home area.
    func firstTourFrame(siteId: Int64) async throws -> Frame? {
        try await read { try Self.firstTourFrame($0, siteId: siteId) }
    }

    /// Where a new tour of the site opens: its home area, else the frame of its first tour; nil when it has neither.
    func homeArea(of site: Site) async throws -> Frame? {
        if let home = site.home { return home }
        return try await read { try Self.firstTourFrame($0, siteId: site.id) }
    }

    static func firstTourFrame(_ db: Database, siteId: Int64) throws -> Frame? {
        try Row.fetchOne(
            db,
            sql: """
                SELECT frameNorth, frameSouth, frameEast, frameWest FROM tour
                WHERE siteId = ? AND frameNorth IS NOT NULL AND frameSouth IS NOT NULL AND frameEast IS NOT NULL AND frameWest IS NOT NULL
                ORDER BY createdAt, id LIMIT 1
                """,
            arguments: [siteId]
        ).map { Frame(north: $0["frameNorth"], south: $0["frameSouth"], east: $0["frameEast"], west: $0["frameWest"]) }
    }
}
