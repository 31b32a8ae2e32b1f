import Foundation
import HTTPTypes
import Hummingbird

/// The API's paths and the methods `openapi.json` declares for each: what `405 Method Not Allowed` and its `Allow`
/// header are made from. Read once from the document the server serves, so the answer and the contract cannot differ.
struct APIMethods: Sendable {
    /// Path templates below `/api/v1` (segments; `nil` stands for a `{parameter}`), with their methods.
    let routes: [(segments: [String?], methods: Set<HTTPRequest.Method>)]

    init(document: String?) {
        guard let data = document?.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let paths = object["paths"] as? [String: Any]
        else {
            routes = []
            return
        }
        let known = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        routes = paths.compactMap { path, item in
            guard let item = item as? [String: Any] else { return nil }
            let methods = Set(item.keys.filter(known.contains).compactMap { HTTPRequest.Method($0.uppercased()) })
            let segments = path.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) }
            return methods.isEmpty ? nil : (segments, methods)
        }
    }

    /// The declared methods of the API path `path` (with its `/api/v1` prefix), or nil when the API has no such path.
    func methods(for path: String) -> Set<HTTPRequest.Method>? {
        guard path.hasPrefix("/api/v1/") else { return nil }
        let parts = path.dropFirst("/api/v1/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: \.isEmpty) else { return nil }
        let found = routes.filter { route in
            route.segments.count == parts.count && zip(route.segments, parts).allSatisfy { segment, part in segment.map { $0 == part } ?? true }
        }
        return found.isEmpty ? nil : found.reduce(into: Set()) { $0.formUnion($1.methods) }
    }
}

/// An API path asked with a method its contract does not declare (`TRACE /api/v1/catalog`, `DELETE /api/v1/sites`):
/// `405` with the methods it has in `Allow` (RFC 9110 §15.5.6), rather than the router's `404`, which would say the
/// resource does not exist.
///
/// Why here: Hummingbird's router wraps its not-found answer in the router's middleware too, and there the request
/// has no endpoint yet (`endpointPath` is set only when a route matched). Everything else passes through untouched.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let api: APIMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.endpointPath == nil, let allowed = api.methods(for: request.uri.path), !allowed.contains(request.method) else {
            return try await next(request, context)
        }
        let names = allowed.map(\.rawValue).sorted()
        var response = APIErrorBody.response(
            status: .methodNotAllowed,
            code: "method_not_allowed",
            message: "\(request.method.rawValue) is not a method of this address; it answers \(names.joined(separator: ", "))."
        )
        response.headers[.allow] = names.joined(separator: ", ")
        return response
    }
}
