import Hummingbird
import NIOCore

/// The answers of the public read routes (`/api/v1/sites`, a site's packages, a package, the signing key, the catalog,
/// and the visitors' index `/visit`): the same bytes for everyone, with a strong `ETag` over them and
/// `Cache-Control: no-cache`, so a phone asks every time and an unchanged answer costs a 304.
///
/// They are made from the database on every request. The one cache in front of them is nginx's `proxy_cache`
/// (`deploy/nginx.conf`): it keeps each answer for a second and then revalidates it with the `ETag`, so behind it the
/// server makes each answer about once a second however many phones ask. A cache in the server as well was measured
/// through that chain and changed nothing there (nginx answers the hits without asking the server), while it needed
/// its own invalidation: a commit observer, and a poll of SQLite's `data_version` for other processes' commits.
/// Without it a change shows at once on the server, and within a second behind nginx.
enum ReadAnswer {
    /// `value` as JSON.
    static func json(_ value: some Encodable, request: Request) throws -> Response {
        bytes(ByteBuffer(bytes: try WireCoding.encoder.encode(value)), contentType: "application/json", request: request)
    }

    /// The bytes with a strong ETag over them, `no-cache`: `If-None-Match` → 304 so clients can poll cheaply.
    static func bytes(_ body: ByteBuffer, contentType: String, request: Request) -> Response {
        HTTPCaching.answer(
            body,
            etag: HTTPCaching.etag(of: body),
            headers: [.contentType: contentType, .cacheControl: "no-cache"],
            request: request
        )
    }
}
