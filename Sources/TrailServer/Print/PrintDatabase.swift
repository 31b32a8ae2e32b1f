import Foundation
import GRDB
import PackageFormat

/// What a tour's print files are made of, read in one transaction: the published version as visitors get it (its
/// signed manifest, never the working copy) and the alerts in force for it now.
enum PrintSource: Sendable {
    /// No version of the tour was ever released.
    case notReleased
    /// Released once, but unpublished now: visitors' links lead to "withdrawn".
    case unpublished
    case published(PublishedPackage, Manifest, alerts: [Alert])
}

extension AppDatabase {
    /// The tour's published version and the alerts that apply to it at `now` (its own and its site's, started and not
    /// ended; scheduled ones are left out, since a sign shows what holds when it is printed).
    func printSource(tourId: Int64, now: Date = Date()) async throws -> PrintSource {
        try await read { db in
            guard let package = try PackageRecord.ofTour(tourId).fetchOne(db), let current = package.currentVersion,
                let version = try PackageVersion.fetchOne(db, key: ["packageId": package.id, "version": current]),
                let site = try Site.fetchOne(db, key: package.siteId)
            else { return .notReleased }
            guard package.isVisible else { return .unpublished }
            let alerts = try Self.liveAlerts(db, siteId: package.siteId, tourId: tourId, now: now)
                .map(\.alert)
                .filter { $0.startsAt <= now }
            let published = PublishedPackage(package: package, version: version, siteSlug: site.slug, siteName: site.name)
            return .published(published, try version.decodedManifest(), alerts: alerts)
        }
    }
}
