import Foundation
import PackageFormat
internal import TrailAPI

// The answers of the mobile API, as TrailClient's own types. The wire types generated from `openapi.json` (module
// TrailAPI, the same types the server encodes) stay inside this module: each type here decodes and encodes through
// its wire type and copies the fields, so a generator upgrade or a change of generated names cannot change an app's
// code without a TrailClient release, and `swift package diagnose-api-breaking-changes` sees every change of this API.
// Timestamps are `Date`s (ISO 8601 UTC on the wire); base64 fields are raw bytes (`Data`). The manifest and the
// bounds are PackageFormat's own types, the same as in a package's signed `manifest.json`.

/// `GET /api/v1/sites`: one publishing organisation (a park, a district), with its count of published packages.
public struct SiteSummary: Sendable, Hashable, Codable {
    public var slug: String
    public var name: String
    public var description: String
    public var packageCount: Int

    public init(slug: String, name: String, description: String, packageCount: Int) {
        self.slug = slug
        self.name = name
        self.description = description
        self.packageCount = packageCount
    }

    init(_ wire: Components.Schemas.Site) {
        self.init(slug: wire.slug, name: wire.name, description: wire.description, packageCount: wire.packageCount)
    }

    var wire: Components.Schemas.Site { .init(slug: slug, name: name, description: description, packageCount: packageCount) }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.Site(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }
}

/// `GET /api/v1/sites/{slug}/packages`: one published package, latest version. `sha256` is the lowercase hex SHA-256
/// of the zip (its download `ETag`, unquoted); `updatedAt` is when this version was released.
public struct PackageSummary: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var description: String
    public var size: Int64
    public var version: Int
    public var sha256: String
    public var updatedAt: Date

    public init(id: String, name: String, description: String, size: Int64, version: Int, sha256: String, updatedAt: Date) {
        self.id = id
        self.name = name
        self.description = description
        self.size = size
        self.version = version
        self.sha256 = sha256
        self.updatedAt = updatedAt
    }

    init(_ wire: Components.Schemas.PackageSummary) {
        self.init(
            id: wire.id,
            name: wire.name,
            description: wire.description,
            size: wire.size,
            version: wire.version,
            sha256: wire.sha256,
            updatedAt: wire.updatedAt
        )
    }

    var wire: Components.Schemas.PackageSummary {
        .init(id: id, name: name, description: description, size: size, version: version, sha256: sha256, updatedAt: updatedAt)
    }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.PackageSummary(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }
}

/// `GET /api/v1/packages/{id}`: the list fields plus the park, the bounds, the waypoint count, the languages (default
/// first; nil for packages made before languages), the manifest and its Ed25519 signature, and the versioned
/// download URL.
public struct PackageDetail: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var description: String
    public var size: Int64
    public var version: Int
    public var sha256: String
    public var updatedAt: Date
    public var park: String
    public var site: String
    public var bounds: Manifest.Bounds
    public var waypointCount: Int
    /// The bytes of `manifest.sig`: the Ed25519 signature of the manifest's exact bytes.
    public var signature: Data
    public var manifest: Manifest
    /// The immutable download URL of this version.
    public var downloadURL: String
    public var languages: [String]?

    public init(
        id: String,
        name: String,
        description: String,
        size: Int64,
        version: Int,
        sha256: String,
        updatedAt: Date,
        park: String,
        site: String,
        bounds: Manifest.Bounds,
        waypointCount: Int,
        signature: Data,
        manifest: Manifest,
        downloadURL: String,
        languages: [String]? = nil
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.size = size
        self.version = version
        self.sha256 = sha256
        self.updatedAt = updatedAt
        self.park = park
        self.site = site
        self.bounds = bounds
        self.waypointCount = waypointCount
        self.signature = signature
        self.manifest = manifest
        self.downloadURL = downloadURL
        self.languages = languages
    }

    init(_ wire: Components.Schemas.PackageDetail) {
        self.init(
            id: wire.id,
            name: wire.name,
            description: wire.description,
            size: wire.size,
            version: wire.version,
            sha256: wire.sha256,
            updatedAt: wire.updatedAt,
            park: wire.park,
            site: wire.site,
            bounds: wire.bounds,
            waypointCount: wire.waypointCount,
            signature: Data(wire.signature.data),
            manifest: wire.manifest,
            downloadURL: wire.downloadURL,
            languages: wire.languages
        )
    }

    var wire: Components.Schemas.PackageDetail {
        .init(
            id: id,
            name: name,
            description: description,
            size: size,
            version: version,
            sha256: sha256,
            updatedAt: updatedAt,
            park: park,
            site: site,
            bounds: bounds,
            waypointCount: waypointCount,
            signature: Base64EncodedData(signature),
            manifest: manifest,
            downloadURL: downloadURL,
            languages: languages
        )
    }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.PackageDetail(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }

    /// The manifest's Ed25519 signature as base64 text (the bytes of `manifest.sig`).
    public var signatureBase64: String { signature.base64EncodedString() }
}

/// `GET /api/v1/packages/{id}/hash`, and the `expected` part of a verify answer.
public struct PackageHash: Sendable, Hashable, Codable {
    public var sha256: String
    public var version: Int
    public var size: Int64

    public init(sha256: String, version: Int, size: Int64) {
        self.sha256 = sha256
        self.version = version
        self.size = size
    }

    init(_ wire: Components.Schemas.PackageHash) { self.init(sha256: wire.sha256, version: wire.version, size: wire.size) }

    var wire: Components.Schemas.PackageHash { .init(sha256: sha256, version: version, size: size) }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.PackageHash(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }
}

/// `POST /api/v1/packages/{id}/verify` answer: whether the reported download is the released one, and what the
/// server expects.
public struct VerifyAnswer: Sendable, Hashable, Codable {
    public var valid: Bool
    public var expected: PackageHash

    public init(valid: Bool, expected: PackageHash) {
        self.valid = valid
        self.expected = expected
    }

    init(_ wire: Components.Schemas.VerifyResult) { self.init(valid: wire.valid, expected: PackageHash(wire.expected)) }

    var wire: Components.Schemas.VerifyResult { .init(valid: valid, expected: expected.wire) }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.VerifyResult(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }
}

/// `GET /api/v1/signing-key`: the server's Ed25519 public key.
public struct SigningKeyInfo: Sendable, Hashable, Codable {
    /// `ed25519`, the only algorithm the API knows.
    public var algorithm: String
    /// The raw 32-byte public key.
    public var publicKey: Data

    public init(algorithm: String = "ed25519", publicKey: Data) {
        self.algorithm = algorithm
        self.publicKey = publicKey
    }

    init(_ wire: Components.Schemas.SigningKey) { self.init(algorithm: wire.algorithm.rawValue, publicKey: Data(wire.publicKey.data)) }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.SigningKey(from: decoder)) }

    public func encode(to encoder: any Encoder) throws {
        guard let algorithm = Components.Schemas.SigningKey.AlgorithmPayload(rawValue: algorithm) else {
            throw EncodingError.invalidValue(
                algorithm,
                .init(codingPath: encoder.codingPath, debugDescription: "the API knows only Ed25519 keys")
            )
        }
        try Components.Schemas.SigningKey(algorithm: algorithm, publicKey: Base64EncodedData(publicKey)).encode(to: encoder)
    }

    /// The key as base64 text, the form ``TrailClient/verify(zip:publicKey:expectedSHA256:)`` and the catalog
    /// checks take (and an app pins).
    public var publicKeyBase64: String { publicKey.base64EncodedString() }
}

/// `GET /api/v1/catalog`: the signed index of everything published. `catalogVersion` grows by one at every release,
/// unpublish and rollback, and when an alert is posted, ended or runs out.
public struct Catalog: Sendable, Hashable, Codable {
    public var catalogVersion: Int
    public var generatedAt: Date
    public var expiresAt: Date
    public var packages: [Entry]
    /// Current and scheduled alerts and closures (empty from servers older than alerts). Signed with the rest, so an
    /// app can show them offline from the last catalog it verified; ``alerts(forPackage:at:)`` picks those that apply.
    public var alerts: [Alert] = []

    /// An alert or closure a site's managers posted: about one package (`packageId`) or every package of `site`.
    public struct Alert: Sendable, Hashable {
        public var id: Int64
        /// The site's slug.
        public var site: String
        /// Nil: the alert is about every package of the site.
        public var packageId: String?
        /// Waypoint ids (`Manifest.Waypoint.id`) closed while the alert holds: do not open or play them.
        public var closedWaypoints: [Int64]
        public var severity: Severity
        public var title: String
        /// Plain text: show it as text, never as markup.
        public var message: String
        public var startsAt: Date
        public var endsAt: Date

        /// `info`, `warning` or `closure`.
        public enum Severity: String, Sendable, Hashable, CaseIterable {
            case info, warning, closure
        }

        public init(
            id: Int64,
            site: String,
            packageId: String? = nil,
            closedWaypoints: [Int64] = [],
            severity: Severity,
            title: String,
            message: String,
            startsAt: Date,
            endsAt: Date
        ) {
            self.id = id
            self.site = site
            self.packageId = packageId
            self.closedWaypoints = closedWaypoints
            self.severity = severity
            self.title = title
            self.message = message
            self.startsAt = startsAt
            self.endsAt = endsAt
        }

        /// Whether it holds at `now`: started, and not past its end. An alert past `endsAt` is ignored even when an
        /// older catalog (the last one verified before going offline) still lists it.
        public func isInEffect(at now: Date = Date()) -> Bool { startsAt <= now && now < endsAt }

        init(_ wire: Components.Schemas.CatalogAlert) {
            self.init(
                id: wire.id,
                site: wire.site,
                packageId: wire.packageId,
                closedWaypoints: wire.closedWaypoints,
                // A severity added by a later server is shown as a warning rather than dropped.
                severity: Severity(rawValue: wire.severity) ?? .warning,
                title: wire.title,
                message: wire.message,
                startsAt: wire.startsAt,
                endsAt: wire.endsAt
            )
        }

        var wire: Components.Schemas.CatalogAlert {
            .init(
                id: id,
                site: site,
                packageId: packageId,
                closedWaypoints: closedWaypoints,
                severity: severity.rawValue,
                title: title,
                message: message,
                startsAt: startsAt,
                endsAt: endsAt
            )
        }
    }

    /// The alerts in effect at `now` for the package `packageId`: its own, and those about every package of its site.
    /// Empty when the catalog does not list the package (its site is not known then).
    public func alerts(forPackage packageId: String, at now: Date = Date()) -> [Alert] {
        guard let site = packages.first(where: { $0.id == packageId })?.site else { return [] }
        return alerts.filter { alert in
            alert.isInEffect(at: now) && (alert.packageId == packageId || (alert.packageId == nil && alert.site == site))
        }
    }

    /// The waypoint ids of `packageId` that an alert in effect at `now` closes.
    public func closedWaypoints(forPackage packageId: String, at now: Date = Date()) -> Set<Int64> {
        Set(alerts(forPackage: packageId, at: now).flatMap(\.closedWaypoints))
    }

    /// One package of the catalog: its latest version, the versioned (immutable) download URL, and the version's
    /// signed manifest (where a delta update starts).
    public struct Entry: Sendable, Hashable {
        public var id: String
        public var site: String
        public var name: String
        public var version: Int
        public var size: Int64
        public var sha256: String
        public var url: String
        public var manifestURL: String?

        public init(
            id: String,
            site: String,
            name: String,
            version: Int,
            size: Int64,
            sha256: String,
            url: String,
            manifestURL: String? = nil
        ) {
            self.id = id
            self.site = site
            self.name = name
            self.version = version
            self.size = size
            self.sha256 = sha256
            self.url = url
            self.manifestURL = manifestURL
        }

        init(_ wire: Components.Schemas.CatalogEntry) {
            self.init(
                id: wire.id,
                site: wire.site,
                name: wire.name,
                version: wire.version,
                size: wire.size,
                sha256: wire.sha256,
                url: wire.url,
                manifestURL: wire.manifestURL
            )
        }

        var wire: Components.Schemas.CatalogEntry {
            .init(id: id, site: site, name: name, version: version, size: size, sha256: sha256, url: url, manifestURL: manifestURL)
        }
    }

    public init(catalogVersion: Int, generatedAt: Date, expiresAt: Date, packages: [Entry]) {
        self.catalogVersion = catalogVersion
        self.generatedAt = generatedAt
        self.expiresAt = expiresAt
        self.packages = packages
    }

    init(_ wire: Components.Schemas.Catalog) {
        self.init(
            catalogVersion: wire.catalogVersion,
            generatedAt: wire.generatedAt,
            expiresAt: wire.expiresAt,
            packages: wire.packages.map(Entry.init)
        )
        alerts = (wire.alerts ?? []).map(Alert.init)
    }

    var wire: Components.Schemas.Catalog {
        .init(
            catalogVersion: catalogVersion,
            generatedAt: generatedAt,
            expiresAt: expiresAt,
            packages: packages.map(\.wire),
            alerts: alerts.isEmpty ? nil : alerts.map(\.wire)
        )
    }

    public init(from decoder: any Decoder) throws { self.init(try Components.Schemas.Catalog(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try wire.encode(to: encoder) }
}
/// A catalog whose signature verified, with the exact bytes that were signed.
public struct VerifiedCatalog: Sendable, Equatable {
    public var catalog: Catalog
    public var body: Data
    /// The `Catalog-Signature` header (base64 Ed25519 signature of `body`).
    public var signature: String
}

/// The answer to a conditional GET (`If-None-Match`).
public enum Fetched<Value: Sendable>: Sendable {
    /// The resource changed (or no ETag was given): its new value and ETag.
    case modified(Value, etag: String?)
    /// `304 Not Modified`: what the app has is current.
    case notModified
}

/// One thing a visitor did, for ``TrailClient/sendEvents(_:)``: counted per day and kind, never per person.
public struct VisitorEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case opened
        case savedOffline = "saved-offline"
        case stopOpened = "stop-opened"
        case stopPlayed = "stop-played"
        case completed
        case alertShown = "alert-shown"
    }

    /// The most events one call may carry.
    public static let maxPerPost = 200

    public var kind: Kind
    public var packageId: String
    public var version: Int
    /// The manifest's waypoint id: required for ``Kind/stopOpened`` and ``Kind/stopPlayed``, refused on the others.
    public var waypointId: Int64?
    /// One of the version's languages.
    public var language: String?
    /// The sign the visitor came from (letters, digits and `-`, at most 40).
    public var source: String?
    /// The visitor's local date, `YYYY-MM-DD`: today, or up to 30 days back for events queued offline.
    public var day: String

    public init(kind: Kind, packageId: String, version: Int, waypointId: Int64? = nil, language: String? = nil, source: String? = nil, day: String) {
        self.kind = kind
        self.packageId = packageId
        self.version = version
        self.waypointId = waypointId
        self.language = language
        self.source = source
        self.day = day
    }

    /// `date` as `YYYY-MM-DD` in `timeZone` (the phone's own by default): the day an event is counted on.
    public static func day(of date: Date = Date(), in timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    var wire: Components.Schemas.VisitEvent {
        .init(
            _type: Components.Schemas.VisitEventType(rawValue: kind.rawValue)!,
            packageId: packageId,
            version: version,
            waypointId: waypointId,
            language: language,
            source: source,
            day: day
        )
    }
}

/// `POST /api/v1/events` answer: how many events were counted, and how many dropped because the sender's address
/// had sent its share for the hour (not to be sent again).
public struct EventsAnswer: Sendable, Hashable {
    public var counted: Int
    public var dropped: Int

    public init(counted: Int, dropped: Int) {
        self.counted = counted
        self.dropped = dropped
    }

    init(_ wire: Components.Schemas.EventsAccepted) { self.init(counted: wire.counted, dropped: wire.dropped) }
}
