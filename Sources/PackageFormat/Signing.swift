import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

public enum SigningKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key file exists but does not hold exactly 32 bytes.
    case invalidKeyFile(path: String, size: Int64)
    /// The key file is not a regular file.
    case notARegularFile(path: String)
    /// The key file is readable by group or others and its mode could not be set to 0600.
    case insecurePermissions(path: String, mode: UInt16)
    case io(path: String, operation: String, errno: Int32)
    case cannotCreateFolder(path: String, reason: String)

    public var description: String {
        switch self {
        case let .invalidKeyFile(path, size):
            return "signing key file \(path) holds \(size) bytes, expected a raw 32-byte Ed25519 private key"
        case let .notARegularFile(path):
            return "signing key path \(path) is not a regular file"
        case let .insecurePermissions(path, mode):
            return "signing key file \(path) has mode \(String(mode, radix: 8)) and could not be restricted to 0600"
        case let .io(path, operation, code):
            return "signing key file \(path): \(operation) failed: \(String(cString: strerror(code)))"
        case let .cannotCreateFolder(path, reason):
            return "cannot create the signing key folder \(path): \(reason)"
        }
    }
}

/// The server's Ed25519 signing key (`data/keys/signing.ed25519`: the raw 32-byte private key,
/// mode 0600).
///
/// On Linux (swift-crypto on BoringSSL) Ed25519 signatures are deterministic, so a package
/// built twice from the same snapshot is byte-identical. CryptoKit on Apple platforms randomises
/// signatures: there, `manifest.sig` (and so the zip's SHA-256) differs between builds.
public struct SigningKey: Sendable {
    public let privateKey: Curve25519.Signing.PrivateKey

    public init(privateKey: Curve25519.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    public init(rawRepresentation: Data) throws {
        self.privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation)
    }

    /// A new random key (not saved anywhere).
    public static func generate() -> SigningKey {
        SigningKey(privateKey: Curve25519.Signing.PrivateKey())
    }

    /// The raw 32-byte public key, base64 encoded: what `GET /api/v1/signing-key` publishes.
    public var publicKeyBase64: String {
        privateKey.publicKey.rawRepresentation.base64EncodedString()
    }

    /// Ed25519 signature (64 bytes) of `data`.
    public func sign(_ data: Data) throws -> Data {
        try privateKey.signature(for: data)
    }

    /// Loads the key at `url`, or creates it when the file does not exist.
    ///
    /// Creating: makes the parent folder (mode 0700 when it is new), writes the raw 32-byte key to
    /// a temporary file opened with mode 0600, fsyncs it, moves it into place without ever
    /// replacing an existing file (`link` + `unlink`, so two processes starting at once end up
    /// with the same key), and fsyncs the folder. Loading: the file must be a regular file (a
    /// symlink to one is followed) of exactly 32 bytes; its mode is tightened to 0600.
    public static func loadOrCreate(at url: URL) throws -> SigningKey {
        let path = url.path
        if FileManager.default.fileExists(atPath: path) {
            return try load(at: url)
        }
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw SigningKeyError.cannotCreateFolder(path: folder.path, reason: "\(error)")
        }

        let key = Curve25519.Signing.PrivateKey()
        let temporaryPath = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SigningKeyError.io(path: temporaryPath, operation: "create", errno: errno) }
        var removeTemporary = true
        defer { if removeTemporary { unlink(temporaryPath) } }
        do {
            defer { close(descriptor) }
            _ = fchmod(descriptor, 0o600)  // in case of an unusual umask or ACL default
            try FileIO.writeAll(key.rawRepresentation, to: descriptor, path: temporaryPath)
            guard fsync(descriptor) == 0 else {
                throw SigningKeyError.io(path: temporaryPath, operation: "fsync", errno: errno)
            }
        }
        if link(temporaryPath, path) != 0 {
            let code = errno
            if code == EEXIST {
                // Another process created the key meanwhile: use that one.
                return try load(at: url)
            }
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EXDEV else {
                throw SigningKeyError.io(path: path, operation: "link", errno: code)
            }
            // A file system without hard links: fall back to rename.
            guard rename(temporaryPath, path) == 0 else {
                throw SigningKeyError.io(path: path, operation: "rename", errno: errno)
            }
            removeTemporary = false
        }
        FileIO.fsyncFolder(folder.path)
        return SigningKey(privateKey: key)
    }

    /// Loads an existing key file (see ``loadOrCreate(at:)`` for the checks).
    public static func load(at url: URL) throws -> SigningKey {
        let path = url.path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SigningKeyError.io(path: path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SigningKeyError.io(path: path, operation: "stat", errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw SigningKeyError.notARegularFile(path: path) }
        guard info.st_size == 32 else { throw SigningKeyError.invalidKeyFile(path: path, size: Int64(info.st_size)) }
        let mode = UInt16(info.st_mode & 0o7777)
        if mode != 0o600 {
            if fchmod(descriptor, 0o600) != 0 && (mode & 0o077) != 0 {
                throw SigningKeyError.insecurePermissions(path: path, mode: mode)
            }
        }
        let bytes = try FileIO.readUpTo(33, from: descriptor, path: path)
        guard bytes.count == 32 else { throw SigningKeyError.invalidKeyFile(path: path, size: Int64(bytes.count)) }
        return try SigningKey(rawRepresentation: bytes)
    }
}

/// Ed25519 signature checks against a base64 public key (the form the API publishes).
public enum SignatureCheck: Sendable {
    /// True when `signature` is a valid Ed25519 signature of `data` for the raw 32-byte public
    /// key in `publicKeyBase64`; false for any malformed key or signature.
    public static func verify(signature: Data, of data: Data, publicKeyBase64: String) -> Bool {
        guard let key = publicKey(fromBase64: publicKeyBase64), signature.count == 64 else { return false }
        return key.isValidSignature(signature, for: data)
    }

    /// The public key, or `nil` when `base64` is not a base64 encoded 32-byte Ed25519 key.
    public static func publicKey(fromBase64 base64: String) -> Curve25519.Signing.PublicKey? {
        let trimmed = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: trimmed), raw.count == 32 else { return nil }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
    }
}

/// A private key never prints: only its public half shows in a log line, an error or a `dump`.
extension SigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SigningKey(publicKey: \(publicKeyBase64), privateKey: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKeyBase64, "privateKey": "<redacted>"], displayStyle: .struct) }
}
