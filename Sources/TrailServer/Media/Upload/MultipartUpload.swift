import Foundation
import Hummingbird
import MultipartKit
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams a `multipart/form-data` body chunk by chunk through multipart-kit's `MultipartParser`:
/// each `file` part goes straight to `data/uploads/<uuid>` (hashed as it arrives), other fields are small.
/// Memory stays bounded by one network chunk plus the writer's buffer.
struct MultipartUpload {
    struct Result: Sendable {
        var files: [AssetIntake.Received] = []
        var fields: [String: String] = [:]
        /// Fields sent more than once (``fields`` keeps the last value).
        var repeatedFields: Set<String> = []

        /// Removes every received file from `uploads/`: a refused form leaves nothing behind.
        func discardFiles(paths: DataPaths) {
            for file in files { try? FileManager.default.removeItem(at: paths.upload(file.uploadId)) }
        }

        /// The asset the form names in `replaces`: nil without the field; refused (422 on `replaces`) when it is not
        /// one asset number, instead of quietly adding the file beside the asset meant. The received files are removed
        /// before the refusal.
        func replacedAssetId(paths: DataPaths) throws -> Int64? {
            guard let text = fields["replaces"] else { return nil }
            guard !repeatedFields.contains("replaces"), let id = AssetIntake.replacedAssetId(text) else {
                discardFiles(paths: paths)
                throw ValidationErrors(["replaces": AssetIntake.replacesProblem])
            }
            return id
        }
    }

    static let maxParts = 32
    static let maxHeaderBytes = 16 * 1024
    static let maxFieldBytes = 4 * 1024

    /// The boundary of a multipart/form-data Content-Type (RFC 2046: 1 to 70 characters).
    static func boundary(contentType: String?) throws -> String {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw HTTPError(.unsupportedMediaType, message: "Send the file as multipart/form-data with a field named “file”.")
        }
        guard let range = contentType.range(of: "boundary=", options: .caseInsensitive) else {
            throw HTTPError(.badRequest, message: "The multipart Content-Type has no boundary.")
        }
        var boundary = String(contentType[range.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 { boundary = String(boundary.dropFirst().dropLast()) }
        guard (1...70).contains(boundary.utf8.count) else {
            throw HTTPError(.badRequest, message: "The multipart boundary must be 1 to 70 characters long.")
        }
        return boundary
    }

    private enum Event {
        case begin([(String, String)])
        case body(ByteBuffer)
        case end
    }

    /// Collects parser callbacks; the async work (file writes) happens after each chunk is parsed.
    private final class Collector {
        var headers: [(String, String)] = []
        var inPart = false
        var events: [Event] = []
        var bytesSinceBody = 0

        func header(_ name: String, _ value: String) {
            headers.append((name, value))
        }
        func body(_ buffer: ByteBuffer) {
            if !inPart {
                events.append(.begin(headers))
                headers = []
                inPart = true
            }
            events.append(.body(buffer))
        }
        func complete() {
            if !inPart {
                events.append(.begin(headers))
                headers = []
            }
            events.append(.end)
            inPart = false
        }
    }

    /// File bytes one request may bring in all (a storage quota's room), and what to say when it is exceeded.
    struct Budget: Sendable {
        let bytes: Int64
        let message: String
    }

    static func receive(_ request: Request, paths: DataPaths, maxFileSize: Int64, budget: Budget? = nil) async throws -> Result {
        let boundary = try boundary(contentType: request.headers[.contentType])
        let collector = Collector()
        let parser = MultipartFeeder(boundary: boundary)
        parser.onHeader = { collector.header($0, $1) }
        parser.onBody = { collector.body($0) }
        parser.onPartComplete = { collector.complete() }

        var result = Result()
        var parts = 0
        var fileBytes: Int64 = 0
        var current: (name: String, fileName: String?, writer: HashingFileWriter?, uploadId: String?, field: String)?
        do {
            for try await chunk in request.body {
                do { try parser.feed(chunk) } catch is PartHeaderNameGuard.NonASCIIHeaderName {
                    throw HTTPError(.badRequest, message: "A multipart part header name may hold only ASCII letters, digits and punctuation.")
                } catch {
                    throw HTTPError(.badRequest, message: "The multipart body is malformed.")
                }
                // Bytes fed without a single part event are preamble or headers: bound them, so a 1 MB header line fails fast.
                if collector.events.isEmpty && !collector.inPart {
                    collector.bytesSinceBody += chunk.readableBytes
                } else {
                    collector.bytesSinceBody = 0
                }
                if collector.bytesSinceBody > maxHeaderBytes {
                    throw HTTPError(.badRequest, message: "A multipart part header is longer than \(maxHeaderBytes / 1024) KiB.")
                }
                let events = collector.events
                collector.events.removeAll(keepingCapacity: true)
                for event in events {
                    switch event {
                    case .begin(let headers):
                        parts += 1
                        guard parts <= maxParts else {
                            throw HTTPError(.badRequest, message: "Too many parts in the multipart body (at most \(maxParts)).")
                        }
                        let (name, fileName) = try disposition(headers)
                        // A `file` part is the file. RFC 7578 makes `filename` optional, and API clients may leave it out;
                        // but a browser's file input with nothing chosen sends `filename=""` and no bytes: no file.
                        if name == "file", fileName.map({ !$0.isEmpty }) ?? true {
                            let id = UUID().uuidString.lowercased()
                            current = (name, fileName, try await HashingFileWriter.create(at: paths.upload(id), limit: maxFileSize), id, "")
                        } else {
                            current = (name, fileName, nil, nil, "")
                        }
                    case .body(let buffer):
                        guard var part = current else { continue }
                        if let writer = part.writer {
                            fileBytes += Int64(buffer.readableBytes)
                            if let budget, fileBytes > budget.bytes { throw HTTPError(.contentTooLarge, message: budget.message) }
                            try await writer.write(buffer)
                        } else if part.fileName == nil {
                            part.field += String(buffer: buffer)
                            guard part.field.utf8.count <= maxFieldBytes else {
                                throw HTTPError(.contentTooLarge, message: "The form field “\(part.name)” is too long.")
                            }
                            current = part
                        }
                    case .end:
                        guard let part = current else { continue }
                        if let writer = part.writer, let id = part.uploadId {
                            let (size, sha) = try await writer.finish()
                            result.files.append(
                                .init(uploadId: id, size: size, sha256: sha, header: writer.header, originalName: part.fileName ?? "")
                            )
                        } else if part.fileName == nil {
                            if result.fields[part.name] != nil { result.repeatedFields.insert(part.name) }
                            result.fields[part.name] = part.field
                        }
                        current = nil
                    }
                }
            }
        } catch {
            // Nothing half-written stays behind: the part in progress and every file already received.
            if let writer = current?.writer { await writer.discard() }
            for file in result.files { try? FileManager.default.removeItem(at: paths.upload(file.uploadId)) }
            if let tooLarge = error as? UploadTooLarge {
                throw HTTPError(
                    .contentTooLarge,
                    message: "The file is over the \(ByteFormat.string(tooLarge.limit)) limit for one file: not uploaded. \(ByteFormat.makeItSmaller)"
                )
            }
            throw error
        }
        if current != nil || collector.inPart {
            if let writer = current?.writer { await writer.discard() }
            for file in result.files { try? FileManager.default.removeItem(at: paths.upload(file.uploadId)) }
            throw HTTPError(.badRequest, message: "The multipart body ended in the middle of a part.")
        }
        return result
    }

    /// `Content-Disposition: form-data; name="file"; filename="x.jpg"`; every part must have one with a name.
    static func disposition(_ headers: [(String, String)]) throws -> (name: String, fileName: String?) {
        for (name, value) in headers where name.lowercased() == "content-type" && value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw HTTPError(.badRequest, message: "A multipart part has an empty Content-Type.")
        }
        guard let value = headers.first(where: { $0.0.lowercased() == "content-disposition" })?.1 else {
            throw HTTPError(.badRequest, message: "A multipart part has no Content-Disposition.")
        }
        let name = parameter("name", in: value)
        guard let name, !name.isEmpty else { throw HTTPError(.badRequest, message: "A multipart part has no name.") }
        return (name, parameter("filename", in: value))
    }

    static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.replacingOccurrences(of: "\\\"", with: "\"")
        }
        return nil
    }
}

/// Feeds a multipart body to multipart-kit's `MultipartParser`, the parser of record, but lets the bulk of each part's
/// body skip it: the parser looks at every byte on its own, and cuts binary data into a new buffer at every CR
/// (about every 256 bytes), which made uploads CPU-bound at a fraction of disk speed.
///
/// Once the parser is known to be inside a part's body, the bytes up to the next delimiter (`CRLF--boundary`, found
/// with `memmem`) are handed on as body in one slice, exactly as the parser would have handed them on; the delimiter
/// and everything after it go to the parser again. "Known to be inside a body" is checked, not assumed: a probe
/// byte (not CR) is fed alone, and only if the parser answers with exactly one body callback is it in its body state
/// (in any other state the byte would be a header character, part of a delimiter, preamble or epilogue).
final class MultipartFeeder {
    var onHeader: (String, String) -> Void = { _, _ in }
    var onBody: (ByteBuffer) -> Void = { _ in }
    var onPartComplete: () -> Void = {}

    private let parser: MultipartParser
    /// Sees every byte the parser is given, first (see `PartHeaderNameGuard`).
    private var headerGuard: PartHeaderNameGuard
    /// `CRLF--boundary`; its only CR is its first byte (a boundary has no CR).
    private let delimiter: [UInt8]
    /// The parser is in its body state and has seen every byte so far.
    private var inBody = false
    private var callbacks = 0
    private var bodyCallbacks = 0
    /// Body bytes that went around the parser (for tests and metrics).
    private(set) var bypassedBytes: Int64 = 0

    private static let cr = UInt8(ascii: "\r")
    private static let headerEnd: [UInt8] = Array("\r\n\r\n".utf8)

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        delimiter = Array("\r\n--\(boundary)".utf8)
        headerGuard = PartHeaderNameGuard(delimiter: delimiter)
        parser.onHeader = { [unowned self] name, value in
            callbacks += 1
            onHeader(name, value)
        }
        parser.onBody = { [unowned self] buffer in
            callbacks += 1
            bodyCallbacks += 1
            onBody(buffer)
        }
        parser.onPartComplete = { [unowned self] in
            callbacks += 1
            onPartComplete()
        }
    }

    func feed(_ chunk: ByteBuffer) throws {
        let count = chunk.readableBytes
        var position = 0
        var probedHere = false
        while position < count {
            if inBody {
                position = try bypass(chunk, from: position)
                continue
            }
            // Where to probe: where the chunk starts (a body going on from the last chunk), else right after the
            // next blank line (the end of a part's headers).
            let probe: Int?
            if !probedHere {
                probe = position
                probedHere = true
            } else {
                probe = Self.find(Self.headerEnd, in: chunk, from: position).map { $0 + Self.headerEnd.count }
            }
            guard let probe, probe < count else {
                try execute(chunk, position..<count)
                return
            }
            if probe > position { try execute(chunk, position..<probe) }
            position = probe
            guard chunk.getInteger(at: chunk.readerIndex + probe, as: UInt8.self) != Self.cr else { continue }
            let (calls, bodies) = (callbacks, bodyCallbacks)
            try execute(chunk, probe..<(probe + 1))
            position = probe + 1
            inBody = callbacks == calls + 1 && bodyCallbacks == bodies + 1
        }
    }

    /// In the parser's body state: hands on the body up to the next delimiter, or up to a possible start of one at the
    /// end of the chunk (which goes to the parser with the rest). Returns where the parser takes over.
    private func bypass(_ chunk: ByteBuffer, from position: Int) throws -> Int {
        let count = chunk.readableBytes
        var bodyEnd = count
        var atDelimiter = false
        if let found = Self.find(delimiter, in: chunk, from: position) {
            bodyEnd = found
            atDelimiter = true
        } else if let last = Self.lastCR(in: chunk, from: max(position, count - delimiter.count + 1)),
            Self.isPrefixOfDelimiter(chunk, from: last, delimiter: delimiter)
        {
            bodyEnd = last
        }
        if bodyEnd > position, let slice = chunk.getSlice(at: chunk.readerIndex + position, length: bodyEnd - position) {
            bypassedBytes += Int64(slice.readableBytes)
            headerGuard.bodySkipped()
            callbacks += 1
            bodyCallbacks += 1
            onBody(slice)
        }
        guard bodyEnd < count else { return count }
        inBody = false
        if atDelimiter { return bodyEnd }
        try execute(chunk, bodyEnd..<count)
        return count
    }

    private func execute(_ chunk: ByteBuffer, _ range: Range<Int>) throws {
        guard !range.isEmpty, let slice = chunk.getSlice(at: chunk.readerIndex + range.lowerBound, length: range.count) else { return }
        try slice.withUnsafeReadableBytes { try headerGuard.check($0) }
        try parser.execute(slice)
    }

    /// The first occurrence of `needle` at or after `position`: `memchr` for the first byte (fast, vectorised in libc),
    /// then a comparison of the rest. (`memmem` is a GNU extension Swift's Glibc module does not export.)
    static func find(_ needle: [UInt8], in buffer: ByteBuffer, from position: Int) -> Int? {
        guard let first = needle.first else { return nil }
        return buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard let base = bytes.baseAddress, position < bytes.count else { return nil }
            var start = position
            while start <= bytes.count - needle.count {
                guard let hit = memchr(base + start, Int32(first), bytes.count - needle.count + 1 - start) else { return nil }
                let index = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + index, needle, needle.count) == 0 { return index }
                start = index + 1
            }
            return nil
        }
    }

    static func lastCR(in buffer: ByteBuffer, from position: Int) -> Int? {
        buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard position < bytes.count else { return nil }
            var index = bytes.count - 1
            while index >= position {
                if bytes[index] == cr { return index }
                index -= 1
            }
            return nil
        }
    }

    static func isPrefixOfDelimiter(_ buffer: ByteBuffer, from position: Int, delimiter: [UInt8]) -> Bool {
        let tail = buffer.readableBytesView.dropFirst(position)
        return tail.count < delimiter.count && tail.elementsEqual(delimiter.prefix(tail.count))
    }
}

/// A part header *name* with a byte of 0x80 or more must never reach multipart-kit's parser: its check of header-name
/// characters indexes a 128-entry table with the byte, and anything above traps (multipart-kit 4.7.1,
/// `MultipartParser.swift:316`, `allowedHeaderFieldNameCharacterFlags[Int(self)]`): one request from any signed-in
/// author would stop the whole server. Found by `scripts/fuzz.sh multipart`. Header names are ASCII tokens
/// (RFC 9110 §5.1), so the request is refused with 400 instead.
///
/// Sees exactly the bytes the parser is given, in order, and steps through the parser's own states with the parser's
/// own rules (preamble matching, CRLF after a boundary, header name and value, body and boundary matching, epilogue),
/// so it knows which byte the parser would read as part of a header name. Where the parser would throw, it stops
/// looking (the feeder throws there too). Body bytes that go around the parser are announced with `bodySkipped()`.
struct PartHeaderNameGuard {
    struct NonASCIIHeaderName: Error {}

    private enum State {
        case preamble(matched: Int)
        case preHeadersCR
        case preHeadersLF
        case name(empty: Bool)
        case value
        case valueLF
        case headersEndLF
        case body
        case boundary(matched: Int)
        /// Epilogue, or a syntax error: the parser reads nothing more as a header.
        case done
    }

    /// `CRLF--boundary`, as the parser's `boundary`.
    private let delimiter: [UInt8]
    private var state = State.preamble(matched: 0)
    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), hyphen = UInt8(ascii: "-"), colon = UInt8(ascii: ":")

    init(delimiter: [UInt8]) { self.delimiter = delimiter }

    /// The feeder handed body bytes on without the parser: it is (and stays) in its body state.
    mutating func bodySkipped() { state = .body }

    mutating func check(_ bytes: UnsafeRawBufferPointer) throws {
        for byte in bytes { try step(byte) }
    }

    private mutating func step(_ byte: UInt8) throws {
        switch state {
        case .preamble(var matched):
            // MultipartParser.parsePreamble, rule for rule.
            if matched == 0, byte == delimiter[2] {
                matched = 3
            } else if byte == delimiter[matched] {
                matched += 1
            } else if matched > 0, byte == delimiter[0] {
                matched = 1
            } else {
                matched = 0
            }
            state = matched >= delimiter.count ? .preHeadersCR : .preamble(matched: matched)
        case .preHeadersCR:
            state = byte == Self.cr ? .preHeadersLF : .done
        case .preHeadersLF:
            state = byte == Self.lf ? .name(empty: true) : .done
        case .name(let empty):
            if byte == Self.colon && !empty {
                state = .value
            } else if byte == Self.cr && empty {
                state = .headersEndLF
            } else if byte >= 0x80 {
                throw NonASCIIHeaderName()
            } else {
                // An allowed character goes on the name; any other one is the parser's syntax error.
                state = Self.isTokenCharacter(byte) ? .name(empty: false) : .done
            }
        case .value:
            if byte == Self.cr { state = .valueLF }
        case .valueLF:
            state = byte == Self.lf ? .name(empty: true) : .done
        case .headersEndLF:
            state = byte == Self.lf ? .body : .done
        case .body:
            if byte == delimiter[0] { state = .boundary(matched: 1) }
        case .boundary(let matched):
            if matched >= delimiter.count {
                state = byte == Self.cr ? .preHeadersLF : .done  // "-" begins the epilogue; anything else is an error
            } else if byte == delimiter[matched] {
                state = .boundary(matched: matched + 1)
            } else {
                state = byte == delimiter[0] ? .boundary(matched: 1) : .body
            }
        case .done:
            break
        }
    }

    /// RFC 9110 token characters: what the parser's table allows in a header name.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
