import Foundation
import PackageFormat

/// The result of checking a package zip completely (``TrailClient/verify(zip:publicKey:expectedSHA256:)``).
public struct PackageCheck: Sendable, Equatable {
    public var zip: URL
    /// Lowercase hex SHA-256 of the whole zip ("" when it could not be read).
    public var sha256: String
    public var size: Int64
    /// The SHA-256 the zip should have (from the catalog, the package list or `/hash`), when given.
    public var expectedSHA256: String?
    /// Structure, manifest, signature (when a key was given) and every entry's size and SHA-256.
    public var report: PackageVerificationReport

    /// `nil` when no expected SHA-256 was given.
    public var sha256Matches: Bool? { expectedSHA256.map { $0.lowercased() == sha256 } }
    /// `nil` when no public key was given: then the package is intact but its author unproven.
    public var signatureValid: Bool? { report.signatureValid }
    public var manifest: Manifest? { report.manifest }

    /// Everything wrong, as sentences; empty when the package is valid.
    public var problems: [String] {
        var problems: [String] = []
        if let expectedSHA256, sha256Matches == false {
            problems.append("the zip's SHA-256 is \(sha256.isEmpty ? "unreadable" : sha256), expected \(expectedSHA256.lowercased())")
        }
        return problems + report.problems
    }

    /// True when nothing is wrong. Check ``signatureValid`` too: it is `nil` when no key was given.
    public var isValid: Bool { problems.isEmpty }

    /// True when valid and the signature was checked with a key.
    public var isAuthentic: Bool { isValid && signatureValid == true }

    static func run(zip: URL, publicKey: String?, expectedSHA256: String?) -> PackageCheck {
        let hashed = try? PackageHashing.sha256(ofFileAt: zip)
        let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: publicKey)
        return PackageCheck(
            zip: zip,
            sha256: hashed?.sha256 ?? "",
            size: hashed?.size ?? 0,
            expectedSHA256: expectedSHA256,
            report: report
        )
    }
}
