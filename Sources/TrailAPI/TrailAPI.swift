import Foundation
@_exported import OpenAPIRuntime
import PackageFormat

// The API's wire types. `Components.Schemas.*` in `Generated/` are made from `openapi.json` (the file the server
// serves at `/api/v1/openapi.json`) by swift-openapi-generator, set up by `openapi-generator-config.yaml` next to this
// file, and committed: `scripts/generate-openapi.sh` makes them again after a change to either, and a test fails while
// they are stale. The server encodes its answers with them and TrailClient decodes them, so a field added to, renamed
// in or removed from the document changes both sides at once, or fails to compile.
//
// Only the types are generated, not the generator's client or server layer:
// - The server's read routes answer from an encoded-answer cache with strong ETags and `304`s, and its downloads
//   stream byte ranges (FileResponder, or nginx with X-Accel-Redirect); the generated server layer would decode and encode
//   every request through its own converter and could do neither.
// - TrailClient keeps its hand-written transport: conditional GETs with `If-None-Match`, the catalog's exact signed
//   bytes, resumable ranged downloads that check `If-Range`, and data tasks that avoid a cancellation dead-lock of
//   swift-corelibs-foundation (see `TrailClient.data(for:session:)`).
// The manifest maps onto `PackageFormat.Manifest` (see the config's `typeOverrides`): the signed file and the API's
// copy of it are one type.

/// How every `/api/v1` JSON body is written and read: keys sorted (stable bytes, so stable ETags and signatures),
/// slashes unescaped, timestamps as ISO 8601 UTC without fractional seconds (the format `format: date-time` fields
/// use, the same as ``Manifest/timestamp(_:)``).
public enum WireJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Manifest.timestamp(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Manifest.parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text.debugDescription) is not an ISO 8601 UTC timestamp")
            }
            return date
        }
        return decoder
    }
}
