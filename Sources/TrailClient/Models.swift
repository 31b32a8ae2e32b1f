import Foundation
import PackageFormat
@_exported import TrailAPI

// The answers of the mobile API. Each is a type generated from `openapi.json` (module TrailAPI, the same types the
// server encodes); the names here are the ones TrailClient has always used. Timestamps are `Date`s (ISO 8601 UTC on
// the wire), base64 fields are `Base64EncodedData` (their `.data` is the raw bytes).

/// `GET /api/v1/sites`: one publishing organisation (a park, a district), with its count of published packages.
public typealias SiteSummary = Components.Schemas.Site

/// `GET /api/v1/sites/{slug}/packages`: one published package, latest version. `sha256` is the lowercase hex SHA-256
/// of the zip (its download `ETag`, unquoted); `updatedAt` is when this version was released.
public typealias PackageSummary = Components.Schemas.PackageSummary

/// `GET /api/v1/packages/{id}`: the list fields plus the park, the bounds, the waypoint count, the languages (default
/// first; absent for packages made before languages), the manifest and its Ed25519 signature, and the versioned
/// download URL.
public typealias PackageDetail = Components.Schemas.PackageDetail

/// `GET /api/v1/packages/{id}/hash`, and the `expected` part of a verify answer.
public typealias PackageHash = Components.Schemas.PackageHash

/// `POST /api/v1/packages/{id}/verify` answer.
public typealias VerifyAnswer = Components.Schemas.VerifyResult

/// `GET /api/v1/signing-key`: the raw 32-byte Ed25519 public key.
public typealias SigningKeyInfo = Components.Schemas.SigningKey

/// `GET /api/v1/catalog`: the signed index of everything published. `catalogVersion` grows by one at every release,
/// unpublish and rollback.
public typealias Catalog = Components.Schemas.Catalog

extension Catalog {
    /// One package of the catalog: its latest version, the versioned (immutable) download URL, and the version's
    /// signed manifest (where a delta update starts).
    public typealias Entry = Components.Schemas.CatalogEntry
}

extension SigningKeyInfo {
    /// The key as base64 text, the form ``TrailClient/verify(zip:publicKey:expectedSHA256:)`` and the catalog
    /// checks take (and an app pins).
    public var publicKeyBase64: String { Data(publicKey.data).base64EncodedString() }
}

extension PackageDetail {
    /// The manifest's Ed25519 signature as base64 text (the bytes of `manifest.sig`).
    public var signatureBase64: String { Data(signature.data).base64EncodedString() }
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
