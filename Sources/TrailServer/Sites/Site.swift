import Foundation
import GRDB

public struct Site: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var slug: String
    public var name: String
    public var description: String
    public var requiredApprovals: Int
    public var createdAt: Date
    /// Bytes of clean assets the site may store; nil means no limit.
    public var storageQuotaBytes: Int64? = nil
    /// Whether accessible media (alt text on images) must be there before publishing, or is only recommended.
    public var mediaAccessibility: MediaAccessibility = .required
    /// Whether every further language of a tour must have all its texts before a submission (else: warnings).
    public var requireCompleteLanguages: Bool = false
    /// Whether members may sign in with a password here; false: only through the agency's provider (administrators
    /// always may, so an outage of the provider locks nobody out for good).
    public var passwordSignIn: Bool = true

    public static let databaseTableName = "site"

    public enum Columns {
        static let slug = Column(CodingKeys.slug)
        static let name = Column(CodingKeys.name)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

public enum SiteRole: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case author, reviewer, manager

    /// The roles that may review a site's requests.
    public static var reviewing: [SiteRole] { allCases.filter(\.canReview) }

    public var canAuthor: Bool { self == .author || self == .manager }
    public var canReview: Bool { self == .reviewer || self == .manager }
    public var canManage: Bool { self == .manager }
}

public struct Membership: Codable, Sendable, FetchableRecord, PersistableRecord {
    public var userId: Int64
    public var siteId: Int64
    public var role: SiteRole

    public static let databaseTableName = "membership"

    public enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let siteId = Column(CodingKeys.siteId)
    }
}

/// Something a user may do on a site.
public enum SitePermission: Sendable, CaseIterable, Hashable {
    /// See the site and its tours, requests and packages (every member).
    case view
    /// Create and change tours, submit them (authors and managers).
    case author
    /// Approve or deny requests (reviewers and managers).
    case review
    /// Members, unpublish, rollback (managers).
    case manage

    /// Who has it, for messages.
    var holders: String {
        switch self {
        case .view: "members"
        case .author: "authors and managers"
        case .review: "reviewers and managers"
        case .manage: "managers"
        }
    }
}

/// What one user may do on one site, written once: every permission check of a route, a service or a database write
/// goes through ``require(_:to:)``. Admins may do everything everywhere.
public struct SiteAccess: Sendable {
    public let role: SiteRole?
    public let isAdmin: Bool
    /// For messages ("Only managers of Sweet Home Ranger District can …").
    public var siteName = "this site"

    public init(role: SiteRole?, isAdmin: Bool, siteName: String = "this site") {
        self.role = role
        self.isAdmin = isAdmin
        self.siteName = siteName
    }

    public func allows(_ permission: SitePermission) -> Bool {
        if isAdmin { return true }
        guard let role else { return false }
        switch permission {
        case .view: return true
        case .author: return role.canAuthor
        case .review: return role.canReview
        case .manage: return role.canManage
        }
    }

    /// Throws `NotFound` when the user may not even see the site (so ids cannot be probed), else `Forbidden` naming
    /// who may `action` ("change its tours").
    public func require(_ permission: SitePermission, to action: String) throws {
        guard allows(.view) else { throw NotFound() }
        guard allows(permission) else { throw Forbidden("Only \(permission.holders) of \(siteName) can \(action).") }
    }

    public var canView: Bool { allows(.view) }
    public var canAuthor: Bool { allows(.author) }
    public var canReview: Bool { allows(.review) }
    public var canManage: Bool { allows(.manage) }
}

/// A site's rule for accessible media: missing alt text refuses the submission (`required`, the default), or only
/// shows as a warning (`recommended`).
public enum MediaAccessibility: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case required, recommended

    public var label: String {
        switch self {
        case .required: "Required: a tour cannot be submitted while an image lacks alt text"
        case .recommended: "Recommended: missing alt text is a warning only"
        }
    }
}

public struct SiteInput: Sendable {
    public var slug: String
    public var name: String
    public var description: String
    public var requiredApprovals: Int
    /// Bytes of stored media (clean and pending files) the site may hold; nil for no limit.
    public var storageQuotaBytes: Int64?
    public var mediaAccessibility: MediaAccessibility
    public var requireCompleteLanguages: Bool
    public init(slug: String, name: String, description: String, requiredApprovals: Int, storageQuotaBytes: Int64? = nil,
                mediaAccessibility: MediaAccessibility = .required, requireCompleteLanguages: Bool = false) {
        self.requireCompleteLanguages = requireCompleteLanguages
        self.slug = slug
        self.name = name
        self.description = description
        self.requiredApprovals = requiredApprovals
        self.storageQuotaBytes = storageQuotaBytes
        self.mediaAccessibility = mediaAccessibility
    }
}

extension AppDatabase {
    public func createSite(_ input: SiteInput, actor: AuditActor) throws -> Site {
        try Self.validate(input).throwIfAny()
        return try writer.write { db in
            if try Site.filter(Site.Columns.slug == input.slug).fetchCount(db) > 0 {
                throw ValidationErrors(["slug": "A site with this slug already exists."])
            }
            var site = Site(id: nil, slug: input.slug, name: input.name.trimmed, description: input.description.trimmed,
                            requiredApprovals: input.requiredApprovals, createdAt: Date())
            site.storageQuotaBytes = input.storageQuotaBytes
            site.mediaAccessibility = input.mediaAccessibility
            site.requireCompleteLanguages = input.requireCompleteLanguages
            try site.insert(db)
            try AuditEvent.record(db, actor: actor, siteId: site.id, objectType: "site", objectId: "\(site.id!)", action: "site.create", detail: site.slug)
            return site
        }
    }

    /// Turns password sign-in for the site's members on or off (single sign-on only when off).
    public func setPasswordSignIn(siteId: Int64, allowed: Bool, actor: AuditActor) throws {
        try writer.write { db in
            guard var site = try Site.fetchOne(db, id: siteId) else { throw NotFound() }
            site.passwordSignIn = allowed
            try site.update(db)
            try AuditEvent.record(db, actor: actor, siteId: siteId, objectType: "site", objectId: "\(siteId)", action: "site.passwordSignIn",
                                  detail: allowed ? "members may sign in with a password" : "members sign in through the agency's provider only")
        }
    }

    /// The sites among the user's that allow no password sign-in (none for an administrator).
    public func sitesWithoutPasswordSignIn(for user: User) throws -> [Site] {
        guard !user.isAdmin, let id = user.id else { return [] }
        return try writer.read { db in
            try Site.fetchAll(db, sql: """
                SELECT site.* FROM site JOIN membership ON membership.siteId = site.id
                WHERE membership.userId = ? AND site.passwordSignIn = 0 ORDER BY site.name
                """, arguments: [id])
        }
    }

    public func updateSite(id: Int64, _ input: SiteInput, actor: AuditActor) throws -> Site {
        try Self.validate(input).throwIfAny()
        return try writer.write { db in
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
            try AuditEvent.record(db, actor: actor, siteId: id, objectType: "site", objectId: "\(id)", action: "site.update",
                                  detail: "\(site.slug), approvals \(site.requiredApprovals), quota \(site.storageQuotaBytes.map { "\($0) bytes" } ?? "none"), accessible media \(site.mediaAccessibility.rawValue), complete languages \(site.requireCompleteLanguages ? "required" : "recommended")")
            return site
        }
    }

    static func validate(_ input: SiteInput) -> ValidationErrors {
        var errors = ValidationErrors()
        if !Slug.isValid(input.slug) { errors["slug"] = "Use 2 to 60 lowercase letters, digits and single hyphens, like sweet-home." }
        if input.name.trimmed.isEmpty || input.name.count > 120 { errors["name"] = "Enter a name of 1 to 120 characters." }
        if input.description.count > 5_000 { errors["description"] = "Keep the description under 5,000 characters." }
        if input.requiredApprovals < 1 || input.requiredApprovals > 20 { errors["requiredApprovals"] = "Required approvals must be between 1 and 20." }
        if let quota = input.storageQuotaBytes, quota < 1 { errors["storageQuota"] = "Enter a quota of at least 1 MB, or leave it empty for no limit." }
        return errors
    }

    public func site(slug: String) throws -> Site? { try writer.read { try Site.filter(Site.Columns.slug == slug).fetchOne($0) } }
    public func site(id: Int64) throws -> Site? { try writer.read { try Site.fetchOne($0, id: id) } }
    public func allSites() throws -> [Site] { try writer.read { try Site.order(Site.Columns.name).fetchAll($0) } }

    /// Sites the user can see: all of them for an admin, else those with a membership.
    public func visibleSites(for user: AuthenticatedUser) throws -> [(site: Site, role: SiteRole?)] {
        try writer.read { db in
            if user.isAdmin {
                let roles = try Membership.filter(Membership.Columns.userId == user.id).fetchAll(db)
                return try Site.order(Site.Columns.name).fetchAll(db).map { site in (site, roles.first { $0.siteId == site.id }?.role) }
            }
            let rows = try Row.fetchAll(db, sql: """
                SELECT site.*, membership.role AS memberRole FROM site JOIN membership ON membership.siteId = site.id
                WHERE membership.userId = ? ORDER BY site.name
                """, arguments: [user.id])
            return try rows.map { (try Site(row: $0), SiteRole(rawValue: $0["memberRole"])) }
        }
    }

    /// A user's access to a site already loaded (every request that touches a site: one query, for the role).
    public func access(user: AuthenticatedUser, site: Site) throws -> SiteAccess {
        let role = try writer.read { db in try Self.role(db, userId: user.id, siteId: site.id!) }
        return SiteAccess(role: role, isAdmin: user.isAdmin, siteName: site.name)
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

    public struct MemberRow: Sendable {
        public let userId: Int64
        public let email: String
        public let displayName: String
        public let role: SiteRole
        public let isDisabled: Bool
    }

    public func members(siteId: Int64) throws -> [MemberRow] {
        try writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT user.id, user.email, user.displayName, user.isDisabled, membership.role FROM membership
                JOIN user ON user.id = membership.userId WHERE membership.siteId = ? ORDER BY user.displayName
                """, arguments: [siteId]).map {
                MemberRow(userId: $0["id"], email: $0["email"], displayName: $0["displayName"],
                          role: SiteRole(rawValue: $0["role"]) ?? .author, isDisabled: $0["isDisabled"])
            }
        }
    }

    /// Adds the user to the site, or changes their role when they are already a member.
    public func setMembership(siteId: Int64, email: String, role: SiteRole, actor: AuditActor) throws {
        try writer.write { db in
            guard let user = try User.filter(User.Columns.email == email.trimmed).fetchOne(db) else {
                throw ValidationErrors(["email": "No user has this email address. An admin can create the account first."])
            }
            guard try Site.exists(db, id: siteId) else { throw NotFound() }
            try Membership(userId: user.id!, siteId: siteId, role: role).upsert(db)
            try AuditEvent.record(db, actor: actor, siteId: siteId, objectType: "membership", objectId: "\(siteId):\(user.id!)",
                                  action: "member.set", detail: "\(user.email) as \(role.rawValue)")
        }
    }

    public func removeMembership(siteId: Int64, userId: Int64, actor: AuditActor) throws {
        try writer.write { db in
            guard try Membership.deleteOne(db, key: ["userId": userId, "siteId": siteId]) else { throw NotFound() }
            try AuditEvent.record(db, actor: actor, siteId: siteId, objectType: "membership", objectId: "\(siteId):\(userId)",
                                  action: "member.remove", detail: "")
        }
    }
}

enum Slug {
    static func isValid(_ slug: String) -> Bool {
        guard (2...60).contains(slug.count), !slug.hasPrefix("-"), !slug.hasSuffix("-"), !slug.contains("--") else { return false }
        return slug.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// A slug from free text: "Santiam Wagon Road" → "santiam-wagon-road".
    static func make(from text: String) -> String {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: Locale(identifier: "en_US_POSIX")).lowercased()
        var slug = ""
        for scalar in folded.unicodeScalars {
            if ("a"..."z").contains(Character(scalar)) || ("0"..."9").contains(Character(scalar)) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty && !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        slug = String(slug.prefix(60))
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.count >= 2 ? slug : "tour-\(slug)"
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
