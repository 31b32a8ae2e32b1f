import Foundation

/// KML 2.2 (as Google Earth, GDAL and most map tools write it): Placemarks with Points are waypoints in document order,
/// the first LineString or `gx:Track` is the route, Folders are flattened. Nothing the file points to is fetched.
enum KMLImport {
    /// Whether the document's root element is `<kml>` (after the declaration, comments and blanks).
    static func isKML(_ data: Data) -> Bool {
        rootElement(data)?.lowercased().hasSuffix("kml") == true
    }

    /// An HTML page saved under a `.kml` name (a map site's page instead of its export).
    static func isHTMLPage(_ data: Data) -> Bool {
        let root = rootElement(data)?.lowercased()
        return root == "html" || root == "!doctype html"
    }

    /// The first element's name (`kml`, `gpx`, `kml:kml`), or `!doctype …` for a document type declaration.
    static func rootElement(_ data: Data) -> String? {
        var text = Substring(String(decoding: data.prefix(4096), as: UTF8.self))
        while true {
            text = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
            if text.hasPrefix("<?") {
                guard let end = text.range(of: "?>") else { return nil }
                text = text[end.upperBound...]
            } else if text.hasPrefix("<!--") {
                guard let end = text.range(of: "-->") else { return nil }
                text = text[end.upperBound...]
            } else if text.lowercased().hasPrefix("<!doctype") {
                let name = text.dropFirst(9).drop { $0.isWhitespace }.prefix { $0.isLetter || $0 == ":" }
                return "!doctype \(name.lowercased())"
            } else if text.hasPrefix("<") {
                return String(text.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" })
            } else {
                return nil
            }
        }
    }

    static func parse(_ data: Data, archive: KMZArchive? = nil, rules: ImportRules) throws -> ImportedTour {
        let reader = KMLHandler(maxTrackPoints: rules.maxRoutePoints)
        try XMLImportReader.read(data, format: .kml, into: reader)
        guard reader.sawKML else { throw ImportRefused(message: "This XML file is not KML (no <kml> element).") }
        var result = ImportedTour(format: archive == nil ? .kml : .kmz)
        result.folders = reader.folders
        result.leftOutList = reader.leftOut
        for placemark in reader.placemarks {
            var point = ImportedTour.Point(
                name: placemark.name,
                description: placemark.description,
                latitude: placemark.latitude,
                longitude: placemark.longitude
            )
            if let archive {
                let (images, missing) = try archive.images(for: placemark)
                point.images = images
                result.leftOutList.append(contentsOf: missing)
            }
            result.points.append(point)
        }
        if let line = reader.lines.first {
            if let refusal = rules.refuseRoute(line.positions) { throw ImportRefused(message: "“\(line.name)”: \(refusal).") }
            result.route = line.positions
        }
        let withAltitude = reader.placemarks.filter { ($0.altitude ?? 0) != 0 }.count
        if withAltitude > 0 {
            result.notes.append("Altitude dropped for \(withAltitude) waypoint(s): waypoints keep no altitude (the route keeps its elevations).")
        }
        if reader.styles > 0 {
            result.leftOutList.append(.init(kind: "Style", name: "\(reader.styles) style(s)", reason: "not imported (colours and icons of the map)"))
        }
        if let name = reader.documentName { result.notes.insert("Document “\(name)”.", at: 0) }
        if result.points.isEmpty, result.route == nil { result.notes.append("The file holds no points and no line.") }
        return result
    }

    struct Placemark {
        var name: String
        var description: String
        var latitude: Double
        var longitude: Double
        var altitude: Double?
        /// `<img src>` of the description and the icon's `href`, in that order, as written.
        var imageReferences: [String]
    }

    struct Line {
        var name: String
        var positions: [[Double]]
    }

    final class KMLHandler: XMLImportHandler {
        let maxTrackPoints: Int
        var sawKML = false
        var documentName: String?
        var folders: [String] = []
        var placemarks: [Placemark] = []
        var lines: [Line] = []
        var leftOut = ImportedTour.LeftOutList()
        var styles = 0
        /// Icon hrefs of shared styles by id (`<Style id="x">` used by `<styleUrl>#x</styleUrl>`).
        var styleIcons: [String: String] = [:]

        private var placemarkCount = 0
        // The placemark being read.
        private var inPlacemark = false
        private var name = "", descriptionHTML = "", styleUrl = "", iconHref: String?
        private var point: (lon: Double, lat: Double, alt: Double?)?
        private var line: [[Double]]?
        private var trackCoords: [[Double]] = []
        private var geometryLeftOut: String?
        private var styleId: String?
        private var styleIcon: String?
        private var overlayName = ""

        private static let leftOutKinds: [String: String] = [
            "Polygon": "not imported (areas are not waypoints)",
            "GroundOverlay": "not imported (overlays are never fetched)",
            "ScreenOverlay": "not imported (overlays are never fetched)",
            "PhotoOverlay": "not imported (overlays are never fetched)",
            "NetworkLink": "not imported (linked files are never fetched)",
            "Model": "not imported (3D models are not waypoints)",
        ]

        init(maxTrackPoints: Int) { self.maxTrackPoints = maxTrackPoints }

        func start(_ element: XMLImportReader.Element, attributes: [String: String], in reader: XMLImportReader) {
            switch element.name {
            case "kml": sawKML = true
            case "Placemark":
                inPlacemark = true
                placemarkCount += 1
                name = ""
                descriptionHTML = ""
                styleUrl = ""
                iconHref = nil
                point = nil
                line = nil
                trackCoords = []
                geometryLeftOut = nil
            case "Style", "StyleMap":
                styles += 1
                if !inPlacemark {
                    styleId = attributes["id"]
                    styleIcon = nil
                }
            case "Polygon", "Model":
                if inPlacemark, geometryLeftOut == nil { geometryLeftOut = element.name }
            case "GroundOverlay", "ScreenOverlay", "PhotoOverlay", "NetworkLink":
                overlayName = ""
            default: break
            }
        }

        func end(_ element: XMLImportReader.Element, text value: String, in reader: XMLImportReader) {
            let parent = reader.parent
            switch element.name {
            case "name":
                let trimmed = String(value.trimmed.prefix(200))
                switch parent {
                case "Placemark": name = trimmed
                case "Folder": folders.append(trimmed.isEmpty ? "Unnamed folder" : trimmed)
                case "Document": if documentName == nil, !trimmed.isEmpty { documentName = trimmed }
                case "GroundOverlay", "ScreenOverlay", "PhotoOverlay", "NetworkLink": overlayName = trimmed
                default: break
                }
            case "description":
                if parent == "Placemark" { descriptionHTML = String(value.prefix(200_000)) }
            case "styleUrl":
                if parent == "Placemark" { styleUrl = value.trimmed }
            case "href":
                // Only an icon's picture: an overlay's or a network link's href is never read.
                if parent == "Icon", reader.isInside("IconStyle") {
                    if inPlacemark { iconHref = value.trimmed } else { styleIcon = value.trimmed }
                }
            case "Style":
                if !inPlacemark, let id = styleId, let icon = styleIcon { styleIcons[id] = icon }
                styleId = nil
            case "coordinates":
                guard inPlacemark else { break }
                let tuples = KMLImport.coordinates(value, maxPoints: maxTrackPoints)
                guard let tuples else {
                    reader.fail("Line \(reader.lineNumber): coordinates must be “longitude,latitude[,altitude]” tuples within range.")
                    return
                }
                if parent == "Point" {
                    if point == nil, let first = tuples.first { point = (first[0], first[1], first.count > 2 ? first[2] : nil) }
                } else if parent == "LineString" {
                    if line == nil { line = tuples }
                }
            case "coord":
                guard inPlacemark, parent == "Track" else { break }
                let parts = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map { Double($0) }
                guard parts.count >= 2, parts.count <= 3, let lon = parts[0], let lat = parts[1], (-180...180).contains(lon), (-90...90).contains(lat)
                else {
                    reader.fail("Line \(reader.lineNumber): gx:coord must be “longitude latitude altitude” within range.")
                    return
                }
                if trackCoords.count >= maxTrackPoints {
                    reader.fail("Line \(reader.lineNumber): the track has more than \(maxTrackPoints) points.")
                    return
                }
                let alt = parts.count == 3 ? parts[2] : nil
                trackCoords.append(alt.map { [lon, lat, $0] } ?? [lon, lat])
            case "Placemark":
                inPlacemark = false
                let label = name.isEmpty ? "Placemark \(placemarkCount)" : name
                if let point {
                    guard placemarks.count < TourImport.maxWaypoints else {
                        reader.fail(
                            "The file has more than \(TourImport.maxWaypoints) points; a tour can take at most \(TourImport.maxWaypoints) waypoints."
                        )
                        return
                    }
                    let images = KMLImport.imageSources(descriptionHTML)
                    var icon = iconHref
                    if icon == nil, styleUrl.hasPrefix("#") { icon = styleIcons[String(styleUrl.dropFirst())] }
                    placemarks.append(
                        Placemark(
                            name: String(label.prefix(120)),
                            description: KMLImport.plainText(descriptionHTML),
                            latitude: point.lat,
                            longitude: point.lon,
                            altitude: point.alt,
                            imageReferences: images + (icon.map { [$0] } ?? [])
                        )
                    )
                } else if let positions = line ?? (trackCoords.isEmpty ? nil : trackCoords) {
                    // Only the first line becomes the route; the others are named as left out, their points dropped
                    // at once rather than kept to the end of the file.
                    if let first = lines.first {
                        leftOut.append(.init(kind: "line", name: label, reason: "a tour has one route: the first line (“\(first.name)”) is used"))
                    } else {
                        lines.append(Line(name: label, positions: positions))
                    }
                } else if let kind = geometryLeftOut {
                    leftOut.append(.init(kind: kind, name: label, reason: Self.leftOutKinds[kind] ?? "not imported"))
                } else {
                    leftOut.append(.init(kind: "Placemark", name: label, reason: "no coordinates"))
                }
            case "GroundOverlay", "ScreenOverlay", "PhotoOverlay", "NetworkLink":
                leftOut.append(
                    .init(
                        kind: element.name,
                        name: overlayName.isEmpty ? element.name : overlayName,
                        reason: Self.leftOutKinds[element.name] ?? "not imported"
                    )
                )
            default: break
            }
        }
    }

    /// `lon,lat[,alt]` tuples separated by any whitespace (Google Earth puts newlines and indentation between them;
    /// some tools put a blank after the comma). Nil when a tuple is not numbers within range; read up to one tuple
    /// past `maxPoints` (the route's check then refuses the line).
    static func coordinates(_ text: String, maxPoints: Int) -> [[Double]]? {
        let normalized = text.replacingOccurrences(of: #"\s*,\s*"#, with: ",", options: .regularExpression)
        var result: [[Double]] = []
        for tuple in normalized.split(whereSeparator: { $0.isWhitespace }) {
            let parts = tuple.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard parts.count == 2 || parts.count == 3, let lon = parts[0], let lat = parts[1], lon.isFinite, lat.isFinite,
                (-180...180).contains(lon), (-90...90).contains(lat)
            else { return nil }
            if parts.count == 3, parts[2] == nil { return nil }
            result.append(parts.count == 3 ? [lon, lat, parts[2]!] : [lon, lat])
            if result.count > maxPoints { return result }
        }
        return result
    }

    /// The `src` of each `<img>` in a description, in order.
    static func imageSources(_ html: String) -> [String] {
        guard html.range(of: "<img", options: .caseInsensitive) != nil else { return [] }
        let pattern = #"<img\b[^>]*?\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))"#
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { return [] }
        let range = NSRange(html.startIndex..., in: html)
        return regex.matches(in: html, range: range).prefix(50).compactMap { match in
            (1...3).lazy.compactMap { Range(match.range(at: $0), in: html).map { decodeEntities(String(html[$0])) } }.first
        }
    }

    /// A description as plain text: HTML (the usual CDATA of Google Earth) loses its tags, keeps its line breaks and
    /// list items as text, and has its entities decoded. The result is only ever shown escaped.
    static func plainText(_ raw: String) -> String {
        let looksLikeHTML = raw.range(of: #"<\s*/?\s*[a-zA-Z][^>]*>"#, options: .regularExpression) != nil
        guard looksLikeHTML else { return String(raw.trimmed.prefix(20_000)) }
        var text = raw
        func replace(_ pattern: String, _ template: String) {
            text = text.replacingOccurrences(of: pattern, with: template, options: [.regularExpression, .caseInsensitive])
        }
        // Contents that are never text.
        replace(#"(?s)<(script|style|head|title)\b[^>]*>.*?</\1\s*>"#, "")
        replace(#"(?s)<!--.*?-->"#, "")
        // In HTML a raw line break is a blank; the tags say where lines end.
        replace(#"\s+"#, " ")
        replace(#"<br\s*/?>"#, "\n")
        replace(#"<li\b[^>]*>"#, "\n• ")
        replace(#"</(p|div|h[1-6]|ul|ol|table|tr|blockquote|pre)\s*>"#, "\n")
        replace(#"<(p|div|h[1-6]|ul|ol|table|tr|blockquote|pre)\b[^>]*>"#, "\n")
        replace(#"</t[dh]\s*>"#, " ")
        replace(#"<[^>]*>"#, "")
        text = decodeEntities(text)
        let lines = text.components(separatedBy: "\n").map {
            $0.replacingOccurrences(of: #"[ \t\u00A0]+"#, with: " ", options: .regularExpression).trimmed
        }
        return String(lines.filter { !$0.isEmpty }.joined(separator: "\n").prefix(20_000))
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{00A0}", "mdash": "—",
            "ndash": "–", "hellip": "…", "copy": "©", "deg": "°", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“",
            "eacute": "é", "egrave": "è", "ecirc": "ê", "aacute": "á", "agrave": "à", "acirc": "â", "iacute": "í",
            "oacute": "ó", "uacute": "ú", "ntilde": "ñ", "ccedil": "ç", "auml": "ä", "ouml": "ö", "uuml": "ü",
            "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "szlig": "ß", "bull": "•", "middot": "·", "times": "×",
        ]
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(12).firstIndex(of: ";") {
                let entity = after[..<semicolon]
                var decoded: String?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap { Unicode.Scalar($0) }.map { String(Character($0)) }
                } else if entity.hasPrefix("#") {
                    decoded = UInt32(entity.dropFirst()).flatMap { Unicode.Scalar($0) }.map { String(Character($0)) }
                } else {
                    decoded = named[String(entity)]
                }
                if let decoded, decoded != "\0" {
                    result += decoded
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            result += "&"
            rest = after
        }
        return result + rest
    }
}
