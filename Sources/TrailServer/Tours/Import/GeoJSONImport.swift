import Foundation

extension TourImport {
    // MARK: GeoJSON

    static func parseGeoJSON(_ data: Data) throws -> ImportedTour {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw ImportRefused(message: "The GeoJSON is not valid JSON.")
        }
        guard let root = object as? [String: Any], let type = root["type"] as? String else {
            throw ImportRefused(message: "The GeoJSON has no “type”.")
        }
        let features: [Any]
        switch type {
        case "FeatureCollection":
            guard let list = root["features"] as? [Any] else { throw ImportRefused(message: "The FeatureCollection has no “features” list.") }
            features = list
        case "Feature": features = [root]
        default: throw ImportRefused(message: "Expected a FeatureCollection or a Feature, found “\(type)”.")
        }
        let pointCount = features.reduce(0) { count, feature in
            ((feature as? [String: Any])?["geometry"] as? [String: Any])?["type"] as? String == "Point" ? count + 1 : count
        }
        guard pointCount <= maxWaypoints else {
            throw ImportRefused(message: "The file has \(pointCount) points; a tour can take at most \(maxWaypoints) waypoints.")
        }
        var result = ImportedTour()
        for (index, item) in features.enumerated() {
            let at = "Feature \(index + 1)"
            guard let feature = item as? [String: Any], feature["type"] as? String == "Feature" else {
                throw ImportRefused(message: "\(at) is not a Feature.")
            }
            guard let geometry = feature["geometry"] as? [String: Any], let geometryType = geometry["type"] as? String else {
                throw ImportRefused(message: "\(at) has no geometry.")
            }
            let properties = feature["properties"] as? [String: Any] ?? [:]
            switch geometryType {
            case "Point":
                guard let position = geometry["coordinates"] as? [Double], position.count >= 2 else {
                    throw ImportRefused(message: "\(at): a Point needs [longitude, latitude] coordinates.")
                }
                let (longitude, latitude) = (position[0], position[1])
                guard (-180...180).contains(longitude), (-90...90).contains(latitude) else {
                    throw ImportRefused(message: "\(at): coordinates [\(longitude), \(latitude)] are out of range (GeoJSON is longitude first).")
                }
                guard let name = (properties["name"] as? String)?.trimmed, !name.isEmpty else {
                    throw ImportRefused(message: "\(at): a waypoint needs a “name” property.")
                }
                guard name.count <= 120 else { throw ImportRefused(message: "\(at): the name is longer than 120 characters.") }
                var radius: Int?
                if let value = properties["triggerRadiusMeters"], !(value is NSNull) {
                    let input: TriggerZone.Input = (value as? NSNumber).map { .number($0.doubleValue) } ?? .text("\(value)")
                    switch TriggerZone.radius(input) {
                    case .success(let metres): radius = metres
                    case .failure:
                        throw ImportRefused(message: "\(at) (“\(name)”): triggerRadiusMeters must be a whole number of metres from 5 to 500.")
                    }
                }
                var localized: [String: LocalizedText] = [:]
                for (key, value) in properties {
                    guard let colon = key.firstIndex(of: ":"), ["name", "description"].contains(key[..<colon]), let text = value as? String else {
                        continue
                    }
                    let raw = String(key[key.index(after: colon)...])
                    guard let tag = LanguageTag.canonical(raw) else {
                        throw ImportRefused(message: "\(at) (“\(name)”): \(key): \(LanguageTag.refusal(raw))")
                    }
                    var entry = localized[tag] ?? LocalizedText()
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
                        description: String(((properties["description"] as? String) ?? "").prefix(20_000)),
                        latitude: latitude,
                        longitude: longitude,
                        triggerRadiusMeters: radius,
                        localized: localized
                    )
                )
            case "LineString":
                guard let positions = geometry["coordinates"] as? [[Double]] else {
                    throw ImportRefused(message: "\(at): a LineString needs a list of positions.")
                }
                do { result.route = try RoutePath(positions: positions) } catch let errors as ValidationErrors {
                    throw ImportRefused(message: "\(at): \(errors["route"] ?? "invalid route").")
                }
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
