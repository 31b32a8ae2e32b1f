import Foundation

/// One tile of the Web Mercator (XYZ, "slippy map") grid: `y` counts from the north, as tile servers and
/// Leaflet do. MBTiles stores rows the other way round (TMS): see ``tmsRow``.
struct TileID: Hashable, Sendable, Comparable, CustomStringConvertible {
    var z: Int
    var x: Int
    var y: Int

    init(z: Int, x: Int, y: Int) {
        self.z = z
        self.x = x
        self.y = y
    }

    /// The MBTiles `tile_row`: `2^z − 1 − y`.
    var tmsRow: Int { (1 << z) - 1 - y }

    /// From an MBTiles `(zoom_level, tile_column, tile_row)`.
    static func fromTMS(z: Int, column: Int, row: Int) -> TileID { TileID(z: z, x: column, y: (1 << z) - 1 - row) }

    var isValid: Bool { (0...30).contains(z) && x >= 0 && y >= 0 && x < (1 << z) && y < (1 << z) }

    static func < (a: TileID, b: TileID) -> Bool { (a.z, a.x, a.y) < (b.z, b.x, b.y) }
    var description: String { "\(z)/\(x)/\(y)" }
}

/// Web Mercator tile arithmetic, written to give exactly what Python's `mercantile` gives (the tests compare them):
/// `tile(lng, lat, zoom)`, `tiles(west, south, east, north, zooms)` and `bounds(tile)`.
enum TileMath {
    /// Web Mercator's latitude limit, as `mercantile.tiles` clamps it.
    static let maxLatitude = 85.051129
    /// mercantile's `EPSILON`: a point this close to the right or lower edge of a tile counts in the next one.
    static let epsilon = 1e-14
    /// mercantile's `LL_EPSILON`: taken off the east and south edges, so the bounds of one tile give that one tile.
    static let lonLatEpsilon = 1e-11

    /// The tile holding a point (mercantile.tile). Latitudes beyond ±90 have no tile.
    static func tile(latitude: Double, longitude: Double, zoom: Int) -> TileID? {
        guard latitude.isFinite, longitude.isFinite, latitude.magnitude <= 90 else { return nil }
        let x = longitude / 360.0 + 0.5
        let sinLatitude = sin(latitude * (Double.pi / 180.0))
        let y = 0.5 - 0.25 * log((1.0 + sinLatitude) / (1.0 - sinLatitude)) / Double.pi
        let z2 = pow(2.0, Double(zoom))
        func index(_ value: Double) -> Int {
            if value.isNaN { return 0 }
            if value <= 0 { return 0 }
            if value >= 1 { return Int(z2 - 1) }
            return Int(((value + epsilon) * z2).rounded(.down))
        }
        return TileID(z: zoom, x: index(x), y: index(y))
    }

    /// The columns and rows of the tiles a frame touches at one zoom (mercantile.tiles for one bounding box).
    static func range(_ frame: Frame, zoom: Int) -> (x: ClosedRange<Int>, y: ClosedRange<Int>)? {
        let west = max(-180.0, frame.west)
        let south = max(-maxLatitude, frame.south)
        let east = min(180.0, frame.east)
        let north = min(maxLatitude, frame.north)
        guard let upperLeft = tile(latitude: north, longitude: west, zoom: zoom),
            let lowerRight = tile(latitude: south + lonLatEpsilon, longitude: east - lonLatEpsilon, zoom: zoom),
            upperLeft.x <= lowerRight.x, upperLeft.y <= lowerRight.y
        else { return nil }
        return (upperLeft.x...lowerRight.x, upperLeft.y...lowerRight.y)
    }

    /// Every tile of the frame at the zooms, zoom by zoom, column by column, row by row.
    static func tiles(_ frame: Frame, zooms: ClosedRange<Int>) -> [TileID] {
        var result: [TileID] = []
        for zoom in zooms {
            guard let (xs, ys) = range(frame, zoom: zoom) else { continue }
            for x in xs { for y in ys { result.append(TileID(z: zoom, x: x, y: y)) } }
        }
        return result
    }

    /// How many tiles cover the frame at the zooms, without listing them.
    static func count(_ frame: Frame, zooms: ClosedRange<Int>) -> Int {
        zooms.reduce(0) { total, zoom in
            guard let (xs, ys) = range(frame, zoom: zoom) else { return total }
            return total + xs.count * ys.count
        }
    }

    /// Whether a tile lies (at least partly) inside the frame.
    static func intersects(_ tile: TileID, _ frame: Frame) -> Bool {
        guard let (xs, ys) = range(frame, zoom: tile.z) else { return false }
        return xs.contains(tile.x) && ys.contains(tile.y)
    }

    /// West, south, east, north of a tile in degrees (mercantile.bounds).
    static func bounds(_ tile: TileID) -> Frame {
        let z2 = pow(2.0, Double(tile.z))
        let west = Double(tile.x) / z2 * 360.0 - 180.0
        let north = atan(sinh(Double.pi * (1 - 2 * Double(tile.y) / z2))) * (180.0 / Double.pi)
        let east = Double(tile.x + 1) / z2 * 360.0 - 180.0
        let south = atan(sinh(Double.pi * (1 - 2 * Double(tile.y + 1) / z2))) * (180.0 / Double.pi)
        return Frame(north: north, south: south, east: east, west: west)
    }

    /// The zoom a phone should open the map at: the largest one in the range at which the frame spans at most
    /// two tiles each way (about a phone screen), else the smallest zoom.
    static func centerZoom(_ frame: Frame, zooms: ClosedRange<Int>) -> Int {
        var best = zooms.lowerBound
        for zoom in zooms {
            guard let (xs, ys) = range(frame, zoom: zoom), xs.count <= 2, ys.count <= 2 else { break }
            best = zoom
        }
        return best
    }
}
