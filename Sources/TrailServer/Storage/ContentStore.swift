import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PackageFormat

/// The files of the served package versions, by SHA-256, for delta updates (`GET /api/v1/files/{sha256}`).
///
/// Which hashes are served is decided by the database alone: every file the manifest of a visible package's current
/// version lists (media, `waypoints.geojson`, `tiles/map.mbtiles`). The index is rebuilt when the catalog version
/// changes (a release, an unpublish or a rollback), so a file of an unpublished version is never served.
///
/// Where the bytes come from, without a copy per version: media are the content-addressed `assets/<sha256>` files
/// the package was built from. Files that exist only inside a zip (the GeoJSON, the MBTiles, or media whose asset was
/// deleted since) are taken out of the released zip once into `files/<sha256>` (streamed, hashed, fsynced, renamed
/// into place), and removed again when no served version lists them.
final class ContentStore: Sendable {
    /// One served file: where a copy of it can be found.
    struct Entry: Sendable, Equatable {
        let packageId: String
        let version: Int
        let path: String
        let size: Int64
        let zip: URL
    }

    struct Index: Sendable {
        let catalogVersion: Int
        let entries: [String: Entry]
    }

    let database: AppDatabase
    let paths: DataPaths
    let logger: Logger
    private let cached = NIOLockedValueBox<Index?>(nil)

    init(database: AppDatabase, paths: DataPaths, logger: Logger = Logger(label: "trail.files")) {
        self.database = database
        self.paths = paths
        self.logger = logger
    }

    /// `files/<sha256>`.
    func storedFile(_ sha256: String) -> URL { paths.files.appendingPathComponent(sha256) }

    /// A SHA-256 as the routes accept it: 64 lower-case hex digits, nothing else (no path can be formed from it).
    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The served files by hash, for the current catalog version.
    func index() async throws -> Index {
        let version = try await database.catalogVersion()
        if let index = cached.withLockedValue({ $0 }), index.catalogVersion == version { return index }
        var entries: [String: Entry] = [:]
        for published in try await database.publishedPackages() {
            // One damaged manifest must not stop the files of every other package: it is logged and left out.
            guard let manifest = try? published.version.decodedManifest() else {
                logger.error("the manifest of \(published.package.id) version \(published.version.version) cannot be read; its files are not served")
                continue
            }
            let zip = paths.absolute(published.version.storedPath)
            for file in manifest.listedFiles where Self.isHash(file.sha256) {
                guard let size = file.size else { continue }
                entries[file.sha256] = Entry(
                    packageId: published.package.id,
                    version: published.version.version,
                    path: file.path,
                    size: size,
                    zip: zip
                )
            }
        }
        let index = Index(catalogVersion: version, entries: entries)
        let previous = cached.withLockedValue { cached -> Index? in
            defer { cached = index }
            return cached
        }
        // A release, unpublish or rollback: copies that no served version lists any more go.
        if previous != nil { Task.detached { [self] in _ = try? await prune() } }
        return index
    }

    /// The file with this hash, if a served version lists it; taken out of its zip first when no copy is on disk.
    /// Nil when no served version lists the hash.
    func file(sha256: String) async throws -> URL? {
        guard Self.isHash(sha256), let entry = try await index().entries[sha256] else { return nil }
        let asset = paths.assets.appendingPathComponent(sha256)
        if Self.size(of: asset) == entry.size { return asset }
        let stored = storedFile(sha256)
        if Self.size(of: stored) == entry.size { return stored }
        try await BlockingWork.files { try Self.extract(entry, sha256: sha256, to: stored) }
        return stored
    }

    static func size(of url: URL) -> Int64? {
        var info = stat()
        guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func extract(_ entry: Entry, sha256: String, to target: URL) throws {
        try ZipEntryExport.write(
            zip: entry.zip,
            path: entry.path,
            size: entry.size,
            sha256: sha256,
            to: target,
            mismatch: "\(entry.path) of \(entry.packageId) version \(entry.version) does not match its manifest."
        )
    }

    /// Removes `files/<sha256>` copies that no served version lists any more (after an unpublish or a rollback) and
    /// temporary files left by a crash. Returns how many files were removed.
    @discardableResult
    func prune() async throws -> Int {
        let served = try await index().entries
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: paths.files.path)) ?? [] where served[name] == nil {
            let url = paths.files.appendingPathComponent(name)
            // A temporary file may belong to an extraction under way: only one an hour old is left over from a crash.
            if name.hasPrefix("."), let modified = try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate,
                modified.timeIntervalSinceNow > -3600
            {
                continue
            }
            if unlink(url.path) == 0 { removed += 1 }
        }
        return removed
    }
}

extension DataPaths {
    /// `files/<sha256>`: served package files that are not assets (see `ContentStore`).
    var files: URL { root.appendingPathComponent("files") }
}

/// One entry of a package's zip written out as a file of its own: streamed (never whole in memory) to a temporary
/// name beside `target`, checked against the manifest's size and SHA-256, fsynced and renamed into place, so a file
/// at `target` is always whole and right. Two callers doing this at once each write their own temporary file.
enum ZipEntryExport {
    static func write(zip: URL, path: String, size: Int64, sha256: String, to target: URL, mismatch: String) throws {
        guard FileManager.default.fileExists(atPath: zip.path) else { throw NotFound() }
        let archive = try PackageArchiveReader(url: zip)
        guard let zipEntry = archive.entry(named: path) else { throw NotFound() }
        let folder = target.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".\(sha256.prefix(16))-\(UUID().uuidString.prefix(8)).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw POSIXFailure(operation: "create \(temporary.lastPathComponent)", code: errno)
        }
        defer { unlink(temporary.path) }
        let handle = try FileHandle(forWritingTo: temporary)
        var hasher = SHA256()
        var written: Int64 = 0
        do {
            try archive.read(zipEntry, limit: UInt64(size)) { chunk in
                hasher.update(data: chunk)
                written += Int64(chunk.count)
                try handle.write(contentsOf: chunk)
            }
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard written == size, hasher.finalize().hexString == sha256 else { throw Conflict(mismatch) }
        guard rename(temporary.path, target.path) == 0 else { throw POSIXFailure(operation: "rename \(target.lastPathComponent)", code: errno) }
        try DurableFile.fsyncFolder(folder)
    }
}
