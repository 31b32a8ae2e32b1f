import HTTPTypes
import Hummingbird
import NIOCore

/// The CSRF check, whole: every state-changing request made with a cookie carries the token that
/// `AuthenticationMiddleware` settled for it (the session's, or the anonymous double-submit cookie's), in the
/// `X-CSRF-Token` header (scripts), the `_csrf` field of a urlencoded form, or the first field of a multipart form.
/// Never in the address: a token there lands in the history and in every log on the way, so a `?_csrf=` counts for
/// nothing.
///
/// A multipart form that uploads files cannot be collected before the check (it streams to disk), so every multipart
/// form of the panel sends its hidden `_csrf` input first, browsers send fields in the order of the page, and this reads
/// that one field off the front of the body. The body then goes on to its handler whole: the bytes read here first, then
/// the rest as it arrives.
struct CSRFMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    static let refusal = "This form has expired or did not come from this site. Reload the page and try again."

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // An API call without a session carries no ambient credential, so there is nothing to forge: it goes on to
        // answer 401 (or, on the public mobile API, simply works). The panel's anonymous forms keep the double-submit check.
        let ambientCredential = context.sessionToken != nil || !request.uri.path.hasPrefix("/api/")
        guard [.post, .put, .patch, .delete].contains(request.method), !context.viaAPIToken, ambientCredential else {
            return try await next(request, context)
        }
        var request = request
        let sent = try await Self.sentToken(&request, maxBodySize: context.maxUploadSize)
        guard let sent, !context.csrfToken.isEmpty, SecretToken.constantTimeEquals(sent, context.csrfToken) else {
            throw HTTPError(.forbidden, message: Self.refusal)
        }
        return try await next(request, context)
    }

    /// The token the request carries: its header, else its urlencoded form's `_csrf` field (the body is collected and
    /// put back), else its multipart form's first field (the body's front is read and put back).
    static func sentToken(_ request: inout Request, maxBodySize: Int) async throws -> String? {
        if let header = request.headers[.xCSRFToken] { return header }
        let contentType = request.headers[.contentType]
        if contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            let body = try await request.collectBody(upTo: maxBodySize)
            // A body that does not parse carries no token the check can trust: refused as a missing one is (403).
            return (try? URLEncodedFormDecoder().decode(SentToken.self, from: String(buffer: body)))?.token
        }
        if let boundary = multipartBoundary(contentType: contentType) {
            let (token, body) = try await multipartToken(of: request.body, boundary: boundary)
            request.body = body
            return token
        }
        return nil
    }

    /// The one field of a urlencoded form the check reads; the handler decodes the rest as its own `PanelForm`.
    private struct SentToken: Decodable {
        var token: String?
        enum CodingKeys: String, CodingKey { case token = "_csrf" }
    }

    // MARK: Multipart forms

    /// Enough for a part's headers and a token; a form whose first field is not within this is refused.
    static let maxMultipartPeekBytes = 4 * 1024

    enum MultipartPeek: Equatable {
        case needMore
        /// The first part's value when it is the field `_csrf`; nil when the first part is anything else.
        case first(String?)
    }

    /// The boundary of a `multipart/form-data` content type, or nil for any other type.
    static func multipartBoundary(contentType: String?) -> String? {
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
    static func multipartToken(of body: RequestBody, boundary: String) async throws -> (token: String?, body: RequestBody) {
        var iterator = body.makeAsyncIterator()
        var front = ByteBuffer()
        var token: String?
        while front.readableBytes < maxMultipartPeekBytes, var chunk = try await iterator.next() {
            front.writeBuffer(&chunk)
            if case let .first(value) = peekMultipart(Array(front.readableBytesView.prefix(maxMultipartPeekBytes)), boundary: boundary) {
                token = value
                break
            }
        }
        return (token, RequestBody(asyncSequence: ResumedBody(front: front, rest: .init(iterator))))
    }

    /// Looks for the first part in the bytes received so far.
    static func peekMultipart(_ bytes: [UInt8], boundary: String) -> MultipartPeek {
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
}

extension HTTPField.Name {
    static let xCSRFToken = Self("X-CSRF-Token")!
}
