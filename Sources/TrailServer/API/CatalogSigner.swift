import Crypto
import Foundation
import NIOConcurrencyHelpers
import PackageFormat
import TrailAPI

/// Signs the catalog once per catalog version and again before the signature's lifetime runs out. Not a read cache:
/// the signed bytes are kept so that one catalog version is one body, one signature and one `ETag` (a phone polling
/// it gets 304s, and nginx's cache can revalidate it); which version is current is read from the database each time.
final class CatalogSigner: Sendable {
    struct Signed: Sendable {
        let catalogVersion: Int
        let body: Data
        let signature: String
        let etag: String
        let expiresAt: Date
        /// The soonest `endsAt` among the alerts it lists: from then on it lists an alert that ran out, so it is
        /// signed again (and the catalog version moves on, see `AppDatabase.retireEndedAlerts`).
        var nextAlertEnd: Date? = nil

        /// Whether this signed catalog may still be served at `now`.
        func holds(at now: Date, lifetime: TimeInterval) -> Bool {
            expiresAt.timeIntervalSince(now) > lifetime / 4 && (nextAlertEnd.map { now < $0 } ?? true)
        }
    }

    let database: AppDatabase
    let signingKey: SigningKey
    let lifetime: TimeInterval
    let publicURL: String
    /// With object storage: a version whose objects are confirmed in the bucket is named by its public URL there.
    let distribution: DistributionState?
    private let signedLast = NIOLockedValueBox<(signed: Signed, generation: Int)?>(nil)

    init(
        database: AppDatabase,
        signingKey: SigningKey,
        lifetime: TimeInterval,
        publicURL: String,
        distribution: DistributionState? = nil
    ) {
        self.database = database
        self.signingKey = signingKey
        self.lifetime = lifetime
        self.publicURL = publicURL
        self.distribution = distribution
    }

    func current(now: Date = Date()) async throws -> Signed {
        let generation = distribution?.generation ?? 0
        // An alert that ran out is retired first (a new catalog version), so the catalog signed below leaves it out.
        try await database.retireEndedAlerts(now: now)
        let version = try await database.catalogVersion()
        // Re-sign when the catalog changed, an object reached the bucket (a URL may move there), or less than a quarter
        // of its lifetime is left.
        if let cached = signedLast.withLockedValue({ $0 }), cached.signed.catalogVersion == version, cached.generation == generation,
            cached.signed.holds(at: now, lifetime: lifetime)
        {
            return cached.signed
        }
        let expiresAt = now.addingTimeInterval(lifetime)
        let alerts = try await database.catalogAlerts(now: now)
        let body = Components.Schemas.Catalog(
            catalogVersion: version,
            generatedAt: now,
            expiresAt: expiresAt,
            packages: try await database.publishedPackages().map {
                Components.Schemas.CatalogEntry(
                    id: $0.package.id,
                    site: $0.siteSlug,
                    name: $0.version.name,
                    version: $0.version.version,
                    size: $0.version.size,
                    sha256: $0.version.sha256,
                    url: distribution?.publicURL(for: DistributionPath.zip($0.package.id, $0.version.version))
                        ?? APIURL.download(publicURL, packageId: $0.package.id, version: $0.version.version),
                    manifestURL: distribution?.publicURL(for: DistributionPath.manifest($0.package.id, $0.version.version))
                        ?? APIURL.manifest(publicURL, packageId: $0.package.id, version: $0.version.version)
                )
            },
            alerts: alerts.map(Components.Schemas.CatalogAlert.init)
        )
        let data = try WireCoding.encoder.encode(body)
        let signed = Signed(
            catalogVersion: version,
            body: data,
            signature: try signingKey.sign(data).base64EncodedString(),
            etag: HTTPCaching.etag(of: data),
            expiresAt: expiresAt,
            nextAlertEnd: alerts.map(\.alert.endsAt).min()
        )
        signedLast.withLockedValue { $0 = (signed, generation) }
        return signed
    }
}
