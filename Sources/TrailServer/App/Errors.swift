import Foundation
import HTTPTypes
import Hummingbird

/// The one error protocol of the server. Every refusal a request can end with says its HTTP status, a stable `code`
/// for scripts, a `message` for people and, for forms, a message per field. `ErrorMiddleware` renders it as the API's
/// JSON error or as the panel's error page without knowing the concrete type; as a Hummingbird `HTTPResponseError`
/// it also answers on its own where that middleware does not run.
package protocol AppError: HTTPResponseError, Sendable {
    var code: String { get }
    var message: String { get }
    /// Field name → message, for forms (nil when the error is not about fields).
    var fieldMessages: [String: String]? { get }
    /// Seconds after which the same request may succeed (`Retry-After` of a 429 or 503); nil for most refusals.
    var retryAfterSeconds: Int? { get }
}

extension AppError {
    package var code: String { ErrorMiddleware.code(for: status) }
    package var fieldMessages: [String: String]? { nil }
    package var retryAfterSeconds: Int? { nil }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = APIErrorBody.response(status: status, code: code, message: message, fields: fieldMessages)
        if let retryAfterSeconds { response.headers[.retryAfter] = "\(retryAfterSeconds)" }
        return response
    }
}

/// Field name → message, shown next to the field on a page and as `error.fields` in the API.
package struct ValidationErrors: AppError, Equatable {
    package var fields: [String: String]
    package init(_ fields: [String: String] = [:]) { self.fields = fields }
    package subscript(field: String) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }
    package var isEmpty: Bool { fields.isEmpty }
    package func throwIfAny() throws { if !isEmpty { throw self } }
    /// One line for the API's `message`.
    package var summary: String { fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: " ") }

    package var status: HTTPResponse.Status { .unprocessableContent }
    package var message: String { summary }
    package var fieldMessages: [String: String]? { fields }
}

/// The object does not exist, or the caller may not know it exists (both answer 404).
package struct NotFound: AppError {
    package init() {}
    package var status: HTTPResponse.Status { .notFound }
    package var message: String { "Not found." }
}

/// The caller may see the object but not do this to it.
package struct Forbidden: AppError {
    package let message: String
    package var status: HTTPResponse.Status { .forbidden }
    package init(_ message: String = "You do not have permission to do this.") { self.message = message }
}

/// A file does not fit in its site's storage quota (413), with what the ranger can do about it.
package struct OverQuota: AppError {
    package let message: String
    package var status: HTTPResponse.Status { .contentTooLarge }
    init(message: String) { self.message = message }
    init(site: Site, quota: Int64) { self.message = ByteFormat.quotaMessage(site: site, quota: quota) }
}

/// The server is already doing as much of this kind of work as it allows at once (429): try again shortly. Bounds
/// CPU-heavy work that a signed-in person can start, so a few of them cannot take every core from everyone else.
package struct TooBusy: AppError {
    package let message: String
    package let retryAfterSeconds: Int?
    package var status: HTTPResponse.Status { .tooManyRequests }
    init(_ message: String, retryAfterSeconds: Int) {
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The caller did this as often as one person (or one address) may in a while (429): `retryAfterSeconds` says when
/// it may again. Limits what a signed-in person can make the server send to others, such as email.
package struct RateLimited: AppError {
    package let message: String
    package let retryAfterSeconds: Int?
    package var status: HTTPResponse.Status { .tooManyRequests }
    init(_ message: String, retryAfterSeconds: Int) {
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The object is in a state that does not allow the change (e.g. a tour locked for review).
package struct Conflict: AppError {
    package let message: String
    package var status: HTTPResponse.Status { .conflict }
    package init(_ message: String) { self.message = message }
}
