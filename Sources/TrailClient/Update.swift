import Foundation
import PackageFormat

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why an update was refused. The installed version is complete and usable after each of them.
public enum UpdateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The catalog does not list the package (unpublished, or an unknown id).
    case notInCatalog(String)
    /// The installed folder holds no readable `manifest.json`.
    case notInstalled(String)
    case missingSignature
    case invalidSignature
    /// The signed manifest is not the package or the version the catalog names.
    case wrongManifest(String)
    /// A path that could write outside the folder, or two that clash by case.
    case unsafePath(String)
    /// A file's bytes do not match the manifest (size or SHA-256).
    case fileMismatch(path: String, reason: String)
    case fileSystem(String)

    public var description: String {
        switch self {
        case let .notInCatalog(id): return "the catalog does not list package \(id)"
        case let .notInstalled(reason): return "the installed package cannot be read: \(reason)"
        case .missingSignature: return "the manifest came without a Manifest-Signature header"
        case .invalidSignature: return "the manifest's signature does not verify with the pinned key"
        case let .wrongManifest(reason): return "the manifest is not the one the catalog names: \(reason)"
        case let .unsafePath(path): return "the manifest names an unsafe path: \(path)"
        case let .fileMismatch(path, reason): return "\(path) does not match the manifest: \(reason)"
        case let .fileSystem(reason): return "file system: \(reason)"
        }
    }
}

/// What an update did.
public struct UpdateResult: Sendable, Equatable {
    public var fromVersion: Int
    public var toVersion: Int
    /// Bytes fetched from `/files/{sha256}` by this call (the manifest not included).
    public var downloadedBytes: Int64
    /// Files taken from the installed version (same SHA-256).
    public var reusedFiles: Int
    public var fetchedFiles: Int
    /// The size of a full download of the new version, for "4.2 MB of 611 MB".
    public var fullSize: Int64
}

/// Progress of an update: bytes fetched so far against all the bytes the new version's files need fetching.
public struct UpdateProgress: Sendable, Equatable {
    public enum Stage: Sendable, Equatable {
        /// Files are being copied from the installed version or fetched.
        case downloading
        /// Everything is fetched and checked; the manifest is written and the folders are swapped (reported once).
        case installing
    }

    public var downloadedBytes: Int64
    public var bytesToDownload: Int64
    public var stage: Stage = .downloading

    public init(downloadedBytes: Int64, bytesToDownload: Int64, stage: Stage = .downloading) {
        self.downloadedBytes = downloadedBytes
        self.bytesToDownload = bytesToDownload
        self.stage = stage
    }
}

extension TrailClient {
    public typealias UpdateProgressHandler = @Sendable (UpdateProgress) -> Void

    /// Brings the package installed (extracted) at `folder` to the version the signed catalog names, fetching only the
    /// files whose SHA-256 the installed version does not have (the docs' "Delta updates" flow):
    /// 1. the catalog, verified with `pinnedPublicKey`; nothing to do when it names the installed version;
    /// 2. that version's manifest, whose `Manifest-Signature` must verify over the exact bytes, and whose `packageId`
    ///    and `version` must be the catalog's; every path is checked before anything is written;
    /// 3. a new folder beside the installed one (`.<name>.update-v<n>`), kept between calls: files already there and
    ///    right are kept, others are copied from the installed version by hash or fetched from `/files/{sha256}`
    ///    (resumed where a cut left them), each checked for size and SHA-256;
    /// 4. `manifest.json` and `manifest.sig`, everything fsynced, then the folders swapped by renames.
    /// Any failure, a cancel or a crash leaves the installed folder as it was; calling again continues. A rollback on
    /// the server (a lower version in a newer catalog) is followed the same way.
    ///
    /// With `catalogVersions`, a catalog older than the newest verified before is refused
    /// (``CatalogError/olderThanLastSeen(received:lastSeen:)``) before anything is fetched: a replayed old catalog
    /// cannot take the package back to a withdrawn version. Apps pass a store in their own state folder.
    public func update(
        packageId: String,
        installedAt folder: URL,
        pinnedPublicKey: String,
        catalogVersions: CatalogVersionStore? = nil,
        progress: UpdateProgressHandler? = nil
    ) async throws -> UpdateResult {
        let fileManager = FileManager.default
        let parent = folder.deletingLastPathComponent()
        let retired = parent.appendingPathComponent(".\(folder.lastPathComponent).retired")
        // A crash between the two renames of a swap: the new version is complete in `retired`'s place or not at all.
        if !fileManager.fileExists(atPath: folder.path), fileManager.fileExists(atPath: retired.path) {
            try Self.rename(retired, to: folder)
        }
        let installed: Manifest
        do {
            installed = try Manifest.decode(Data(contentsOf: folder.appendingPathComponent(PackageLayout.manifestPath)))
        } catch {
            throw UpdateError.notInstalled("\(error)")
        }
        let catalog = try await catalog(pinnedPublicKey: pinnedPublicKey, store: catalogVersions).catalog
        guard let entry = catalog.packages.first(where: { $0.id == packageId }) else { throw UpdateError.notInCatalog(packageId) }
        if entry.version == installed.version {
            return UpdateResult(
                fromVersion: installed.version,
                toVersion: installed.version,
                downloadedBytes: 0,
                reusedFiles: 0,
                fetchedFiles: 0,
                fullSize: entry.size
            )
        }

        // 2. The signed manifest.
        var request = URLRequest(url: apiURL("packages/\(Self.escape(packageId))/versions/\(entry.version)/manifest"))
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (manifestBytes, response) = try await send(request)
        guard let signatureText = response.value(forHTTPHeaderField: "Manifest-Signature"), let signature = Data(base64Encoded: signatureText) else {
            throw UpdateError.missingSignature
        }
        guard SignatureCheck.verify(signature: signature, of: manifestBytes, publicKeyBase64: pinnedPublicKey) else {
            throw UpdateError.invalidSignature
        }
        let manifest: Manifest
        do { manifest = try Manifest.decode(manifestBytes) } catch { throw UpdateError.wrongManifest("it cannot be read: \(error)") }
        guard manifest.packageId == packageId else { throw UpdateError.wrongManifest("it is package \(manifest.packageId)") }
        guard manifest.version == entry.version else {
            throw UpdateError.wrongManifest("it is version \(manifest.version), the catalog names \(entry.version)")
        }
        let files = manifest.listedFiles
        var seen = Set<String>()
        for file in files {
            let reserved = [PackageLayout.manifestPath, PackageLayout.signaturePath]
            guard PackageLayout.isSafeEntryPath(file.path), !reserved.contains(file.path), file.size != nil,
                seen.insert(file.path.lowercased()).inserted
            else { throw UpdateError.unsafePath(file.path) }
        }

        // 3. The new folder, beside the installed one. One left by an update to another version (the catalog moved on
        //    since, or rolled back) is of no use any more: removed, so a phone never collects them.
        let stagingName = ".\(folder.lastPathComponent).update-v\(manifest.version)"
        let staging = parent.appendingPathComponent(stagingName)
        let stalePrefix = ".\(folder.lastPathComponent).update-v"
        for name in (try? fileManager.contentsOfDirectory(atPath: parent.path)) ?? []
        where name.hasPrefix(stalePrefix) && name != stagingName && Int(name.dropFirst(stalePrefix.count)) != nil {
            try? fileManager.removeItem(at: parent.appendingPathComponent(name))
        }
        do { try fileManager.createDirectory(at: staging, withIntermediateDirectories: true) } catch {
            throw UpdateError.fileSystem("cannot create \(staging.path): \(error)")
        }
        var local: [String: URL] = [:]
        for file in installed.listedFiles { local[file.sha256] = folder.appendingPathComponent(file.path) }
        let toFetch = files.filter { local[$0.sha256] == nil }
        let bytesToDownload = Dictionary(toFetch.map { ($0.sha256, $0.size ?? 0) }, uniquingKeysWith: { first, _ in first }).values.reduce(0, +)
        var result = UpdateResult(
            fromVersion: installed.version,
            toVersion: manifest.version,
            downloadedBytes: 0,
            reusedFiles: 0,
            fetchedFiles: 0,
            fullSize: entry.size
        )
        var done: Int64 = 0
        for file in files {
            let size = file.size ?? 0
            let target = staging.appendingPathComponent(file.path)
            if Self.matches(target, size: size, sha256: file.sha256) { continue }
            if let source = local[file.sha256], Self.matches(source, size: size, sha256: file.sha256) {
                // A hard link is the checked file itself; a copy is checked again (the source could change meanwhile).
                let linked = try Self.copy(source, to: target)
                guard linked || Self.matches(target, size: size, sha256: file.sha256) else {
                    throw UpdateError.fileMismatch(path: file.path, reason: "the local copy changed while it was copied")
                }
                result.reusedFiles += 1
                continue
            }
            let base = done
            let downloaded: DownloadResult
            do {
                downloaded = try await download(
                    from: apiURL("files/\(file.sha256)"),
                    to: target,
                    expectedSize: size,
                    expectedSHA256: file.sha256,
                    etag: "\"\(file.sha256)\""
                ) { step in
                    progress?(UpdateProgress(downloadedBytes: base + step.receivedBytes, bytesToDownload: bytesToDownload))
                }
            } catch DownloadError.checksumMismatch(_, let actual) {
                throw UpdateError.fileMismatch(path: file.path, reason: "its SHA-256 is \(actual)")
            } catch DownloadError.tooManyBytes {
                throw UpdateError.fileMismatch(path: file.path, reason: "the server sent more than \(size) bytes")
            }
            result.downloadedBytes += downloaded.size - downloaded.resumedFrom
            result.fetchedFiles += 1
            done += size
            progress?(UpdateProgress(downloadedBytes: done, bytesToDownload: bytesToDownload))
        }
        // Nothing but the manifest's files (a `.resume` record of a finished download is gone already).
        let expected = Set(files.map(\.path))
        if let walker = fileManager.enumerator(at: staging, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                let relative = String(url.path.dropFirst(staging.path.count + 1))
                if !expected.contains(relative) { try? fileManager.removeItem(at: url) }
            }
        }

        // 4. The manifest and its signature, fsync, swap. A cancel that came with the last bytes stops here, with
        //    everything fetched kept for the next call and the installed version untouched.
        progress?(UpdateProgress(downloadedBytes: done, bytesToDownload: bytesToDownload, stage: .installing))
        try Task.checkCancellation()
        do {
            try manifestBytes.write(to: staging.appendingPathComponent(PackageLayout.manifestPath))
            try signature.write(to: staging.appendingPathComponent(PackageLayout.signaturePath))
        } catch {
            throw UpdateError.fileSystem("cannot write the manifest: \(error)")
        }
        try Self.fsyncTree(staging)
        try? fileManager.removeItem(at: retired)
        try Self.rename(folder, to: retired)
        try Self.rename(staging, to: folder)
        Self.fsyncFolder(parent)
        try? fileManager.removeItem(at: retired)
        return result
    }

    /// The file exists with this size and SHA-256.
    static func matches(_ url: URL, size: Int64, sha256: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            (attributes[.size] as? NSNumber)?.int64Value == size,
            let hashed = try? PackageHashing.sha256(ofFileAt: url)
        else { return false }
        return hashed.0 == sha256
    }

    /// A hard link when the folders share a file system (true), else a copy (false).
    static func copy(_ source: URL, to target: URL) throws -> Bool {
        let fileManager = FileManager.default
        do {
            try fileManager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? fileManager.removeItem(at: target)
            if link(source.path, target.path) == 0 { return true }
            try fileManager.copyItem(at: source, to: target)
            return false
        } catch {
            throw UpdateError.fileSystem("cannot copy \(source.lastPathComponent): \(error)")
        }
    }

    static func rename(_ source: URL, to target: URL) throws {
        guard Foundation.rename(source.path, target.path) == 0 else {
            throw UpdateError.fileSystem("cannot rename \(source.lastPathComponent) to \(target.lastPathComponent) (errno \(errno))")
        }
    }

    static func fsyncTree(_ folder: URL) throws {
        do { try DurableFile.fsyncTree(folder) } catch { throw UpdateError.fileSystem("cannot sync \(folder.path): \(error)") }
    }

    static func fsyncFolder(_ folder: URL) {
        try? DurableFile.fsyncFolder(folder)
    }
}
