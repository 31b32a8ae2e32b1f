import Foundation
import GRDB

/// Read models for the mobile API: only published (visible, with a current version) packages exist here.
struct PublishedPackage: Sendable {
    let package: PackageRecord
    let version: PackageVersion
    let siteSlug: String
    let siteName: String
}

extension AppDatabase {
    func publishedPackages(siteSlug: String? = nil) async throws -> [PublishedPackage] {
        try await read { db in try Self.visiblePackages(db, siteSlug: siteSlug) }
    }

    /// A site's published packages, or nil when there is no such site: one read transaction.
    func publishedPackages(ofSite slug: String) async throws -> [PublishedPackage]? {
        try await read { db in
            guard try Row.fetchOne(db, sql: "SELECT 1 FROM site WHERE slug = ?", arguments: [slug]) != nil else { return nil }
            return try Self.visiblePackages(db, siteSlug: slug)
        }
    }

    /// A package row with its site's slug and name, for `PublishedPackage`; a `WHERE` follows.
    static let packagesWithTheirSite =
        "SELECT package.*, site.slug AS siteSlug, site.name AS siteName FROM package JOIN site ON site.id = package.siteId"

    /// What a phone asking for package `id` gets, as of one read.
    enum PackageLookup: Sendable {
        case missing
        case unpublished
        case published(PublishedPackage)
    }

    /// One read: the package, its current version and its site, for a download, a manifest or a delta.
    func publishedPackage(id: String) async throws -> PackageLookup {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: Self.packagesWithTheirSite + " WHERE package.id = ?", arguments: [id]) else {
                return .missing
            }
            let package = try PackageRecord(row: row)
            guard let current = package.currentVersion else { return .missing }
            guard package.isVisible else { return .unpublished }
            guard let version = try PackageVersion.fetchOne(db, key: ["packageId": package.id, "version": current]) else { return .missing }
            return .published(PublishedPackage(package: package, version: version, siteSlug: row["siteSlug"], siteName: row["siteName"]))
        }
    }

    static func visiblePackages(_ db: Database, siteSlug: String?) throws -> [PublishedPackage] {
        var sql = packagesWithTheirSite + " WHERE package.isVisible = 1 AND package.currentVersion IS NOT NULL"
        var arguments: StatementArguments = []
        if let siteSlug {
            sql += " AND site.slug = ?"
            arguments += [siteSlug]
        }
        sql += " ORDER BY site.slug, package.id"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row in
            let package = try PackageRecord(row: row)
            guard let version = try PackageVersion.fetchOne(db, key: ["packageId": package.id, "version": package.currentVersion!]) else {
                return nil
            }
            return PublishedPackage(package: package, version: version, siteSlug: row["siteSlug"], siteName: row["siteName"])
        }
    }

    func siteSummaries() async throws -> [(site: Site, packageCount: Int)] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT site.*, (SELECT COUNT(*) FROM package WHERE package.siteId = site.id AND package.isVisible = 1
                                    AND package.currentVersion IS NOT NULL) AS packageCount
                    FROM site ORDER BY site.slug
                    """
            ).map { (try Site(row: $0), $0["packageCount"]) }
        }
    }

    /// Counts a download the app proved complete (hash and version match): in the version's total, and in the day's
    /// count the statistics page reads (`day`: the UTC date).
    func recordVerifiedDownload(packageId: String, version: Int, day: String? = nil) async throws {
        let day = day ?? VisitEventRules.utcDay()
        try await write { db in
            try db.execute(
                sql: "UPDATE packageVersion SET verifiedCount = verifiedCount + 1 WHERE packageId = ? AND version = ?",
                arguments: [packageId, version]
            )
            try Self.countDownload(db, packageId: packageId, version: version, day: day)
        }
    }
}
