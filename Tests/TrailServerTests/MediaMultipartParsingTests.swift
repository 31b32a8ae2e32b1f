import Foundation
import MultipartKit
import NIOCore
import TestSupport
import Testing

@testable import TrailServer

/// `MultipartFeeder` (the memmem fast path around multipart-kit's `MultipartParser`) must read every body exactly as
/// the parser alone does: the same parts, headers and bytes, and the same failures, however the body is cut into chunks.
@Suite("Media: multipart fast path reads bodies as MultipartParser does")
struct MediaMultipartParsingTests {
    struct Parsed: Equatable, CustomStringConvertible {
        struct Part: Equatable {
            var headers: [String] = []
            var body: [UInt8] = []
        }
        var parts: [Part] = []
        var open: Part?
        var failed = false
        /// A failed parse is compared by its failure only (what came before it is thrown away by the upload).
        static func == (a: Parsed, b: Parsed) -> Bool {
            a.failed || b.failed ? a.failed == b.failed : a.parts == b.parts && a.open == b.open
        }
        var description: String {
            failed
                ? "failed"
                : "\(parts.count) parts \(parts.map { "\($0.headers) \($0.body.count) bytes" }), open: \(open.map { "\($0.body.count) bytes" } ?? "none")"
        }
    }

    /// Collects callbacks the way MultipartUpload's collector does.
    final class Recorder {
        var parts: [Parsed.Part] = []
        var headers: [String] = []
        /// The part being received (headers, and its bytes kept apart so appending stays cheap).
        var openHeaders: [String]?
        var openBody: [UInt8] = []
        var failed = false

        func header(_ name: String, _ value: String) { headers.append("\(name): \(value)") }
        func body(_ buffer: ByteBuffer) {
            if openHeaders == nil {
                openHeaders = headers
                headers = []
            }
            openBody.append(contentsOf: buffer.readableBytesView)
        }
        func complete() {
            parts.append(.init(headers: openHeaders ?? headers, body: openBody))
            if openHeaders == nil { headers = [] }
            openHeaders = nil
            openBody = []
        }
        var parsed: Parsed {
            Parsed(parts: parts, open: openHeaders.map { .init(headers: $0, body: openBody) }, failed: failed)
        }
    }

    static func plain(_ chunks: [ByteBuffer], boundary: String) -> Parsed {
        let recorder = Recorder()
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { recorder.header($0, $1) }
        parser.onBody = { recorder.body($0) }
        parser.onPartComplete = { recorder.complete() }
        do { for chunk in chunks { try parser.execute(chunk) } } catch { recorder.failed = true }
        return recorder.parsed
    }

    static func fast(_ chunks: [ByteBuffer], boundary: String) -> (Parsed, Int64) {
        let recorder = Recorder()
        let feeder = MultipartFeeder(boundary: boundary)
        feeder.onHeader = { recorder.header($0, $1) }
        feeder.onBody = { recorder.body($0) }
        feeder.onPartComplete = { recorder.complete() }
        do { for chunk in chunks { try feeder.feed(chunk) } } catch { recorder.failed = true }
        return (recorder.parsed, feeder.bypassedBytes)
    }

    static let boundaryCharacters = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?".utf8)

    /// A body with traps: CR/LF-heavy bytes, near-miss delimiters (`CRLF--boundar`, `CRLF-`), delimiters without CRLF,
    /// sometimes a preamble, an epilogue, a delimiter followed by garbage (malformed), or a cut in the middle.
    static func makeBody(_ random: inout SeededBytes) -> (ByteBuffer, String) {
        let boundary = String(
            decoding: (0..<random.int(1...70)).map { _ in boundaryCharacters[random.int(0...(boundaryCharacters.count - 1))] },
            as: UTF8.self
        )
        let delimiter = Array("\r\n--\(boundary)".utf8)
        var body = ByteBuffer()
        if random.chance(30) { body.writeString("preamble\r\n\r\n--not it\r\n") }
        if random.chance(50) { body.writeString("--\(boundary)\r\n") } else { body.writeString("\r\n--\(boundary)\r\n") }
        for index in 0..<random.int(1...4) {
            if index > 0 {
                body.writeBytes(delimiter)
                body.writeString("\r\n")
            }
            if !random.chance(10) {
                body.writeString("Content-Disposition: form-data; name=\"f\(index)\"; filename=\"f\(index).bin\"\r\n")
                if random.chance(50) { body.writeString("Content-Type: application/octet-stream\r\n") }
            }
            body.writeString("\r\n")
            var remaining = random.chance(20) ? 0 : random.int(1...(random.chance(30) ? 20_000 : 3_000))
            while remaining > 0 {
                switch random.int(0...9) {
                case 0: body.writeBytes(delimiter.prefix(random.int(1...(delimiter.count - 1))))  // a near miss
                case 1: body.writeString("\r\n\r\n")
                case 2: body.writeString("--\(boundary)")  // a delimiter without its CRLF: just body
                case 3: body.writeBytes((0..<random.int(1...40)).map { _ in [13, 10, 45][random.int(0...2)] })
                default:
                    let run = min(remaining, random.int(1...8_000))
                    body.writeBytes((0..<run).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                }
                remaining -= 1 + min(remaining, random.int(1...8_000))
            }
        }
        if random.chance(8) {
            body.writeBytes(delimiter)
            body.writeString("X")  // malformed: neither CRLF nor "--" after a delimiter
        }
        body.writeBytes(delimiter)
        body.writeString("--\r\n")
        if random.chance(30) { body.writeString("epilogue \r\n--\(boundary)\r\n ignored") }
        if random.chance(10) { body.moveWriterIndex(to: random.int(0...body.writerIndex)) }  // cut short
        return (body, boundary)
    }

    static func chunks(of body: ByteBuffer, _ random: inout SeededBytes) -> [ByteBuffer] {
        var chunks: [ByteBuffer] = []
        var rest = body
        let style = random.int(0...3)
        while rest.readableBytes > 0 {
            let size: Int
            switch style {
            case 0: size = rest.readableBytes  // one chunk
            case 1: size = random.int(1...7)  // tiny pieces: every state crosses a chunk end
            case 2: size = random.int(1...70_000)
            default: size = [1, 2, 4096, 16_384, 65_536][random.int(0...4)]
            }
            chunks.append(rest.readSlice(length: min(size, rest.readableBytes))!)
        }
        return chunks
    }

    @Test("Random bodies and random chunkings: the same parts, headers, bytes and failures as MultipartParser")
    func differential() {
        var random = SeededBytes(seed: 20_261_122)
        var bypassed: Int64 = 0
        var total = 0
        var failures = 0
        var cut = 0
        for iteration in 0..<300 {
            let (body, boundary) = Self.makeBody(&random)
            let reference = Self.plain([body], boundary: boundary)
            let pieces = Self.chunks(of: body, &random)
            if iteration.isMultiple(of: 4) {
                #expect(Self.plain(pieces, boundary: boundary) == reference, "case \(iteration): the parser itself depends on the chunking")
            }
            let (parsed, skipped) = Self.fast(pieces, boundary: boundary)
            #expect(parsed == reference, "case \(iteration) (boundary \(boundary.count) chars, \(pieces.count) chunks): \(parsed) vs \(reference)")
            bypassed += skipped
            total += body.readableBytes
            if reference.failed { failures += 1 }
            if reference.open != nil { cut += 1 }
        }
        // The cases cover both outcomes, and the fast path really carried most of the bytes.
        #expect(failures > 5 && failures < 200, "\(failures) malformed cases")
        #expect(cut > 5, "\(cut) cases cut inside a part")
        #expect(Double(bypassed) > 0.3 * Double(total), "only \(bypassed) of \(total) bytes went around the parser")
    }

    @Test("A large file part in network-sized chunks goes almost entirely around the parser, byte for byte")
    func largeFileIsBypassed() throws {
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        let content = MediaFixtures.png(size: 4 * 1024 * 1024, seed: 42)
        let body = MediaMultipart.encode(
            [MediaMultipart.field("replaces", "12"), MediaMultipart.file(content, fileName: "a.png")],
            boundary: boundary
        )
        var rest = body
        var chunks: [ByteBuffer] = []
        while rest.readableBytes > 0 { chunks.append(rest.readSlice(length: min(65_536, rest.readableBytes))!) }
        let (parsed, bypassed) = Self.fast(chunks, boundary: boundary)
        #expect(!parsed.failed && parsed.open == nil)
        #expect(parsed.parts.count == 2)
        #expect(parsed.parts.first?.body == Array("12".utf8))
        #expect(parsed.parts.last?.body == Array(content))
        #expect(bypassed > Int64(content.count) * 99 / 100, "bypassed \(bypassed) of \(content.count)")
    }

    @Test(
        "A part header name with a byte over 0x7F is refused before multipart-kit's parser sees it (it traps on one), however the body is cut; a UTF-8 header value is fine"
    )
    func nonASCIIHeaderNames() throws {
        let boundary = "fuzzBoundary1"
        // The input scripts/fuzz.sh found (less its two control bytes).
        var crash = Array("--fuzzBoundary1\r\nContFloatipsosit".utf8) + [UInt8](repeating: 0xFB, count: 49)
        crash += Array("ion: form-data; naename=\"b.bin\"\r\n\r\n\r\r\n\r\n-\r\n--fuzzBoundar\r\n--fuzzBoundary1--\r\n".utf8)
        for chunkSize in [1, 2, 7, 16, 64, crash.count] {
            let feeder = MultipartFeeder(boundary: boundary)
            #expect(throws: PartHeaderNameGuard.NonASCIIHeaderName.self, "chunks of \(chunkSize)") {
                for start in stride(from: 0, to: crash.count, by: chunkSize) {
                    try feeder.feed(ByteBuffer(bytes: crash[start..<min(crash.count, start + chunkSize)]))
                }
            }
        }
        // UTF-8 in a value (a filename), and bytes over 0x7F in bodies and in the preamble, are not header names.
        var fine = Array(
            "pr\u{e9}ambule\r\n--fuzzBoundary1\r\nContent-Disposition: form-data; name=\"file\"; filename=\"caf\u{e9}.txt\"\r\n\r\n".utf8
        )
        fine += [0xFF, 0xFB, 0x80] + Array("\r\n--fuzzBoundary1\r\nX-A: \u{e9}\r\n\r\n\u{e9}\r\n--fuzzBoundary1--\r\n".utf8)
        for chunkSize in [1, 3, 5, fine.count] {
            let feeder = MultipartFeeder(boundary: boundary)
            var headers: [String] = []
            feeder.onHeader = { name, value in headers.append("\(name): \(value)") }
            for start in stride(from: 0, to: fine.count, by: chunkSize) {
                try feeder.feed(ByteBuffer(bytes: fine[start..<min(fine.count, start + chunkSize)]))
            }
            #expect(
                headers == ["Content-Disposition: form-data; name=\"file\"; filename=\"caf\u{e9}.txt\"", "X-A: \u{e9}"],
                "chunks of \(chunkSize)"
            )
        }
    }
}
