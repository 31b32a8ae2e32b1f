import Foundation
import PackageFormat

/// The highest `catalogVersion` a client has verified, per signing key, kept in files of the client's state folder so
/// that it outlives the process: a catalog older than it is refused (``CatalogError/olderThanLastSeen(received:lastSeen:)``).
///
/// Without it, whoever can answer for the server (a captive portal, a proxy, a copy of an old response) could replay
/// an older catalog, still validly signed and not yet expired, and steer an update back to a withdrawn version. A
/// rollback or an unpublish on the server comes as a *newer* catalog (every change raises `catalogVersion`), so it is
/// still followed. Kept per pinned key, the signer of the catalogs, so a mirror at another address (the bucket, a CDN)
/// cannot be used for the replay either.
public struct CatalogVersionStore: Sendable {
    public let folder: URL

    public init(folder: URL) { self.folder = folder }

    /// `$XDG_STATE_HOME/trail-companion/catalogs`, else `~/.local/state/trail-companion/catalogs`.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return state.appendingPathComponent("trail-companion/catalogs")
    }

    func file(publicKey: String) -> URL {
        folder.appendingPathComponent(PackageHashing.sha256Hex(Data(publicKey.trimmingCharacters(in: .whitespacesAndNewlines).utf8)))
    }

    /// The highest version recorded for catalogs signed with `publicKey`; nil before the first.
    public func highest(publicKey: String) -> Int? {
        guard let text = try? String(contentsOf: file(publicKey: publicKey), encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Records `version` unless a higher one is recorded (``DurableFile/write(_:to:mode:)``).
    public func record(_ version: Int, publicKey: String) throws {
        if let highest = highest(publicKey: publicKey), highest >= version { return }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try DurableFile.write(Data("\(version)\n".utf8), to: file(publicKey: publicKey), mode: 0o600)
        } catch {
            throw UpdateError.fileSystem("cannot record catalog version \(version) in \(folder.path): \(error)")
        }
    }
}

extension TrailClient {
    /// ``catalog(pinnedPublicKey:lastSeenVersion:now:)`` with the last seen version from `store`, which then records
    /// the verified catalog's version. Without a store, only the signature and the expiry are checked.
    public func catalog(pinnedPublicKey: String, store: CatalogVersionStore?, now: Date = Date()) async throws -> VerifiedCatalog {
        let verified = try await catalog(pinnedPublicKey: pinnedPublicKey, lastSeenVersion: store?.highest(publicKey: pinnedPublicKey), now: now)
        try store?.record(verified.catalog.catalogVersion, publicKey: pinnedPublicKey)
        return verified
    }
}
