import Hummingbird
import NIOCore

/// The CSRF token of a streaming multipart form, read from its first field. Forms that upload files cannot be
/// collected before the check (they stream to disk), and a token in the form's address would land in the browser's
/// history, the server's access log and a proxy's; so every multipart form of the panel sends its hidden `_csrf`
/// input first, browsers send fields in the order of the page, and this reads that one field off the front of the
/// body. The body then goes on to its handler whole: the bytes read here first, then the rest as it arrives.
enum MultipartCSRF {
    /// Enough for a part's headers and a token; a form whose first field is not within this is refused.
    static let maxPeekBytes = 4 * 1024

    enum Peek: Equatable {
        case needMore
        /// The first part's value when it is the field `_csrf`; nil when the first part is anything else.
        case first(String?)
    }

    /// The boundary of a `multipart/form-data` content type, or nil for any other type.
    static func boundary(contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Reads the body's front until its first part is known; answers that part's token and the body to hand on.
    static func token(of body: RequestBody, boundary: String) async throws -> (token: String?, body: RequestBody) {
        var iterator = body.makeAsyncIterator()
        var front = ByteBuffer()
        var token: String?
        while front.readableBytes < maxPeekBytes, var chunk = try await iterator.next() {
            front.writeBuffer(&chunk)
            if case let .first(value) = peek(Array(front.readableBytesView.prefix(maxPeekBytes)), boundary: boundary) {
                token = value
                break
            }
        }
        return (token, RequestBody(asyncSequence: ResumedBody(front: front, rest: .init(iterator))))
    }

    /// Looks for the first part in the bytes received so far.
    static func peek(_ bytes: [UInt8], boundary: String) -> Peek {
        let delimiter = Array("--\(boundary)".utf8)
        guard let start = firstIndex(of: delimiter, in: bytes, from: 0) else { return bytes.count < delimiter.count + 2 ? .needMore : .first(nil) }
        let headersStart = start + delimiter.count + 2  // past the delimiter's CRLF
        guard let headersEnd = firstIndex(of: Array("\r\n\r\n".utf8), in: bytes, from: min(headersStart, bytes.count)) else { return .needMore }
        let headers = String(decoding: bytes[headersStart..<headersEnd], as: UTF8.self).lowercased()
        let disposition = headers.split(separator: "\r\n").first { $0.hasPrefix("content-disposition:") } ?? ""
        guard disposition.contains("name=\"_csrf\""), !disposition.contains("filename") else { return .first(nil) }
        let valueStart = headersEnd + 4
        guard let valueEnd = firstIndex(of: Array("\r\n".utf8) + delimiter, in: bytes, from: valueStart) else { return .needMore }
        return .first(String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self))
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count - from else { return nil }
        for index in from...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if haystack[index..<index + needle.count].elementsEqual(needle) { return index }
        }
        return nil
    }
}

/// A request body whose front was already read: that front, then the rest from the same iterator.
private struct ResumedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// The body's iterator, moved here once. A request body has one reader, so the box is never shared between two
    /// tasks at once; it is a class only so that the sequence can be `Sendable`, as `RequestBody` requires.
    final class Rest: @unchecked Sendable {
        var iterator: RequestBody.AsyncIterator
        init(_ iterator: RequestBody.AsyncIterator) { self.iterator = iterator }
    }

    let front: ByteBuffer
    let rest: Rest

    struct AsyncIterator: AsyncIteratorProtocol {
        var front: ByteBuffer?
        let rest: Rest

        mutating func next() async throws -> ByteBuffer? {
            if let buffer = front {
                front = nil
                if buffer.readableBytes > 0 { return buffer }
            }
            return try await rest.iterator.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(front: front, rest: rest) }
}
