import Foundation
import HTTPTypes
import Hummingbird

/// The one error protocol of the server. Every refusal a request can end with says its HTTP status, a stable `code`
/// for scripts, a `message` for people and, for forms, a message per field. `ErrorMiddleware` renders it as the API's
/// JSON error or as the panel's error page without knowing the concrete type; as a Hummingbird `HTTPResponseError`
/// it also answers on its own where that middleware does not run.
protocol AppError: HTTPResponseError, Sendable {
    var code: String { get }
    var message: String { get }
    /// Field name → message, for forms (nil when the error is not about fields).
    var fieldMessages: [String: String]? { get }
    /// Seconds after which the same request may succeed (`Retry-After` of a 429 or 503); nil for most refusals.
    var retryAfterSeconds: Int? { get }
}

extension AppError {
    var code: String { ErrorMiddleware.code(for: status) }
    var fieldMessages: [String: String]? { nil }
    var retryAfterSeconds: Int? { nil }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = APIErrorBody.response(status: status, code: code, message: message, fields: fieldMessages)
        if let retryAfterSeconds { response.headers[.retryAfter] = "\(retryAfterSeconds)" }
        return response
    }
}

/// Field name → message, shown next to the field on a page and as `error.fields` in the API.
struct ValidationErrors: AppError, Equatable {
    var fields: [String: String]
    init(_ fields: [String: String] = [:]) { self.fields = fields }
    subscript(field: String) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }
    var isEmpty: Bool { fields.isEmpty }
    func throwIfAny() throws { if !isEmpty { throw self } }
    /// One line for the API's `message`.
    var summary: String { fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: " ") }

    var status: HTTPResponse.Status { .unprocessableContent }
    var message: String { summary }
    var fieldMessages: [String: String]? { fields }
}

extension Result where Failure == ValidationErrors {
    /// The problems, none for a valid value: for a caller that adds its own (rules that need the database) before it
    /// throws them all at once, then takes the value with `get()`.
    var errors: ValidationErrors {
        if case .failure(let errors) = self { errors } else { ValidationErrors() }
    }
}

/// The object does not exist, or the caller may not know it exists (both answer 404).
struct NotFound: AppError {
    init() {}
    var status: HTTPResponse.Status { .notFound }
    var message: String { "Not found." }
}

/// The caller may see the object but not do this to it.
struct Forbidden: AppError {
    let message: String
    var status: HTTPResponse.Status { .forbidden }
    init(_ message: String = "You do not have permission to do this.") { self.message = message }
}

/// A file does not fit in its site's storage quota (413), with what the ranger can do about it.
struct OverQuota: AppError {
    let message: String
    var status: HTTPResponse.Status { .contentTooLarge }
    init(message: String) { self.message = message }
    init(site: Site, quota: Int64) { self.message = ByteFormat.quotaMessage(site: site, quota: quota) }
}

/// The server is already doing as much of this kind of work as it allows at once (429): try again shortly. Bounds
/// CPU-heavy work that a signed-in person can start, so a few of them cannot take every core from everyone else.
struct TooBusy: AppError {
    let message: String
    let retryAfterSeconds: Int?
    var status: HTTPResponse.Status { .tooManyRequests }
    init(_ message: String, retryAfterSeconds: Int) {
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The caller did this as often as one person (or one address) may in a while (429): `retryAfterSeconds` says when
/// it may again. Limits what a signed-in person can make the server send to others, such as email.
struct RateLimited: AppError {
    let message: String
    let retryAfterSeconds: Int?
    var status: HTTPResponse.Status { .tooManyRequests }
    init(_ message: String, retryAfterSeconds: Int) {
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The object is in a state that does not allow the change (e.g. a tour locked for review).
struct Conflict: AppError {
    let message: String
    var status: HTTPResponse.Status { .conflict }
    init(_ message: String) { self.message = message }
}
