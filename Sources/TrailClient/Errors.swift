import Foundation

/// A request the server answered with an error, or could not be made.
public enum TrailClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A non-2xx answer; `code` and `message` come from the JSON error body when there is one.
    case http(status: Int, code: String?, message: String?)
    /// No HTTP answer (connection refused, timed out, ...).
    case transport(String)
    /// The answer could not be decoded.
    case invalidResponse(String)

    public var description: String {
        switch self {
        case let .http(status, code, message):
            return "HTTP \(status)" + (code.map { " \($0)" } ?? "") + (message.map { ": \($0)" } ?? "")
        case let .transport(reason): return "network error: \(reason)"
        case let .invalidResponse(reason): return "unexpected answer: \(reason)"
        }
    }

    /// The HTTP status, when the server answered.
    public var status: Int? {
        if case let .http(status, _, _) = self { return status }
        return nil
    }
}

/// Why a catalog was refused. A refused catalog must not replace the one the app has.
public enum CatalogError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No `Catalog-Signature` header.
    case missingSignature
    /// The pinned key is not a base64 encoded 32-byte Ed25519 public key.
    case invalidPinnedKey
    /// The signature does not verify over the exact body bytes with the pinned key.
    case invalidSignature
    /// The signed body is not a catalog.
    case malformed(String)
    /// `catalogVersion` is older than the newest the app has seen (a replayed, older catalog).
    case olderThanLastSeen(received: Int, lastSeen: Int)
    /// `expiresAt` has passed (a stale catalog, possibly replayed).
    case expired(expiresAt: String, now: String)

    public var description: String {
        switch self {
        case .missingSignature: return "the catalog has no Catalog-Signature header"
        case .invalidPinnedKey: return "the pinned public key is not a base64 encoded 32-byte Ed25519 key"
        case .invalidSignature: return "the catalog's signature does not verify with the pinned key"
        case let .malformed(reason): return "the catalog cannot be read: \(reason)"
        case let .olderThanLastSeen(received, lastSeen):
            return "catalog version \(received) is older than version \(lastSeen), seen before"
        case let .expired(expiresAt, now): return "the catalog expired at \(expiresAt) (now \(now))"
        }
    }
}

/// Why a download stopped. The partial file is kept (and resumed next time) after `.cancelled`
/// and `.transport`; it is removed after the errors that make its bytes untrustworthy.
public enum DownloadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server sent (or announced) more bytes than the listed size; the download was cut off.
    case tooManyBytes(limit: Int64)
    /// The server's answer ended before the listed size.
    case incomplete(received: Int64, expected: Int64)
    /// The whole file's SHA-256 is not the listed one.
    case checksumMismatch(expected: String, actual: String)
    /// A 206 for a different range, total size or version than asked for: never spliced.
    case unexpectedPartialResponse(String)
    /// The server answered with an error status.
    case http(status: Int, code: String?, message: String?)
    case transport(String)
    case fileSystem(String)
    /// The calling task was cancelled; the bytes so far stay in the file for a resume.
    case cancelled(received: Int64)

    public var description: String {
        switch self {
        case let .tooManyBytes(limit): return "the server sent more than the listed \(limit) bytes; download stopped"
        case let .incomplete(received, expected): return "the download ended after \(received) of \(expected) bytes"
        case let .checksumMismatch(expected, actual): return "SHA-256 of the download is \(actual), expected \(expected)"
        case let .unexpectedPartialResponse(reason): return "unusable partial response: \(reason)"
        case let .http(status, code, message):
            return "HTTP \(status)" + (code.map { " \($0)" } ?? "") + (message.map { ": \($0)" } ?? "")
        case let .transport(reason): return "network error: \(reason)"
        case let .fileSystem(reason): return "file error: \(reason)"
        case let .cancelled(received): return "cancelled after \(received) bytes"
        }
    }
}

/// Why an extraction was refused or stopped; nothing is left in the target folder afterwards.
public enum ExtractionError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(String)
    /// Absolute, `..`, backslash, drive letter, control characters, ...
    case unsafePath(String)
    case symbolicLink(String)
    case directoryEntry(String)
    case encryptedEntry(String)
    case duplicatePath(String)
    /// Two entries that are the same file on a case-insensitive file system, or a file that is also a folder.
    case conflictingPaths(String, String)
    case missingManifest
    case invalidManifest(String)
    /// An entry the manifest does not list.
    case unlistedEntry(String)
    /// A file the manifest lists that the zip does not hold.
    case missingEntry(String)
    /// The zip's directory gives a different size than the manifest.
    case sizeMismatch(path: String, listed: Int64, inZip: UInt64)
    /// An entry expanded past its listed size, or the package past the manifest's total.
    case sizeLimitExceeded(path: String, limit: Int64)
    case checksumMismatch(path: String)
    case corruptEntry(path: String, reason: String)
    /// The target folder exists and is not empty.
    case destinationNotEmpty(String)
    case fileSystem(String)

    public var description: String {
        switch self {
        case let .cannotOpen(reason): return "cannot read the zip: \(reason)"
        case let .unsafePath(path): return "unsafe entry path \(path.debugDescription)"
        case let .symbolicLink(path): return "\(path.debugDescription) is a symbolic link"
        case let .directoryEntry(path): return "\(path.debugDescription) is a directory entry"
        case let .encryptedEntry(path): return "\(path.debugDescription) is encrypted"
        case let .duplicatePath(path): return "\(path.debugDescription) appears twice"
        case let .conflictingPaths(first, second): return "\(first.debugDescription) and \(second.debugDescription) would be the same file"
        case .missingManifest: return "manifest.json is missing"
        case let .invalidManifest(reason): return "manifest.json: \(reason)"
        case let .unlistedEntry(path): return "\(path.debugDescription) is not listed in the manifest"
        case let .missingEntry(path): return "\(path.debugDescription) is listed in the manifest but not in the zip"
        case let .sizeMismatch(path, listed, inZip): return "\(path.debugDescription): the manifest lists \(listed) bytes, the zip \(inZip)"
        case let .sizeLimitExceeded(path, limit): return "\(path.debugDescription) expands past \(limit) bytes; extraction stopped"
        case let .checksumMismatch(path): return "\(path.debugDescription): SHA-256 differs from the manifest"
        case let .corruptEntry(path, reason): return "\(path.debugDescription): \(reason)"
        case let .destinationNotEmpty(path): return "the folder \(path) is not empty"
        case let .fileSystem(reason): return "file error: \(reason)"
        }
    }
}
