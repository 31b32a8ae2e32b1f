import Foundation

#if canImport(CZlib)
import CZlib
#elseif canImport(zlib)
import zlib
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One entry of a zip's central directory, as ``PackageArchiveReader`` parsed it.
public struct ZipEntryInfo: Sendable, Equatable {
    /// The entry name (UTF-8 when the archive says so, otherwise each byte as one character).
    public var path: String
    public var compressionMethod: UInt16
    public var generalPurposeFlags: UInt16
    public var crc32: UInt32
    public var compressedSize: UInt64
    public var uncompressedSize: UInt64
    public var localHeaderOffset: UInt64
    /// Where the entry's data starts (after the local header); set by the reader.
    public var dataOffset: UInt64
    public var versionMadeBy: UInt16
    public var externalAttributes: UInt32
    /// True when the local header names the entry exactly like the central directory does.
    public var localNameMatches: Bool

    public var isEncrypted: Bool { generalPurposeFlags & 1 != 0 }
    public var isStored: Bool { compressionMethod == 0 }
    public var isDeflated: Bool { compressionMethod == 8 }

    /// The Unix mode in the external attributes when the entry was made on Unix or macOS.
    public var unixMode: UInt32? {
        let host = versionMadeBy >> 8
        guard host == 3 || host == 19 else { return nil }
        let mode = externalAttributes >> 16
        return mode == 0 ? nil : mode
    }
    public var isSymbolicLink: Bool { unixMode.map { $0 & 0o170000 == 0o120000 } ?? false }
    public var isDirectory: Bool {
        path.hasSuffix("/") || (unixMode.map { $0 & 0o170000 == 0o040000 } ?? false)
            || (versionMadeBy >> 8 == 0 && externalAttributes & 0x10 != 0)
    }
}

public enum ZipReadError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(String)
    case notAZip(String)
    case malformed(String)
    case unsupported(String)
    case tooLarge(path: String, limit: UInt64)
    case io(String)

    public var description: String {
        switch self {
        case let .cannotOpen(message): return "cannot open the zip: \(message)"
        case let .notAZip(message): return "not a zip archive: \(message)"
        case let .malformed(message): return "malformed zip: \(message)"
        case let .unsupported(message): return "unsupported zip feature: \(message)"
        case let .tooLarge(path, limit): return "\(path) expands to more than \(limit) bytes"
        case let .io(message): return "read error: \(message)"
        }
    }
}

/// A defensive, read-only zip parser (central directory, ZIP64, stored and deflated entries).
///
/// Written for verifying packages from untrusted sources: every offset and size is checked
/// against the file, a deflate stream can never read past its entry's compressed bytes (a
/// truncated stream is an error, not an endless loop), and output is capped at the size the
/// caller expects. It uses `pread`, so one reader may be used from several threads.
public final class PackageArchiveReader: @unchecked Sendable {
    public let url: URL
    public let fileSize: UInt64
    /// Entries in central-directory order.
    public let entries: [ZipEntryInfo]
    /// Number of entries the end-of-central-directory record declares.
    public let declaredEntryCount: UInt64
    /// True when the archive has a ZIP64 end-of-central-directory record.
    public let isZIP64: Bool

    private let descriptor: Int32

    /// Hard limits against hostile archives.
    public static let maxEntries: UInt64 = 1_000_000
    public static let maxCentralDirectorySize: UInt64 = 512 << 20

    public init(url: URL) throws {
        self.url = url
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ZipReadError.cannotOpen("\(url.path): \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        do {
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                throw ZipReadError.cannotOpen("\(url.path) is not a regular file")
            }
            let fileSize = UInt64(info.st_size)
            self.fileSize = fileSize
            let directory = try Self.locateCentralDirectory(descriptor: descriptor, fileSize: fileSize)
            self.declaredEntryCount = directory.entryCount
            self.isZIP64 = directory.isZIP64
            self.entries = try Self.parseCentralDirectory(descriptor: descriptor, fileSize: fileSize, directory: directory)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    public func entry(named path: String) -> ZipEntryInfo? {
        entries.first { $0.path == path }
    }

    /// Streams an entry's uncompressed bytes to `consumer` in chunks of up to 1 MiB and returns
    /// the CRC-32 of those bytes. Throws ``ZipReadError/tooLarge(path:limit:)`` as soon as the
    /// output exceeds `limit` bytes.
    @discardableResult
    public func read(_ entry: ZipEntryInfo, limit: UInt64, consumer: (Data) throws -> Void) throws -> UInt32 {
        guard !entry.isEncrypted else { throw ZipReadError.unsupported("\(entry.path) is encrypted") }
        let chunkSize = PackageHashing.chunkSize
        var offset = entry.dataOffset
        var remaining = entry.compressedSize
        func nextChunk(_ wanted: Int) throws -> Data {
            let count = Int(min(UInt64(wanted), remaining))
            guard count > 0 else { return Data() }
            let chunk = try self.readExactly(count, at: offset)
            offset += UInt64(count)
            remaining -= UInt64(count)
            return chunk
        }
        switch entry.compressionMethod {
        case 0:
            guard entry.compressedSize == entry.uncompressedSize else {
                throw ZipReadError.malformed("\(entry.path): stored entry with different compressed and uncompressed sizes")
            }
            guard entry.uncompressedSize <= limit else { throw ZipReadError.tooLarge(path: entry.path, limit: limit) }
            var crc: UInt32 = 0
            while remaining > 0 {
                let chunk = try nextChunk(chunkSize)
                crc = Self.crc32(chunk, crc)
                try consumer(chunk)
            }
            return crc
        case 8:
            return try Self.inflate(entry: entry, limit: limit, chunkSize: chunkSize, nextChunk: nextChunk, consumer: consumer)
        default:
            throw ZipReadError.unsupported("\(entry.path) uses compression method \(entry.compressionMethod)")
        }
    }

    static func crc32(_ data: Data, _ seed: UInt32) -> UInt32 {
        data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: Bytef.self).baseAddress else { return seed }
            return UInt32(truncatingIfNeeded: zlibCRC32(uLong(seed), base, uInt(raw.count)))
        }
    }

    /// Raw deflate (RFC 1951) decoding that never asks for input beyond the entry's compressed
    /// bytes and never lets zlib read outside the buffer it was given.
    static func inflate(
        entry: ZipEntryInfo,
        limit: UInt64,
        chunkSize: Int,
        nextChunk: (Int) throws -> Data,
        consumer: (Data) throws -> Void
    ) throws -> UInt32 {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ZipReadError.io("zlib initialisation failed")
        }
        defer { inflateEnd(&stream) }
        let output = UnsafeMutablePointer<Bytef>.allocate(capacity: chunkSize)
        defer { output.deallocate() }
        var crc: uLong = 0
        var produced: UInt64 = 0
        var finished = false
        while !finished {
            let input = try nextChunk(chunkSize)
            guard !input.isEmpty else {
                throw ZipReadError.malformed("\(entry.path): deflate stream is truncated")
            }
            try input.withUnsafeBytes { raw in
                stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress!)
                stream.avail_in = uInt(raw.count)
                repeat {
                    stream.next_out = output
                    stream.avail_out = uInt(chunkSize)
                    let status = zlibInflate(&stream, Z_NO_FLUSH)
                    guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                        throw ZipReadError.malformed("\(entry.path): corrupt deflate data")
                    }
                    let count = chunkSize - Int(stream.avail_out)
                    if count > 0 {
                        produced += UInt64(count)
                        guard produced <= limit else { throw ZipReadError.tooLarge(path: entry.path, limit: limit) }
                        crc = zlibCRC32(crc, output, uInt(count))
                        try consumer(Data(bytes: output, count: count))
                    }
                    if status == Z_STREAM_END {
                        finished = true
                        return
                    }
                    if status == Z_BUF_ERROR && count == 0 { return }
                } while stream.avail_in > 0 || stream.avail_out == 0
            }
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    // MARK: Parsing

    struct CentralDirectoryLocation {
        var entryCount: UInt64
        var size: UInt64
        var offset: UInt64
        /// Where the structures that follow the central directory start.
        var end: UInt64
        var isZIP64: Bool
    }

    static func locateCentralDirectory(descriptor: Int32, fileSize: UInt64) throws -> CentralDirectoryLocation {
        let eocdSize: UInt64 = 22
        guard fileSize >= eocdSize else { throw ZipReadError.notAZip("the file is only \(fileSize) bytes") }
        let tailSize = min(fileSize, eocdSize + 0xFFFF)
        let tail = try pread(descriptor: descriptor, count: Int(tailSize), at: fileSize - tailSize)
        var found: Int?
        var index = tail.count - Int(eocdSize)
        while index >= 0 {
            if tail.le32(index) == 0x0605_4B50, index + Int(eocdSize) + Int(tail.le16(index + 20)) == tail.count {
                found = index
                break
            }
            index -= 1
        }
        guard let eocdIndex = found else {
            throw ZipReadError.notAZip("no end of central directory record")
        }
        let eocdOffset = fileSize - tailSize + UInt64(eocdIndex)
        let disk = tail.le16(eocdIndex + 4)
        let cdDisk = tail.le16(eocdIndex + 6)
        var location = CentralDirectoryLocation(
            entryCount: UInt64(tail.le16(eocdIndex + 10)),
            size: UInt64(tail.le32(eocdIndex + 12)),
            offset: UInt64(tail.le32(eocdIndex + 16)),
            end: eocdOffset,
            isZIP64: false
        )
        guard UInt64(tail.le16(eocdIndex + 8)) == location.entryCount else {
            throw ZipReadError.unsupported("multi-disk archive")
        }

        // ZIP64 end of central directory locator, 20 bytes before the EOCD record.
        if eocdOffset >= 20 {
            let locator = try pread(descriptor: descriptor, count: 20, at: eocdOffset - 20)
            if locator.le32(0) == 0x0706_4B50 {
                let recordOffset = locator.le64(8)
                guard recordOffset + 56 <= eocdOffset - 20 else {
                    throw ZipReadError.malformed("ZIP64 end of central directory record is out of bounds")
                }
                let record = try pread(descriptor: descriptor, count: 56, at: recordOffset)
                guard record.le32(0) == 0x0606_4B50 else {
                    throw ZipReadError.malformed("ZIP64 end of central directory record not found")
                }
                guard record.le64(24) == record.le64(32) else { throw ZipReadError.unsupported("multi-disk archive") }
                location = CentralDirectoryLocation(
                    entryCount: record.le64(32),
                    size: record.le64(40),
                    offset: record.le64(48),
                    end: recordOffset,
                    isZIP64: true
                )
            }
        }
        if !location.isZIP64 {
            guard disk == 0, cdDisk == 0 else { throw ZipReadError.unsupported("multi-disk archive") }
            if location.entryCount == 0xFFFF || location.size == 0xFFFF_FFFF || location.offset == 0xFFFF_FFFF {
                throw ZipReadError.malformed("ZIP64 values without a ZIP64 end of central directory record")
            }
        }
        guard location.entryCount <= maxEntries else {
            throw ZipReadError.unsupported("more than \(maxEntries) entries")
        }
        guard location.size <= maxCentralDirectorySize,
            location.offset <= location.end, location.size <= location.end - location.offset
        else {
            throw ZipReadError.malformed("central directory out of bounds")
        }
        return location
    }

    static func parseCentralDirectory(
        descriptor: Int32,
        fileSize: UInt64,
        directory: CentralDirectoryLocation
    ) throws -> [ZipEntryInfo] {
        let data = try pread(descriptor: descriptor, count: Int(directory.size), at: directory.offset)
        var entries: [ZipEntryInfo] = []
        entries.reserveCapacity(Int(directory.entryCount))
        var position = 0
        for number in 0..<directory.entryCount {
            guard position + 46 <= data.count, data.le32(position) == 0x0201_4B50 else {
                throw ZipReadError.malformed("central directory record \(number + 1) is missing or cut short")
            }
            let nameLength = Int(data.le16(position + 28))
            let extraLength = Int(data.le16(position + 30))
            let commentLength = Int(data.le16(position + 32))
            let recordEnd = position + 46 + nameLength + extraLength + commentLength
            guard recordEnd <= data.count else {
                throw ZipReadError.malformed("central directory record \(number + 1) is cut short")
            }
            let flags = data.le16(position + 8)
            let nameBytes = data[data.startIndex + position + 46..<data.startIndex + position + 46 + nameLength]
            var uncompressed = UInt64(data.le32(position + 24))
            var compressed = UInt64(data.le32(position + 20))
            var offset = UInt64(data.le32(position + 42))
            let diskStart = data.le16(position + 34)

            // ZIP64 extended information (header id 1): only the saturated fields are present.
            var extra = position + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = data.le16(extra)
                let size = Int(data.le16(extra + 2))
                guard extra + 4 + size <= extraEnd else {
                    throw ZipReadError.malformed("extra field of central directory record \(number + 1) is cut short")
                }
                if id == 1 {
                    var field = extra + 4
                    func next() throws -> UInt64 {
                        guard field + 8 <= extra + 4 + size else {
                            throw ZipReadError.malformed("ZIP64 extra field of record \(number + 1) is too short")
                        }
                        defer { field += 8 }
                        return data.le64(field)
                    }
                    if uncompressed == 0xFFFF_FFFF { uncompressed = try next() }
                    if compressed == 0xFFFF_FFFF { compressed = try next() }
                    if offset == 0xFFFF_FFFF { offset = try next() }
                }
                extra += 4 + size
            }
            guard diskStart == 0 || diskStart == 0xFFFF else { throw ZipReadError.unsupported("multi-disk archive") }

            let path: String
            if flags & (1 << 11) != 0 {
                guard let decoded = String(bytes: nameBytes, encoding: .utf8) else {
                    throw ZipReadError.malformed("entry name of record \(number + 1) is not valid UTF-8")
                }
                path = decoded
            } else {
                // Not flagged as UTF-8 (so CP437 by the spec): ASCII as is, any other byte as the
                // Latin-1 character of the same value, so that nothing is hidden or merged.
                var scalars = String.UnicodeScalarView()
                scalars.append(contentsOf: nameBytes.map { Unicode.Scalar($0) })
                path = String(scalars)
            }

            // The local header: signature, name, and where the data starts.
            guard offset <= fileSize, fileSize - offset >= 30 else {
                throw ZipReadError.malformed("\(path): local header offset is out of bounds")
            }
            let local = try pread(descriptor: descriptor, count: 30, at: offset)
            guard local.le32(0) == 0x0403_4B50 else {
                throw ZipReadError.malformed("\(path): no local header at offset \(offset)")
            }
            let localNameLength = Int(local.le16(26))
            let localExtraLength = Int(local.le16(28))
            let dataOffset = offset + 30 + UInt64(localNameLength) + UInt64(localExtraLength)
            guard dataOffset <= directory.offset, compressed <= directory.offset - dataOffset else {
                throw ZipReadError.malformed("\(path): data runs into the central directory or past the end")
            }
            let localName = try pread(descriptor: descriptor, count: localNameLength, at: offset + 30)

            entries.append(
                ZipEntryInfo(
                    path: path,
                    compressionMethod: data.le16(position + 10),
                    generalPurposeFlags: flags,
                    crc32: data.le32(position + 16),
                    compressedSize: compressed,
                    uncompressedSize: uncompressed,
                    localHeaderOffset: offset,
                    dataOffset: dataOffset,
                    versionMadeBy: data.le16(position + 4),
                    externalAttributes: data.le32(position + 38),
                    localNameMatches: localName.elementsEqual(nameBytes)
                )
            )
            position = recordEnd
        }

        // Entries may not share bytes (overlapping entries are the classic zip-bomb trick).
        let byOffset = entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (previous, next) in zip(byOffset, byOffset.dropFirst())
        where previous.dataOffset + previous.compressedSize > next.localHeaderOffset {
            throw ZipReadError.malformed("entries \(previous.path) and \(next.path) overlap")
        }
        return entries
    }

    private func readExactly(_ count: Int, at offset: UInt64) throws -> Data {
        try Self.pread(descriptor: descriptor, count: count, at: offset)
    }

    static func pread(descriptor: Int32, count: Int, at offset: UInt64) throws -> Data {
        guard count > 0 else { return Data() }
        guard let memory = malloc(count) else { throw ZipReadError.io("out of memory") }
        var filled = 0
        while filled < count {
            #if canImport(Glibc)
            let result = Glibc.pread(descriptor, memory + filled, count - filled, off_t(offset) + off_t(filled))
            #elseif canImport(Musl)
            let result = Musl.pread(descriptor, memory + filled, count - filled, off_t(offset) + off_t(filled))
            #else
            let result = Darwin.pread(descriptor, memory + filled, count - filled, off_t(offset) + off_t(filled))
            #endif
            if result < 0 {
                if errno == EINTR { continue }
                let message = String(cString: strerror(errno))
                free(memory)
                throw ZipReadError.io(message)
            }
            if result == 0 {
                free(memory)
                throw ZipReadError.malformed("unexpected end of file at offset \(offset + UInt64(filled))")
            }
            filled += result
        }
        return Data(bytesNoCopy: memory, count: count, deallocator: .free)
    }
}

extension Data {
    func le16(_ offset: Int) -> UInt16 {
        let base = startIndex + offset
        return UInt16(self[base]) | UInt16(self[base + 1]) << 8
    }
    func le32(_ offset: Int) -> UInt32 {
        let base = startIndex + offset
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(self[base + index]) }
        return value
    }
    func le64(_ offset: Int) -> UInt64 {
        let base = startIndex + offset
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(self[base + index]) }
        return value
    }
}

// zlib's functions, named so that they do not clash with methods of the same name.
@inline(__always) private func zlibCRC32(_ crc: uLong, _ buffer: UnsafePointer<Bytef>!, _ length: uInt) -> uLong {
    crc32(crc, buffer, length)
}

@inline(__always) private func zlibInflate(_ stream: UnsafeMutablePointer<z_stream>, _ flush: Int32) -> Int32 {
    inflate(stream, flush)
}

extension PackageArchiveReader {
    /// A file the manifest lists, read whole and checked against the size and SHA-256 listed for it, as every file of
    /// a package is checked; nil when the zip has no such entry. For small files only (the drawn map, a manifest's
    /// neighbours): the bytes are kept in memory.
    package func readListed(path: String, size: Int64, sha256: String) throws -> Data? {
        guard let entry = entry(named: path) else { return nil }
        var data = Data()
        data.reserveCapacity(Int(max(0, size)))
        _ = try read(entry, limit: UInt64(max(0, size))) { data.append($0) }
        guard Int64(data.count) == size, PackageHashing.sha256Hex(data) == sha256 else { throw ListedFileMismatch(path: path) }
        return data
    }
}

/// A file of a package whose bytes are not those its manifest lists.
package struct ListedFileMismatch: Error, CustomStringConvertible, Sendable {
    package let path: String
    package var description: String { "\(path) does not match the package's manifest." }
}
