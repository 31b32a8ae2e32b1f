import Foundation
import PackageFormat

/// The tour's frame drawn into a box: the route and the numbered stops in Web Mercator (the projection of the panel's
/// and the player's maps, so the shapes match what visitors see), a north mark and a scale bar, over what the package
/// has of a map, stacked as the player stacks them: its map tiles at the bottom (a raster at a zoom suited to the
/// printed size, ``PrintTiles``), the drawn open-data map over them (vectors, ``PrintBasemap``), the route and the stops
/// on top. The sources' credits go in the map's corner. Without either, the frame is a plain fill.
struct PrintMap {
    let tour: PrintedTour
    /// The resolution the tiles are chosen for, in dots per inch of the printed page: a sign is read from a step or
    /// two away, a booklet in the hand.
    var tileResolution = 150.0

    func draw(on canvas: PDFCanvas, x: Double, y: Double, width: Double, height: Double, unit: Double) {
        let bounds = tour.bounds
        let east = bounds.crossesAntimeridian ? bounds.east + 360 : bounds.east
        let left = Self.projectX(bounds.west)
        let right = Self.projectX(east)
        let top = Self.projectY(bounds.north)
        let bottom = Self.projectY(bounds.south)
        let spanX = max(right - left, 1e-9)
        let spanY = max(top - bottom, 1e-9)
        let scale = min(width / spanX, height / spanY)
        let drawnWidth = spanX * scale
        let drawnHeight = spanY * scale
        let originX = x + (width - drawnWidth) / 2
        let originY = y + (height - drawnHeight) / 2
        func project(_ longitude: Double, _ latitude: Double) -> (Double, Double) {
            (originX + (Self.projectX(longitude) - left) * scale, originY + (top - Self.projectY(latitude)) * scale)
        }
        func point(_ longitude: Double, _ latitude: Double) -> (Double, Double) {
            project(bounds.crossesAntimeridian && longitude < bounds.west ? longitude + 360 : longitude, latitude)
        }
        let stops = tour.stops
        let radius = unit * (stops.count > 40 ? 0.8 : 1.1)
        let places = stopPlaces(point)
        let credits = [tour.map.tiles?.credit, tour.map.basemap?.attribution].compactMap { $0 }
        let creditSize = max(unit * 0.55, 5)
        let creditWidth = drawnWidth * 0.6

        canvas.fillRect(x, y, width, height, .paper)
        canvas.fillRect(originX, originY, drawnWidth, drawnHeight, Color.frame)
        canvas.clipped(originX, originY, drawnWidth, drawnHeight) {
            if let tiles = tour.map.tiles {
                drawTiles(tiles, on: canvas, span: spanX, drawnWidth: drawnWidth, project)
            }
            if let basemap = tour.map.basemap {
                // Names keep clear of the stops, the north mark, the scale bar and the credit drawn over the map.
                var labels = PrintMapLabels(x: originX, y: originY, width: drawnWidth, height: drawnHeight)
                for place in places { labels.reserve(x: place.0 - radius, y: place.1 - radius, width: radius * 2, height: radius * 2) }
                labels.reserve(x: originX + drawnWidth - unit * 3.3, y: originY + unit * 0.6, width: unit * 2.6, height: unit * 2.6)
                labels.reserve(x: originX + unit * 0.5, y: originY + drawnHeight - unit * 2.5, width: drawnWidth / 4 + unit * 1.2, height: unit * 2.5)
                labels.reserve(
                    x: originX + drawnWidth - creditWidth,
                    y: originY + drawnHeight - creditSize * 3,
                    width: creditWidth,
                    height: creditSize * 3
                )
                basemap.draw(on: canvas, unit: unit, labels: &labels, project: point)
            }
            if tour.route.count > 1 {
                let path = tour.route.map { point($0.longitude, $0.latitude) }
                canvas.line(path, .white, lineWidth: unit * 0.9)
                canvas.line(path, .forest, lineWidth: unit * 0.45)
            } else if places.count > 1 {
                // No drawn route: the stops in order, thinner, so nobody reads it as the path on the ground.
                canvas.line(places, .muted, lineWidth: unit * 0.15)
            }
            for (stop, place) in zip(stops, places) {
                canvas.circle(
                    place.0,
                    place.1,
                    radius: radius,
                    fill: stop.closedBy == nil ? .forest : .closure,
                    stroke: .white,
                    lineWidth: unit * 0.15
                )
                let size = radius * (stop.order >= 100 ? 0.75 : stop.order >= 10 ? 0.95 : 1.2)
                canvas.text(
                    String(stop.order),
                    x: place.0 - radius,
                    y: place.1 - size * 0.6,
                    width: radius * 2,
                    size: size,
                    bold: true,
                    color: .white,
                    align: .center
                )
            }
        }
        canvas.strokeRect(originX, originY, drawnWidth, drawnHeight, .line, lineWidth: unit * 0.08)
        drawNorth(on: canvas, x: originX + drawnWidth - unit * 3, y: originY + unit * 0.8, unit: unit)
        drawScale(on: canvas, x: originX + unit * 0.8, y: originY + drawnHeight - unit * 2.2, drawnWidth: drawnWidth, unit: unit)
        if !credits.isEmpty {
            drawCredits(
                credits.joined(separator: " · "),
                on: canvas,
                right: originX + drawnWidth,
                bottom: originY + drawnHeight,
                width: creditWidth,
                size: creditSize
            )
        }
    }

    /// The package's tiles at the zoom the printed size needs, each stretched over its place in the frame. Each tile
    /// is drawn a source pixel larger to the right and below, beneath its neighbours: without the overlap, viewers that
    /// smooth image edges show hairlines between tiles.
    private func drawTiles(
        _ tiles: PrintTiles,
        on canvas: PDFCanvas,
        span: Double,
        drawnWidth: Double,
        _ project: (Double, Double) -> (Double, Double)
    ) {
        let bounds = tour.bounds
        // A frame across the antimeridian is two frames of tiles; the second is drawn a world further east.
        let frames =
            bounds.crossesAntimeridian
            ? [
                (Frame(north: bounds.north, south: bounds.south, east: 180, west: bounds.west), 0.0),
                (Frame(north: bounds.north, south: bounds.south, east: bounds.east, west: -180), 360.0),
            ]
            : [(Frame(north: bounds.north, south: bounds.south, east: bounds.east, west: bounds.west), 0.0)]
        let zoom = tiles.zoom(for: frames.map(\.0), span: span, pixels: drawnWidth / 72 * tileResolution)
        for (frame, shift) in frames {
            for (tile, raster) in tiles.rasters(in: [frame], zoom: zoom) {
                let edges = TileMath.bounds(tile)
                let (x0, y0) = project(edges.west + shift, edges.north)
                let (x1, y1) = project(edges.east + shift, edges.south)
                guard x1 > x0, y1 > y0 else { continue }
                let width = (x1 - x0) * (1 + 1 / Double(raster.width))
                let height = (y1 - y0) * (1 + 1 / Double(raster.height))
                canvas.image(raster, x: x0, y: y0, width: width, height: height)
            }
        }
    }

    /// The sources' credits in the map's lower right corner, on a pale band.
    private func drawCredits(_ text: String, on canvas: PDFCanvas, right: Double, bottom: Double, width: Double, size: Double) {
        let pad = size * 0.35
        let lineWidth = canvas.lineSize(text, size: size).width
        let boxWidth = min(lineWidth, width - 2 * pad)
        let height = canvas.measure(text, width: boxWidth + 1, size: size, maxLines: 2)
        canvas.fillRect(
            right - boxWidth - 2 * pad,
            bottom - height - 2 * pad,
            boxWidth + 2 * pad,
            height + 2 * pad,
            Color(red: 1, green: 1, blue: 1, alpha: 0.8)
        )
        canvas.text(
            text,
            x: right - boxWidth - pad,
            y: bottom - height - pad,
            width: boxWidth + 1,
            size: size,
            color: .ink,
            align: .right,
            maxLines: 2
        )
    }

    private func stopPlaces(_ point: (Double, Double) -> (Double, Double)) -> [(Double, Double)] {
        tour.stops.map { point($0.longitude, $0.latitude) }
    }

    private func drawNorth(on canvas: PDFCanvas, x: Double, y: Double, unit: Double) {
        canvas.fillRect(x - unit * 0.3, y - unit * 0.2, unit * 2.6, unit * 2.6, Color(red: 1, green: 1, blue: 1, alpha: 0.8))
        canvas.line([(x + unit, y + unit * 2.1), (x + unit, y + unit * 0.9)], .ink, lineWidth: unit * 0.15)
        canvas.line([(x + unit * 0.6, y + unit * 1.3), (x + unit, y + unit * 0.8), (x + unit * 1.4, y + unit * 1.3)], .ink, lineWidth: unit * 0.15)
        canvas.text("N", x: x, y: y - unit * 0.1, width: unit * 2, size: unit * 0.8, bold: true, align: .center)
    }

    /// A bar of a round length (10, 20, 50, 100 … m, or km) near a quarter of the map's width.
    private func drawScale(on canvas: PDFCanvas, x: Double, y: Double, drawnWidth: Double, unit: Double) {
        let bounds = tour.bounds
        let middle = (bounds.north + bounds.south) / 2
        let east = bounds.crossesAntimeridian ? bounds.east + 360 : bounds.east
        let metres = (east - bounds.west) * .pi / 180 * 6_371_008.8 * cos(middle * .pi / 180)
        guard metres > 0, drawnWidth > 0 else { return }
        let pointsPerMetre = drawnWidth / metres
        let target = metres / 4
        let magnitude = pow(10, floor(log10(target)))
        let length = [1.0, 2, 5, 10].map { $0 * magnitude }.last { $0 <= target } ?? magnitude
        let bar = length * pointsPerMetre
        let label = length >= 1000 ? "\(DisplayFormat.grouped(Int(length / 1000))) km" : "\(Int(length)) m"
        canvas.fillRect(x - unit * 0.3, y - unit * 0.3, bar + unit * 0.6, unit * 1.9, Color(red: 1, green: 1, blue: 1, alpha: 0.8))
        canvas.fillRect(x, y + unit * 1.0, bar, unit * 0.3, .ink)
        canvas.text(label, x: x, y: y - unit * 0.1, width: max(bar, unit * 6), size: unit * 0.75)
    }

    static func projectX(_ longitude: Double) -> Double { longitude * .pi / 180 }

    static func projectY(_ latitude: Double) -> Double {
        let clamped = min(max(latitude, -85.05112878), 85.05112878) * .pi / 180
        return log(tan(.pi / 4 + clamped / 2))
    }
}

extension PDFCanvas.Color {
    /// The frame's area, a shade lighter than the page around it.
    static let frame = PDFCanvas.Color(red: 0.99, green: 0.99, blue: 0.97)
}

private typealias Color = PDFCanvas.Color
