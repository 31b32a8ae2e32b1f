import Foundation
import PackageFormat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Extracts a package zip without trusting it.
///
/// Before anything is written, every entry is checked: its path must be safe
/// (``PackageLayout/isSafeEntryPath(_:)``: not absolute, no `..` or `.` component, no `\`, no
/// drive letter, no control characters), it must not be a symbolic link, a directory entry or
/// encrypted, no two entries may land on the same file (also on a case-insensitive file system),
/// every entry but `manifest.json` and `manifest.sig` must be listed in the manifest, and the
/// zip's directory must give the listed size.
///
/// While writing, each entry is capped at its listed size and the whole package at the manifest's
/// total (the sum of the listed sizes, plus the manifest and its signature): a deflate stream that
/// expands further is cut off. Files are created with `O_EXCL | O_NOFOLLOW` below a folder that
/// was empty, and each is checked against its CRC-32 and its listed SHA-256. On any failure
/// everything written is removed.
public enum SafeExtractor {
    public struct Result: Sendable, Equatable {
        public var folder: URL
        public var manifest: Manifest
        /// Files written, relative to `folder`.
        public var files: [String]
        public var bytesWritten: Int64
    }

    /// Largest `manifest.sig` accepted (an Ed25519 signature is 64 bytes).
    static let maxSignatureSize: Int64 = 64

    public static func extract(zip: URL, to folder: URL) throws -> Result {
        let reader: PackageArchiveReader
        do {
            reader = try PackageArchiveReader(url: zip)
        } catch {
            throw ExtractionError.cannotOpen("\(error)")
        }

        // 1. Every entry, before anything is written.
        var byPath: [String: ZipEntryInfo] = [:]
        var folded: [String: String] = [:]
        for entry in reader.entries {
            guard PackageLayout.isSafeEntryPath(entry.path) else { throw ExtractionError.unsafePath(entry.path) }
            if entry.isSymbolicLink { throw ExtractionError.symbolicLink(entry.path) }
            if entry.isDirectory { throw ExtractionError.directoryEntry(entry.path) }
            if entry.isEncrypted { throw ExtractionError.encryptedEntry(entry.path) }
            guard byPath[entry.path] == nil else { throw ExtractionError.duplicatePath(entry.path) }
            let key = entry.path.lowercased()
            if let other = folded[key] { throw ExtractionError.conflictingPaths(other, entry.path) }
            byPath[entry.path] = entry
            folded[key] = entry.path
        }
        // A file may not also be a folder of another entry ("a" and "a/b").
        for path in byPath.keys {
            var prefix = ""
            for component in path.split(separator: "/").dropLast() {
                prefix += prefix.isEmpty ? String(component) : "/\(component)"
                if let file = folded[prefix.lowercased()] { throw ExtractionError.conflictingPaths(file, path) }
            }
        }

        // 2. The manifest decides what may be written, and how much.
        guard let manifestEntry = byPath[PackageLayout.manifestPath] else { throw ExtractionError.missingManifest }
        guard manifestEntry.uncompressedSize <= PackageVerifier.maxManifestSize else {
            throw ExtractionError.sizeLimitExceeded(path: manifestEntry.path, limit: Int64(PackageVerifier.maxManifestSize))
        }
        var manifestBytes = Data()
        do {
            let crc = try reader.read(manifestEntry, limit: min(manifestEntry.uncompressedSize, PackageVerifier.maxManifestSize)) {
                manifestBytes.append($0)
            }
            guard crc == manifestEntry.crc32, UInt64(manifestBytes.count) == manifestEntry.uncompressedSize else {
                throw ExtractionError.corruptEntry(path: manifestEntry.path, reason: "CRC-32 or size does not match the zip's directory")
            }
        } catch let error as ExtractionError {
            throw error
        } catch {
            throw ExtractionError.corruptEntry(path: manifestEntry.path, reason: "\(error)")
        }
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(manifestBytes)
        } catch {
            throw ExtractionError.invalidManifest("\(error)")
        }
        var listed: [String: Manifest.ListedFile] = [:]
        for file in manifest.listedFiles {
            guard PackageLayout.isSafeEntryPath(file.path) else { throw ExtractionError.invalidManifest("unsafe path \(file.path.debugDescription)") }
            guard let size = file.size, size >= 0 else { throw ExtractionError.invalidManifest("\(file.path) is listed without a size") }
            guard listed[file.path] == nil else { throw ExtractionError.invalidManifest("\(file.path) is listed twice") }
            listed[file.path] = file
        }
        for path in listed.keys where byPath[path] == nil { throw ExtractionError.missingEntry(path) }
        var limits: [String: Int64] = [:]
        var total = Int64(manifestBytes.count)
        for entry in reader.entries where entry.path != PackageLayout.manifestPath {
            if entry.path == PackageLayout.signaturePath {
                limits[entry.path] = maxSignatureSize
                total += maxSignatureSize
                continue
            }
            guard let file = listed[entry.path], let size = file.size else { throw ExtractionError.unlistedEntry(entry.path) }
            guard entry.uncompressedSize == UInt64(size) else {
                throw ExtractionError.sizeMismatch(path: entry.path, listed: size, inZip: entry.uncompressedSize)
            }
            limits[entry.path] = size
            let (sum, overflow) = total.addingReportingOverflow(size)
            guard !overflow else { throw ExtractionError.invalidManifest("the listed sizes overflow") }
            total = sum
        }

        // 3. Write, below a folder that is empty.
        let fileManager = FileManager.default
        var createdFolder = false
        var isFolder: ObjCBool = false
        if fileManager.fileExists(atPath: folder.path, isDirectory: &isFolder) {
            guard isFolder.boolValue, (try? fileManager.contentsOfDirectory(atPath: folder.path))?.isEmpty == true else {
                throw ExtractionError.destinationNotEmpty(folder.path)
            }
        } else {
            do {
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw ExtractionError.fileSystem("cannot create \(folder.path): \(error.localizedDescription)")
            }
            createdFolder = true
        }
        let root = folder.standardizedFileURL.path
        func removeWritten() {
            if createdFolder {
                try? fileManager.removeItem(atPath: root)
            } else {
                for item in (try? fileManager.contentsOfDirectory(atPath: root)) ?? [] {
                    try? fileManager.removeItem(atPath: root + "/" + item)
                }
            }
        }

        var written: [String] = []
        var budget = total
        do {
            for entry in reader.entries {
                let limit = min(entry.path == PackageLayout.manifestPath ? Int64(manifestBytes.count) : limits[entry.path] ?? 0, budget)
                let components = entry.path.split(separator: "/").map(String.init)
                var parent = root
                for component in components.dropLast() {
                    parent += "/" + component
                    if mkdir(parent, 0o755) != 0 && errno != EEXIST {
                        throw ExtractionError.fileSystem("mkdir \(parent): \(String(cString: strerror(errno)))")
                    }
                    var info = stat()
                    guard lstat(parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                        throw ExtractionError.fileSystem("\(parent) is not a folder")
                    }
                }
                let path = parent + "/" + components[components.count - 1]
                // Belt and braces: the joined path must stay below the root.
                guard URL(fileURLWithPath: path).standardizedFileURL.path.hasPrefix(root + "/") else {
                    throw ExtractionError.unsafePath(entry.path)
                }
                let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else { throw ExtractionError.fileSystem("create \(path): \(String(cString: strerror(errno)))") }
                written.append(entry.path)
                var count: Int64 = 0
                let crc: UInt32
                do {
                    defer { close(descriptor) }
                    crc = try reader.read(entry, limit: UInt64(max(0, limit))) { chunk in
                        guard count + Int64(chunk.count) <= limit else {
                            throw ExtractionError.sizeLimitExceeded(path: entry.path, limit: limit)
                        }
                        do { try DurableFile.writeAll(chunk, to: descriptor, path: path) } catch { throw ExtractionError.fileSystem("\(error)") }
                        count += Int64(chunk.count)
                    }
                    do { try DurableFile.fsync(descriptor: descriptor, path: path) } catch { throw ExtractionError.fileSystem("\(error)") }
                } catch let error as ExtractionError {
                    throw error
                } catch ZipReadError.tooLarge {
                    throw ExtractionError.sizeLimitExceeded(path: entry.path, limit: limit)
                } catch {
                    throw ExtractionError.corruptEntry(path: entry.path, reason: "\(error)")
                }
                budget -= count
                guard UInt64(count) == entry.uncompressedSize, crc == entry.crc32 else {
                    throw ExtractionError.corruptEntry(
                        path: entry.path,
                        reason: "expanded to \(count) bytes with a different CRC-32 than the zip's directory says"
                    )
                }
                if let file = listed[entry.path] {
                    let hashed = try? PackageHashing.sha256(ofFileAt: URL(fileURLWithPath: path))
                    guard hashed?.sha256 == file.sha256 else { throw ExtractionError.checksumMismatch(path: entry.path) }
                }
            }
        } catch {
            removeWritten()
            throw error
        }
        let bytes = total - budget
        return Result(folder: folder, manifest: manifest, files: written, bytesWritten: bytes)
    }
}
