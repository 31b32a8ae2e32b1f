import Crypto
import Foundation
import ZIPFoundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A media file to put into a package: its entry path (as in the manifest), where its bytes are
/// on disk, and its MIME type (must match the manifest's).
public struct PackageEntrySource: Sendable, Equatable {
    public var path: String
    public var fileURL: URL
    public var mimeType: String

    public init(path: String, fileURL: URL, mimeType: String) {
        self.path = path
        self.fileURL = fileURL
        self.mimeType = mimeType
    }
}

/// What ``PackageBuilder/build(manifest:geoJSON:media:tilesFile:signingKey:to:progress:)`` made.
public struct BuiltPackage: Sendable, Equatable {
    /// Lowercase hex SHA-256 of the whole zip (the download's `ETag`).
    public var sha256: String
    /// Size of the zip in bytes.
    public var size: Int64
    /// The exact bytes of `manifest.json`.
    public var manifestBytes: Data
    /// `manifest.sig`: the raw 64-byte Ed25519 signature of `manifestBytes`.
    public var signature: Data
    /// The manifest as written (with `geoJSON` filled in).
    public var manifest: Manifest
    /// Entry paths in the order they were written.
    public var entryPaths: [String]
}

public enum PackageBuildError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidManifest([String])
    case unsafeEntryPath(String)
    case duplicateEntryPath(String)
    /// A media source whose path the manifest does not list.
    case mediaNotInManifest(String)
    /// An asset of the manifest without a media source.
    case missingMediaSource(String)
    case mimeTypeMismatch(path: String, manifest: String, source: String)
    case tilesMismatch(String)
    case geoJSONMismatch(String)
    case missingFile(path: String, file: String)
    case notARegularFile(path: String, file: String)
    case sizeMismatch(path: String, expected: Int64, actual: Int64)
    case checksumMismatch(path: String, expected: String, actual: String)
    case io(String)

    public var description: String {
        switch self {
        case let .invalidManifest(problems):
            return "invalid manifest: " + problems.joined(separator: "; ")
        case let .unsafeEntryPath(path): return "unsafe entry path \(path.debugDescription)"
        case let .duplicateEntryPath(path): return "entry path \(path.debugDescription) is used twice"
        case let .mediaNotInManifest(path): return "media file \(path.debugDescription) is not listed in the manifest"
        case let .missingMediaSource(path): return "the manifest lists \(path.debugDescription) but no file was given for it"
        case let .mimeTypeMismatch(path, manifest, source):
            return "\(path): the manifest says \(manifest) but the file was given as \(source)"
        case let .tilesMismatch(message): return "tiles: \(message)"
        case let .geoJSONMismatch(message): return "waypoints.geojson: \(message)"
        case let .missingFile(path, file): return "\(path): file \(file) does not exist"
        case let .notARegularFile(path, file): return "\(path): \(file) is not a regular file"
        case let .sizeMismatch(path, expected, actual):
            return "\(path): size is \(actual) bytes, the manifest says \(expected)"
        case let .checksumMismatch(path, expected, actual):
            return "\(path): SHA-256 is \(actual), the manifest says \(expected)"
        case let .io(message): return message
        }
    }
}

/// Writes content packages (see docs/package-format.md, "Content package format, version 1").
///
/// - Entries, in this order: `manifest.json` (deflated), `manifest.sig` (stored),
///   `waypoints.geojson` (deflated), the media sorted by the UTF-8 bytes of their paths (stored
///   or deflated by ``PackageLayout/shouldDeflate(mimeType:)``), `tiles/map.mbtiles` (deflated).
/// - Every entry has the modification time 2000-01-01 00:00:00 (DOS time, UTC), mode 0644 and
///   no directory entries, so the same inputs give byte-identical zips.
/// - ZIP64 is used by ZIPFoundation when an entry or offset needs it (4 GiB and more).
/// - Files are streamed from disk in 1 MiB chunks; the size and SHA-256 of every media file and
///   of the tiles are checked against the manifest while they are written.
/// - The zip is written to `<destination>.partial`, fsynced and renamed to `destination`; the
///   partial file is removed on any error. Its SHA-256 is computed by streaming the finished file.
/// - Building stops with `CancellationError` when the calling task is cancelled.
public struct PackageBuilder: Sendable {
    /// Read and write chunk size (1 MiB).
    public static let chunkSize = 1 << 20
    /// The fixed modification date of every entry: 2000-01-01T00:00:00Z.
    public static let fixedModificationDate = Date(timeIntervalSince1970: 946_684_800)
    public static let filePermissions: UInt16 = 0o644
    /// How often `progress` is called inside a large file.
    public static let progressInterval: Int64 = 32 << 20

    public typealias Progress = @Sendable (_ filesDone: Int, _ bytesDone: Int64) -> Void

    /// How the builder checks each input file against the manifest while it copies it.
    public enum InputCheck: Sendable {
        /// Size and SHA-256 (a mismatch throws ``PackageBuildError/checksumMismatch(path:expected:actual:)``).
        case sha256
        /// Size only: for a caller that verifies the finished zip with ``PackageVerifier`` anyway (the server's build
        /// service does), where hashing every input a second time would only cost a core. The guarantee that the
        /// package's bytes match its manifest then rests on that verification.
        case sizeOnly
    }

    /// Builds the package at `destination`.
    ///
    /// - Parameters:
    ///   - manifest: the manifest; every asset's `size` and `sha256` must be the real ones. When
    ///     `manifest.geoJSON` is `nil` it is filled in from `geoJSON`; when set it must match.
    ///   - geoJSON: the bytes of `waypoints.geojson` (see ``TourGeoJSON/make(manifest:)``).
    ///   - media: one source per asset of the manifest, no more, no less.
    ///   - tilesFile: the MBTiles file, given exactly when `manifest.tiles` is set.
    ///   - tilesIndex: the bytes of `tiles/index.json` (with tiles only); `manifest.tiles.index` is filled in from them
    ///     when `nil`, and must match them when set.
    ///   - progress: called after each entry and every 32 MiB within one, with the number of
    ///     entries written and the number of uncompressed bytes read so far.
    ///   - inputCheck: ``InputCheck/sha256`` unless the caller verifies the finished zip itself.
    @discardableResult
    public static func build(
        manifest: Manifest,
        geoJSON: Data,
        media: [PackageEntrySource],
        tilesFile: URL?,
        tilesIndex: Data? = nil,
        signingKey: SigningKey,
        to destination: URL,
        progress: Progress? = nil,
        inputCheck: InputCheck = .sha256
    ) throws -> BuiltPackage {
        try build(
            manifest: manifest,
            geoJSON: geoJSON,
            media: media,
            tilesFile: tilesFile,
            tilesIndex: tilesIndex,
            basemap: nil,
            signingKey: signingKey,
            to: destination,
            progress: progress,
            inputCheck: inputCheck
        )
    }

    /// The same, with the drawn map: `basemap` is the bytes of `map/basemap.geojson`, given exactly when
    /// `manifest.basemap` is set, whose size and SHA-256 must be the manifest's.
    @discardableResult
    public static func build(
        manifest: Manifest,
        geoJSON: Data,
        media: [PackageEntrySource],
        tilesFile: URL?,
        tilesIndex: Data? = nil,
        basemap: Data?,
        signingKey: SigningKey,
        to destination: URL,
        progress: Progress? = nil,
        inputCheck: InputCheck = .sha256
    ) throws -> BuiltPackage {
        switch (manifest.basemap, basemap) {
        case (nil, nil): break
        case (let listed?, let bytes?):
            guard listed.size == Int64(bytes.count), listed.sha256 == PackageHashing.sha256Hex(bytes) else {
                throw PackageBuildError.invalidManifest(["basemap: the manifest's size and SHA-256 do not match the map given"])
            }
        default:
            throw PackageBuildError.invalidManifest(["basemap: the manifest lists a drawn map exactly when one is given"])
        }
        var manifest = manifest
        let geoJSONReference = Manifest.FileReference(
            path: PackageLayout.geoJSONPath,
            size: Int64(geoJSON.count),
            sha256: PackageHashing.sha256Hex(geoJSON)
        )
        if let given = manifest.geoJSON {
            guard given == geoJSONReference else {
                throw PackageBuildError.geoJSONMismatch(
                    "the manifest lists \(given.size) bytes with SHA-256 \(given.sha256), the data has \(geoJSONReference.size) bytes with SHA-256 \(geoJSONReference.sha256)"
                )
            }
        } else {
            manifest.geoJSON = geoJSONReference
        }
        if let tilesIndex {
            guard manifest.tiles != nil else { throw PackageBuildError.tilesMismatch("a tile index was given but the manifest has no tiles") }
            let reference = Manifest.FileReference(
                path: PackageLayout.tilesIndexPath,
                size: Int64(tilesIndex.count),
                sha256: PackageHashing.sha256Hex(tilesIndex)
            )
            if let given = manifest.tiles?.index, given != reference {
                throw PackageBuildError.tilesMismatch("the manifest's tile index does not match the index given")
            }
            manifest.tiles?.index = reference
        } else if manifest.tiles?.index != nil {
            throw PackageBuildError.tilesMismatch("the manifest lists a tile index but none was given")
        }
        let problems = manifest.validate()
        guard problems.isEmpty else { throw PackageBuildError.invalidManifest(problems) }

        var plan = try makePlan(manifest: manifest, media: media, tilesFile: tilesFile)
        if let tilesIndex {
            plan.append(PlannedEntry(path: PackageLayout.tilesIndexPath, content: .data(tilesIndex), compression: .deflate))
        }
        if let basemap {
            plan.append(PlannedEntry(path: PackageLayout.basemapPath, content: .data(basemap), compression: .deflate))
        }
        let manifestBytes = try manifest.encoded()
        let signature = try signingKey.sign(manifestBytes)

        var entries: [PlannedEntry] = [
            PlannedEntry(path: PackageLayout.manifestPath, content: .data(manifestBytes), compression: .deflate),
            PlannedEntry(path: PackageLayout.signaturePath, content: .data(signature), compression: .none),
            PlannedEntry(path: PackageLayout.geoJSONPath, content: .data(geoJSON), compression: .deflate),
        ]
        entries += plan

        let partial = URL(fileURLWithPath: destination.path + ".partial")
        let folder = destination.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw PackageBuildError.io("cannot create \(folder.path): \(error)")
        }
        unlink(partial.path)
        do {
            let tracker = ProgressTracker(callback: progress)
            let (sha256, size) = try writeArchive(at: partial, entries: entries, tracker: tracker, inputCheck: inputCheck)
            guard rename(partial.path, destination.path) == 0 else {
                throw PackageBuildError.io("cannot rename \(partial.path) to \(destination.path): \(String(cString: strerror(errno)))")
            }
            FileIO.fsyncFolder(folder.path)
            return BuiltPackage(
                sha256: sha256,
                size: size,
                manifestBytes: manifestBytes,
                signature: signature,
                manifest: manifest,
                entryPaths: entries.map(\.path)
            )
        } catch {
            unlink(partial.path)
            throw error
        }
    }

    // MARK: Planning

    enum Content {
        case data(Data)
        case file(URL, size: Int64?, sha256: String)
    }

    struct PlannedEntry {
        var path: String
        var content: Content
        var compression: CompressionMethod
    }

    static func makePlan(manifest: Manifest, media: [PackageEntrySource], tilesFile: URL?) throws -> [PlannedEntry] {
        // Every waypoint file the manifest lists: the assets with their MIME types, and their captions and transcripts
        // (whose MIME type the source gives: the manifest does not carry one for them).
        var assets: [String: (size: Int64, sha256: String, mimeType: String?)] = [:]
        for asset in manifest.allAssets {
            assets[asset.path] = (asset.size, asset.sha256, asset.mimeType)
            for (_, file) in asset.companions { assets[file.path] = (file.size, file.sha256, nil) }
        }

        var sources: [String: PackageEntrySource] = [:]
        for source in media {
            guard PackageLayout.isSafeEntryPath(source.path) else { throw PackageBuildError.unsafeEntryPath(source.path) }
            guard sources[source.path] == nil else { throw PackageBuildError.duplicateEntryPath(source.path) }
            guard let asset = assets[source.path] else { throw PackageBuildError.mediaNotInManifest(source.path) }
            if let mimeType = asset.mimeType, essence(mimeType) != essence(source.mimeType) {
                throw PackageBuildError.mimeTypeMismatch(path: source.path, manifest: mimeType, source: source.mimeType)
            }
            sources[source.path] = source
        }
        let paths = assets.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var plan: [PlannedEntry] = []
        for path in paths {
            guard let source = sources[path], let asset = assets[path] else {
                throw PackageBuildError.missingMediaSource(path)
            }
            plan.append(
                PlannedEntry(
                    path: path,
                    content: .file(source.fileURL, size: asset.size, sha256: asset.sha256),
                    compression: compressionMethod(mimeType: asset.mimeType ?? source.mimeType, size: asset.size)
                )
            )
        }
        switch (manifest.tiles, tilesFile) {
        case (nil, nil):
            break
        case (.some, nil):
            throw PackageBuildError.tilesMismatch("the manifest lists tiles but no tiles file was given")
        case (nil, .some):
            throw PackageBuildError.tilesMismatch("a tiles file was given but the manifest has no tiles")
        case let (.some(tiles), .some(url)):
            let size = tiles.size ?? (try? fileSize(url)) ?? 0
            plan.append(
                PlannedEntry(
                    path: tiles.path,
                    content: .file(url, size: tiles.size, sha256: tiles.sha256),
                    compression: compressionMethod(mimeType: PackageLayout.mbtilesMimeType, size: size)
                )
            )
        }
        return plan
    }

    /// Deflate or store. ZIPFoundation decides whether a local header needs ZIP64 fields before
    /// it compresses; an entry just under 4 GiB whose deflate output grew past 4 GiB would change
    /// the header's length, so such entries are stored.
    static func compressionMethod(mimeType: String, size: Int64) -> CompressionMethod {
        guard PackageLayout.shouldDeflate(mimeType: mimeType) else { return .none }
        let limit = Int64(UInt32.max)
        if size < limit && size > limit - (64 << 20) { return .none }
        return .deflate
    }

    static func essence(_ mimeType: String) -> String {
        (mimeType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "")
            .trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func fileSize(_ url: URL) throws -> Int64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw PackageBuildError.io("cannot stat \(url.path)") }
        return Int64(info.st_size)
    }

    // MARK: Writing

    final class ProgressTracker {
        let callback: Progress?
        var filesDone = 0
        var bytesDone: Int64 = 0
        var lastReported: Int64 = 0

        init(callback: Progress?) { self.callback = callback }

        func add(bytes: Int) {
            bytesDone += Int64(bytes)
            if let callback, bytesDone - lastReported >= PackageBuilder.progressInterval {
                lastReported = bytesDone
                callback(filesDone, bytesDone)
            }
        }

        func finishFile() {
            filesDone += 1
            lastReported = bytesDone
            callback?(filesDone, bytesDone)
        }
    }

    /// Writes the entries with ZIPFoundation and returns the zip's SHA-256 and size.
    ///
    /// Three threads share the work: this one reads the inputs and lets ZIPFoundation write
    /// them (CRC-32, deflate); an ``InputHasher`` computes each input's SHA-256 a few chunks
    /// behind; an ``OutputFinisher`` hashes each finished entry of the zip (its bytes no longer
    /// change once ZIPFoundation has moved on) and starts its writeback, so that the final fsync
    /// and hash cost little more than the central directory.
    static func writeArchive(
        at url: URL,
        entries: [PlannedEntry],
        tracker: ProgressTracker,
        inputCheck: InputCheck = .sha256
    ) throws -> (String, Int64) {
        let finisher: OutputFinisher
        do {
            let archive: Archive
            do {
                archive = try Archive(url: url, accessMode: .create)
            } catch {
                throw PackageBuildError.io("cannot create \(url.path): \(error)")
            }
            finisher = try OutputFinisher(url: url)
            let inputHasher: InputHasher? = inputCheck == .sha256 ? InputHasher() : nil
            var offset: UInt64 = 0
            for entry in entries {
                try Task.checkCancellation()
                switch entry.content {
                case let .data(data):
                    try archive.addEntry(
                        with: entry.path,
                        type: .file,
                        uncompressedSize: Int64(data.count),
                        modificationDate: fixedModificationDate,
                        permissions: filePermissions,
                        compressionMethod: entry.compression,
                        bufferSize: chunkSize
                    ) { position, size in
                        let start = data.startIndex + Int(position)
                        tracker.add(bytes: size)
                        return data.subdata(in: start..<start + size)
                    }
                case let .file(url, size, sha256):
                    try addFile(
                        to: archive,
                        path: entry.path,
                        url: url,
                        expectedSize: size,
                        expectedSHA256: sha256,
                        compression: entry.compression,
                        hasher: inputHasher,
                        tracker: tracker
                    )
                }
                // ZIPFoundation has flushed the entry; it is final from here on.
                let end = try finisher.endOfEntry(startingAt: offset)
                finisher.enqueue(offset..<end)
                offset = end
                tracker.finishFile()
            }
            // `archive` is released here: ZIPFoundation closes (and flushes) the file.
        }
        return try finisher.finish()
    }

    static func addFile(
        to archive: Archive,
        path: String,
        url: URL,
        expectedSize: Int64?,
        expectedSHA256: String,
        compression: CompressionMethod,
        hasher: InputHasher?,
        tracker: ProgressTracker
    ) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw PackageBuildError.missingFile(path: path, file: url.path) }
            throw PackageBuildError.io("cannot open \(url.path) for \(path): \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw PackageBuildError.io("cannot stat \(url.path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw PackageBuildError.notARegularFile(path: path, file: url.path) }
        let size = Int64(info.st_size)
        if let expectedSize, expectedSize != size {
            throw PackageBuildError.sizeMismatch(path: path, expected: expectedSize, actual: size)
        }
        FileIO.adviseSequential(descriptor)

        hasher?.reset()
        var consumed: Int64 = 0
        try archive.addEntry(
            with: path,
            type: .file,
            uncompressedSize: size,
            modificationDate: fixedModificationDate,
            permissions: filePermissions,
            compressionMethod: compression,
            bufferSize: chunkSize
        ) { position, length in
            if Task.isCancelled { throw CancellationError() }
            guard position == consumed else { throw PackageBuildError.io("\(path): non-sequential read at \(position)") }
            guard length > 0 else { return Data() }
            guard let memory = malloc(length) else { throw PackageBuildError.io("out of memory") }
            let count: Int
            do {
                count = try FileIO.readFully(
                    descriptor,
                    into: UnsafeMutableRawBufferPointer(start: memory, count: length),
                    path: url.path
                )
            } catch {
                free(memory)
                throw PackageBuildError.io("\(error)")
            }
            guard count == length else {
                free(memory)
                // The file shrank while it was being written.
                throw PackageBuildError.sizeMismatch(path: path, expected: size, actual: consumed + Int64(count))
            }
            let chunk = Data(bytesNoCopy: memory, count: count, deallocator: .free)
            hasher?.update(chunk)
            consumed += Int64(count)
            tracker.add(bytes: count)
            return chunk
        }
        // The file grew while it was being written?
        var probe: UInt8 = 0
        if FileIO.systemReadByte(descriptor, &probe) > 0 {
            var now = stat()
            fstat(descriptor, &now)
            throw PackageBuildError.sizeMismatch(path: path, expected: size, actual: Int64(now.st_size))
        }
        guard let hasher else { return }
        let actual = hasher.finalizeHex()
        guard actual == expectedSHA256 else {
            throw PackageBuildError.checksumMismatch(path: path, expected: expectedSHA256, actual: actual)
        }
    }

}

/// SHA-256 of a stream of chunks, computed on a serial queue at most `depth` chunks behind the
/// caller (so at most `depth` MiB are held).
final class InputHasher: @unchecked Sendable {
    // `hasher` is only touched on `queue`.
    private var hasher = SHA256()
    private let queue = DispatchQueue(label: "trail.package.input-hash")
    private let slots: DispatchSemaphore

    init(depth: Int = 8) {
        slots = DispatchSemaphore(value: depth)
    }

    func reset() {
        queue.sync { hasher = SHA256() }
    }

    func update(_ chunk: Data) {
        slots.wait()
        queue.async {
            self.hasher.update(data: chunk)
            self.slots.signal()
        }
    }

    func finalizeHex() -> String {
        queue.sync { PackageHashing.hex(hasher.finalize()) }
    }
}

/// Hashes the zip as its entries become final and starts their writeback, on a serial queue;
/// `finish()` hashes the rest, fsyncs and returns the SHA-256 and size.
final class OutputFinisher: @unchecked Sendable {
    let descriptor: Int32
    let path: String
    // Only touched on `queue`.
    private var hasher = SHA256()
    private var hashed: UInt64 = 0
    private var failure: PackageBuildError?
    private let queue = DispatchQueue(label: "trail.package.output-hash")

    init(url: URL) throws {
        path = url.path
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PackageBuildError.io("cannot open \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Where the entry whose local header starts at `offset` ends (header, name, extra field,
    /// data), read back from the file.
    func endOfEntry(startingAt offset: UInt64) throws -> UInt64 {
        do {
            let header = try PackageArchiveReader.pread(descriptor: descriptor, count: 30, at: offset)
            guard header.le32(0) == 0x0403_4B50 else { throw ZipReadError.malformed("no local header at \(offset)") }
            let nameLength = UInt64(header.le16(26))
            let extraLength = UInt64(header.le16(28))
            var compressed = UInt64(header.le32(18))
            if compressed == 0xFFFF_FFFF {
                // ZIP64: the extra field holds the uncompressed and then the compressed size.
                let extra = try PackageArchiveReader.pread(
                    descriptor: descriptor,
                    count: Int(extraLength),
                    at: offset + 30 + nameLength
                )
                guard extra.count >= 20, extra.le16(0) == 1 else { throw ZipReadError.malformed("no ZIP64 field at \(offset)") }
                compressed = extra.le64(12)
            }
            return offset + 30 + nameLength + extraLength + compressed
        } catch {
            throw PackageBuildError.io("reading back \(path): \(error)")
        }
    }

    func enqueue(_ range: Range<UInt64>) {
        queue.async { self.process(range) }
    }

    func finish() throws -> (String, Int64) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw PackageBuildError.io("cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        let size = UInt64(info.st_size)
        return try queue.sync {
            process(hashed..<size)
            if let failure { throw failure }
            guard fsync(descriptor) == 0 else {
                throw PackageBuildError.io("fsync \(path): \(String(cString: strerror(errno)))")
            }
            return (PackageHashing.hex(hasher.finalize()), Int64(hashed))
        }
    }

    private func process(_ range: Range<UInt64>) {
        guard failure == nil else { return }
        guard range.lowerBound == hashed else {
            failure = .io("internal error: hashing \(path) out of order")
            return
        }
        startWriteback(range)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PackageBuilder.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var position = range.lowerBound
        while position < range.upperBound {
            let count = Int(min(UInt64(buffer.count), range.upperBound - position))
            let result = pread(descriptor, buffer.baseAddress, count, off_t(position))
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                failure = .io("reading back \(path) at \(position): \(result < 0 ? String(cString: strerror(errno)) : "end of file")")
                return
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<result]))
            position += UInt64(result)
        }
        hashed = position
    }

    /// Asks the kernel to start writing the range to disk now (Linux `sync_file_range`, looked
    /// up at run time as Swift's Glibc module does not export it), so that `fsync` has little
    /// left to do. Best effort.
    private func startWriteback(_ range: Range<UInt64>) {
        #if os(Linux)
        guard let syncFileRange = Self.syncFileRange, range.count > 0 else { return }
        let syncFileRangeWrite: UInt32 = 2  // SYNC_FILE_RANGE_WRITE
        _ = syncFileRange(descriptor, off_t(range.lowerBound), off_t(range.count), syncFileRangeWrite)
        #endif
    }

    #if os(Linux)
    typealias SyncFileRange = @convention(c) (Int32, off_t, off_t, UInt32) -> Int32
    static let syncFileRange: SyncFileRange? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: SyncFileRange.self)
    }()
    #endif
}
