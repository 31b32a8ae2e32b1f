import TrailAPI

/// The API's answers, the management API's included, are TrailAPI's `Components.Schemas` types, generated from
/// `openapi.json` (the document the server serves): a field the document renames, retypes or drops fails to compile
/// where a record is mapped onto it. Each feature maps its records in an `extension Components.Schemas.…` beside its
/// routes.
///
/// The document's string enums are generated as enums of their own (`Asset.ScanStatusPayload`,
/// `Tileset.ScanStatusPayload`, …) with the raw values of the domain's states. A state missing from the document is
/// a 500 naming it, never a silent substitute; `WireBodiesTests` maps every case of every domain state so a missing
/// one fails a test first.
enum WireEnum {
    struct Missing: Error, CustomStringConvertible {
        let value: String
        let type: String
        var description: String { "openapi.json lists no “\(value)” in \(type)" }
    }

    static func value<Wire: RawRepresentable<String>>(_ state: some RawRepresentable<String>, as _: Wire.Type = Wire.self) throws -> Wire {
        try value(state.rawValue)
    }

    static func value<Wire: RawRepresentable<String>>(_ rawValue: String, as _: Wire.Type = Wire.self) throws -> Wire {
        guard let value = Wire(rawValue: rawValue) else { throw Missing(value: rawValue, type: "\(Wire.self)") }
        return value
    }
}
