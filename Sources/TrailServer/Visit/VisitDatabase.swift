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
