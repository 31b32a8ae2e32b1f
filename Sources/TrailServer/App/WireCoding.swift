import Foundation
import Hummingbird
import TrailAPI

/// The server's JSON in both directions, as Hummingbird's codable pipeline uses it: every context of the app carries a
/// `WireRequestDecoder` and a `WireResponseEncoder`, so a handler decodes its body with `request.decode(as:context:)`
/// and answers with a value (returned, when it is `ResponseEncodable`, or through `context.answer`), the same way
/// everywhere.
enum WireCoding {
    /// Keys sorted, slashes unescaped, timestamps as ISO 8601 UTC: TrailAPI's `WireJSON`, shared with TrailClient.
    static let encoder: JSONEncoder = WireJSON.encoder()
}

/// Encodes a handler's value as the API answers: `WireCoding.encoder`, `application/json; charset=utf-8`, and
/// `no-store` (an answer of a signed-in or changing route is not kept by anyone; the public read routes that may be
/// kept answer through `ReadAnswer` instead).
struct WireResponseEncoder: ResponseEncoder {
    func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: try WireCoding.encoder.encode(value)))
        )
    }
}

/// Decodes a small JSON body; a body that is not JSON (415), too large for the context (413) or not of the right shape
/// (400) is answered with a message that says which. A `PanelForm` is read from a urlencoded body instead (`decodeForm`).
struct WireRequestDecoder: RequestDecoder {
    func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        if T.self is any PanelForm.Type { return try await Self.decodeForm(T.self, from: request, context: context) }
        let buffer = try await request.smallBody(
            of: "application/json",
            upTo: context.maxUploadSize,
            otherwise: "Send the body as application/json.",
            tooLarge: "The JSON body is larger than \(context.maxUploadSize / 1024) KiB."
        )
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, message: "The body is not valid JSON for this route: \(Self.describe(error))")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing key “\(key.stringValue)”."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "wrong type at “\(context.codingPath.map(\.stringValue).joined(separator: "."))”."
        case .dataCorrupted(let context):
            context.codingPath.isEmpty ? "malformed JSON." : "bad value at “\(context.codingPath.map(\.stringValue).joined(separator: "."))”."
        @unknown default: "malformed JSON."
        }
    }
}

extension Request {
    /// A small body collected whole, of `mediaType` or of no declared type (browsers send a form's, and clients that
    /// leave it out mean the route's): another type is 415 with `otherwise`, more than `limit` bytes 413 with
    /// `tooLarge`.
    func smallBody(of mediaType: String, upTo limit: Int, otherwise: String, tooLarge: String) async throws -> ByteBuffer {
        if let contentType = headers[.contentType], !contentType.lowercased().hasPrefix(mediaType) {
            throw HTTPError(.unsupportedMediaType, message: otherwise)
        }
        do {
            return try await body.collect(upTo: limit)
        } catch {
            throw HTTPError(.contentTooLarge, message: tooLarge)
        }
    }
}

extension RequestContext {
    /// `value` as the answer, encoded by this context's `responseEncoder` (Hummingbird's codable pipeline), with
    /// `status` (`.created` for a new record). For a handler that answers JSON or a page by what the caller accepts;
    /// one that answers JSON alone returns its value instead.
    func answer(_ value: some Encodable, status: HTTPResponse.Status = .ok, to request: Request) throws -> Response {
        var response = try responseEncoder.encode(value, from: request, context: self)
        response.status = status
        return response
    }
}

// The API's generated types that handlers return whole: encoded by the context's `responseEncoder` like any other
// answer. (Generated in TrailAPI, which knows nothing of Hummingbird, so they conform here.)
extension Components.Schemas.PublishRequest: ResponseEncodable {}
extension Components.Schemas.Tour: ResponseEncodable {}
extension Components.Schemas.SiteSettings: ResponseEncodable {}
extension Components.Schemas.Invitation: ResponseEncodable {}
extension Components.Schemas.ImportResult: ResponseEncodable {}
extension Components.Schemas.SiteStats: ResponseEncodable {}
extension Components.Schemas.Asset: ResponseEncodable {}
extension Components.Schemas.Waypoint: ResponseEncodable {}
extension Components.Schemas.Release: ResponseEncodable {}
extension Components.Schemas.PackageVisibility: ResponseEncodable {}
extension Components.Schemas.PackageRollback: ResponseEncodable {}
extension Components.Schemas.PackageHash: ResponseEncodable {}
extension Components.Schemas.VerifyResult: ResponseEncodable {}
