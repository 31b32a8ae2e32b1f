import Foundation
import GRDB
import HTTPTypes
import PackageFormat

#if canImport(FoundationXML)
import FoundationXML
#endif

/// GeoJSON out (RFC 7946, the same document as a package's `waypoints.geojson`); GeoJSON, GPX 1.1, KML 2.2, KMZ and CSV in.
enum TourExport {
    /// A framed tour is exported through the package's own manifest code (waypoints with their asset paths and
    /// distances, the route with the duration estimate): byte for byte the `waypoints.geojson` a build of the tour as it
    /// is now would contain. A tour without a frame yet gets the same layout around its points, without package data.
    static func geoJSON(_ db: Database, tour: Tour, site: Site) throws -> Data {
        guard tour.frame != nil else {
            let waypoints = try Waypoint.inTour(tour.id!).fetchAll(db)
            return try geoJSON(tour: tour, waypoints: waypoints, siteName: site.name)
        }
        let snapshot = try AppDatabase.snapshot(db, tour: tour, site: site)
        let manifest = ManifestMaker.manifest(packageId: "tour-\(tour.id ?? 0)", version: 0, createdAt: tour.updatedAt, snapshot: snapshot)
        return try TourGeoJSON.make(manifest: manifest)
    }

    static func geoJSON(tour: Tour, waypoints: [Waypoint], siteName: String) throws -> Data {
        let frame = tour.frame ?? Self.bounds(of: waypoints, route: tour.route)
        let manifest = Manifest(
            packageId: "tour-\(tour.id ?? 0)",
            version: 0,
            createdAt: Manifest.timestamp(tour.updatedAt),
            packageName: tour.name,
            park: siteName,
            mapName: tour.mapName,
            bounds: Manifest.Bounds(north: frame.north, south: frame.south, east: frame.east, west: frame.west),
            description: tour.description,
            waypoints: waypoints.map {
                Manifest.Waypoint(
                    name: $0.name,
                    order: $0.position,
                    coordinates: .init(latitude: $0.latitude, longitude: $0.longitude),
                    description: $0.description,
                    assets: [],
                    triggerRadiusMeters: $0.triggerRadiusMeters,
                    localized: $0.localized.isEmpty
                        ? nil : $0.localized.mapValues { Manifest.WaypointText(name: $0.name, description: $0.description) }
                )
            },
            route: tour.route?.points.map { Manifest.RoutePoint(longitude: $0.longitude, latitude: $0.latitude) }
        )
        return try TourGeoJSON.make(manifest: manifest)
    }

    static func bounds(of waypoints: [Waypoint], route: RoutePath?) -> Frame {
        let points = waypoints.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) } + (route?.points ?? [])
        guard let first = points.first else { return Frame(north: 0, south: 0, east: 0, west: 0) }
        return points.reduce(Frame(north: first.latitude, south: first.latitude, east: first.longitude, west: first.longitude)) {
            Frame(
                north: max($0.north, $1.latitude),
                south: min($0.south, $1.latitude),
                east: max($0.east, $1.longitude),
                west: min($0.west, $1.longitude)
            )
        }
    }
}

/// What an import file holds, before it is compared with the tour.
struct ImportedTour: Sendable {
    struct Point: Sendable, Equatable {
        let name: String
        let description: String
        let latitude: Double
        let longitude: Double
        /// GeoJSON property `triggerRadiusMeters` (GPX has none: the waypoint keeps its own, a new one gets the default).
        var triggerRadiusMeters: Int? = nil
        /// GeoJSON properties `name:<tag>` and `description:<tag>`: texts in further languages.
        var localized: [String: LocalizedText] = [:]
        /// KMZ: pictures the placemark refers to (its description's `<img>`, its icon), read from the archive.
        var images: [Image] = []
    }
    /// A file from a KMZ, attached to its waypoint on apply (as an upload: scanned, typed, counted against the quota).
    struct Image: Sendable, Equatable {
        /// The entry's path inside the archive, as the KML names it.
        let path: String
        let data: Data
    }
    /// Something in the file that the import does not take, and why (the preview lists them).
    struct LeftOut: Sendable, Equatable {
        let kind: String
        let name: String
        let reason: String
    }
    /// The format the bytes were read as (nil until they are).
    var format: ImportFormat?
    var points: [Point] = []
    var route: RoutePath?
    var leftOut: [LeftOut] = []
    /// KML folders, in document order (flattened: their placemarks are imported as if they stood at the top).
    var folders: [String] = []
    /// CSV: which column was read for what ("latitude" → "Lat").
    var columns: [String: String] = [:]
    /// Remarks for the preview (altitudes not kept, a second line not used, ...).
    var notes: [String] = []
}

/// The preview: what would be added, changed or skipped, and why.
/// The formats an import reads, told apart by their bytes. The raw value is the name the preview, the API
/// (`ImportResult.plan.format`) and the audit log use.
enum ImportFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case geoJSON = "GeoJSON"
    case gpx = "GPX"
    case kml = "KML"
    case kmz = "KMZ"
    case csv = "CSV"

    var description: String { rawValue }
}

/// What applying an import does with one waypoint of the file; the raw value is the preview's and the API's word.
enum ImportAction: String, Sendable, CaseIterable, CustomStringConvertible {
    case add, change, skip

    var description: String { rawValue }
}

struct ImportPlan: Sendable {
    struct Item: Sendable {
        let action: ImportAction
        let name: String
        let latitude: Double
        let longitude: Double
        let reason: String?
    }
    /// A KMZ picture that applying attaches to a waypoint.
    struct Image: Sendable {
        let waypoint: String
        let file: String
        let bytes: Int
    }
    var format: ImportFormat?
    var waypoints: [Item] = []
    var routePoints: Int = 0
    var routeLengthMeters: Double?
    var frame: Frame?
    var setsFrame = false
    /// Points that fall outside the tour's frame, and the frame around all of them (with a margin) that would take them.
    var outsideFrame = 0
    var fittedFrame: Frame?
    var leftOut: [ImportedTour.LeftOut] = []
    var folders: [String] = []
    var columns: [String: String] = [:]
    var images: [Image] = []
    var notes: [String] = []
    var added: Int { waypoints.filter { $0.action == .add }.count }
    var changed: Int { waypoints.filter { $0.action == .change }.count }
    var skipped: Int { waypoints.filter { $0.action == .skip }.count }
}

/// A file that cannot be imported: the message names the feature or line at fault.
/// Answered as a form error on the `file` field (422).
struct ImportRefused: AppError {
    let message: String
    var status: HTTPResponse.Status { .unprocessableContent }
    var fieldMessages: [String: String]? { ["file": message] }
}

enum TourImport {
    static let maxWaypoints = 2_000

    /// Reads a stored import file: a KMZ is read from disk through the zip reader (its entries are never all in memory
    /// at once beyond the limits); anything else as bytes.
    static func parse(fileAt url: URL, maxBytes: Int = AppConfig().importMaxSize) throws -> ImportedTour {
        let size = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= maxBytes else { throw ImportRefused(message: "The file is larger than \(DisplayFormat.megabytes(maxBytes)).") }
        let handle = try FileHandle(forReadingFrom: url)
        let head = try handle.read(upToCount: 4) ?? Data()
        try? handle.close()
        if KMZArchive.isZip(head) { return try KMZArchive.read(url) }
        return try parse(try Data(contentsOf: url), maxBytes: maxBytes)
    }

    static func parse(_ data: Data, maxBytes: Int = AppConfig().importMaxSize) throws -> ImportedTour {
        guard data.count <= maxBytes else { throw ImportRefused(message: "The file is larger than \(DisplayFormat.megabytes(maxBytes)).") }
        var result = try parseFormat(data)
        if result.format == .gpx || result.format == .geoJSON, result.points.isEmpty, result.route == nil {
            result.notes.append("The file holds no waypoints and no route.")
        }
        return result
    }

    /// Tells the formats apart by their bytes, never by the file's name.
    static func parseFormat(_ data: Data) throws -> ImportedTour {
        if KMZArchive.isZip(data.prefix(4)) {
            // A KMZ handed over as bytes (tests, the fuzzer): the zip reader works on a file.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).kmz")
            try data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            return try KMZArchive.read(file)
        }
        let start = data.prefix(512)
        // UTF-8 only: our DOCTYPE check reads UTF-8 bytes, so a UTF-16 or UTF-32 file could hide a DTD from it.
        if start.starts(with: [0xFE, 0xFF]) || start.starts(with: [0xFF, 0xFE]) || start.contains(0) {
            throw ImportRefused(message: "Import files must be UTF-8 text (this one looks like UTF-16 or binary).")
        }
        let text = String(decoding: start, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}"))
        )
        if text.isEmpty { throw ImportRefused(message: "The file is empty.") }
        if text.hasPrefix("{") {
            var tour = try parseGeoJSON(data)
            tour.format = .geoJSON
            return tour
        }
        if text.hasPrefix("<") {
            if KMLImport.isHTMLPage(data) {
                throw ImportRefused(
                    message: "This is a web page (HTML), not KML or GPX: save the map itself (in Google Earth: Save Place As… KML or KMZ)."
                )
            }
            if KMLImport.isKML(data) { return try KMLImport.parse(data) }
            var tour = try parseGPX(data)
            tour.format = .gpx
            return tour
        }
        return try CSVImport.parse(data)
    }

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

    // MARK: GPX

    /// The checks every XML import passes before a parser sees it (GPX and KML alike).
    static func refuseUnsafeXML(_ data: Data, format: ImportFormat) throws {
        // The DOCTYPE check below reads UTF-8 bytes: a file that declares another encoding (UTF-7 can spell `<!DOCTYPE`
        // as `+ADw-!DOCTYPE`) would be decoded by the parser into something the check never saw.
        if let encoding = declaredEncoding(data), !["utf-8", "utf8"].contains(encoding.lowercased()) {
            throw ImportRefused(message: "The \(format) file declares the encoding “\(encoding.prefix(40))”; only UTF-8 is accepted.")
        }
        // Neither GPX nor KML needs a DTD: refusing one outright rules out external entities and entity expansion bombs.
        // The parser's own reports of any declaration (the readers' delegates) are a second line.
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil || data.range(of: Data("<!ENTITY".utf8)) != nil {
            throw ImportRefused(message: "The \(format) file declares a DOCTYPE or entities, which are not allowed.")
        }
        // Nor processing instructions (`<?target data?>`), but the XML declaration at the start: Foundation's XMLParser
        // on Linux passes an instruction without data to strlen as a null pointer and the whole server crashes
        // (swift-corelibs-foundation, `_NSXMLParserProcessingInstruction`; found by scripts/fuzz.sh importer).
        if hasProcessingInstruction(data) {
            throw ImportRefused(message: "The \(format) file contains processing instructions (<?…?>), which \(format) does not use.")
        }
    }

    static func parseGPX(_ data: Data) throws -> ImportedTour {
        try refuseUnsafeXML(data, format: .gpx)
        let reader = GPXReader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        // Linux's XMLParser recovers from some errors (a mismatched end tag) and still returns true, so any reported
        // error counts.
        if !parser.parse() || reader.failure != nil || parser.parserError != nil {
            throw ImportRefused(
                message: reader.failure
                    ?? "Line \(parser.lineNumber): the GPX is not well-formed XML (\(parser.parserError.map { "\($0.localizedDescription)" } ?? "parse error"))."
            )
        }
        guard reader.sawGPX else { throw ImportRefused(message: "This XML file is not GPX (no <gpx> element).") }
        var result = ImportedTour(points: reader.waypoints)
        // Whatever the file holds beyond points, names, descriptions, elevations and the track is said, never refused.
        result.leftOut = reader.unused.map {
            .init(kind: "element", name: "<\($0.name)>" + ($0.count > 1 ? ", \($0.count) times" : ""), reason: "not used by the import")
        }
        if !reader.track.isEmpty {
            do { result.route = try RoutePath(positions: reader.track) } catch let errors as ValidationErrors {
                throw ImportRefused(message: errors["route"] ?? "The track is invalid.")
            }
        }
        return result
    }

    /// Whether `<?` appears anywhere but as the XML declaration at the very start (after a BOM and blanks). `<` cannot
    /// stand raw in text, so outside comments and CDATA (where refusing it costs nothing) this is an instruction.
    static func hasProcessingInstruction(_ data: Data) -> Bool {
        let marker = Data("<?".utf8)
        var start = data.startIndex
        let leading = data.prefix { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }.count
        let afterLeading = data.index(data.startIndex, offsetBy: leading)
        while let found = data.range(of: marker, in: start..<data.endIndex) {
            let declaration =
                found.lowerBound == afterLeading && data[found.lowerBound...].starts(with: Data("<?xml".utf8))
                && data.count > found.lowerBound - data.startIndex + 5
                && [0x20, 0x09, 0x0A, 0x0D].contains(data[data.index(found.lowerBound, offsetBy: 5)])
            if !declaration { return true }
            start = found.upperBound
        }
        return false
    }

    /// The `encoding` of the XML declaration (`<?xml version="1.0" encoding="…"?>`), if the file starts with one.
    /// A declaration closed wrongly (`…encoding="UTF-7">`) is read up to its first `>`: libxml2 still switches to the
    /// encoding it names (and crashes on UTF-7, found by scripts/fuzz.sh importer), so the check must see it too.
    /// (UTF-16 and UTF-32 by byte order mark are refused earlier, in `parse`.)
    static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(300), as: UTF8.self).trimmingCharacters(
            in: CharacterSet(charactersIn: "\u{FEFF}").union(.whitespacesAndNewlines)
        )
        guard head.hasPrefix("<?xml") else { return nil }
        let end = head.range(of: ">")?.lowerBound ?? head.endIndex
        let declaration = head[..<end]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return String(rest) }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    final class GPXReader: NSObject, XMLParserDelegate {
        var sawGPX = false
        var waypoints: [ImportedTour.Point] = []
        var track: [[Double]] = []
        var failure: String?
        private var current: (lat: Double, lon: Double, kind: String)?
        private var currentName = "", currentDescription = "", currentElevation: Double?
        private var text = ""
        /// Open elements: the Linux XMLParser does not always reject a mismatched end tag, so we check it ourselves.
        private var open: [String] = []
        /// Elements the import does not use (times, links, symbols, extensions…), counted by name in the order met: the
        /// preview lists them as left out. What is inside one of them is not counted again.
        private(set) var unused: [(name: String, count: Int)] = []
        /// How deep inside an unused element the parser is (0: not inside one).
        private var unusedDepth = 0
        static let usedElements: Set<String> = ["gpx", "wpt", "trk", "trkseg", "trkpt", "rte", "rtept", "name", "desc", "cmt", "ele"]

        func parser(
            _ parser: XMLParser,
            didStartElement element: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(element)
            text = ""
            if unusedDepth > 0 {
                unusedDepth += 1
            } else if !Self.usedElements.contains(element) {
                unusedDepth = 1
                if let index = unused.firstIndex(where: { $0.name == element }) { unused[index].count += 1 } else { unused.append((element, 1)) }
            }
            switch element {
            case "gpx": sawGPX = true
            case "wpt", "trkpt", "rtept":
                guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init),
                    (-90...90).contains(lat), (-180...180).contains(lon)
                else {
                    fail(parser, "Line \(parser.lineNumber): <\(element)> needs lat and lon attributes within range.")
                    return
                }
                current = (lat, lon, element)
                currentName = ""
                currentDescription = ""
                currentElevation = nil
                if element == "wpt", waypoints.count >= TourImport.maxWaypoints {
                    fail(parser, "Line \(parser.lineNumber): more than \(TourImport.maxWaypoints) waypoints.")
                }
                if element != "wpt", track.count >= RoutePath.maxPoints {
                    fail(parser, "Line \(parser.lineNumber): the track has more than \(RoutePath.maxPoints) points.")
                }
            default: break
            }
        }

        // Any declaration the parser reports ends the import, whatever spelling got it past the byte check.
        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            fail(parser, "The GPX file declares entities, which are not allowed.")
        }

        func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
            fail(parser, "The GPX file declares entities, which are not allowed.")
        }

        func parser(
            _ parser: XMLParser,
            foundUnparsedEntityDeclarationWithName name: String,
            publicID: String?,
            systemID: String?,
            notationName: String?
        ) {
            fail(parser, "The GPX file declares entities, which are not allowed.")
        }

        func parser(_ parser: XMLParser, foundNotationDeclarationWithName name: String, publicID: String?, systemID: String?) {
            fail(parser, "The GPX file declares a DOCTYPE, which is not allowed.")
        }

        func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
            fail(parser, "The GPX file declares a DOCTYPE, which is not allowed.")
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if text.count < 20_000 { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            guard open.last == element else {
                fail(parser, "Line \(parser.lineNumber): </\(element)> does not close <\(open.last ?? "nothing")>.")
                return
            }
            open.removeLast()
            if unusedDepth > 0 { unusedDepth -= 1 }
            guard let point = current else { return }
            switch element {
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

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            let code = (parseError as NSError).code
            fail(
                parser,
                "Line \(parser.lineNumber): the GPX is not well-formed XML (\(code == 76 ? "an end tag does not match its start tag" : "XML error \(code)"))."
            )
        }

        func fail(_ parser: XMLParser, _ message: String) {
            if failure == nil { failure = message }
            parser.abortParsing()
        }
    }

    // MARK: Plan

    /// Matches by name (ignoring case): known names change, new names are added, points outside the frame are skipped.
    /// A tour without a frame gets one around the imported points.
    /// With `fitFrame`, the frame is set around the imported points (and route) even when the tour has one: the
    /// preview's "fit the frame to these points".
    static func plan(_ imported: ImportedTour, tour: Tour, existing: [Waypoint], maxAreaKm2: Double, fitFrame: Bool = false) -> ImportPlan {
        let languages = Set(tour.furtherLanguages)
        var plan = ImportPlan()
        plan.format = imported.format
        plan.leftOut = imported.leftOut
        plan.folders = imported.folders
        plan.columns = imported.columns
        plan.notes = imported.notes
        var frame = tour.frame
        // Fitting only grows a frame: the tour's own waypoints, inside the old one, stay inside.
        let fitted = fittedFrame(imported).map { box in
            tour.frame.map {
                Frame(north: max($0.north, box.north), south: min($0.south, box.south), east: max($0.east, box.east), west: min($0.west, box.west))
            } ?? box
        }.flatMap { $0.areaKm2 <= maxAreaKm2 ? $0 : nil }
        if let fitted, frame == nil || fitFrame {
            frame = fitted
            plan.setsFrame = true
        }
        plan.frame = frame
        if let frame, !plan.setsFrame, let fitted {
            plan.outsideFrame = imported.points.filter { !frame.contains(latitude: $0.latitude, longitude: $0.longitude) }.count
            if plan.outsideFrame > 0 { plan.fittedFrame = fitted }
        }
        var seen = Set<String>()
        for point in imported.points {
            let key = point.name.lowercased()
            func item(_ action: ImportAction, _ reason: String? = nil) -> ImportPlan.Item {
                .init(action: action, name: point.name, latitude: point.latitude, longitude: point.longitude, reason: reason)
            }
            if seen.contains(key) {
                plan.waypoints.append(item(.skip, "the file names this waypoint twice"))
                continue
            }
            seen.insert(key)
            guard let frame, frame.contains(latitude: point.latitude, longitude: point.longitude) else {
                plan.waypoints.append(
                    item(.skip, frame == nil ? "the tour has no frame and the points span too large an area" : "outside the tour's frame")
                )
                continue
            }
            if let match = existing.first(where: { $0.name.lowercased() == key }) {
                let changes = Self.changes(from: match, to: point, languages: languages)
                plan.waypoints.append(
                    changes.isEmpty ? item(.skip, "already in the tour, unchanged") : item(.change, changes.joined(separator: "; "))
                )
            } else {
                plan.waypoints.append(item(.add))
            }
            if plan.waypoints.last?.action != .skip {
                plan.images += point.images.map { ImportPlan.Image(waypoint: point.name, file: $0.path, bytes: $0.data.count) }
            }
        }
        if let route = imported.route {
            plan.routePoints = route.points.count
            plan.routeLengthMeters = route.lengthMeters
        }
        return plan
    }

    /// What applying the point would change in the waypoint of the same name, in words for the preview; empty when
    /// nothing would.
    static func changes(from waypoint: Waypoint, to point: ImportedTour.Point, languages: Set<String>) -> [String] {
        var changes: [String] = []
        if abs(waypoint.latitude - point.latitude) >= 1e-7 || abs(waypoint.longitude - point.longitude) >= 1e-7 {
            let moved = Geo.distance(
                RoutePoint(longitude: waypoint.longitude, latitude: waypoint.latitude),
                RoutePoint(longitude: point.longitude, latitude: point.latitude)
            )
            changes.append(moved < 1 ? "moves less than 1 m" : "moves \(DisplayFormat.grouped(Int(moved.rounded()))) m")
        }
        if !point.description.isEmpty, waypoint.description != point.description { changes.append("new description") }
        if let radius = point.triggerRadiusMeters, radius != waypoint.triggerRadiusMeters {
            changes.append("trigger zone \(waypoint.triggerRadiusMeters) m → \(radius) m")
        }
        let texts = point.localized.filter { languages.contains($0.key) && waypoint.localized[$0.key] != $0.value }.keys.sorted()
        if !texts.isEmpty { changes.append("new text in \(texts.joined(separator: ", "))") }
        return changes
    }

    /// The box around the imported points and route, with a margin (a tenth of each side, at least about 200 m), so
    /// no point sits on the frame's edge.
    static func fittedFrame(_ imported: ImportedTour) -> Frame? {
        let points = imported.points.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) } + (imported.route?.points ?? [])
        guard !points.isEmpty else { return nil }
        let box = TourExport.bounds(of: [], route: RoutePath(points: points))
        let padLat = max(0.002, (box.north - box.south) * 0.1)
        let padLon = max(0.002, (box.east - box.west) * 0.1)
        return Frame(
            north: min(90, box.north + padLat),
            south: max(-90, box.south - padLat),
            east: min(180, box.east + padLon),
            west: max(-180, box.west - padLon)
        )
    }
}
