import Foundation
import PackageFormat

/// The tour's frame drawn as vectors into a box: the route and the numbered stops in Web Mercator (the projection of
/// the panel's and the player's maps, so the shapes match what visitors see), a north mark and a scale bar. The
/// package's map tiles are not drawn beneath: a raster would not scale with the sign (docs/rangers.md says so).
struct PrintMap {
    let tour: PrintedTour

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
        func point(_ longitude: Double, _ latitude: Double) -> (Double, Double) {
            let lon = bounds.crossesAntimeridian && longitude < bounds.west ? longitude + 360 : longitude
            return (originX + (Self.projectX(lon) - left) * scale, originY + (top - Self.projectY(latitude)) * scale)
        }
        canvas.fillRect(x, y, width, height, .paper)
        canvas.fillRect(originX, originY, drawnWidth, drawnHeight, Color.frame)
        canvas.strokeRect(originX, originY, drawnWidth, drawnHeight, .line, lineWidth: unit * 0.08)
        canvas.clipped(originX, originY, drawnWidth, drawnHeight) {
            let stops = tour.stops
            if tour.route.count > 1 {
                let path = tour.route.map { point($0.longitude, $0.latitude) }
                canvas.line(path, .white, lineWidth: unit * 0.9)
                canvas.line(path, .forest, lineWidth: unit * 0.45)
            } else if let waypoints = waypointPoints(point), waypoints.count > 1 {
                // No drawn route: the stops in order, thinner, so nobody reads it as the path on the ground.
                canvas.line(waypoints, .muted, lineWidth: unit * 0.15)
            }
            let radius = unit * (stops.count > 40 ? 0.8 : 1.1)
            for (stop, place) in zip(stops, stopPlaces(point)) {
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
        drawNorth(on: canvas, x: originX + drawnWidth - unit * 3, y: originY + unit * 0.8, unit: unit)
        drawScale(on: canvas, x: originX + unit * 0.8, y: originY + drawnHeight - unit * 2.2, drawnWidth: drawnWidth, unit: unit)
    }

    private func waypointPoints(_ point: (Double, Double) -> (Double, Double)) -> [(Double, Double)]? {
        let places = stopPlaces(point)
        return places.isEmpty ? nil : places
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
