import Foundation
import Hummingbird
import TrailAPI

enum JSONResponse {
    /// Keys sorted, slashes unescaped, timestamps as ISO 8601 UTC: TrailAPI's `WireJSON`, shared with TrailClient.
    static let encoder: JSONEncoder = WireJSON.encoder()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

extension Request {
    /// Decodes a small JSON body; a body that is not JSON of the right shape is a 400 with a message that says so.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: some RequestContext) async throws -> T {
        if let contentType = headers[.contentType], !contentType.lowercased().hasPrefix("application/json") {
            throw HTTPError(.unsupportedMediaType, message: "Send the body as application/json.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxUploadSize)
        } catch {
            throw HTTPError(.contentTooLarge, message: "The JSON body is larger than \(context.maxUploadSize / 1024) KiB.")
        }
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
