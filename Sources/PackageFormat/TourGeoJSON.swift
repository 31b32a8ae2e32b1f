import Foundation

public enum TourGeoJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    case nonFiniteNumber(String)

    public var description: String {
        switch self {
        case let .nonFiniteNumber(what): return "GeoJSON: \(what) is not a finite number"
        }
    }
}

/// `waypoints.geojson`: the tour as an RFC 7946 FeatureCollection.
///
/// Features, in this order:
/// - one `Point` per waypoint, sorted by `order`, properties `kind: "waypoint"`, `name`,
///   `order`, `description`, `assetCount`, `assets` (`[{type, path}]`) and, when known,
///   `distanceFromPreviousMeters` and `triggerRadiusMeters`;
/// - the frame as a `Polygon` (counter-clockwise exterior ring, right-hand rule), properties
///   `kind: "frame"`, `name` (the map name);
/// - the route as a `LineString` when the manifest has one, properties `kind: "route"` and,
///   when known, `estimatedDurationMinutes`.
///
/// The collection carries `bbox: [west, south, east, north]`: the frame, grown to include any
/// waypoint or route point outside it (not for frames that cross the antimeridian).
/// Coordinates are `[longitude, latitude]` with at most 7 decimals (about 1 cm), and the elevation in metres (one
/// decimal) as a third value where the trail facts know it. The bytes are
/// deterministic: fixed key order, no whitespace, numbers without exponents, `/` not escaped.
public enum TourGeoJSON: Sendable {
    public static func make(manifest: Manifest) throws -> Data {
        let bounds = manifest.bounds
        var west = bounds.west
        var south = bounds.south
        var east = bounds.east
        var north = bounds.north
        let waypoints = manifest.waypoints.sorted { a, b in
            if a.order != b.order { return a.order < b.order }
            return a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }
        if !bounds.crossesAntimeridian {
            var points = waypoints.map(\.coordinates)
            points += (manifest.route ?? []).map { Manifest.Coordinates(latitude: $0.latitude, longitude: $0.longitude) }
            for point in points where Manifest.isValid(point) {
                west = min(west, point.longitude)
                east = max(east, point.longitude)
                south = min(south, point.latitude)
                north = max(north, point.latitude)
            }
        }

        var features: [JSONValue] = []
        for waypoint in waypoints {
            var properties: [(String, JSONValue)] = [
                ("kind", .string("waypoint")),
                ("name", .string(waypoint.name)),
                ("order", .number(String(waypoint.order))),
                ("description", .string(waypoint.description)),
                ("assetCount", .number(String(waypoint.assets.count))),
                (
                    "assets",
                    .array(
                        waypoint.assets.map {
                            .object([("type", .string($0.type.rawValue)), ("path", .string($0.path))])
                        }
                    )
                ),
            ]
            if let distance = waypoint.distanceFromPreviousMeters {
                properties.append(("distanceFromPreviousMeters", try number(distance, decimals: 1, what: "distanceFromPreviousMeters")))
            }
            if let radius = waypoint.triggerRadiusMeters {
                properties.append(("triggerRadiusMeters", .number(String(radius))))
            }
            // Texts in further languages as `name:es` / `description:es`, the convention GIS tools (and OpenStreetMap)
            // use, so each shows as its own column in QGIS or ogr2ogr.
            for (tag, text) in (waypoint.localized ?? [:]).sorted(by: { $0.key < $1.key }) {
                properties.append(("name:\(tag)", .string(text.name)))
                properties.append(("description:\(tag)", .string(text.description)))
            }
            features.append(
                feature(
                    geometry: .object([
                        ("type", .string("Point")),
                        ("coordinates", try position(waypoint.coordinates.longitude, waypoint.coordinates.latitude, waypoint.elevationMeters)),
                    ]),
                    properties: properties
                )
            )
        }

        let ring = [
            (bounds.west, bounds.south), (bounds.east, bounds.south), (bounds.east, bounds.north),
            (bounds.west, bounds.north), (bounds.west, bounds.south),
        ]
        features.append(
            feature(
                geometry: .object([
                    ("type", .string("Polygon")),
                    ("coordinates", .array([.array(try ring.map { try position($0.0, $0.1) })])),
                ]),
                properties: [("kind", .string("frame")), ("name", .string(manifest.mapName))]
            )
        )

        if let route = manifest.route, !route.isEmpty {
            var properties: [(String, JSONValue)] = [("kind", .string("route"))]
            if let minutes = manifest.estimatedDurationMinutes {
                properties.append(("estimatedDurationMinutes", .number(String(minutes))))
            }
            features.append(
                feature(
                    geometry: .object([
                        ("type", .string("LineString")),
                        ("coordinates", .array(try route.map { try position($0.longitude, $0.latitude, $0.elevation) })),
                    ]),
                    properties: properties
                )
            )
        }

        let collection = JSONValue.object([
            ("type", .string("FeatureCollection")),
            (
                "bbox",
                .array([
                    try number(west, decimals: 7, what: "west"), try number(south, decimals: 7, what: "south"),
                    try number(east, decimals: 7, what: "east"), try number(north, decimals: 7, what: "north"),
                ])
            ),
            ("features", .array(features)),
        ])
        var output = ""
        collection.write(to: &output)
        return Data(output.utf8)
    }

    static func feature(geometry: JSONValue, properties: [(String, JSONValue)]) -> JSONValue {
        .object([("type", .string("Feature")), ("geometry", geometry), ("properties", .object(properties))])
    }

    /// `[longitude, latitude]`, or with the elevation in metres as the third value when it is known (RFC 7946 §3.1.1).
    static func position(_ longitude: Double, _ latitude: Double, _ elevation: Double? = nil) throws -> JSONValue {
        .array(
            [try number(longitude, decimals: 7, what: "longitude"), try number(latitude, decimals: 7, what: "latitude")]
                + (try elevation.map { [try number($0, decimals: 1, what: "elevation")] } ?? [])
        )
    }

    /// A decimal number with at most `decimals` decimals, no exponent, no trailing zeros, no `-0`.
    static func number(_ value: Double, decimals: Int, what: String) throws -> JSONValue {
        guard value.isFinite, abs(value) < 1e11 else { throw TourGeoJSONError.nonFiniteNumber(what) }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let magnitude = scaled.magnitude
        let integerPart = magnitude / UInt64(scale)
        var fraction = String(magnitude % UInt64(scale))
        var text = (scaled < 0 ? "-" : "") + String(integerPart)
        if fraction != "0" {
            fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return .number(text)
    }
}

/// A minimal JSON tree with ordered object keys and pre-formatted numbers, for byte-exact output.
enum JSONValue {
    case string(String)
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    func write(to output: inout String) {
        switch self {
        case let .string(value):
            JSONValue.writeString(value, to: &output)
        case let .number(text):
            output += text
        case let .bool(value):
            output += value ? "true" : "false"
        case .null:
            output += "null"
        case let .array(values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case let .object(members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                JSONValue.writeString(member.0, to: &output)
                output += ":"
                member.1.write(to: &output)
            }
            output += "}"
        }
    }

    /// RFC 8259 string escaping; `/` and non-ASCII are written as is, U+2028/U+2029 escaped.
    static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
