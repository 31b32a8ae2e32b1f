import Foundation
import PackageFormat

/// `GET /api/v1/sites`: one publishing organisation (a park, a district).
public struct SiteSummary: Codable, Sendable, Equatable, Hashable {
    public var slug: String
    public var name: String
    public var description: String
    /// Published packages of the site.
    public var packageCount: Int
}

/// `GET /api/v1/sites/{slug}/packages`: one published package, latest version.
public struct PackageSummary: Codable, Sendable, Equatable, Hashable {
    public var id: String
    public var name: String
    public var description: String
    /// Size of the zip in bytes.
    public var size: Int64
    public var version: Int
    /// Lowercase hex SHA-256 of the zip (its download `ETag`, unquoted).
    public var sha256: String
    /// ISO-8601 UTC, when this version was released.
    public var updatedAt: String

    public var updatedDate: Date? { Manifest.parseTimestamp(updatedAt) }
}

/// `GET /api/v1/packages/{id}`: the list fields plus the park, the bounds, the waypoint count,
/// the manifest and its signature (base64), and the versioned download URL.
public struct PackageDetail: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String
    public var size: Int64
    public var version: Int
    public var sha256: String
    public var updatedAt: String
    public var park: String
    public var site: String?
    public var bounds: Manifest.Bounds
    public var waypointCount: Int
    /// BCP 47 tags, the default first (absent for packages made before languages).
    public var languages: [String]?
    public var signature: String
    public var manifest: Manifest
    public var downloadURL: String?
}

/// `GET /api/v1/packages/{id}/hash`, and the `expected` part of a verify answer.
public struct PackageHash: Codable, Sendable, Equatable {
    public var sha256: String
    public var version: Int
    public var size: Int64

    public init(sha256: String, version: Int, size: Int64) {
        self.sha256 = sha256
        self.version = version
        self.size = size
    }
}

/// `POST /api/v1/packages/{id}/verify` answer.
public struct VerifyAnswer: Codable, Sendable, Equatable {
    public var valid: Bool
    public var expected: PackageHash
}

/// `GET /api/v1/signing-key`.
public struct SigningKeyInfo: Codable, Sendable, Equatable {
    public var algorithm: String
    /// The raw 32-byte Ed25519 public key, base64.
    public var publicKey: String

    public init(algorithm: String, publicKey: String) {
        self.algorithm = algorithm
        self.publicKey = publicKey
    }
}

/// `GET /api/v1/catalog`: the signed index of everything published.
public struct Catalog: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable, Hashable {
        public var id: String
        public var site: String
        public var name: String
        public var version: Int
        public var size: Int64
        public var sha256: String
        /// The versioned (immutable) download URL.
        public var url: String
        /// The version's signed manifest (delta updates); absent from servers older than delta updates.
        public var manifestURL: String?
    }

    /// Grows by one at every release, unpublish and rollback.
    public var catalogVersion: Int
    public var generatedAt: String
    public var expiresAt: String
    public var packages: [Entry]

    public var generatedDate: Date? { Manifest.parseTimestamp(generatedAt) }
    public var expiryDate: Date? { Manifest.parseTimestamp(expiresAt) }
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
