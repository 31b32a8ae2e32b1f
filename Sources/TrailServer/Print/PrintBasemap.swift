import Foundation
import PackageFormat

/// The drawn open-data map of a package (`map/basemap.geojson`, made at build time from an OpenStreetMap extract or a
/// terrain model and clipped to the tour's frame) as a printed map shows it beneath the route: woods, water, buildings,
/// contours, roads by class, dashed paths, and small symbols for peaks, viewpoints, parking, toilets and shelters, with
/// names where they fit. Vectors, like the rest of the map, so it scales with the sign.
///
/// The file is a GeoJSON FeatureCollection in WGS 84. Each feature's `properties.kind` says what it is; `name`,
/// `class` (the OSM `highway` or `waterway` value), `elevation` and `index` (an index contour, labelled) are optional.
/// A feature of another kind, or one whose geometry cannot be read, is left out rather than failing the print.
struct PrintBasemap: Sendable {
    enum Kind: String, Sendable {
        case road, path, water, stream, wood, building, peak, viewpoint, parking, toilets, shelter, contour
    }

    struct Position: Sendable {
        let longitude: Double
        let latitude: Double
    }

    enum Geometry: Sendable {
        case point(Position)
        /// A LineString or a MultiLineString.
        case lines([[Position]])
        /// A Polygon or a MultiPolygon: each polygon's rings, the outer one first.
        case polygons([[[Position]]])
    }

    struct Feature: Sendable {
        let kind: Kind
        let name: String?
        let featureClass: String?
        let elevation: Double?
        let isIndex: Bool
        let geometry: Geometry
    }

    static let defaultAttribution = "© OpenStreetMap contributors"
    /// The largest file read: an extract of the largest frame a tour may have, with its buildings, is a few megabytes;
    /// beyond this the print would take longer than anyone waits for a PDF.
    static let maxBytes: Int64 = 32 << 20

    let features: [Feature]
    /// The credit printed on the map (the manifest's, else OpenStreetMap's).
    let attribution: String

    init(features: [Feature], attribution: String? = nil) {
        self.features = features
        let given = attribution?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        self.attribution = given.isEmpty ? Self.defaultAttribution : given
    }

    /// Reads a FeatureCollection; throws when the text is not one.
    static func parse(_ data: Data, attribution: String? = nil) throws -> PrintBasemap {
        do {
            let collection = try JSONDecoder().decode(Collection.self, from: data)
            guard collection.type == "FeatureCollection" else { throw PrintError("map/basemap.geojson is not a GeoJSON FeatureCollection.") }
            return PrintBasemap(features: collection.features.compactMap(\.feature), attribution: attribution)
        } catch let error as PrintError {
            throw error
        } catch {
            throw PrintError("map/basemap.geojson is not GeoJSON: \(error)")
        }
    }

    // MARK: Reading it from the package

    /// The drawn map out of a published package's zip, checked against the manifest's size and SHA-256 as every file
    /// of a package is; read whole (it is small), never beyond ``maxBytes``.
    static func read(zip: URL, listing: Manifest.Basemap) throws -> PrintBasemap {
        guard listing.size <= maxBytes else {
            throw PrintError(
                "\(listing.path) is \(ByteFormat.string(listing.size)); a printed map draws one of at most \(ByteFormat.string(maxBytes))."
            )
        }
        do {
            guard let data = try PackageArchiveReader(url: zip).readListed(path: listing.path, size: listing.size, sha256: listing.sha256) else {
                throw PrintError("The package has no \(listing.path).")
            }
            return try parse(data, attribution: listing.attribution)
        } catch let mismatch as ListedFileMismatch {
            throw PrintError(mismatch.description)
        }
    }

    // MARK: Drawing

    /// Draws every feature through `project` (longitude, latitude → page), lengths in `unit`s, beneath whatever is
    /// drawn next; names go where `labels` has room, so they never sit under a stop or each other.
    func draw(on canvas: PDFCanvas, unit: Double, labels: inout PrintMapLabels, project: (Double, Double) -> (Double, Double)) {
        func path(_ positions: [Position]) -> [(Double, Double)] { positions.map { project($0.longitude, $0.latitude) } }
        var fills: [Kind: [[(Double, Double)]]] = [:]
        var contours: [[(Double, Double)]] = []
        var indexContours: [[(Double, Double)]] = []
        var streams: [[(Double, Double)]] = []
        var rivers: [[(Double, Double)]] = []
        var majorRoads: [[(Double, Double)]] = []
        var minorRoads: [[(Double, Double)]] = []
        var tracks: [[(Double, Double)]] = []
        var paths: [[(Double, Double)]] = []
        var steps: [[(Double, Double)]] = []
        var symbols: [(Feature, (Double, Double))] = []
        var lineNames: [(Feature, [[(Double, Double)]])] = []
        var contourLabels: [(String, [(Double, Double)])] = []

        for feature in features {
            switch feature.kind {
            case .wood, .water, .building:
                if case let .polygons(polygons) = feature.geometry {
                    fills[feature.kind, default: []] += polygons.flatMap { $0.map(path) }
                } else if feature.kind == .water, case let .lines(lines) = feature.geometry {
                    // A water line (a canal drawn as a line by mistake): drawn as a stream.
                    streams += lines.map(path)
                }
            case .contour:
                guard case let .lines(lines) = feature.geometry else { continue }
                let drawn = lines.map(path)
                if feature.isIndex {
                    indexContours += drawn
                    if let elevation = feature.elevation, let longest = drawn.max(by: { Self.length($0) < Self.length($1) }) {
                        contourLabels.append((DisplayFormat.grouped(Int(elevation.rounded())), longest))
                    }
                } else {
                    contours += drawn
                }
            case .stream:
                guard case let .lines(lines) = feature.geometry else { continue }
                let drawn = lines.map(path)
                if ["river", "canal"].contains(feature.featureClass ?? "") { rivers += drawn } else { streams += drawn }
                if feature.name != nil { lineNames.append((feature, drawn)) }
            case .road, .path:
                guard case let .lines(lines) = feature.geometry else { continue }
                let drawn = lines.map(path)
                switch Self.roadStyle(feature) {
                case .major: majorRoads += drawn
                case .minor: minorRoads += drawn
                case .track: tracks += drawn
                case .path: paths += drawn
                case .steps: steps += drawn
                }
                if feature.name != nil { lineNames.append((feature, drawn)) }
            case .peak, .viewpoint, .parking, .toilets, .shelter:
                if feature.kind == .parking, case let .polygons(polygons) = feature.geometry {
                    fills[.parking, default: []] += polygons.flatMap { $0.map(path) }
                }
                if let anchor = Self.anchor(feature.geometry) { symbols.append((feature, project(anchor.longitude, anchor.latitude))) }
            }
        }

        canvas.fillRings(fills[.wood] ?? [], .wood)
        canvas.fillRings(fills[.water] ?? [], .water)
        canvas.fillRings(fills[.parking] ?? [], .parkingArea)
        canvas.fillRings(fills[.building] ?? [], .building)
        canvas.lines(contours, .contour, lineWidth: unit * 0.025)
        canvas.lines(indexContours, .contour, lineWidth: unit * 0.06)
        canvas.lines(streams, .stream, lineWidth: unit * 0.06)
        canvas.lines(rivers, .stream, lineWidth: unit * 0.16)
        canvas.lines(tracks, .track, lineWidth: unit * 0.08, dash: [unit * 0.5, unit * 0.15])
        canvas.lines(minorRoads, .roadCasing, lineWidth: unit * 0.22)
        canvas.lines(majorRoads, .roadCasing, lineWidth: unit * 0.34)
        canvas.lines(minorRoads, .white, lineWidth: unit * 0.14)
        canvas.lines(majorRoads, .majorRoad, lineWidth: unit * 0.25)
        canvas.lines(paths, .trail, lineWidth: unit * 0.07, dash: [unit * 0.35, unit * 0.2])
        canvas.lines(steps, .trail, lineWidth: unit * 0.14, dash: [unit * 0.06, unit * 0.08])

        let symbolSize = unit * 0.55
        for (feature, place) in symbols { drawSymbol(feature.kind, at: place, size: symbolSize, on: canvas) }
        for (_, place) in symbols { labels.reserve(x: place.0 - symbolSize, y: place.1 - symbolSize, width: symbolSize * 2, height: symbolSize * 2) }

        // Names, the most useful first: what a walker looks for, then the ways, then the heights of the contours.
        let size = max(unit * 0.62, 5.5)
        for kind in [Kind.peak, .viewpoint, .shelter, .parking, .toilets] {
            for (feature, place) in symbols where feature.kind == kind {
                guard var text = feature.name?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { continue }
                if kind == .peak, let elevation = feature.elevation { text += " \(DisplayFormat.grouped(Int(elevation.rounded()))) m" }
                labels.place(text, near: place, gap: symbolSize, size: size, bold: kind == .peak, color: .ink, on: canvas)
            }
        }
        var named = Set<String>()
        for (feature, lines) in lineNames.sorted(by: { Self.rank($0.0) < Self.rank($1.0) }) {
            guard let text = feature.name?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty,
                !named.contains("\(feature.kind.rawValue) \(text)")
            else { continue }
            let color: PDFCanvas.Color = feature.kind == .stream ? .streamLabel : .ink
            if labels.place(text, along: lines, size: size * 0.92, color: color, on: canvas) { named.insert("\(feature.kind.rawValue) \(text)") }
        }
        for (text, line) in contourLabels { labels.place(text, along: [line], size: max(unit * 0.42, 4.5), color: .contourLabel, on: canvas) }
    }

    private enum RoadStyle { case major, minor, track, path, steps }

    private static func roadStyle(_ feature: Feature) -> RoadStyle {
        let value = feature.featureClass?.lowercased() ?? ""
        if value == "steps" { return .steps }
        if feature.kind == .path { return .path }
        switch value.replacingOccurrences(of: "_link", with: "") {
        case "motorway", "trunk", "primary", "secondary": return .major
        case "track": return .track
        case "footway", "path", "bridleway", "cycleway", "pedestrian": return .path
        default: return .minor
        }
    }

    /// Which line names go first: paths (what the tour walks), then roads by importance, then streams.
    private static func rank(_ feature: Feature) -> Int {
        switch feature.kind {
        case .path: 0
        case .road:
            switch roadStyle(feature) {
            case .path, .steps: 0
            case .track: 1
            case .major: 2
            case .minor: 3
            }
        default: 4
        }
    }

    private func drawSymbol(_ kind: Kind, at place: (Double, Double), size: Double, on canvas: PDFCanvas) {
        let (x, y) = place
        switch kind {
        case .peak:
            canvas.polygon([(x, y - size * 0.75), (x - size * 0.7, y + size * 0.5), (x + size * 0.7, y + size * 0.5)], fill: .peak)
        case .viewpoint:
            canvas.circle(x, y, radius: size * 0.5, fill: .white, stroke: .peak, lineWidth: size * 0.18)
            canvas.circle(x, y, radius: size * 0.18, fill: .peak)
        case .parking, .toilets:
            let side = size * 1.5
            canvas.fillRect(x - side / 2, y - side / 2, side, side, .service)
            let letters = kind == .parking ? "P" : "WC"
            let text = side * (kind == .parking ? 0.8 : 0.5)
            canvas.text(letters, x: x - side / 2, y: y - text * 0.62, width: side, size: text, bold: true, color: .white, align: .center, maxLines: 1)
        case .shelter:
            canvas.polygon(
                [
                    (x, y - size * 0.7), (x + size * 0.7, y), (x + size * 0.5, y), (x + size * 0.5, y + size * 0.6), (x - size * 0.5, y + size * 0.6),
                    (x - size * 0.5, y), (x - size * 0.7, y),
                ],
                fill: .peak
            )
        default:
            break
        }
    }

    /// Where a point feature's symbol goes: the point, the middle vertex of a line, the mean of a polygon's outer ring.
    private static func anchor(_ geometry: Geometry) -> Position? {
        switch geometry {
        case .point(let position): return position
        case .lines(let lines):
            guard let line = lines.first(where: { !$0.isEmpty }) else { return nil }
            return line[line.count / 2]
        case .polygons(let polygons):
            guard let ring = polygons.first?.first, !ring.isEmpty else { return nil }
            let count = Double(ring.count)
            return Position(
                longitude: ring.reduce(0) { $0 + $1.longitude } / count,
                latitude: ring.reduce(0) { $0 + $1.latitude } / count
            )
        }
    }

    static func length(_ line: [(Double, Double)]) -> Double {
        zip(line, line.dropFirst()).reduce(0) { $0 + hypot($1.1.0 - $1.0.0, $1.1.1 - $1.0.1) }
    }

    // MARK: GeoJSON

    private struct Collection: Decodable {
        let type: String
        let features: [Lenient]
    }

    /// One feature, or nil when it cannot be drawn: an unknown kind or an unreadable geometry leaves that feature out.
    private struct Lenient: Decodable {
        let feature: Feature?

        init(from decoder: any Decoder) throws {
            feature = try? Self.decode(decoder)
        }

        private enum Keys: String, CodingKey { case type, geometry, properties, coordinates, kind, name, `class`, elevation, index }

        private static func decode(_ decoder: any Decoder) throws -> Feature? {
            let container = try decoder.container(keyedBy: Keys.self)
            let properties = try container.nestedContainer(keyedBy: Keys.self, forKey: .properties)
            guard let kind = Kind(rawValue: try properties.decode(String.self, forKey: .kind)) else { return nil }
            let geometry = try container.nestedContainer(keyedBy: Keys.self, forKey: .geometry)
            let shape: Geometry
            switch try geometry.decode(String.self, forKey: .type) {
            case "Point": shape = .point(try position(try geometry.decode([Double].self, forKey: .coordinates)))
            case "LineString": shape = .lines([try geometry.decode([[Double]].self, forKey: .coordinates).map(position)])
            case "MultiLineString": shape = .lines(try geometry.decode([[[Double]]].self, forKey: .coordinates).map { try $0.map(position) })
            case "Polygon": shape = .polygons([try geometry.decode([[[Double]]].self, forKey: .coordinates).map { try $0.map(position) }])
            case "MultiPolygon":
                shape = .polygons(try geometry.decode([[[[Double]]]].self, forKey: .coordinates).map { try $0.map { try $0.map(position) } })
            default: return nil
            }
            return Feature(
                kind: kind,
                name: (try? properties.decodeIfPresent(String.self, forKey: .name)) ?? nil,
                featureClass: (try? properties.decodeIfPresent(String.self, forKey: .class)) ?? nil,
                elevation: ((try? properties.decodeIfPresent(Double.self, forKey: .elevation)) ?? nil).flatMap {
                    $0.isFinite && abs($0) < 100_000 ? $0 : nil
                },
                isIndex: ((try? properties.decodeIfPresent(Bool.self, forKey: .index)) ?? nil) ?? false,
                geometry: shape
            )
        }

        private static func position(_ values: [Double]) throws -> Position {
            guard values.count >= 2, values[0].isFinite, values[1].isFinite, abs(values[1]) <= 90 else {
                throw PrintError("not a position")
            }
            return Position(longitude: values[0], latitude: values[1])
        }
    }
}

/// Where a printed map's names may go: rectangles already taken (the stops, the north mark, the scale bar, the credit,
/// the symbols, names placed before) are kept, and a name that would overlap one, or leave the map, is not printed.
struct PrintMapLabels {
    private var taken: [(x: Double, y: Double, width: Double, height: Double)] = []
    let bounds: (x: Double, y: Double, width: Double, height: Double)

    init(x: Double, y: Double, width: Double, height: Double) {
        bounds = (x, y, width, height)
    }

    mutating func reserve(x: Double, y: Double, width: Double, height: Double) {
        taken.append((x, y, width, height))
    }

    private func fits(x: Double, y: Double, width: Double, height: Double) -> Bool {
        guard x >= bounds.x, y >= bounds.y, x + width <= bounds.x + bounds.width, y + height <= bounds.y + bounds.height else { return false }
        return !taken.contains { x < $0.x + $0.width && $0.x < x + width && y < $0.y + $0.height && $0.y < y + height }
    }

    /// A name beside a symbol: to its right, its left, above or below, whichever is free first.
    @discardableResult
    mutating func place(
        _ text: String,
        near place: (Double, Double),
        gap: Double,
        size: Double,
        bold: Bool = false,
        color: PDFCanvas.Color,
        on canvas: PDFCanvas
    ) -> Bool {
        let (width, height) = canvas.lineSize(text, size: size, bold: bold)
        let pad = size * 0.15
        // Beside the symbol first, clear of the room it takes (`gap` each way), then above it, then below.
        let candidates = [
            (place.0 + gap + pad, place.1 - height / 2), (place.0 - gap - pad - width, place.1 - height / 2),
            (place.0 - width / 2, place.1 - gap - height), (place.0 - width / 2, place.1 + gap),
        ]
        for (x, y) in candidates where fits(x: x - pad, y: y, width: width + 2 * pad, height: height) {
            draw(text, x: x, y: y, width: width, height: height, pad: pad, size: size, bold: bold, color: color, on: canvas)
            return true
        }
        return false
    }

    /// A name on a line, level, centred on a point halfway along it (or a third or two thirds of the way when the
    /// middle is taken), on the longest of its lines first.
    @discardableResult
    mutating func place(_ text: String, along lines: [[(Double, Double)]], size: Double, color: PDFCanvas.Color, on canvas: PDFCanvas) -> Bool {
        let (width, height) = canvas.lineSize(text, size: size)
        let pad = size * 0.15
        for line in lines.sorted(by: { PrintBasemap.length($0) > PrintBasemap.length($1) }) {
            let total = PrintBasemap.length(line)
            // A name much longer than its line would label something else.
            guard total > width * 0.6 else { continue }
            for share in [0.5, 0.33, 0.67] {
                guard let point = Self.point(on: line, at: total * share) else { continue }
                let (x, y) = (point.0 - width / 2, point.1 - height / 2)
                if fits(x: x - pad, y: y, width: width + 2 * pad, height: height) {
                    draw(text, x: x, y: y, width: width, height: height, pad: pad, size: size, bold: false, color: color, on: canvas)
                    return true
                }
            }
        }
        return false
    }

    private mutating func draw(
        _ text: String,
        x: Double,
        y: Double,
        width: Double,
        height: Double,
        pad: Double,
        size: Double,
        bold: Bool,
        color: PDFCanvas.Color,
        on canvas: PDFCanvas
    ) {
        // A pale box beneath, so a name stays legible over tiles, contours and woods.
        canvas.fillRect(x - pad, y, width + 2 * pad, height, PDFCanvas.Color(red: 1, green: 1, blue: 1, alpha: 0.72))
        canvas.text(text, x: x, y: y, width: width + pad, size: size, bold: bold, color: color, maxLines: 1)
        taken.append((x - pad, y, width + 2 * pad, height))
    }

    /// The point `distance` along a polyline.
    private static func point(on line: [(Double, Double)], at distance: Double) -> (Double, Double)? {
        var left = distance
        for (a, b) in zip(line, line.dropFirst()) {
            let step = hypot(b.0 - a.0, b.1 - a.1)
            if step > 0, left <= step {
                let t = left / step
                return (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
            }
            left -= step
        }
        return line.last
    }
}

extension PDFCanvas.Color {
    static let wood = PDFCanvas.Color(red: 0.80, green: 0.90, blue: 0.74, alpha: 0.9)
    static let water = PDFCanvas.Color(red: 0.66, green: 0.81, blue: 0.93, alpha: 0.95)
    static let stream = PDFCanvas.Color(red: 0.36, green: 0.60, blue: 0.84)
    static let streamLabel = PDFCanvas.Color(red: 0.16, green: 0.36, blue: 0.62)
    static let building = PDFCanvas.Color(red: 0.74, green: 0.72, blue: 0.70)
    static let parkingArea = PDFCanvas.Color(red: 0.90, green: 0.90, blue: 0.88)
    static let contour = PDFCanvas.Color(red: 0.70, green: 0.52, blue: 0.34, alpha: 0.85)
    static let contourLabel = PDFCanvas.Color(red: 0.55, green: 0.38, blue: 0.22)
    static let roadCasing = PDFCanvas.Color(red: 0.55, green: 0.55, blue: 0.53)
    static let majorRoad = PDFCanvas.Color(red: 0.98, green: 0.84, blue: 0.52)
    static let track = PDFCanvas.Color(red: 0.58, green: 0.44, blue: 0.30)
    static let trail = PDFCanvas.Color(red: 0.62, green: 0.22, blue: 0.16)
    static let peak = PDFCanvas.Color(red: 0.30, green: 0.22, blue: 0.16)
    static let service = PDFCanvas.Color(red: 0.18, green: 0.38, blue: 0.72)
}
