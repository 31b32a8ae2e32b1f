import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The one rule for answers with a validator, used by every route that has one (the read answers, the catalog, manifests,
/// update plans, files): a strong `ETag` over the exact bytes sent; `304 Not Modified` with the same headers and no body
/// when `If-None-Match` names it (RFC 9110 §13.1.2: a list, weak tags compared by their opaque part, or `*`); else the
/// bytes with their `Content-Length`. `Cache-Control` is the route's (`no-cache` for answers that change, immutable for
/// those that never do).
enum HTTPCaching {
    /// `"<sha256 hex>"` of the bytes.
    static func etag(of bytes: some DataProtocol) -> String { "\"\(SHA256.hash(data: bytes).hexString)\"" }

    static func etag(of buffer: ByteBuffer) -> String { etag(of: buffer.readableBytesView) }

    /// Whether an `If-None-Match` header names `etag`.
    static func matches(_ header: String, etag: String) -> Bool {
        // An app sends back the one ETag it has: that answer needs no splitting.
        if header == etag { return true }
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == etag || tag == "*" || tag == "W/\(etag)"
        }
    }

    /// Whether the request's `If-None-Match` names `etag` (a 304 is the answer).
    static func isNotModified(_ request: Request, etag: String) -> Bool {
        request.headers[.ifNoneMatch].map { matches($0, etag: etag) } ?? false
    }

    /// `200` with `body`, or `304` when the client has it; `headers` are the route's (type, cache control, signature…).
    static func answer(_ body: ByteBuffer, etag: String, headers: HTTPFields, request: Request) -> Response {
        var headers = headers
        headers[.eTag] = etag
        if isNotModified(request, etag: etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentLength] = "\(body.readableBytes)"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// JSON bytes answered as above, `no-cache`: the client asks every time and gets a 304 while they are unchanged.
    static func json(_ body: ByteBuffer, etag: String? = nil, headers: HTTPFields = [:], request: Request) -> Response {
        var all: HTTPFields = [.contentType: "application/json", .cacheControl: "no-cache"]
        all.append(contentsOf: headers)
        return answer(body, etag: etag ?? self.etag(of: body), headers: all, request: request)
    }
}
