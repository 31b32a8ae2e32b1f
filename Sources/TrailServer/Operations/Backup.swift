import Crypto
import Foundation
import GRDB
import PackageFormat

/// `backup.json`: what a backup folder holds. The files themselves are stored once each under `files/<sha256>`, so a
/// file that several rows or versions share, or that an earlier backup into the same folder already holds, costs
/// nothing more.
struct BackupIndex: Codable, Sendable, Equatable {
    struct Entry: Codable, Sendable, Equatable {
        /// Relative to the data folder (`assets/<sha>`, `packages/<id>/<n>.zip`, …).
        var path: String
        var sha256: String
        var size: Int64
        /// The source file's modification time when it was copied: with the size, lets the next backup skip
        /// re-hashing a file the database gives no hash for (staged packages).
        var modified: Double
    }

    var formatVersion = 1
    var createdAt: Date
    /// The last migration applied to the copied database.
    var schemaVersion: String
    var fileCount: Int
    var totalBytes: Int64
    var files: [Entry]
}

/// What a backup run did.
package struct BackupReport: Sendable, Equatable {
    package var fileCount = 0
    package var totalBytes: Int64 = 0
    /// Files copied by this run (the rest were in the folder already).
    package var copiedFiles = 0
    package var copiedBytes: Int64 = 0
    /// Stored files no longer named by the index, removed.
    package var prunedFiles = 0
}

enum BackupError: Error, CustomStringConvertible, Equatable {
    case notABackup(String)
    case targetNotEmpty(String)
    case mismatch([String])
    case changedDuringBackup(String)
    case unsafeFile(String)

    var description: String {
        switch self {
        case let .notABackup(path): return "\(path) holds no backup (no readable backup.json and trail.sqlite)"
        case let .targetNotEmpty(path): return "\(path) is not empty: restore only into a new or empty folder, so nothing there is overwritten"
        case let .mismatch(problems): return problems.joined(separator: "\n")
        case let .changedDuringBackup(path): return "\(path) vanished while it was copied, three times in a row; run the backup again"
        case let .unsafeFile(problem): return problem
        }
    }
}

/// Online backup, verification and restore of a data folder (`trail-companion backup`, `backup verify`, `restore`).
///
/// The database is copied with SQLite's online backup API through GRDB, from a read transaction: in WAL mode readers
/// never block writers, so uploads and releases go on while it runs. The files copied are the ones the *copied*
/// database names (assets, quarantined files, released packages, tilesets, the staged packages of open review
/// requests), so the backup is consistent: a file added after the snapshot is in the next backup, and a row is never
/// without its file. A file removed between the snapshot and its copy (an asset deleted meanwhile) makes the run start
/// again, up to three times.
///
/// Not taken: tus uploads in progress (restore drops their rows; the apps start those uploads again), and what the
/// server derives again by itself (the tile cache, the content store of `/files`, review map previews).
package struct DataBackup: Sendable {
    let dataFolder: URL

    package init(dataFolder: URL) { self.dataFolder = dataFolder }

    static let indexName = "backup.json"
    static let databaseName = "trail.sqlite"

    // MARK: Backup

    package func run(database: AppDatabase, to folder: URL) async throws -> BackupReport {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await runOnce(database: database, to: folder)
            } catch let BackupError.changedDuringBackup(path) where attempt < 3 {
                _ = path
                continue
            }
        }
    }

    func runOnce(database: AppDatabase, to folder: URL) async throws -> BackupReport {
        let fileManager = FileManager.default
        let store = folder.appendingPathComponent("files")
        try fileManager.createDirectory(at: store, withIntermediateDirectories: true)
        try fileManager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
        let previous = (try? Self.readIndex(folder)).map { Dictionary($0.files.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a }) } ?? [:]

        // 1. The database, consistent, while the server writes.
        let partial = folder.appendingPathComponent("\(Self.databaseName).partial")
        try? fileManager.removeItem(at: partial)
        do {
            let copy = try DatabaseQueue(path: partial.path)
            try await database.backup(to: copy)
            try copy.close()
        }
        // The rest reads and copies files for seconds to minutes: on the blocking pool, not a cooperative thread.
        return try await BlockingWork.files { try self.copyFiles(named: partial, previous: previous, to: folder, store: store) }
    }

    /// Steps 2 to 4 of a backup, once the database copy (`partial`) is made.
    private func copyFiles(named partial: URL, previous: [String: BackupIndex.Entry], to folder: URL, store: URL) throws -> BackupReport {
        let fileManager = FileManager.default
        let snapshot = try DatabaseQueue(path: partial.path, configuration: Self.readOnly)
        let named = try Self.namedFiles(snapshot, dataFolder: dataFolder)
        let schema = try snapshot.read { try AppDatabase.latestMigration($0) } ?? ""
        try snapshot.close()

        // 2. Every file it names, once per content.
        var report = BackupReport()
        var entries: [BackupIndex.Entry] = []
        for file in named {
            let source = dataFolder.appendingPathComponent(file.path)
            guard let attributes = try? fileManager.attributesOfItem(atPath: source.path),
                let size = (attributes[.size] as? NSNumber)?.int64Value
            else {
                throw BackupError.changedDuringBackup(file.path)
            }
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            var sha256 = file.sha256
            if sha256 == nil, let earlier = previous[file.path], earlier.size == size, earlier.modified == modified {
                sha256 = earlier.sha256  // a staged package unchanged since the last backup
            }
            if let sha256, Self.holds(store, sha256: sha256, size: size) {
                entries.append(.init(path: file.path, sha256: sha256, size: size, modified: modified))
                continue
            }
            let copied = try Self.copyHashing(source, into: store)
            if let expected = file.sha256, copied.sha256 != expected {
                try? fileManager.removeItem(at: store.appendingPathComponent(copied.sha256))
                throw BackupError.mismatch([
                    "data/\(file.path) does not match its SHA-256 in the database (\(expected)); it is damaged, the backup stopped"
                ])
            }
            report.copiedFiles += 1
            report.copiedBytes += copied.size
            entries.append(.init(path: file.path, sha256: copied.sha256, size: copied.size, modified: modified))
        }

        // 3. The signing key (and whatever else keys/ holds), the database and the index, each by rename.
        let keys = folder.appendingPathComponent("keys")
        try fileManager.createDirectory(at: keys, withIntermediateDirectories: true)
        try fileManager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: keys.path)
        for name in try fileManager.contentsOfDirectory(atPath: dataFolder.appendingPathComponent("keys").path) {
            let data = try Data(contentsOf: dataFolder.appendingPathComponent("keys").appendingPathComponent(name))
            try DurableFile.write(data, to: keys.appendingPathComponent(name), mode: 0o600)
        }
        try DurableFile.fsync(partial)
        guard rename(partial.path, folder.appendingPathComponent(Self.databaseName).path) == 0 else {
            throw POSIXFailure(operation: "rename \(partial.path)", code: errno)
        }
        chmod(folder.appendingPathComponent(Self.databaseName).path, 0o600)
        report.fileCount = entries.count
        report.totalBytes = entries.reduce(0) { $0 + $1.size }
        let index = BackupIndex(createdAt: Date(), schemaVersion: schema, fileCount: entries.count, totalBytes: report.totalBytes, files: entries)
        try DurableFile.write(try Self.encoder.encode(index), to: folder.appendingPathComponent(Self.indexName), mode: 0o600)

        // 4. What no entry names any more (deleted assets, withdrawn versions) leaves the folder.
        let kept = Set(entries.map(\.sha256))
        for name in try fileManager.contentsOfDirectory(atPath: store.path) where !kept.contains(name) {
            try? fileManager.removeItem(at: store.appendingPathComponent(name))
            report.prunedFiles += 1
        }
        try DurableFile.fsyncFolder(store)
        try DurableFile.fsyncFolder(folder)
        return report
    }

    // MARK: Verify

    /// Re-hashes every stored file against the index, and checks that the index names every file the copied database
    /// names and that the database copy is intact. Returns the problems, each naming its file (empty: good).
    package static func verify(_ folder: URL) throws -> [String] {
        let index = try readIndex(folder)
        var problems: [String] = []
        let databaseURL = folder.appendingPathComponent(databaseName)
        guard FileManager.default.fileExists(atPath: databaseURL.path) else { throw BackupError.notABackup(folder.path) }
        try requireRegularFile(databaseURL)
        // `immutable=1`: SQLite neither takes locks nor creates `-shm`/`-wal` beside the copy, so checking a backup
        // never changes it (a read-only open of a WAL database would still write its shared-memory file).
        let database = try DatabaseQueue(path: immutableURI(databaseURL), configuration: readOnly)
        defer { try? database.close() }
        let integrity = try database.read { try AppDatabase.integrityCheck($0) }
        if integrity != ["ok"] { problems.append("\(databaseName): SQLite integrity check: \(integrity.joined(separator: "; "))") }
        let listed = Set(index.files.map(\.path))
        for file in try namedFiles(database, dataFolder: nil) where !listed.contains(file.path) {
            problems.append("\(file.path): named by the database but not in the backup")
        }
        if !FileManager.default.fileExists(atPath: folder.appendingPathComponent("keys/signing.ed25519").path) {
            problems.append("keys/signing.ed25519: missing (packages could not be signed with the same key)")
        }
        var checked: [String: String?] = [:]  // sha → problem, each stored file hashed once
        for entry in index.files {
            guard isSHA256Hex(entry.sha256) else {
                problems.append("\(entry.path): \(entry.sha256) is not a SHA-256 (64 lower-case hex digits)")
                continue
            }
            if checked[entry.sha256] == nil {
                let stored = folder.appendingPathComponent("files").appendingPathComponent(entry.sha256)
                let size = (try? FileManager.default.attributesOfItem(atPath: stored.path)[.size] as? NSNumber)?.int64Value
                if size == nil {
                    checked[entry.sha256] = .some("files/\(entry.sha256) is missing")
                } else if (try? requireRegularFile(stored)) == nil {
                    checked[entry.sha256] = .some("files/\(entry.sha256) is not a regular file")
                } else if size != entry.size {
                    checked[entry.sha256] = .some("files/\(entry.sha256) has \(size!) bytes, not \(entry.size)")
                } else if (try? hashRegularFile(stored)) != entry.sha256 {
                    checked[entry.sha256] = .some("files/\(entry.sha256) does not match its SHA-256 (damaged)")
                } else {
                    checked[entry.sha256] = .some(nil)
                }
            }
            if let problem = checked[entry.sha256] ?? nil { problems.append("\(entry.path): \(problem)") }
        }
        return problems
    }

    // MARK: Restore

    /// Restores a backup into `target`, which must not exist or be empty: the database, the keys and every file at its
    /// path, each checked against its SHA-256 as it is copied. Unfinished uploads are dropped (their bytes were not
    /// backed up). Returns the number of files written.
    ///
    /// A backup folder may come from anywhere (another machine, a shared disk), so nothing in it steers where bytes are
    /// read or written: every path and hash of the index is checked before the first file is written, each file is
    /// opened without following a symbolic link and must be a regular file, and a restore that fails removes what it
    /// wrote, so a half-restored folder is never mistaken for a data folder.
    @discardableResult
    package static func restore(from folder: URL, to target: URL) throws -> Int {
        let fileManager = FileManager.default
        var isFolder: ObjCBool = false
        let existed = fileManager.fileExists(atPath: target.path, isDirectory: &isFolder)
        if existed, !isFolder.boolValue { throw BackupError.targetNotEmpty(target.path) }
        if let existing = try? fileManager.contentsOfDirectory(atPath: target.path), !existing.isEmpty {
            throw BackupError.targetNotEmpty(target.path)
        }
        let index = try readIndex(folder)
        guard fileManager.fileExists(atPath: folder.appendingPathComponent(databaseName).path) else { throw BackupError.notABackup(folder.path) }
        var problems: [String] = []
        for entry in index.files {
            if !PathSafety.isSafeRelative(entry.path) { problems.append("\(entry.path): not a path inside the data folder") }
            if !isSHA256Hex(entry.sha256) { problems.append("\(entry.path): \(entry.sha256) is not a SHA-256 (64 lower-case hex digits)") }
        }
        guard problems.isEmpty else { throw BackupError.mismatch(problems) }
        do {
            try restoreChecked(index, from: folder, to: target)
        } catch {
            // Nothing half-written stays behind; a folder that was there empty is left empty.
            if existed {
                for name in (try? fileManager.contentsOfDirectory(atPath: target.path)) ?? [] {
                    try? fileManager.removeItem(at: target.appendingPathComponent(name))
                }
            } else {
                try? fileManager.removeItem(at: target)
            }
            throw error
        }
        return index.files.count
    }

    /// The writing half of ``restore(from:to:)``, once every path and hash of the index has been checked.
    static func restoreChecked(_ index: BackupIndex, from folder: URL, to target: URL) throws {
        let fileManager = FileManager.default
        try DataFolder.prepare(target)
        let store = folder.appendingPathComponent("files")
        var problems: [String] = []
        for entry in index.files {
            let destination = target.appendingPathComponent(entry.path)
            try fileManager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            let written = try copyHashing(store.appendingPathComponent(entry.sha256), to: destination)
            if written.sha256 != entry.sha256 || written.size != entry.size {
                problems.append("\(entry.path): files/\(entry.sha256) does not match its SHA-256 (damaged)")
            }
        }
        guard problems.isEmpty else { throw BackupError.mismatch(problems) }
        let keys = folder.appendingPathComponent("keys")
        if (try? fileManager.attributesOfItem(atPath: keys.path)[.type] as? FileAttributeType) == .typeSymbolicLink {
            throw BackupError.unsafeFile("keys: a symbolic link, not a folder; refusing to follow it")
        }
        for name in (try? fileManager.contentsOfDirectory(atPath: keys.path)) ?? [] {
            let data = try readRegularFile(keys.appendingPathComponent(name))
            try DurableFile.write(data, to: target.appendingPathComponent("keys").appendingPathComponent(name), mode: 0o600)
        }
        let databaseURL = target.appendingPathComponent(databaseName)
        _ = try copyHashing(folder.appendingPathComponent(databaseName), to: databaseURL)
        chmod(databaseURL.path, 0o600)
        let restored = try DatabaseQueue(path: databaseURL.path)
        try restored.write { try AppDatabase.forgetUploadsInProgress($0) }
        try restored.close()
        try DurableFile.fsync(databaseURL)
        try DurableFile.fsyncFolder(target)
    }

    // MARK: Helpers

    struct NamedFile {
        let path: String
        /// From the database, when it records one.
        let sha256: String?
    }

    static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    /// The files the database names: assets (uploaded, clean or quarantined), released packages, tilesets; with a data
    /// folder, also the files of the staged packages of open review requests (which the database names by request).
    static func namedFiles(_ database: DatabaseQueue, dataFolder: URL?) throws -> [NamedFile] {
        let (rows, open) = try database.read { try AppDatabase.namedDataFiles($0) }
        var files = rows.map { NamedFile(path: $0.path, sha256: $0.sha256) }
        if let dataFolder {
            for id in open {
                let staged = dataFolder.appendingPathComponent("staging").appendingPathComponent(id)
                guard let walker = FileManager.default.enumerator(at: staged, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
                for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                    files.append(NamedFile(path: "staging/\(id)/" + String(url.path.dropFirst(staged.path.count + 1)), sha256: nil))
                }
            }
        }
        var seen = Set<String>()
        return files.filter { seen.insert($0.path).inserted }
    }

    static func holds(_ store: URL, sha256: String, size: Int64) -> Bool {
        let stored = store.appendingPathComponent(sha256)
        return (try? FileManager.default.attributesOfItem(atPath: stored.path)[.size] as? NSNumber)?.int64Value == size
    }

    static func readIndex(_ folder: URL) throws -> BackupIndex {
        guard let data = try? readRegularFile(folder.appendingPathComponent(indexName)),
            let index = try? decoder.decode(BackupIndex.self, from: data)
        else { throw BackupError.notABackup(folder.path) }
        return index
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Copies `source` into the store under a temporary name while hashing it, then renames it to its SHA-256.
    static func copyHashing(_ source: URL, into store: URL) throws -> (sha256: String, size: Int64) {
        let temporary = store.appendingPathComponent(".partial-\(UUID().uuidString)")
        let copied: (sha256: String, size: Int64)
        do {
            copied = try copyHashing(source, to: temporary)
        } catch CocoaError.fileReadNoSuchFile, CocoaError.fileNoSuchFile {
            try? FileManager.default.removeItem(at: temporary)
            throw BackupError.changedDuringBackup(source.path)
        }
        let final = store.appendingPathComponent(copied.sha256)
        guard rename(temporary.path, final.path) == 0 else { throw POSIXFailure(operation: "rename \(temporary.path)", code: errno) }
        return copied
    }

    /// Copies in 1 MiB chunks, hashing as it goes, and fsyncs the copy.
    static func copyHashing(_ source: URL, to destination: URL) throws -> (sha256: String, size: Int64) {
        let input = try openRegularFile(source)
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw POSIXFailure(operation: "create \(destination.path)", code: errno)
        }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
            try output.write(contentsOf: chunk)
            size += Int64(chunk.count)
        }
        try output.synchronize()
        return (hasher.finalize().hexString, size)
    }

    /// True for exactly 64 lower-case hex digits: the only form a stored file's name takes, so a hash from an index
    /// can be joined to a folder without naming anything outside it.
    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Opens `url` for reading without following a symbolic link at its last component (`O_NOFOLLOW`), and only if
    /// it is a regular file: a link planted in a backup folder must not make a restore read a file elsewhere.
    static func openRegularFile(_ url: URL) throws -> FileHandle {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw BackupError.unsafeFile("\(url.path): a symbolic link; refusing to follow it") }
            if errno == ENOENT { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: url.path]) }
            throw POSIXFailure(operation: "open \(url.path)", code: errno)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw BackupError.unsafeFile("\(url.path): not a regular file")
        }
        // O_NONBLOCK only kept a FIFO from stalling the open; regular files read the same either way.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    static func requireRegularFile(_ url: URL) throws {
        try openRegularFile(url).close()
    }

    static func readRegularFile(_ url: URL) throws -> Data {
        let handle = try openRegularFile(url)
        defer { try? handle.close() }
        return try handle.readToEnd() ?? Data()
    }

    static func hashRegularFile(_ url: URL) throws -> String {
        let handle = try openRegularFile(url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().hexString
    }

    /// An SQLite URI that opens `url` read-only and immutable: no locks, no `-shm`, no `-wal`, nothing written.
    static func immutableURI(_ url: URL) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let path = url.standardizedFileURL.path.addingPercentEncoding(withAllowedCharacters: allowed) ?? url.path
        return "file:\(path)?mode=ro&immutable=1"
    }

}

/// Paths from a backup index, before they are joined to a data folder.
enum PathSafety {
    static func isSafeRelative(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.contains("\\") && !path.contains("\0")
            && !path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0 == "." || $0.isEmpty }
    }
}
