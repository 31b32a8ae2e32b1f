import CFileWriteback
import Crypto
import Foundation
import NIOCore
import Testing

@testable import TrailServer

/// The streaming writer behind both ways in: bytes, hash and early disk writes.
@Suite("Media: streaming writer")
struct MediaWriterTests {
    @Test("A file larger than several writeback strides is stored byte for byte with its SHA-256; the writeback call really reaches the kernel")
    func writesHashesAndStartsWriteback() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trail-writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("upload")
        let size = Int(EarlyWriteback.stride) * 3 + 12_345
        var content = Data(count: size)
        content.withUnsafeMutableBytes { bytes in
            var generator = SystemRandomNumberGenerator()
            let words = bytes.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }

        let writer = try await HashingFileWriter.create(at: url, limit: Int64(size))
        var offset = 0
        while offset < size {  // uneven network-sized pieces
            let end = min(size, offset + 200_000 + offset % 77_777)
            try await writer.write(ByteBuffer(bytes: content[offset..<end]))
            offset = end
        }
        let (written, sha) = try await writer.finish()
        #expect(written == Int64(size))
        #expect(sha == SHA256.hash(data: content).hexString)
        #expect(try Data(contentsOf: url) == content)
        #expect(writer.header == Array(content.prefix(FileTypeDetector.headerLength)))

        // The C shim is not a silent no-op on Linux: a regular file accepts it, a closed descriptor is refused.
        let handle = try FileHandle(forReadingFrom: url)
        let descriptor = handle.fileDescriptor
        #expect(trail_start_writeback(descriptor, 0, 0) == 0)
        try handle.close()
        #if os(Linux)
        #expect(trail_start_writeback(descriptor, 0, 0) == -1)
        #endif
    }
}
