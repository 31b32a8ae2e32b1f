import Foundation
import GRDB

package struct Site: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var slug: String
    package var name: String
    package var description: String
    package var requiredApprovals: Int
    package var createdAt: Date
    /// Bytes of clean assets the site may store; nil means no limit.
    package var storageQuotaBytes: Int64? = nil
    /// Whether accessible media (alt text on images) must be there before publishing, or is only recommended.
    package var mediaAccessibility: MediaAccessibility = .required
    /// Whether every further language of a tour must have all its texts before a submission (else: warnings).
    package var requireCompleteLanguages: Bool = false
    /// Whether members may sign in with a password here; false: only through the agency's provider (administrators
    /// always may, so an outage of the provider locks nobody out for good).
    package var passwordSignIn: Bool = true
    /// Where a new tour's map opens (`home`); nil edges: none set, and the frame of the site's first tour stands in.
    package var homeNorth: Double? = nil
    package var homeSouth: Double? = nil
    package var homeEast: Double? = nil
    package var homeWest: Double? = nil
    /// The site's time zone, an IANA name (`America/Los_Angeles`).
    package var timeZone: String = "UTC"

    package static let databaseTableName = "site"

    /// The time zone itself (UTC should a stored name no longer be known to the system: names are checked on writing).
    var zone: TimeZone { TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")! }

    /// The home area the site's manager set, if any.
    package var home: Frame? {
        guard let north = homeNorth, let south = homeSouth, let east = homeEast, let west = homeWest else { return nil }
        return Frame(north: north, south: south, east: east, west: west)
    }

    package enum Columns {
        static let slug = Column(CodingKeys.slug)
        static let name = Column(CodingKeys.name)
    }

    /// A site as its creator describes it; the schema's defaults give it the rest.
    package struct New: NewRecord {
        package typealias Stored = Site
        package var slug: String
        package var name: String
        package var description: String
        package var requiredApprovals: Int
        package var createdAt: Date
        package var storageQuotaBytes: Int64?
        package var mediaAccessibility: MediaAccessibility
        package var requireCompleteLanguages: Bool
    }
}

package enum SiteRole: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case author, reviewer, manager

    /// The roles that may review a site's requests.
    package static var reviewing: [SiteRole] { allCases.filter(\.canReview) }

    package var canAuthor: Bool { self == .author || self == .manager }
    package var canReview: Bool { self == .reviewer || self == .manager }
    package var canManage: Bool { self == .manager }
}

package struct Membership: Codable, Sendable, FetchableRecord, PersistableRecord {
    package var userId: Int64
    package var siteId: Int64
    package var role: SiteRole

    package static let databaseTableName = "membership"

    package enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let siteId = Column(CodingKeys.siteId)
    }
}

/// Something a user may do on a site.
package enum SitePermission: Sendable, CaseIterable, Hashable {
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
package struct SiteAccess: Sendable {
    package let role: SiteRole?
    package let isAdmin: Bool
    /// For messages ("Only managers of Sweet Home Ranger District can …").
    package var siteName = "this site"

    package init(role: SiteRole?, isAdmin: Bool, siteName: String = "this site") {
        self.role = role
        self.isAdmin = isAdmin
        self.siteName = siteName
    }

    package func allows(_ permission: SitePermission) -> Bool {
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
    package func require(_ permission: SitePermission, to action: String) throws {
        guard allows(.view) else { throw NotFound() }
        guard allows(permission) else { throw Forbidden("Only \(permission.holders) of \(siteName) can \(action).") }
    }

    package var canView: Bool { allows(.view) }
    package var canAuthor: Bool { allows(.author) }
    package var canReview: Bool { allows(.review) }
    package var canManage: Bool { allows(.manage) }
}

/// A site's rule for accessible media: missing alt text refuses the submission (`required`, the default), or only
/// shows as a warning (`recommended`).
package enum MediaAccessibility: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case required, recommended

    package var label: String {
        switch self {
        case .required: "Required: a tour cannot be submitted while an image lacks alt text"
        case .recommended: "Recommended: missing alt text is a warning only"
        }
    }
}

package struct SiteInput: Sendable {
    package var slug: String
    package var name: String
    package var description: String
    package var requiredApprovals: Int
    /// Bytes of stored media (clean and pending files) the site may hold; nil for no limit.
    package var storageQuotaBytes: Int64?
    package var mediaAccessibility: MediaAccessibility
    package var requireCompleteLanguages: Bool
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
