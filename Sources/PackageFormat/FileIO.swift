import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SHA-256 helpers with the package format's conventions (lowercase hex).
public enum PackageHashing: Sendable {
    /// Chunk size for streaming reads (1 MiB).
    public static let chunkSize = 1 << 20

    public static func sha256Hex(_ data: Data) -> String {
        hex(SHA256.hash(data: data))
    }

    /// Streams the file in 1 MiB chunks; never holds it in memory.
    public static func sha256(ofFileAt url: URL) throws -> (sha256: String, size: Int64) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileIO.Failure(path: url.path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        FileIO.adviseSequential(descriptor)
        var hasher = SHA256()
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try FileIO.read(descriptor, into: buffer, path: url.path)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += Int64(count)
        }
        return (hex(hasher.finalize()), size)
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Small POSIX helpers: whole reads and writes with EINTR handling, fsync of folders.
enum FileIO {
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var operation: String
        var errno: Int32
        var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
    }

    /// One `read(2)`, retried on EINTR. Returns 0 at end of file.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        while true {
            let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw Failure(path: path, operation: "read", errno: errno)
        }
    }

    /// Reads until `buffer` is full or the file ends; returns the number of bytes read.
    static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), path: path)
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    static func readUpTo(_ limit: Int, from descriptor: Int32, path: String) throws -> Data {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(limit, 1), alignment: 16)
        defer { buffer.deallocate() }
        let count = try readFully(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<limit]), path: path)
        return Data(buffer[0..<count])
    }

    static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws {
        try data.withUnsafeBytes { bytes in try writeAll(bytes, to: descriptor, path: path) }
    }

    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, operation: "write", errno: errno)
            }
            offset += written
        }
    }

    /// Makes a rename or link in `folder` durable. Errors are ignored (not every file system
    /// allows fsync on a directory).
    static func fsyncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Reads one byte (to detect a file that grew); returns the count, -1 on error.
    static func systemReadByte(_ descriptor: Int32, _ byte: inout UInt8) -> Int {
        withUnsafeMutableBytes(of: &byte) { systemRead(descriptor, $0.baseAddress, 1) }
    }

    static func adviseSequential(_ descriptor: Int32) {
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        #endif
    }
}

// `read` and `write` are shadowed by methods in some scopes; these name the C functions.
@inline(__always) private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #elseif canImport(Musl)
    return Musl.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}

@inline(__always) private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #elseif canImport(Musl)
    return Musl.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}

/// The one way a file is made durable, in every target (server, client library, CLI): data written in full and
/// fsynced, then renamed into place, then its folder fsynced, so that after a crash the name points either at the old
/// file or at the whole new one.
public enum DurableFile {
    /// `write(2)` until every byte is written, retried on EINTR.
    public static func writeAll(_ bytes: some DataProtocol, to descriptor: Int32, path: String) throws {
        for region in bytes.regions {
            try region.withUnsafeBytes { raw in try FileIO.writeAll(raw, to: descriptor, path: path) }
        }
    }

    public static func fsync(descriptor: Int32, path: String) throws {
        guard systemFsync(descriptor) == 0 else { throw FileIO.Failure(path: path, operation: "fsync", errno: errno) }
    }

    public static func fsync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileIO.Failure(path: url.path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        try fsync(descriptor: descriptor, path: url.path)
    }

    /// Makes a rename, link or new file in `folder` durable. A folder that cannot be opened is an error; an fsync the
    /// file system refuses on folders is not (not every one allows it).
    public static func fsyncFolder(_ folder: URL) throws {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileIO.Failure(path: folder.path, operation: "open folder", errno: errno) }
        _ = systemFsync(descriptor)
        close(descriptor)
    }

    /// Every file below `folder`, then the folders.
    public static func fsyncTree(_ folder: URL) throws {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isDirectoryKey]) else { return }
        for case let url as URL in walker {
            if (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true { try fsyncFolder(url) } else { try fsync(url) }
        }
        try fsyncFolder(folder)
    }

    /// `data` into `url` durably: a temporary file beside it (mode `mode`), written, fsynced, renamed over `url`, the
    /// folder fsynced. The temporary file is removed when a step fails.
    public static func write(_ data: Data, to url: URL, mode: mode_t = 0o644) throws {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw FileIO.Failure(path: temporary.path, operation: "create", errno: errno) }
        do {
            defer { close(descriptor) }
            // The umask must not widen or narrow what the caller asked for.
            guard fchmod(descriptor, mode) == 0 else { throw FileIO.Failure(path: temporary.path, operation: "chmod", errno: errno) }
            try FileIO.writeAll(data, to: descriptor, path: temporary.path)
            try fsync(descriptor: descriptor, path: temporary.path)
        } catch {
            unlink(temporary.path)
            throw error
        }
        guard rename(temporary.path, url.path) == 0 else {
            let failure = FileIO.Failure(path: url.path, operation: "rename", errno: errno)
            unlink(temporary.path)
            throw failure
        }
        try fsyncFolder(folder)
    }
}

@inline(__always) private func systemFsync(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.fsync(fd)
    #elseif canImport(Musl)
    return Musl.fsync(fd)
    #else
    return Darwin.fsync(fd)
    #endif
}
