import Foundation

extension TourImport {
    // MARK: GeoJSON

    static func parseGeoJSON(_ data: Data, rules: ImportRules) throws -> ImportedTour {
        // Decoded into just what the import reads: the coordinates of a polygon (which it skips) are never made into
        // values. JSONSerialization made an object of every number, about 30 times the file's size: one 20 MiB file
        // of polygons took the server to 640 MiB.
        let root: GeoJSON.Root
        do { root = try JSONDecoder().decode(GeoJSON.Root.self, from: data) } catch DecodingError.dataCorrupted {
            throw ImportRefused(message: "The GeoJSON is not valid JSON.")
        } catch {
            throw ImportRefused(message: "The GeoJSON has no “type”.")
        }
        guard let type = root.feature.type else { throw ImportRefused(message: "The GeoJSON has no “type”.") }
        let features: [GeoJSON.Item]
        switch type {
        case "FeatureCollection":
            guard let list = root.features else { throw ImportRefused(message: "The FeatureCollection has no “features” list.") }
            features = list
        case "Feature": features = [.feature(root.feature)]
        default: throw ImportRefused(message: "Expected a FeatureCollection or a Feature, found “\(type)”.")
        }
        let pointCount = features.reduce(0) { count, item in
            if case .feature(let feature) = item, feature.geometry?.type == "Point" { return count + 1 }
            return count
        }
        guard pointCount <= maxWaypoints else {
            throw ImportRefused(message: "The file has \(pointCount) points; a tour can take at most \(maxWaypoints) waypoints.")
        }
        var result = ImportedTour()
        for (index, item) in features.enumerated() {
            let at = "Feature \(index + 1)"
            guard case .feature(let feature) = item, feature.type == "Feature" else {
                throw ImportRefused(message: "\(at) is not a Feature.")
            }
            guard let geometry = feature.geometry, let geometryType = geometry.type else {
                throw ImportRefused(message: "\(at) has no geometry.")
            }
            let properties = feature.properties ?? [:]
            switch geometryType {
            case "Point":
                guard let position = geometry.point, position.count >= 2 else {
                    throw ImportRefused(message: "\(at): a Point needs [longitude, latitude] coordinates.")
                }
                let (longitude, latitude) = (position[0], position[1])
                guard (-180...180).contains(longitude), (-90...90).contains(latitude) else {
                    throw ImportRefused(message: "\(at): coordinates [\(longitude), \(latitude)] are out of range (GeoJSON is longitude first).")
                }
                guard let name = properties["name"]?.string?.trimmed, !name.isEmpty else {
                    throw ImportRefused(message: "\(at): a waypoint needs a “name” property.")
                }
                guard name.count <= 120 else { throw ImportRefused(message: "\(at): the name is longer than 120 characters.") }
                var radius: Int?
                if let value = properties["triggerRadiusMeters"], value != .null {
                    let input: ImportRules.TriggerRadius = value.number.map { .number($0) } ?? .text(value.text)
                    guard let metres = rules.triggerRadius(input) else {
                        throw ImportRefused(message: "\(at) (“\(name)”): triggerRadiusMeters must be \(rules.triggerRadiusRule).")
                    }
                    radius = metres
                }
                var localized: [String: ImportedTour.Text] = [:]
                for (key, value) in properties {
                    guard let colon = key.firstIndex(of: ":"), ["name", "description"].contains(key[..<colon]), let text = value.string else {
                        continue
                    }
                    let raw = String(key[key.index(after: colon)...])
                    guard let tag = rules.languageTag(raw) else {
                        throw ImportRefused(message: "\(at) (“\(name)”): \(key): \(rules.languageRefusal(raw))")
                    }
                    var entry = localized[tag] ?? ImportedTour.Text()
                    if key.hasPrefix("name:") {
                        guard text.count <= 120 else { throw ImportRefused(message: "\(at): \(key) is longer than 120 characters.") }
                        entry.name = text.trimmed
                    } else {
                        entry.description = String(text.prefix(20_000)).trimmed
                    }
                    localized[tag] = entry
                }
                result.points.append(
                    .init(
                        name: name,
                        description: String((properties["description"]?.string ?? "").prefix(20_000)),
                        latitude: latitude,
                        longitude: longitude,
                        triggerRadiusMeters: radius,
                        localized: localized
                    )
                )
            case "LineString":
                guard let positions = geometry.line else {
                    throw ImportRefused(message: "\(at): a LineString needs a list of positions.")
                }
                if let refusal = rules.refuseRoute(positions) { throw ImportRefused(message: "\(at): \(refusal).") }
                result.route = positions
            case "Polygon":
                continue  // the frame of an exported tour; the importing tour keeps its own
            default:
                throw ImportRefused(
                    message: "\(at): \(geometryType) geometries are not supported (use Points for waypoints and a LineString for the route)."
                )
            }
        }
        return result
    }
}

/// The parts of a GeoJSON document the import reads, decoded leniently: a value of the wrong kind becomes nil (and
/// the import's own message), never a decoding error.
enum GeoJSON {
    struct Root: Decodable {
        /// The root as a Feature (a file of one).
        let feature: Feature
        /// A FeatureCollection's list; nil when there is none, or it is not a list.
        let features: [Item]?

        enum Keys: String, CodingKey { case features }

        init(from decoder: any Decoder) throws {
            feature = try Feature(from: decoder)
            features = try? decoder.container(keyedBy: Keys.self).decodeIfPresent([Item].self, forKey: .features)
        }
    }

    /// An entry of `features`: a JSON object, or something else (which the import refuses by its place).
    enum Item: Decodable {
        case feature(Feature)
        case other

        init(from decoder: any Decoder) throws {
            if (try? decoder.container(keyedBy: Feature.Keys.self)) != nil {
                self = .feature(try Feature(from: decoder))
            } else {
                self = .other
            }
        }
    }

    struct Feature: Decodable {
        let type: String?
        let geometry: Geometry?
        let properties: [String: Property]?

        enum Keys: String, CodingKey { case type, geometry, properties }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            type = try? container.decodeIfPresent(String.self, forKey: .type)
            geometry = try? container.decodeIfPresent(Geometry.self, forKey: .geometry)
            properties = try? container.decodeIfPresent([String: Property].self, forKey: .properties)
        }
    }

    /// A geometry's type, and its coordinates only for the types the import uses.
    struct Geometry: Decodable {
        let type: String?
        /// A Point's position.
        let point: [Double]?
        /// A LineString's positions.
        let line: [[Double]]?

        enum Keys: String, CodingKey { case type, coordinates }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            type = try? container.decodeIfPresent(String.self, forKey: .type)
            point = type == "Point" ? try? container.decodeIfPresent([Double].self, forKey: .coordinates) : nil
            line = type == "LineString" ? try? container.decodeIfPresent([[Double]].self, forKey: .coordinates) : nil
        }
    }

    /// A property's value: text, a number, null, or anything else (told by its kind only).
    enum Property: Decodable, Equatable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let text = try? container.decode(String.self) {
                self = .string(text)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else {
                self = .other
            }
        }

        var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        var number: Double? {
            if case .number(let value) = self { return value }
            return nil
        }

        /// As the refusal of a bad trigger radius would show it.
        var text: String {
            switch self {
            case .string(let text): text
            case .number(let value): "\(value)"
            case .bool(let flag): "\(flag)"
            case .null: "null"
            case .other: "a list or an object"
            }
        }
    }
}
