import CFileWriteback
import Crypto
import Foundation
import Hummingbird
import NIOCore
import _NIOFileSystem

/// The upload is larger than allowed; the partial file has already been removed.
struct UploadTooLarge: Error {
    let limit: Int64
}

/// Streams bytes into a new file, hashing (SHA-256) and counting as they arrive, keeping the first bytes for type detection.
/// Memory stays bounded by the buffer capacity whatever the file size.
final class HashingFileWriter: @unchecked Sendable {
    // Used by one task at a time (a request handler); not shared.
    let path: FilePath
    let limit: Int64
    private let handle: WriteFileHandle
    private var writer: BufferedWriter<WriteFileHandle>
    private var hasher = SHA256()
    private(set) var written: Int64 = 0
    private(set) var header: [UInt8] = []
    private var writeback = EarlyWriteback(from: 0)

    private init(path: FilePath, limit: Int64, handle: WriteFileHandle) {
        self.path = path
        self.limit = limit
        self.handle = handle
        self.writer = handle.bufferedWriter(capacity: .bytes(EarlyWriteback.writeBuffer))
    }

    static func create(at url: URL, limit: Int64) async throws -> HashingFileWriter {
        let path = FilePath(url.path)
        let handle = try await FileSystem.shared.openFile(
            forWritingAt: path,
            options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite])
        )
        return HashingFileWriter(path: path, limit: limit, handle: handle)
    }

    func write(_ buffer: ByteBuffer) async throws {
        guard buffer.readableBytes > 0 else { return }
        if written + Int64(buffer.readableBytes) > limit {
            await discard()
            throw UploadTooLarge(limit: limit)
        }
        buffer.withUnsafeReadableBytes { bytes in
            hasher.update(bufferPointer: bytes)
            if header.count < FileTypeDetector.headerLength {
                header += bytes.prefix(FileTypeDetector.headerLength - header.count)
            }
        }
        written += Int64(buffer.readableBytes)
        try await writer.write(contentsOf: buffer)
        await writeback.advance(to: written, handle: handle)
    }

    /// Flushes, fsyncs and closes; returns size and hex SHA-256.
    func finish() async throws -> (size: Int64, sha256: String) {
        try await writer.flush()
        try await handle.synchronize()
        try await handle.close()
        return (written, hasher.finalize().hexString)
    }

    /// Closes and removes the partial file: nothing half-written stays behind. Also when the request's task is
    /// cancelled (a stop while an upload stalls): a cancelled `close()` throws before it closes, and a handle dropped
    /// open stops the process (`SystemFileHandle.deinit`), so the close runs in a task that is not cancelled.
    func discard() async {
        let handle = handle
        _ = await Task.detached { try? await handle.close() }.value
        _ = try? await FileSystem.shared.removeItem(at: path)
    }
}

/// Starts the disk writes of a file being received while it is still arriving, so the `fsync` at its end waits only
/// for the last few MiB instead of the whole file (the kernel would otherwise keep a 1 GiB upload dirty in memory
/// until that `fsync`). Measured in BENCHMARKS.md; a failure only loses the head start, never data.
struct EarlyWriteback {
    /// Dirty bytes allowed to pile up before writing them out is started.
    static let stride: Int64 = 8 << 20
    /// The upload writers' buffer: bytes handed to the writer may still sit there, not in the file yet.
    static let writeBuffer: Int64 = 1 << 20
    private var started: Int64

    init(from offset: Int64) { started = offset }

    /// `received` is the end of the bytes handed to the buffered writer; those still in its buffer (at most its
    /// capacity) are left for the next call.
    mutating func advance(to received: Int64, handle: some FileHandleProtocol) async {
        guard received - started >= Self.stride + Self.writeBuffer else { return }
        let from = started
        let upTo = received - Self.writeBuffer
        started = upTo
        _ = try? await handle.withUnsafeDescriptor { descriptor in
            trail_start_writeback(descriptor.rawValue, from, upTo - from)
        }
    }
}

extension Sequence where Element == UInt8 {
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Digest {
    var hexString: String { Array(self.makeIterator()).hexString }
}

enum FileHashing {
    /// SHA-256 of a whole file, streamed in 1 MiB chunks.
    static func sha256(of url: URL) async throws -> String {
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
            var hasher = SHA256()
            for try await chunk in handle.readChunks(chunkLength: .mebibytes(1)) {
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            return hasher.finalize().hexString
        }
    }

    static func header(of url: URL) async throws -> [UInt8] {
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
            let chunk = try await handle.readChunk(fromAbsoluteOffset: 0, length: .bytes(Int64(FileTypeDetector.headerLength)))
            return Array(chunk.readableBytesView)
        }
    }
}
