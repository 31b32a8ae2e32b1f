import CGDAL
import Foundation

/// Contour lines of a frame, for the drawn map: GDAL warps the model's tiles onto one grid in WGS84 degrees over the
/// frame (whatever coordinate system the model is in), then traces the lines with its contour algorithm.
package struct ContourSet: Sendable, Equatable {
    /// Metres between two lines: 10, 20 or 50, chosen by the frame's relief so that a steep frame is not a brown blur
    /// and a gentle one still shows its shape.
    package let interval: Int
    /// Every fifth line (elevation a multiple of five intervals), drawn heavier and labelled.
    package var indexInterval: Int { interval * 5 }
    package let lowest: Double
    package let highest: Double
    package let lines: [ContourLine]
}

package struct ContourLine: Sendable, Equatable {
    package let elevation: Double
    package let isIndex: Bool
    /// (longitude, latitude) in degrees.
    package let points: [(Double, Double)]

    package static func == (a: ContourLine, b: ContourLine) -> Bool {
        a.elevation == b.elevation && a.isIndex == b.isIndex && a.points.elementsEqual(b.points, by: { $0 == $1 })
    }
}

extension TerrainModel {
    /// The interval for a relief of `relief` metres: the smallest of 10, 20 and 50 m that draws at most 40 lines
    /// from the lowest to the highest point.
    package static func contourInterval(relief: Double) -> Int {
        for interval in [10, 20] where relief / Double(interval) <= 40 { return interval }
        return 50
    }

    /// The contours over the frame, or nil when no tile of the model covers it. `cells` bounds the grid's longer side:
    /// the model's own resolution when it is coarser, so a 10 km frame on a 1 m model does not trace every boulder.
    package func contours(west: Double, south: Double, east: Double, north: Double, cells: Int = 800) throws(TerrainError) -> ContourSet? {
        lock.lock()
        defer { lock.unlock() }
        let covering = tiles.filter { $0.bounds.intersects(west: west, south: south, east: east, north: north) }
        guard !covering.isEmpty, east > west, north > south else { return nil }
        // The grid: square-ish cells on the ground, no finer than the finest covering tile, at most `cells` a side.
        let metresPerDegreeX = 111_320 * cos((south + north) / 2 * .pi / 180)
        let widthMetres = (east - west) * metresPerDegreeX
        let heightMetres = (north - south) * 111_320
        let modelResolution = covering.map(\.groundResolution).min() ?? 30
        let step = max(modelResolution, max(widthMetres, heightMetres) / Double(cells))
        let columns = max(Int((widthMetres / step).rounded(.up)), 2)
        let rows = max(Int((heightMetres / step).rounded(.up)), 2)
        let noData = -32768.0

        var arguments = [
            "-of", "MEM", "-t_srs", "EPSG:4326", "-te", "\(west)", "\(south)", "\(east)", "\(north)",
            "-ts", "\(columns)", "\(rows)", "-r", "bilinear", "-dstnodata", "\(noData)", "-ot", "Float32",
        ]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.indices.map { strdup(arguments[$0]) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        arguments.removeAll()
        CPLErrorReset()
        guard let options = GDALWarpAppOptionsNew(&argv, nil) else {
            throw TerrainError("GDAL refused the contour grid: \(Self.gdalMessage ?? "no reason given").")
        }
        defer { GDALWarpAppOptionsFree(options) }
        var sources: [GDALDatasetH?] = covering.map(\.dataset)
        var usageError: Int32 = 0
        guard let grid = GDALWarp("", nil, Int32(sources.count), &sources, options, &usageError) else {
            throw TerrainError("GDAL could not lay the terrain model over the frame: \(Self.gdalMessage ?? "no reason given").")
        }
        defer { GDALClose(grid) }
        guard let band = GDALGetRasterBand(grid, 1) else { return nil }
        GDALSetRasterNoDataValue(band, noData)

        // The frame's relief, from the grid itself (no-data cells left out).
        var values = [Float](repeating: 0, count: columns * rows)
        guard GDALRasterIO(band, GF_Read, 0, 0, Int32(columns), Int32(rows), &values, Int32(columns), Int32(rows), GDT_Float32, 0, 0) == CE_None
        else { throw TerrainError("GDAL could not read the contour grid: \(Self.gdalMessage ?? "no reason given").") }
        var lowest = Double.infinity
        var highest = -Double.infinity
        for value in values where value != Float(noData) && value.isFinite {
            lowest = min(lowest, Double(value))
            highest = max(highest, Double(value))
        }
        guard lowest.isFinite else { return nil }
        let interval = Self.contourInterval(relief: highest - lowest)

        guard let driver = OGRGetDriverByName("Memory"), let source = OGR_Dr_CreateDataSource(driver, "contours", nil) else {
            throw TerrainError("GDAL's memory driver is missing: contours cannot be traced.")
        }
        defer { OGR_DS_Destroy(source) }
        guard let layer = OGR_DS_CreateLayer(source, "contours", nil, wkbLineString, nil) else {
            throw TerrainError("GDAL could not make a layer for the contours.")
        }
        let field = OGR_Fld_Create("elevation", OFTReal)
        OGR_L_CreateField(layer, field, 1)
        OGR_Fld_Destroy(field)
        let contourOptions = ["LEVEL_INTERVAL=\(interval)", "ELEV_FIELD=0", "NODATA=\(noData)"]
        var optionList: [UnsafeMutablePointer<CChar>?] = contourOptions.map { strdup($0) } + [nil]
        defer { for pointer in optionList { free(pointer) } }
        let traced = optionList.withUnsafeMutableBufferPointer { buffer in
            GDALContourGenerateEx(band, layer, buffer.baseAddress, nil, nil)
        }
        guard traced == CE_None else {
            throw TerrainError("GDAL could not trace contours: \(Self.gdalMessage ?? "no reason given").")
        }

        var lines: [ContourLine] = []
        OGR_L_ResetReading(layer)
        while let feature = OGR_L_GetNextFeature(layer) {
            defer { OGR_F_Destroy(feature) }
            let elevation = OGR_F_GetFieldAsDouble(feature, 0)
            guard let geometry = OGR_F_GetGeometryRef(feature) else { continue }
            let count = OGR_G_GetPointCount(geometry)
            guard count >= 2 else { continue }
            var points: [(Double, Double)] = []
            points.reserveCapacity(Int(count))
            for i in 0..<count { points.append((OGR_G_GetX(geometry, i), OGR_G_GetY(geometry, i))) }
            let rounded = Int(elevation.rounded())
            lines.append(ContourLine(elevation: Double(rounded), isIndex: rounded % (interval * 5) == 0, points: points))
        }
        return ContourSet(interval: interval, lowest: lowest, highest: highest, lines: lines)
    }

    static var gdalMessage: String? {
        let message = String(cString: CPLGetLastErrorMsg()).trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? nil : message
    }
}

extension Tile {
    /// Metres on the ground per pixel, roughly (degrees are taken at the tile's middle latitude).
    var groundResolution: Double {
        let degreesWide = bounds.east - bounds.west
        let metres = degreesWide * 111_320 * cos((bounds.south + bounds.north) / 2 * .pi / 180)
        return max(metres / Double(max(width, 1)), 0.5)
    }
}
