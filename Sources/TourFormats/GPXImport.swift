import Foundation

/// GPX 1.0 and 1.1: waypoints (`<wpt>`) with their names, descriptions and elevations, and the first track or route
/// as the tour's route. Whatever else the file holds is listed as left out, never refused.
extension TourImport {
    static func parseGPX(_ data: Data, rules: ImportRules) throws -> ImportedTour {
        let handler = GPXHandler(maxTrackPoints: rules.maxRoutePoints)
        try XMLImportReader.read(data, format: .gpx, into: handler)
        guard handler.sawGPX else { throw ImportRefused(message: "This XML file is not GPX (no <gpx> element).") }
        var result = ImportedTour(points: handler.waypoints)
        // Whatever the file holds beyond points, names, descriptions, elevations and the track is said, never refused.
        for element in handler.unused {
            let times = element.count > 1 ? ", \(element.count) times" : ""
            result.leftOutList.append(.init(kind: "element", name: "<\(element.name)>" + times, reason: "not used by the import"))
        }
        if handler.otherUnused > 0 {
            result.leftOutList.append(
                .init(kind: "element", name: "\(handler.otherUnused) more element(s) of other names", reason: "not used by the import")
            )
        }
        if !handler.track.isEmpty {
            if let refusal = rules.refuseRoute(handler.track) { throw ImportRefused(message: refusal) }
            result.route = handler.track
        }
        return result
    }

    final class GPXHandler: XMLImportHandler {
        let maxTrackPoints: Int
        var sawGPX = false
        var waypoints: [ImportedTour.Point] = []
        var track: [[Double]] = []
        private var current: (lat: Double, lon: Double)?
        private var currentName = "", currentDescription = "", currentElevation: Double?
        /// Elements the import does not use (times, links, symbols, extensions…), counted by name as written, in the
        /// order met: the preview lists them as left out. What is inside one of them is not counted again.
        private(set) var unused: [(name: String, count: Int)] = []
        /// Unused elements whose name is not among the first ``ImportedTour/LeftOutList/limit`` names: counted only, so
        /// a file of a million made-up names keeps neither a million entries nor a million searches through them.
        private(set) var otherUnused = 0
        /// How deep inside an unused element the reader is (0: not inside one).
        private var unusedDepth = 0
        static let usedElements: Set<String> = ["gpx", "wpt", "trk", "trkseg", "trkpt", "rte", "rtept", "name", "desc", "cmt", "ele"]

        init(maxTrackPoints: Int) { self.maxTrackPoints = maxTrackPoints }

        func start(_ element: XMLImportReader.Element, attributes: [String: String], in reader: XMLImportReader) {
            // GPX elements carry no prefix: a prefixed one (`gpxtpx:hr`) belongs to an extension and is not used.
            let name = element.qualified
            if unusedDepth > 0 {
                unusedDepth += 1
            } else if !Self.usedElements.contains(name) {
                unusedDepth = 1
                if let index = unused.firstIndex(where: { $0.name == name }) {
                    unused[index].count += 1
                } else if unused.count < ImportedTour.LeftOutList.limit {
                    unused.append((name, 1))
                } else {
                    otherUnused += 1
                }
            }
            guard unusedDepth == 0 else { return }
            switch name {
            case "gpx": sawGPX = true
            case "wpt", "trkpt", "rtept":
                guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init),
                    (-90...90).contains(lat), (-180...180).contains(lon)
                else {
                    reader.fail("Line \(reader.lineNumber): <\(name)> needs lat and lon attributes within range.")
                    return
                }
                current = (lat, lon)
                currentName = ""
                currentDescription = ""
                currentElevation = nil
                if name == "wpt", waypoints.count >= TourImport.maxWaypoints {
                    reader.fail("Line \(reader.lineNumber): more than \(TourImport.maxWaypoints) waypoints.")
                }
                if name != "wpt", track.count >= maxTrackPoints {
                    reader.fail("Line \(reader.lineNumber): the track has more than \(maxTrackPoints) points.")
                }
            default: break
            }
        }

        func end(_ element: XMLImportReader.Element, text: String, in reader: XMLImportReader) {
            if unusedDepth > 0 {
                unusedDepth -= 1
                return
            }
            guard let point = current else { return }
            switch element.qualified {
            case "name": currentName = text.trimmed
            case "desc", "cmt": if currentDescription.isEmpty { currentDescription = text.trimmed }
            case "ele": currentElevation = Double(text.trimmed)
            case "wpt":
                // GPX makes <name> optional (gpxpy's own samples leave it out): an unnamed waypoint is named by its
                // place in the file, as an unnamed KML placemark is, and the preview shows the name it gets.
                let name = currentName.isEmpty ? "Waypoint \(waypoints.count + 1)" : currentName
                waypoints.append(
                    .init(name: String(name.prefix(120)), description: currentDescription, latitude: point.lat, longitude: point.lon)
                )
                current = nil
            case "trkpt", "rtept":
                track.append(currentElevation.map { [point.lon, point.lat, $0] } ?? [point.lon, point.lat])
                current = nil
            default: break
            }
        }
    }
}
