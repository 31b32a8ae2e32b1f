import Foundation
import PackageFormat

/// What a printed map is drawn over, bottom to top as the player stacks them: the package's map tiles, then the drawn
/// open-data map (`map/basemap.geojson`); the route and the stops go on top (``PrintMap``). Either may be missing.
struct PrintMapLayers: Sendable {
    var tiles: PrintTiles?
    var basemap: PrintBasemap?

    init(tiles: PrintTiles? = nil, basemap: PrintBasemap? = nil) {
        self.tiles = tiles
        self.basemap = basemap
    }
}

/// The package's own map tiles (`tiles/map.mbtiles`, the file visitors carry offline) beneath a printed map, as a
/// raster at one zoom: the highest the package has that does not exceed what the print needs at ``PrintMap``'s
/// resolution, so a sign carries no more pixels than a print shop can put on paper.
///
/// PNG tiles are decoded by Cairo; JPEG tiles are embedded in the PDF as they are (Cairo writes the JPEG bytes of a
/// surface untouched), so neither is re-compressed. WebP tiles are not drawn (Cairo cannot read them, and decoding
/// them would take libvips into the server's process for one corner of the print kit): the map says so in its corner.
struct PrintTiles: Sendable {
    let reader: MBTilesReader
    /// `png`, `jpg` or `webp`, as the manifest lists the tiles.
    let format: String
    let zooms: ClosedRange<Int>
    /// The MBTiles file's `attribution`, as the player shows it beneath the map.
    let attribution: String

    /// The most tiles one map draws. A frame at its largest zoom can span thousands of tiles; a sign's map at 150 dpi,
    /// or a booklet's at 300, takes about a hundred 256-pixel tiles, and each drawn tile is held in memory until the
    /// page is written.
    static let maxTiles = 256
    /// The most pixels one map's tiles may hold once decoded (64 MB of Cairo's four bytes a pixel): 256 tiles of 256
    /// pixels, or 64 of 512; the tiles beyond are left out.
    static let maxPixels = 16 << 20
    /// The largest tile picture drawn, in pixels each way (tiles are 256 or 512): a file claiming more is skipped.
    static let maxSide = 1024
    /// The pixel size the zoom is chosen for: the web map's tile, at which zoom levels are defined.
    static let tilePixels = 256.0

    init(reader: MBTilesReader, format: String, zooms: ClosedRange<Int>, attribution: String) {
        self.reader = reader
        self.format = TileImageFormat.normalised(format) ?? format.lowercased()
        self.zooms = zooms
        self.attribution = attribution.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// PNG Cairo decodes, JPEG it embeds; anything else is left out.
    var isPrintable: Bool { format == "png" || format == "jpg" }

    /// What the map's corner says about the tiles: their source's credit, or why they are missing.
    var credit: String? {
        guard isPrintable else { return "\(format.uppercased()) map tiles are not printed" }
        return attribution.isEmpty ? nil : attribution
    }

    /// The zoom for a frame `span` radians of longitude wide drawn `pixels` wide: the smallest zoom whose tiles give
    /// that many pixels, or the package's largest below it; never below its smallest; lowered while the frame would
    /// take more than ``maxTiles``.
    func zoom(for frames: [Frame], span: Double, pixels: Double) -> Int {
        var zoom = zooms.upperBound
        if span > 0, pixels > 0 {
            let needed = Int(ceil(log2(pixels * 2 * .pi / (Self.tilePixels * span))))
            zoom = min(max(needed, zooms.lowerBound), zooms.upperBound)
        }
        while zoom > zooms.lowerBound, frames.reduce(0, { $0 + TileMath.count($1, zooms: zoom...zoom) }) > Self.maxTiles { zoom -= 1 }
        return zoom
    }

    /// Every tile of `frames` at `zoom`, decoded (PNG) or ready to embed (JPEG), in column then row order. A tile that
    /// cannot be read is left out (the frame's colour shows there); an unreadable file gives no tiles.
    func rasters(in frames: [Frame], zoom: Int) -> [(TileID, PDFCanvas.Raster)] {
        guard isPrintable else { return [] }
        var result: [(TileID, PDFCanvas.Raster)] = []
        var pixels = 0
        for frame in frames {
            try? reader.tiles(in: frame, zoom: zoom) { tile, data in
                guard result.count < Self.maxTiles, pixels < Self.maxPixels else { return }
                let raster = format == "png" ? PDFCanvas.Raster.png(data, maxSide: Self.maxSide) : PDFCanvas.Raster.jpeg(data, maxSide: Self.maxSide)
                guard let raster else { return }
                pixels += raster.width * raster.height
                result.append((tile, raster))
            }
        }
        return result
    }
}

/// The pixel size of a tile picture from its header, before anything is decoded.
enum TileImageSize {
    /// Width and height from a PNG's `IHDR` (always its first chunk).
    static func png(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        func big(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let (width, height) = (big(16), big(20))
        return width > 0 && height > 0 ? (width, height) : nil
    }

    /// Width and height from a JPEG's frame header (SOF0–SOF15 but DHT, JPG and DAC), walking the segments before it.
    static func jpeg(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1
                continue
            }
            // Markers without a length: TEM and the restart markers.
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                at += 2
                continue
            }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard at + 9 <= bytes.count else { return nil }
                let height = Int(bytes[at + 5]) << 8 | Int(bytes[at + 6])
                let width = Int(bytes[at + 7]) << 8 | Int(bytes[at + 8])
                return width > 0 && height > 0 ? (width, height) : nil
            }
            // Start of scan before any frame header: not a picture Cairo's PDF writer would take.
            if marker == 0xDA { return nil }
            at += 2 + length
        }
        return nil
    }
}
