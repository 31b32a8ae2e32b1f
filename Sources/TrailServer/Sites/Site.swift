import Foundation
import GRDB

package struct Site: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var slug: String
    package var name: String
    var description: String
    package var requiredApprovals: Int
    var createdAt: Date
    /// Bytes of clean assets the site may store; nil means no limit.
    var storageQuotaBytes: Int64? = nil
    /// Whether accessible media (alt text on images) must be there before publishing, or is only recommended.
    var mediaAccessibility: MediaAccessibility = .required
    /// Whether every further language of a tour must have all its texts before a submission (else: warnings).
    var requireCompleteLanguages: Bool = false
    /// Whether members may sign in with a password here; false: only through the agency's provider (administrators
    /// always may, so an outage of the provider locks nobody out for good).
    var passwordSignIn: Bool = true
    /// Where a new tour's map opens (`home`); nil edges: none set, and the frame of the site's first tour stands in.
    var homeNorth: Double? = nil
    var homeSouth: Double? = nil
    var homeEast: Double? = nil
    var homeWest: Double? = nil
    /// The site's time zone, an IANA name (`America/Los_Angeles`).
    var timeZone: String = "UTC"

    package static let databaseTableName = "site"

    /// The time zone itself (UTC should a stored name no longer be known to the system: names are checked on writing).
    var zone: TimeZone { TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")! }

    /// The home area the site's manager set, if any.
    var home: Frame? {
        guard let north = homeNorth, let south = homeSouth, let east = homeEast, let west = homeWest else { return nil }
        return Frame(north: north, south: south, east: east, west: west)
    }

    package enum Columns {
        static let slug = Column(CodingKeys.slug)
        static let name = Column(CodingKeys.name)
    }

    /// A site as its creator describes it; the schema's defaults give it the rest.
    struct New: NewRecord {
        typealias Stored = Site
        var slug: String
        var name: String
        var description: String
        var requiredApprovals: Int
        var createdAt: Date
        var storageQuotaBytes: Int64?
        var mediaAccessibility: MediaAccessibility
        var requireCompleteLanguages: Bool
    }
}

package enum SiteRole: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case author, reviewer, manager

    /// The roles that may review a site's requests.
    static var reviewing: [SiteRole] { allCases.filter(\.canReview) }

    var canAuthor: Bool { self == .author || self == .manager }
    var canReview: Bool { self == .reviewer || self == .manager }
    var canManage: Bool { self == .manager }
}

struct Membership: Codable, Sendable, FetchableRecord, PersistableRecord {
    var userId: Int64
    var siteId: Int64
    var role: SiteRole

    static let databaseTableName = "membership"

    enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let siteId = Column(CodingKeys.siteId)
    }
}

/// Something a user may do on a site.
enum SitePermission: Sendable, CaseIterable, Hashable {
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
struct SiteAccess: Sendable {
    let role: SiteRole?
    let isAdmin: Bool
    /// For messages ("Only managers of Sweet Home Ranger District can …").
    var siteName = "this site"

    init(role: SiteRole?, isAdmin: Bool, siteName: String = "this site") {
        self.role = role
        self.isAdmin = isAdmin
        self.siteName = siteName
    }

    func allows(_ permission: SitePermission) -> Bool {
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
    func require(_ permission: SitePermission, to action: String) throws {
        guard allows(.view) else { throw NotFound() }
        guard allows(permission) else { throw Forbidden("Only \(permission.holders) of \(siteName) can \(action).") }
    }

    var canView: Bool { allows(.view) }
    var canAuthor: Bool { allows(.author) }
    var canReview: Bool { allows(.review) }
    var canManage: Bool { allows(.manage) }
}

/// A site's rule for accessible media: missing alt text refuses the submission (`required`, the default), or only
/// shows as a warning (`recommended`).
package enum MediaAccessibility: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case required, recommended

    var label: String {
        switch self {
        case .required: "Required: a tour cannot be submitted while an image lacks alt text"
        case .recommended: "Recommended: missing alt text is a warning only"
        }
    }
}

package struct SiteInput: Sendable {
    var slug: String
    var name: String
    var description: String
    var requiredApprovals: Int
    /// Bytes of stored media (clean and pending files) the site may hold; nil for no limit.
    var storageQuotaBytes: Int64?
    var mediaAccessibility: MediaAccessibility
    var requireCompleteLanguages: Bool
    package init(
        slug: String,
        name: String,
        description: String,
        requiredApprovals: Int,
        storageQuotaBytes: Int64? = nil,
        mediaAccessibility: MediaAccessibility = .required,
        requireCompleteLanguages: Bool = false
    ) {
        self.requireCompleteLanguages = requireCompleteLanguages
        self.slug = slug
        self.name = name
        self.description = description
        self.requiredApprovals = requiredApprovals
        self.storageQuotaBytes = storageQuotaBytes
        self.mediaAccessibility = mediaAccessibility
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
