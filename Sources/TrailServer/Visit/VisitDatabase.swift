import Foundation
import GRDB
import PackageFormat

/// What the visitors' pages read: published packages only (visible, with a current version).
struct VisitorTour: Sendable {
    let published: PublishedPackage
    let manifest: Manifest
}

extension AppDatabase {
    /// Every published package with its latest version's manifest, by site then package: one read transaction.
    func visitorTours() async throws -> [VisitorTour] {
        try await read { db in
            try Self.visiblePackages(db, siteSlug: nil).map { VisitorTour(published: $0, manifest: try $0.version.decodedManifest()) }
        }
    }

    /// One page of the published packages, by site then package id, from `after` (a site id and package id) on,
    /// optionally of one site (`siteSlug`) and searched by name (`query`, case-insensitive): `limit` of them with their
    /// manifests, and whether more follow. One read transaction; the page reads `package_site_visible` (migration
    /// 0018) in list order, so it costs the same whatever the number of tours.
    func visitorTourPage(
        siteSlug: String?,
        query: String,
        after: (siteId: Int64, packageId: String)?,
        limit: Int
    ) async throws -> (tours: [VisitorTour], hasMore: Bool) {
        let (sql, arguments) = Self.visitorListQuery(siteSlug: siteSlug, query: query, after: after, limit: limit + 1)
        let tours = try await read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row -> VisitorTour? in
                let package = try PackageRecord(row: row)
                guard let version = try PackageVersion.fetchOne(db, key: ["packageId": package.id, "version": package.currentVersion!]) else {
                    return nil
                }
                let published = PublishedPackage(package: package, version: version, siteSlug: row["siteSlug"], siteName: row["siteName"])
                return VisitorTour(published: published, manifest: try version.decodedManifest())
            }
        }
        return (Array(tours.prefix(limit)), tours.count > limit)
    }

    /// The SQL of `visitorTourPage` (also run under `EXPLAIN QUERY PLAN` by the tests: it must search an index). The
    /// position is a row value, which SQLite turns into a range on the partial index.
    static func visitorListQuery(
        siteSlug: String?,
        query: String,
        after: (siteId: Int64, packageId: String)?,
        limit: Int
    ) -> (String, StatementArguments) {
        var sql = """
            SELECT package.*, site.slug AS siteSlug, site.name AS siteName FROM package
            JOIN site ON site.id = package.siteId
            JOIN packageVersion ON packageVersion.packageId = package.id AND packageVersion.version = package.currentVersion
            WHERE package.isVisible = 1 AND package.currentVersion IS NOT NULL
            """
        var arguments: StatementArguments = []
        if let siteSlug {
            sql += " AND site.slug = ?"
            arguments += [siteSlug]
        }
        if !query.isEmpty {
            sql += #" AND packageVersion.name LIKE ? ESCAPE '\'"#
            arguments += [TourListFilter.likePattern(query)]
        }
        if let after {
            sql += " AND (package.siteId, package.id) > (?, ?)"
            arguments += [after.siteId, after.packageId]
        }
        sql += " ORDER BY package.siteId, package.id LIMIT ?"
        arguments += [limit]
        return (sql, arguments)
    }

    /// One published package for the player; `nil` when unknown, and `.withdrawn` when it exists but is unpublished.
    func visitorPackage(id: String) async throws -> VisitorPackageLookup {
        try await read { db in
            guard let package = try PackageRecord.fetchOne(db, key: id), let current = package.currentVersion else { return .unknown }
            guard package.isVisible else { return .withdrawn }
            guard let version = try PackageVersion.fetchOne(db, key: ["packageId": id, "version": current]),
                let site = try Site.fetchOne(db, key: package.siteId)
            else { return .unknown }
            let published = PublishedPackage(package: package, version: version, siteSlug: site.slug, siteName: site.name)
            return .published(VisitorTour(published: published, manifest: try version.decodedManifest()))
        }
    }

    /// A released version of a package that is published now (any of its versions: a visitor may still hold an older one).
    func servedVersion(packageId: String, version: Int) async throws -> PackageVersion? {
        try await read { db in
            guard let package = try PackageRecord.fetchOne(db, key: packageId), package.isVisible, package.currentVersion != nil else { return nil }
            return try PackageVersion.fetchOne(db, key: ["packageId": packageId, "version": version])
        }
    }
}

enum VisitorPackageLookup: Sendable {
    case unknown
    case withdrawn
    case published(VisitorTour)
}
