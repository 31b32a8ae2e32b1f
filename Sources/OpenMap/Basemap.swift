import Foundation

/// A tour's drawn map, `map/basemap.geojson`: the extract's features and the terrain model's contours inside the
/// frame, clipped to it, simplified to what the tour's highest zoom can show, and kept under a size a phone saves in
/// seconds. Bytes in, bytes out: it knows nothing of tours, packages or the database.
package struct Basemap: Sendable {
    /// The GeoJSON FeatureCollection.
    package let data: Data
    /// The kinds it holds, in drawing order (`contour` among them when it has contours).
    package let layers: [String]
    package let featureCount: Int
    /// What was left out to stay under the size limit, in words ("buildings", "10 m contours"), empty when nothing was.
    package let leftOut: [String]
    /// Metres between contour lines, when it has contours.
    package let contourInterval: Int?
    /// The credit for what it holds: OpenStreetMap's, which its licence asks for on every map that draws the data, or
    /// the terrain model's when it holds contour lines alone. Also the file's own `attribution` member.
    package let attribution: String

    package static let openStreetMapCredit = "© OpenStreetMap contributors"
    package static let terrainCredit = "Contour lines from the agency's terrain model"
    /// A 10 km × 10 km frame's map stays under this, before the zip's compression.
    package static let sizeLimit = 4 << 20

    package struct Frame: Sendable, Equatable {
        package var west: Double
        package var south: Double
        package var east: Double
        package var north: Double
        package init(west: Double, south: Double, east: Double, north: Double) {
            self.west = west
            self.south = south
            self.east = east
            self.north = north
        }
    }

    /// Drawing order, bottom first: areas, then contours, water lines, roads, paths, and the named points on top.
    static let order: [String] = [
        "wood", "water", "building", "contour", "stream", "road", "path", "parking", "toilets", "shelter", "viewpoint", "peak",
    ]

    /// Builds the map of `frame` from `features` and `contours`, or nil when neither leaves anything inside the frame.
    package static func make(
        frame: Frame,
        maxZoom: Int,
        features: [OSMFeature],
        contours: ContourLines? = nil,
        sizeLimit: Int = sizeLimit
    ) -> Basemap? {
        let middle = (frame.south + frame.north) / 2
        // Half a screen pixel at the highest zoom, in degrees of latitude: finer detail is never seen.
        let metresPerPixel = 156_543.034 * cos(middle * .pi / 180) / pow(2, Double(min(max(maxZoom, 10), 20)))
        let baseTolerance = metresPerPixel * 0.5 / 111_320
        let decimals = maxZoom >= 17 ? 6 : 5
        var clipped = Clipped(frame: frame)
        for feature in features { clipped.add(feature) }
        if let contours { clipped.add(contours) }
        guard !clipped.items.isEmpty else { return nil }

        // Steps taken in turn until the file fits: each leaves out what a walker misses least.
        var leftOut: [String] = []
        var tolerance = baseTolerance
        var keep: (Clipped.Item) -> Bool = { _ in true }
        let steps: [(String?, Double, (Clipped.Item) -> Bool)] = [
            ("buildings", 1, { $0.kind != "building" }),
            (contours.map { "\($0.interval) m contours between the index lines" }, 1, { $0.kind != "contour" || $0.isIndex }),
            (nil, 2, { _ in true }),
            (nil, 2, { _ in true }),
            ("service roads and tracks", 1, { !["service", "track"].contains($0.featureClass ?? "") }),
            (nil, 2, { _ in true }),
        ]
        var written = clipped.encode(tolerance: tolerance, decimals: decimals, keep: keep)
        for (what, factor, filter) in steps where written.data.count > sizeLimit {
            let before = keep
            keep = { before($0) && filter($0) }
            tolerance *= factor
            if let what { leftOut.append(what) }
            written = clipped.encode(tolerance: tolerance, decimals: decimals, keep: keep)
        }
        if written.data.count > sizeLimit {
            // Still too large (a frame far bigger than 10 km): the most important features that fit, in drawing order
            // from the top (points, paths, roads, water).
            leftOut.append("the least important features")
            written = clipped.encode(tolerance: tolerance, decimals: decimals, keep: keep, budget: sizeLimit)
        }
        guard written.count > 0 else { return nil }
        return Basemap(
            data: written.data,
            layers: written.layers,
            featureCount: written.count,
            leftOut: leftOut,
            contourInterval: contours?.interval,
            attribution: written.attribution
        )
    }
}

/// Contour lines as the basemap takes them (the `Terrain` module traces them; this module does not depend on it).
package struct ContourLines: Sendable {
    package let interval: Int
    /// (elevation in metres, is an index line, points as (longitude, latitude)).
    package let lines: [(elevation: Double, isIndex: Bool, points: [(Double, Double)])]
    package init(interval: Int, lines: [(elevation: Double, isIndex: Bool, points: [(Double, Double)])]) {
        self.interval = interval
        self.lines = lines
    }
}

/// The features cut to the frame, before simplification (which depends on the size the file ends up at).
struct Clipped {
    struct Item {
        let kind: String
        let featureClass: String?
        let name: String?
        let elevation: Double?
        let isIndex: Bool
        let type: OSMFeature.Geometry
        /// Lines: the parts inside the frame. Polygons: rings, each outer followed by its holes.
        let parts: [[SIMD2<Double>]]
        let isInner: [Bool]
        var rank: Int { Basemap.order.firstIndex(of: kind) ?? 0 }
    }

    let frame: Basemap.Frame
    var items: [Item] = []

    init(frame: Basemap.Frame) { self.frame = frame }

    mutating func add(_ feature: OSMFeature) {
        let rings = feature.rings.map { ring in ring.map { SIMD2(Double($0.x) / 1e7, Double($0.y) / 1e7) } }
        switch feature.geometry {
        case .point:
            guard let point = rings.first?.first, contains(point) else { return }
            items.append(
                Item(
                    kind: feature.kind.name,
                    featureClass: nil,
                    name: feature.name,
                    elevation: feature.elevation,
                    isIndex: false,
                    type: .point,
                    parts: [[point]],
                    isInner: [false]
                )
            )
        case .line:
            let parts = rings.flatMap { clipLine($0) }
            guard !parts.isEmpty else { return }
            items.append(
                Item(
                    kind: feature.kind.name,
                    featureClass: feature.featureClass,
                    name: feature.name,
                    elevation: nil,
                    isIndex: false,
                    type: .line,
                    parts: parts,
                    isInner: parts.map { _ in false }
                )
            )
        case .polygon:
            var parts: [[SIMD2<Double>]] = []
            var inner: [Bool] = []
            var outerKept = false
            for (ring, isInner) in zip(rings, feature.isInner) {
                if isInner && !outerKept { continue }
                let clippedRing = clipRing(ring)
                if !isInner { outerKept = clippedRing.count >= 4 }
                guard clippedRing.count >= 4 else { continue }
                parts.append(clippedRing)
                inner.append(isInner)
            }
            guard !parts.isEmpty else { return }
            items.append(
                Item(
                    kind: feature.kind.name,
                    featureClass: feature.featureClass,
                    name: feature.name,
                    elevation: nil,
                    isIndex: false,
                    type: .polygon,
                    parts: parts,
                    isInner: inner
                )
            )
        }
    }

    mutating func add(_ contours: ContourLines) {
        for line in contours.lines {
            let parts = clipLine(line.points.map { SIMD2($0.0, $0.1) })
            guard !parts.isEmpty else { continue }
            items.append(
                Item(
                    kind: "contour",
                    featureClass: nil,
                    name: nil,
                    elevation: line.elevation,
                    isIndex: line.isIndex,
                    type: .line,
                    parts: parts,
                    isInner: parts.map { _ in false }
                )
            )
        }
    }

    func contains(_ p: SIMD2<Double>) -> Bool { p.x >= frame.west && p.x <= frame.east && p.y >= frame.south && p.y <= frame.north }

    /// The pieces of a line inside the frame (Liang–Barsky per segment, joined while they stay inside).
    func clipLine(_ points: [SIMD2<Double>]) -> [[SIMD2<Double>]] {
        var parts: [[SIMD2<Double>]] = []
        var current: [SIMD2<Double>] = []
        for i in 1..<max(points.count, 1) {
            guard let (a, b) = clipSegment(points[i - 1], points[i]) else {
                if current.count >= 2 { parts.append(current) }
                current = []
                continue
            }
            if let last = current.last, last == a {
                current.append(b)
            } else {
                if current.count >= 2 { parts.append(current) }
                current = [a, b]
            }
            if b != points[i] {  // left the frame here
                parts.append(current)
                current = []
            }
        }
        if current.count >= 2 { parts.append(current) }
        return parts
    }

    func clipSegment(_ a: SIMD2<Double>, _ b: SIMD2<Double>) -> (SIMD2<Double>, SIMD2<Double>)? {
        var t0 = 0.0
        var t1 = 1.0
        let d = b - a
        for (p, q) in [(-d.x, a.x - frame.west), (d.x, frame.east - a.x), (-d.y, a.y - frame.south), (d.y, frame.north - a.y)] {
            if p == 0 {
                if q < 0 { return nil }
            } else {
                let r = q / p
                if p < 0 {
                    if r > t1 { return nil }
                    t0 = max(t0, r)
                } else {
                    if r < t0 { return nil }
                    t1 = min(t1, r)
                }
            }
        }
        return (t0 == 0 ? a : a + d * t0, t1 == 1 ? b : a + d * t1)
    }

    /// A ring cut to the frame (Sutherland–Hodgman against each edge), closed again.
    func clipRing(_ ring: [SIMD2<Double>]) -> [SIMD2<Double>] {
        var points = ring.first == ring.last ? Array(ring.dropLast()) : ring
        let edges: [(SIMD2<Double>) -> Bool] = [{ $0.x >= frame.west }, { $0.x <= frame.east }, { $0.y >= frame.south }, { $0.y <= frame.north }]
        let crossings: [(SIMD2<Double>, SIMD2<Double>) -> SIMD2<Double>] = [
            { a, b in a + (b - a) * ((frame.west - a.x) / (b.x - a.x)) },
            { a, b in a + (b - a) * ((frame.east - a.x) / (b.x - a.x)) },
            { a, b in a + (b - a) * ((frame.south - a.y) / (b.y - a.y)) },
            { a, b in a + (b - a) * ((frame.north - a.y) / (b.y - a.y)) },
        ]
        for (inside, cross) in zip(edges, crossings) {
            guard !points.isEmpty else { break }
            var output: [SIMD2<Double>] = []
            output.reserveCapacity(points.count + 4)
            var previous = points[points.count - 1]
            for point in points {
                let now = inside(point)
                if now {
                    if !inside(previous) { output.append(cross(previous, point)) }
                    output.append(point)
                } else if inside(previous) {
                    output.append(cross(previous, point))
                }
                previous = point
            }
            points = output
        }
        guard points.count >= 3 else { return [] }
        return points + [points[0]]
    }

    struct Written {
        var data: Data
        var layers: [String]
        var count: Int
        var attribution: String
    }

    /// The GeoJSON, each line and ring simplified by `tolerance` degrees; with a `budget`, features are taken from
    /// the top of the drawing order down while they fit.
    func encode(tolerance: Double, decimals: Int, keep: (Item) -> Bool, budget: Int? = nil) -> Written {
        let scaleX = cos((frame.south + frame.north) / 2 * .pi / 180)
        var pieces: [(rank: Int, bytes: [UInt8], kind: String)] = []
        var writer = GeoJSONWriter(decimals: decimals)
        for item in items where keep(item) {
            let parts =
                item.type == .point
                ? item.parts : item.parts.map { simplify($0, tolerance: tolerance, scaleX: scaleX, closed: item.type == .polygon) }
            let usable = zip(parts, item.isInner).filter { item.type == .polygon ? $0.0.count >= 4 : item.type == .line ? $0.0.count >= 2 : true }
            guard !usable.isEmpty else { continue }
            writer.bytes.removeAll(keepingCapacity: true)
            writer.feature(item, parts: usable.map(\.0), isInner: usable.map(\.1))
            pieces.append((item.rank, writer.bytes, item.kind))
        }
        // Bottom of the map first, so a reader that draws in file order draws as the player does.
        pieces.sort { $0.rank < $1.rank }
        if let budget {
            var total = 80
            var kept = Set<Int>()
            for index in pieces.indices.sorted(by: { pieces[$0].rank > pieces[$1].rank }) {
                guard total + pieces[index].bytes.count + 1 <= budget else { continue }
                total += pieces[index].bytes.count + 1
                kept.insert(index)
            }
            pieces = pieces.indices.filter(kept.contains).map { pieces[$0] }
        }
        let fromOpenStreetMap = pieces.contains { $0.kind != "contour" }
        let attribution = fromOpenStreetMap ? Basemap.openStreetMapCredit : Basemap.terrainCredit
        var header = GeoJSONWriter(decimals: decimals)
        header.append(#"{"type":"FeatureCollection","attribution":"#)
        header.string(attribution)
        header.append(#","features":["#)
        var out: [UInt8] = header.bytes
        out.reserveCapacity(pieces.reduce(64) { $0 + $1.bytes.count + 2 })
        for (i, piece) in pieces.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: piece.bytes)
        }
        out.append(contentsOf: Array("\n]}\n".utf8))
        var layers: [String] = []
        for piece in pieces where !layers.contains(piece.kind) { layers.append(piece.kind) }
        return Written(data: Data(out), layers: layers, count: pieces.count, attribution: attribution)
    }

    /// Douglas–Peucker, iterative, distances measured with longitude shrunk by the latitude's cosine.
    func simplify(_ points: [SIMD2<Double>], tolerance: Double, scaleX: Double, closed: Bool) -> [SIMD2<Double>] {
        guard points.count > 2, tolerance > 0 else { return points }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        let squared = tolerance * tolerance
        while let (first, last) = stack.popLast() {
            guard last > first + 1 else { continue }
            let a = SIMD2(points[first].x * scaleX, points[first].y)
            let b = SIMD2(points[last].x * scaleX, points[last].y)
            let ab = b - a
            let length = (ab * ab).sum()
            var farthest = 0.0
            var at = first
            for i in (first + 1)..<last {
                let p = SIMD2(points[i].x * scaleX, points[i].y)
                let distance: Double
                if length == 0 {
                    distance = ((p - a) * (p - a)).sum()
                } else {
                    let t = min(max(((p - a) * ab).sum() / length, 0), 1)
                    let q = a + ab * t - p
                    distance = (q * q).sum()
                }
                if distance > farthest {
                    farthest = distance
                    at = i
                }
            }
            if farthest > squared {
                keep[at] = true
                stack.append((first, at))
                stack.append((at, last))
            }
        }
        var result: [SIMD2<Double>] = []
        for (point, kept) in zip(points, keep) where kept { result.append(point) }
        // A closed ring that collapsed to a sliver keeps its shape's extremes (it is dropped when under four points).
        if closed, result.count < 4, points.count >= 4 { return result.count == 3 ? [] : result }
        return result
    }
}

/// Writes GeoJSON by hand: numbers at a fixed number of decimals (no exponent, no float noise), names escaped.
struct GeoJSONWriter {
    var bytes: [UInt8] = []
    let decimals: Int
    let scale: Double

    init(decimals: Int) {
        self.decimals = decimals
        scale = pow(10, Double(decimals))
    }

    mutating func feature(_ item: Clipped.Item, parts: [[SIMD2<Double>]], isInner: [Bool]) {
        append(#"{"type":"Feature","properties":{"kind":"#)
        string(item.kind)
        if let featureClass = item.featureClass, !featureClass.isEmpty {
            append(#","class":"#)
            string(featureClass)
        }
        if let name = item.name, !name.isEmpty {
            append(#","name":"#)
            string(name)
        }
        if let elevation = item.elevation {
            append(#","elevation":"#)
            append(String(Int(elevation.rounded())))
        }
        if item.kind == "contour" { append(item.isIndex ? #","index":true"# : #","index":false"#) }
        append(#"},"geometry":{"type":"#)
        switch item.type {
        case .point:
            append(#""Point","coordinates":"#)
            position(parts[0][0])
        case .line:
            if parts.count == 1 {
                append(#""LineString","coordinates":"#)
                line(parts[0])
            } else {
                append(#""MultiLineString","coordinates":["#)
                for (i, part) in parts.enumerated() {
                    if i > 0 { bytes.append(UInt8(ascii: ",")) }
                    line(part)
                }
                bytes.append(UInt8(ascii: "]"))
            }
        case .polygon:
            // Each outer ring with the holes after it is one polygon.
            var polygons: [[[SIMD2<Double>]]] = []
            for (ring, inner) in zip(parts, isInner) {
                if inner, !polygons.isEmpty { polygons[polygons.count - 1].append(ring) } else if !inner { polygons.append([ring]) }
            }
            if polygons.count == 1 {
                append(#""Polygon","coordinates":"#)
                polygon(polygons[0])
            } else {
                append(#""MultiPolygon","coordinates":["#)
                for (i, rings) in polygons.enumerated() {
                    if i > 0 { bytes.append(UInt8(ascii: ",")) }
                    polygon(rings)
                }
                bytes.append(UInt8(ascii: "]"))
            }
        }
        append("}}")
    }

    mutating func polygon(_ rings: [[SIMD2<Double>]]) {
        bytes.append(UInt8(ascii: "["))
        for (i, ring) in rings.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            line(ring)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func line(_ points: [SIMD2<Double>]) {
        bytes.append(UInt8(ascii: "["))
        for (i, point) in points.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            position(point)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func position(_ point: SIMD2<Double>) {
        bytes.append(UInt8(ascii: "["))
        number(point.x)
        bytes.append(UInt8(ascii: ","))
        number(point.y)
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func number(_ value: Double) {
        var fixed = Int64((value * scale).rounded())
        if fixed < 0 {
            bytes.append(UInt8(ascii: "-"))
            fixed = -fixed
        }
        let divisor = Int64(scale)
        append(String(fixed / divisor))
        var fraction = fixed % divisor
        guard fraction != 0 else { return }
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: decimals)
        for i in stride(from: decimals - 1, through: 0, by: -1) {
            digits[i] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        bytes.append(UInt8(ascii: "."))
        bytes.append(contentsOf: digits)
    }

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": append(#"\""#)
            case "\\": append(#"\\"#)
            case "\n": append(#"\n"#)
            case "\r": append(#"\r"#)
            case "\t": append(#"\t"#)
            // `<` escaped too, so the file can never close a script element it might be inlined in.
            case "<": append(#"\u003c"#)
            default:
                if scalar.value < 0x20 {
                    append(String(format: "\\u%04x", scalar.value))
                } else {
                    bytes.append(contentsOf: Array(String(scalar).utf8))
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
