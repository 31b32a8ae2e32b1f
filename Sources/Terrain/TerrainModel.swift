import CGDAL
import Foundation

/// An agency's digital elevation model, read through GDAL: one raster (a GeoTIFF, an SRTM `.hgt`, any format GDAL
/// reads) or a folder of them, in any coordinate system GDAL knows. It answers one question, the height of the ground
/// at a longitude and latitude, by bilinear interpolation between the four nearest pixel centres.
///
/// It knows nothing of tours: the trail facts sample it along a route, and the drawn map will trace contours from it.
///
/// GDAL's dataset handles may not be used by two threads at once, so every reading holds one lock. A reading is
/// microseconds per point from GDAL's block cache, and a whole tour's sampling takes the lock once.
package final class TerrainModel: @unchecked Sendable {
    /// What `--dem` named.
    package let path: String
    /// Changes when a file of the model is added, removed, replaced or touched: facts computed from another model are
    /// worked out again.
    package let fingerprint: String
    /// The files read, in name order.
    package let files: [String]
    /// The area the files cover, in WGS84 degrees (the union of their extents).
    package let coverage: Coverage

    let lock = NSLock()
    let tiles: [Tile]

    package struct Coverage: Sendable, Equatable {
        package var west: Double
        package var south: Double
        package var east: Double
        package var north: Double

        package func contains(longitude: Double, latitude: Double) -> Bool {
            longitude >= west && longitude <= east && latitude >= south && latitude <= north
        }

        package func intersects(west: Double, south: Double, east: Double, north: Double) -> Bool {
            west <= self.east && east >= self.west && south <= self.north && north >= self.south
        }
    }

    /// Opens `path`: a raster file, or a folder whose `.tif`, `.tiff` and `.hgt` files are the tiles. Every file is
    /// opened once, here, so that a model GDAL cannot read is refused at start, with the file and GDAL's reason.
    package init(path: String) throws(TerrainError) {
        Self.registerDrivers
        self.path = path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw TerrainError("The terrain model \(path) does not exist.")
        }
        var names: [String]
        if isFolder.boolValue {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            names = entries.filter { ["tif", "tiff", "hgt"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
                .map { (path as NSString).appendingPathComponent($0) }
            guard !names.isEmpty else {
                throw TerrainError("The folder \(path) holds no terrain tiles: GeoTIFF (.tif, .tiff) or SRTM (.hgt) files.")
            }
        } else {
            names = [path]
        }
        var opened: [Tile] = []
        for name in names {
            do { opened.append(try Tile(path: name)) } catch {
                for tile in opened { tile.close() }
                throw error
            }
        }
        tiles = opened
        files = names
        coverage = Coverage(
            west: opened.map(\.bounds.west).min()!,
            south: opened.map(\.bounds.south).min()!,
            east: opened.map(\.bounds.east).max()!,
            north: opened.map(\.bounds.north).max()!
        )
        fingerprint = Self.fingerprint(of: names)
    }

    deinit { for tile in tiles { tile.close() } }

    /// The ground's height in metres at each position (`longitude`, `latitude`), nil where no tile covers it or the
    /// tile has no value there.
    package func elevations(_ positions: [(longitude: Double, latitude: Double)]) -> [Double?] {
        lock.lock()
        defer { lock.unlock() }
        return positions.map { position in
            for tile in tiles where tile.bounds.contains(longitude: position.longitude, latitude: position.latitude) {
                if let height = tile.elevation(longitude: position.longitude, latitude: position.latitude) { return height }
            }
            return nil
        }
    }

    package func elevation(longitude: Double, latitude: Double) -> Double? {
        elevations([(longitude, latitude)])[0]
    }

    private static let registerDrivers: Void = {
        GDALAllRegister()
        // GDAL reports through the error it leaves behind (CPLGetLastErrorMsg), not on the server's standard error.
        CPLSetErrorHandler(CPLQuietErrorHandler)
    }()

    /// Names, sizes and modification times, hashed (FNV-1a, 64 bits): enough to notice a changed model, nothing secret.
    private static func fingerprint(of files: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for file in files {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            for byte in "\((file as NSString).lastPathComponent)|\(size)|\(modified);".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return String(hash, radix: 16)
    }
}

/// Why a terrain model cannot be used, in words an operator can act on.
package struct TerrainError: Error, CustomStringConvertible, Equatable {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// One raster of the model, open for the server's lifetime.
final class Tile {
    let path: String
    let dataset: GDALDatasetH
    let band: GDALRasterBandH
    let width: Int32
    let height: Int32
    /// Geographic position to pixel: GDAL's inverse geotransform.
    let toPixel: [Double]
    /// WGS84 longitude/latitude into the raster's own system; nil when the raster is in WGS84 degrees already.
    let transform: OGRCoordinateTransformationH?
    let noData: Double?
    let bounds: TerrainModel.Coverage

    init(path: String) throws(TerrainError) {
        self.path = path
        let name = (path as NSString).lastPathComponent
        CPLErrorReset()
        guard let dataset = GDALOpenEx(path, UInt32(GDAL_OF_RASTER | GDAL_OF_READONLY), nil, nil, nil) else {
            throw TerrainError("GDAL cannot read \(name) as a terrain model: \(Self.lastError ?? "not a raster it knows").")
        }
        guard GDALGetRasterCount(dataset) >= 1, let band = GDALGetRasterBand(dataset, 1) else {
            GDALClose(dataset)
            throw TerrainError("\(name) holds no raster band to read heights from.")
        }
        var forward = [Double](repeating: 0, count: 6)
        var inverse = [Double](repeating: 0, count: 6)
        guard GDALGetGeoTransform(dataset, &forward) == CE_None, GDALInvGeoTransform(&forward, &inverse) != 0 else {
            GDALClose(dataset)
            throw TerrainError("\(name) has no georeferencing: GDAL cannot tell where on Earth its pixels are.")
        }
        let wkt = String(cString: GDALGetProjectionRef(dataset))
        guard !wkt.isEmpty else {
            GDALClose(dataset)
            throw TerrainError("\(name) names no coordinate system: give it one (gdal_translate -a_srs EPSG:…).")
        }
        let target = OSRNewSpatialReference(wkt)
        let wgs84 = OSRNewSpatialReference(nil)
        defer {
            OSRDestroySpatialReference(target)
            OSRDestroySpatialReference(wgs84)
        }
        OSRSetWellKnownGeogCS(wgs84, "WGS84")
        // Longitude first, as every caller passes it, whatever axis order the EPSG definition has.
        OSRSetAxisMappingStrategy(wgs84, OAMS_TRADITIONAL_GIS_ORDER)
        OSRSetAxisMappingStrategy(target, OAMS_TRADITIONAL_GIS_ORDER)
        var transform: OGRCoordinateTransformationH? = nil
        if OSRIsSame(target, wgs84) == 0 {
            guard let made = OCTNewCoordinateTransformation(wgs84, target) else {
                GDALClose(dataset)
                throw TerrainError("\(name)'s coordinate system cannot be reached from WGS84 longitudes and latitudes.")
            }
            transform = made
        }
        self.dataset = dataset
        self.band = band
        self.width = GDALGetRasterXSize(dataset)
        self.height = GDALGetRasterYSize(dataset)
        self.toPixel = inverse
        self.transform = transform
        var hasNoData: Int32 = 0
        let value = GDALGetRasterNoDataValue(band, &hasNoData)
        self.noData = hasNoData != 0 ? value : nil
        // The extent in WGS84: the raster's edge, sampled along each side (a projected grid's edges are curves in
        // degrees), taken back through the inverse transformation.
        var longitudes: [Double] = []
        var latitudes: [Double] = []
        let back = transform.flatMap { _ in OCTNewCoordinateTransformation(target, wgs84) }
        defer { back.map { OCTDestroyCoordinateTransformation($0) } }
        let steps = 16
        for step in 0...steps {
            let t = Double(step) / Double(steps)
            let w = Double(width)
            let h = Double(height)
            for (px, py) in [(t * w, 0.0), (t * w, h), (0.0, t * h), (w, t * h)] {
                var x = forward[0] + px * forward[1] + py * forward[2]
                var y = forward[3] + px * forward[4] + py * forward[5]
                var z = 0.0
                if let back { guard OCTTransform(back, 1, &x, &y, &z) != 0 else { continue } }
                longitudes.append(x)
                latitudes.append(y)
            }
        }
        guard let west = longitudes.min(), let east = longitudes.max(), let south = latitudes.min(), let north = latitudes.max() else {
            transform.map { OCTDestroyCoordinateTransformation($0) }
            GDALClose(dataset)
            throw TerrainError("\(name)'s extent cannot be expressed in longitudes and latitudes.")
        }
        self.bounds = TerrainModel.Coverage(west: west, south: south, east: east, north: north)
    }

    func close() {
        transform.map { OCTDestroyCoordinateTransformation($0) }
        GDALClose(dataset)
    }

    /// Bilinear between the four pixel centres around the point; at the raster's edge, the edge pixels. A pixel
    /// without a value (no-data) leaves the nearest pixel's value, or nil when that one has none either.
    func elevation(longitude: Double, latitude: Double) -> Double? {
        var x = longitude
        var y = latitude
        var z = 0.0
        if let transform { guard OCTTransform(transform, 1, &x, &y, &z) != 0 else { return nil } }
        let column = toPixel[0] + x * toPixel[1] + y * toPixel[2]
        let row = toPixel[3] + x * toPixel[4] + y * toPixel[5]
        guard column >= 0, row >= 0, column <= Double(width), row <= Double(height) else { return nil }
        // Pixel centres sit at half pixels: the four around the point, clamped to the raster.
        let cx = min(max(column - 0.5, 0), Double(width - 1))
        let cy = min(max(row - 0.5, 0), Double(height - 1))
        let x0 = min(Int32(cx.rounded(.down)), max(width - 2, 0))
        let y0 = min(Int32(cy.rounded(.down)), max(height - 2, 0))
        let spanX: Int32 = width > 1 ? 2 : 1
        let spanY: Int32 = height > 1 ? 2 : 1
        var window = [Double](repeating: 0, count: 4)
        guard GDALRasterIO(band, GF_Read, x0, y0, spanX, spanY, &window, spanX, spanY, GDT_Float64, 0, 0) == CE_None else { return nil }
        let fx = spanX == 2 ? cx - Double(x0) : 0
        let fy = spanY == 2 ? cy - Double(y0) : 0
        func value(_ i: Int32, _ j: Int32) -> Double? {
            let v = window[Int(j * spanX + min(i, spanX - 1))]
            guard v.isFinite else { return nil }
            if let noData, v == noData { return nil }
            return v
        }
        let corners = [value(0, 0), value(1, 0), value(0, 1), value(1, 1)]
        if let a = corners[0], let b = corners[1], let c = corners[2], let d = corners[3] {
            return a * (1 - fx) * (1 - fy) + b * fx * (1 - fy) + c * (1 - fx) * fy + d * fx * fy
        }
        let nearest = (fx < 0.5 ? 0 : 1) + (fy < 0.5 ? 0 : 2)
        return corners[nearest]
    }

    private static var lastError: String? {
        let message = String(cString: CPLGetLastErrorMsg()).trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? nil : message
    }
}
