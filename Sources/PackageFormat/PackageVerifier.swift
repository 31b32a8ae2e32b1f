import Crypto
import Foundation
import ZIPFoundation

/// One thing wrong with a package.
public enum PackageProblem: Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(String)
    /// ZIPFoundation (what clients extract with) reads a different entry list than the strict parser.
    case readersDisagree(String)
    case unsafeEntryPath(String)
    case duplicateEntry(String)
    case symbolicLink(String)
    case directoryEntry(String)
    case encryptedEntry(String)
    case localHeaderMismatch(String)
    case missingManifest
    case unreadableManifest(String)
    case invalidManifest(String)
    case missingSignature
    case malformedSignature(size: Int)
    case invalidPublicKey
    case signatureMismatch
    case missingGeoJSON
    /// Listed in the manifest, absent from the zip.
    case missingEntry(String)
    /// In the zip, not listed in the manifest.
    case unlistedEntry(String)
    case sizeMismatch(path: String, expected: Int64, actual: UInt64)
    case checksumMismatch(path: String, expected: String, actual: String)
    case crcMismatch(String)
    case unreadableEntry(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(reason): return "the zip cannot be read: \(reason)"
        case let .readersDisagree(detail): return "ZIPFoundation reads the archive differently: \(detail)"
        case let .unsafeEntryPath(path): return "unsafe entry path \(path.debugDescription)"
        case let .duplicateEntry(path): return "duplicate entry \(path.debugDescription)"
        case let .symbolicLink(path): return "\(path.debugDescription) is a symbolic link"
        case let .directoryEntry(path): return "\(path.debugDescription) is a directory entry"
        case let .encryptedEntry(path): return "\(path.debugDescription) is encrypted"
        case let .localHeaderMismatch(path): return "\(path.debugDescription): the local header names a different file"
        case .missingManifest: return "manifest.json is missing"
        case let .unreadableManifest(reason): return "manifest.json cannot be read: \(reason)"
        case let .invalidManifest(problem): return "manifest: \(problem)"
        case .missingSignature: return "manifest.sig is missing"
        case let .malformedSignature(size): return "manifest.sig holds \(size) bytes, expected a 64-byte Ed25519 signature"
        case .invalidPublicKey: return "the public key is not a base64 encoded 32-byte Ed25519 key"
        case .signatureMismatch: return "manifest.sig is not a valid signature of manifest.json for this key"
        case .missingGeoJSON: return "waypoints.geojson is missing"
        case let .missingEntry(path): return "\(path.debugDescription) is listed in the manifest but missing from the zip"
        case let .unlistedEntry(path): return "\(path.debugDescription) is in the zip but not listed in the manifest"
        case let .sizeMismatch(path, expected, actual):
            return "\(path.debugDescription): size is \(actual) bytes, the manifest says \(expected)"
        case let .checksumMismatch(path, expected, actual):
            return "\(path.debugDescription): SHA-256 is \(actual), the manifest says \(expected)"
        case let .crcMismatch(path): return "\(path.debugDescription): CRC-32 does not match the zip's directory"
        case let .unreadableEntry(path, reason): return "\(path.debugDescription) cannot be read: \(reason)"
        }
    }
}

public struct PackageVerificationReport: Sendable, Equatable {
    /// Everything found wrong; empty when the package is valid.
    public var issues: [PackageProblem] = []
    /// `issues` as sentences.
    public var problems: [String] { issues.map(\.description) }
    public var isValid: Bool { issues.isEmpty }

    /// The decoded manifest, when `manifest.json` could be read and decoded.
    public var manifest: Manifest?
    public var manifestBytes: Data?
    public var signature: Data?
    /// `true`/`false` when a public key was given, `nil` when none was (then `isValid` says
    /// nothing about who made the package).
    public var signatureValid: Bool?

    public var archiveSize: UInt64 = 0
    public var usesZIP64 = false
    public var entryCount = 0
    /// Files the manifest lists (assets, tiles, `waypoints.geojson`).
    public var listedFileCount = 0
    /// Listed files whose size and SHA-256 matched.
    public var verifiedFileCount = 0
    public var verifiedBytes: Int64 = 0

    public init() {}
}

/// Checks a package zip: used by the server after building, by the client library after
/// downloading, and by `trail-companion package verify`.
///
/// Checks: the zip parses (strictly, and the same way for ZIPFoundation); every entry path is
/// safe (``PackageLayout/isSafeEntryPath(_:)``), no symbolic link, directory, encrypted or
/// duplicate entries, local headers agree with the central directory; `manifest.json` and
/// `manifest.sig` are present, the manifest decodes and validates, and the signature verifies
/// when a key is given; `waypoints.geojson` is present; every file the manifest lists is in the
/// zip with the listed size and SHA-256 (streamed, output capped at the listed size) and a
/// matching CRC-32; no other entries exist.
public struct PackageVerifier: Sendable {
    public static let maxManifestSize: UInt64 = 16 << 20

    static let fixedPaths: Set<String> = [PackageLayout.manifestPath, PackageLayout.signaturePath, PackageLayout.geoJSONPath]

    public static func verify(zipAt url: URL, publicKeyBase64: String?) -> PackageVerificationReport {
        var report = PackageVerificationReport()
        let reader: PackageArchiveReader
        do {
            reader = try PackageArchiveReader(url: url)
        } catch {
            report.issues.append(.cannotOpen("\(error)"))
            return report
        }
        report.archiveSize = reader.fileSize
        report.usesZIP64 = reader.isZIP64
        report.entryCount = reader.entries.count

        // The archive as a client extracting with ZIPFoundation sees it.
        do {
            let archive = try Archive(url: url, accessMode: .read)
            let names = archive.map(\.path)
            if names != reader.entries.map(\.path) {
                report.issues.append(
                    .readersDisagree(
                        "\(names.count) entries instead of \(reader.entries.count)"
                            + (names.count == reader.entries.count ? " with different names" : "")
                    )
                )
            }
        } catch {
            report.issues.append(.readersDisagree("ZIPFoundation cannot open it: \(error)"))
        }

        // Entry-level checks.
        var entries: [String: ZipEntryInfo] = [:]
        var reportedDuplicates = Set<String>()
        for entry in reader.entries {
            if !PackageLayout.isSafeEntryPath(entry.path) { report.issues.append(.unsafeEntryPath(entry.path)) }
            if entry.isSymbolicLink {
                report.issues.append(.symbolicLink(entry.path))
            } else if entry.isDirectory {
                report.issues.append(.directoryEntry(entry.path))
            }
            if entry.isEncrypted { report.issues.append(.encryptedEntry(entry.path)) }
            if !entry.localNameMatches { report.issues.append(.localHeaderMismatch(entry.path)) }
            if entries[entry.path] != nil {
                if reportedDuplicates.insert(entry.path).inserted { report.issues.append(.duplicateEntry(entry.path)) }
            } else {
                entries[entry.path] = entry
            }
        }

        // manifest.json
        guard let manifestEntry = entries[PackageLayout.manifestPath] else {
            report.issues.append(.missingManifest)
            return report
        }
        let manifestBytes: Data
        do {
            manifestBytes = try readWhole(manifestEntry, reader: reader, limit: maxManifestSize)
            report.manifestBytes = manifestBytes
        } catch {
            report.issues.append(.unreadableManifest("\(error)"))
            return report
        }
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(manifestBytes)
            report.manifest = manifest
        } catch {
            report.issues.append(.unreadableManifest("not a format version 1 manifest: \(error)"))
            return report
        }
        report.issues += manifest.validate().map(PackageProblem.invalidManifest)

        // manifest.sig
        if let signatureEntry = entries[PackageLayout.signaturePath] {
            do {
                let signature = try readWhole(signatureEntry, reader: reader, limit: 4096)
                report.signature = signature
                if signature.count != 64 { report.issues.append(.malformedSignature(size: signature.count)) }
                if let publicKeyBase64 {
                    if SignatureCheck.publicKey(fromBase64: publicKeyBase64) == nil {
                        report.issues.append(.invalidPublicKey)
                        report.signatureValid = false
                    } else {
                        let valid = SignatureCheck.verify(signature: signature, of: manifestBytes, publicKeyBase64: publicKeyBase64)
                        report.signatureValid = valid
                        if !valid && signature.count == 64 { report.issues.append(.signatureMismatch) }
                    }
                }
            } catch {
                report.issues.append(.unreadableEntry(path: PackageLayout.signaturePath, reason: "\(error)"))
                if publicKeyBase64 != nil { report.signatureValid = false }
            }
        } else {
            report.issues.append(.missingSignature)
            if publicKeyBase64 != nil { report.signatureValid = false }
        }

        if entries[PackageLayout.geoJSONPath] == nil { report.issues.append(.missingGeoJSON) }

        // Listed files: present, right size, right SHA-256.
        let listed = manifest.listedFiles
        report.listedFileCount = listed.count
        var listedPaths = Set<String>()
        for file in listed where listedPaths.insert(file.path).inserted {
            guard let entry = entries[file.path] else {
                report.issues.append(.missingEntry(file.path))
                continue
            }
            guard !entry.isSymbolicLink, !entry.isDirectory, !entry.isEncrypted else { continue }
            if let size = file.size, entry.uncompressedSize != UInt64(max(0, size)) {
                report.issues.append(.sizeMismatch(path: file.path, expected: size, actual: entry.uncompressedSize))
                continue
            }
            var hasher = SHA256()
            var count: Int64 = 0
            do {
                let limit = file.size.map { UInt64(max(0, $0)) } ?? entry.uncompressedSize
                let crc = try reader.read(entry, limit: limit) { chunk in
                    hasher.update(data: chunk)
                    count += Int64(chunk.count)
                }
                if UInt64(count) != entry.uncompressedSize {
                    report.issues.append(
                        .unreadableEntry(
                            path: file.path,
                            reason: "expanded to \(count) bytes, the zip's directory says \(entry.uncompressedSize)"
                        )
                    )
                    continue
                }
                let actual = PackageHashing.hex(hasher.finalize())
                if actual != file.sha256 {
                    report.issues.append(.checksumMismatch(path: file.path, expected: file.sha256, actual: actual))
                    continue
                }
                if crc != entry.crc32 {
                    report.issues.append(.crcMismatch(file.path))
                    continue
                }
                report.verifiedFileCount += 1
                report.verifiedBytes += count
            } catch {
                report.issues.append(.unreadableEntry(path: file.path, reason: "\(error)"))
            }
        }

        // Nothing else in the zip.
        var reportedUnlisted = Set<String>()
        for entry in reader.entries where !listedPaths.contains(entry.path) && !fixedPaths.contains(entry.path) {
            if reportedUnlisted.insert(entry.path).inserted { report.issues.append(.unlistedEntry(entry.path)) }
        }
        return report
    }

    static func readWhole(_ entry: ZipEntryInfo, reader: PackageArchiveReader, limit: UInt64) throws -> Data {
        var data = Data()
        let crc = try reader.read(entry, limit: limit) { data.append($0) }
        guard UInt64(data.count) == entry.uncompressedSize else {
            throw ZipReadError.malformed("\(entry.path) expanded to \(data.count) bytes, the zip's directory says \(entry.uncompressedSize)")
        }
        guard crc == entry.crc32 else { throw ZipReadError.malformed("\(entry.path): CRC-32 mismatch") }
        return data
    }
}
