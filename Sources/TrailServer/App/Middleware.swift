import Foundation
import HTTPTypes
import Hummingbird
import Logging
import TrailAPI

/// Headers every response gets: a strict CSP with no inline script, no framing, no sniffing.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// The tile server's origin, read for every answer: an admin may change the tile server while the server runs.
    let tileOrigin: @Sendable () -> String?
    /// With an `https://` public URL: browsers that saw the site once never try plain HTTP again (a year).
    var strictTransportSecurity = false
    /// The origin of `--public-download-url`: `/api/v1/files/{sha256}` redirects there, and the visitor player reads
    /// those files with `fetch`, which `connect-src` governs through the redirect.
    var downloadOrigin: String? = nil
    /// The origin of `--oidc-issuer`: signing out (a form `POST /logout`) redirects to the provider's end-session
    /// endpoint, and `form-action` governs where a form's redirects may go.
    var signInOrigin: String? = nil
    /// The panel maps' basemap host (`--editor-tile-url`), fetched by the ranger's browser for display only.
    var editorTileOrigin: @Sendable () -> String? = { nil }

    init(tileOrigin: String?) {
        self.tileOrigin = { tileOrigin }
    }

    init(tileOrigin: @escaping @Sendable () -> String?) {
        self.tileOrigin = tileOrigin
    }

    var contentSecurityPolicy: String {
        Self.policy(tileOrigin: tileOrigin(), downloadOrigin: downloadOrigin, signInOrigin: signInOrigin, editorTileOrigin: editorTileOrigin())
    }

    static func policy(tileOrigin: String?, downloadOrigin: String? = nil, signInOrigin: String? = nil, editorTileOrigin: String? = nil) -> String {
        var imageHosts: [String] = []
        for origin in [tileOrigin, editorTileOrigin] {
            if let origin, !imageHosts.contains(origin) { imageHosts.append(origin) }
        }
        let tiles = imageHosts.map { " \($0)" }.joined()
        let downloads = downloadOrigin.map { " \($0)" } ?? ""
        return [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data: blob:\(tiles)",
            "media-src 'self' blob:",
            "connect-src 'self'\(downloads)",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'\(signInOrigin.map { " \($0)" } ?? "")",
            "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        // A handler's own policy stays: previews of uploaded files send `default-src 'none'; sandbox`.
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "same-origin"
        if strictTransportSecurity { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }
}

extension SecurityHeadersMiddleware {
    /// `scheme://host[:port]` of a URL, as a CSP source; nil when it has no host.
    static func origin(of url: String?) -> String? {
        guard let url, let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let strictTransportSecurity = Self("Strict-Transport-Security")!
}

/// Turns errors into answers: JSON `{error: {code, message}}` under `/api/`, an HTML page elsewhere. Never a stack trace.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let views: ViewRenderer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as TusError {
            return try error.response(from: request, context: context)
        } catch {
            let (status, code, message, fields) = Self.describe(error, logger: context.logger)
            let retryAfter = (error as? any AppError)?.retryAfterSeconds
            if request.uri.path.hasPrefix("/api/") || request.wantsJSON {
                var response = APIErrorBody.response(status: status, code: code, message: message, fields: fields)
                // tus 1.0: every answer of the upload endpoint carries Tus-Resumable, refusals (401, 403, 404) included.
                if request.uri.path.hasPrefix("/api/v1/manage/uploads") { response.headers[.tusResumable] = TusController.version }
                if let retryAfter { response.headers[.retryAfter] = "\(retryAfter)" }
                return response
            }
            if status == .unauthorized {
                return .redirect(
                    to:
                        "/login?next=\(request.uri.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-_"))) ?? "/")"
                )
            }
            var page = views.errorPage(status: status, message: message, context: context)
            if let retryAfter { page.headers[.retryAfter] = "\(retryAfter)" }
            return page
        }
    }

    static func describe(_ error: any Error, logger: Logger) -> (HTTPResponse.Status, String, String, [String: String]?) {
        switch error {
        case let error as any AppError:
            return (error.status, error.code, error.message, error.fieldMessages)
        case let error as HTTPError:
            return (error.status, Self.code(for: error.status), error.body ?? error.status.reasonPhrase, nil)
        // No case for DecodingError: a request body that does not decode is a 400 where it is read
        // (`WireRequestDecoder`); one that escapes to here is stored data that no longer reads (a damaged JSON column
        // or manifest), a 500 with the detail in the log, not the caller's fault.
        case let error as any HTTPResponseError:
            return (error.status, Self.code(for: error.status), error.status.reasonPhrase, nil)
        default:
            logger.error("unhandled error: \(String(reflecting: error))")
            return (.internalServerError, "internal_error", "Something went wrong on the server. It has been logged.", nil)
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 409: "conflict"
        case 410: "gone"
        case 412: "precondition_failed"
        case 413: "payload_too_large"
        case 415: "unsupported_media_type"
        case 416: "range_not_satisfiable"
        case 422: "validation_failed"
        case 429: "too_many_requests"
        case 460: "checksum_mismatch"
        default: status.code >= 500 ? "internal_error" : "error"
        }
    }
}

/// Every `/api/v1` error answer: `{"error": {"code", "message", "fields"?}}`, the schema `Error` of `openapi.json`
/// (generated as `Components.Schemas.APIError`, the type TrailClient reads it with).
enum APIErrorBody {
    static func response(status: HTTPResponse.Status, code: String, message: String, fields: [String: String]? = nil) -> Response {
        let body = Components.Schemas.APIError(error: .init(code: code, message: message, fields: fields.map { .init(additionalProperties: $0) }))
        let data = (try? WireCoding.encoder.encode(body)) ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

extension Request {
    /// The panel's own scripts ask for JSON; plain form posts get pages and redirects.
    var wantsJSON: Bool { headers[.accept]?.contains("application/json") == true }
}

extension Response {
    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}
