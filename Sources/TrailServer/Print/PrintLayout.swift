import Foundation

/// The two print files, laid out. Every length of the sign is a multiple of `unit`, a hundredth of the page's width,
/// so the four sizes look alike; the booklet is in points, for paper held in the hand.
enum PrintLayout {
    // MARK: The sign

    /// The smallest stop code on a sign, in units: about 1.2 in on A2, large enough for a phone at arm's length.
    static let smallestSignCode = 7.0

    /// One page: the tour, its map, the tour's code, the facts and closures, and a grid of stop codes. Stops that do
    /// not fit (a long tour) are named as a range with where to find them.
    static func sign(_ tour: PrintedTour, size: SignSize) throws -> Data {
        let (width, height) = size.points
        let unit = width / 100
        let canvas = PDFCanvas(width: width, height: height, title: "\(tour.name): trailhead sign")
        let margin = unit * 4
        let inner = width - 2 * margin
        var y = margin

        // The tour: park, name, description.
        y += canvas.text(tour.park, x: margin, y: y, width: inner, size: unit * 1.8, color: .muted, maxLines: 1)
        y += canvas.text(tour.name, x: margin, y: y, width: inner, size: unit * 4.6, bold: true, color: .forest, maxLines: 2)
        y += unit * 0.8
        y += canvas.text(tour.description, x: margin, y: y, width: inner, size: unit * 1.7, maxLines: 4)
        y += unit * 1.5

        // The map beside the tour's code.
        let mainHeight = height * 0.32
        let mapWidth = inner * 0.62
        PrintMap(tour: tour).draw(on: canvas, x: margin, y: y, width: mapWidth, height: mainHeight, unit: unit)
        let sideX = margin + mapWidth + unit * 3
        let sideWidth = inner - mapWidth - unit * 3
        var sideY = y
        sideY += canvas.text("Take the tour on your phone", x: sideX, y: sideY, width: sideWidth, size: unit * 1.8, bold: true, align: .center)
        sideY += unit * 0.6
        let tourCode = min(sideWidth, mainHeight * 0.62)
        canvas.qrCode(try QRCode(tour.playerURL), x: sideX + (sideWidth - tourCode) / 2, y: sideY, side: tourCode)
        sideY += tourCode + unit * 0.3
        sideY += canvas.text(PrintKit.printedURL(tour.playerURL), x: sideX, y: sideY, width: sideWidth, size: unit * 1.1, align: .center, maxLines: 4)
        sideY += unit * 0.6
        canvas.text(
            "Scan the code, or type the address. Save the tour while you have signal: it works offline on the trail. "
                + "Each stop below has a code of its own.",
            x: sideX,
            y: sideY,
            width: sideWidth,
            size: unit * 1.2,
            color: .muted,
            align: .center,
            maxLines: max(1, Int((y + mainHeight - sideY) / (unit * 1.2 * 1.25)))
        )
        y += mainHeight + unit * 2

        // Facts and closures, side by side.
        let columnWidth = (inner - unit * 3) / 2
        let bandTop = y
        var left = bandTop
        left += canvas.text("On the trail", x: margin, y: left, width: columnWidth, size: unit * 1.8, bold: true, color: .forest)
        let facts = [tour.facts].compactMap { $0 } + tour.accessibility
        left += canvas.text(
            facts.isEmpty ? "Walk at your own pace: the stops are numbered on the map." : facts.joined(separator: "\n"),
            x: margin,
            y: left,
            width: columnWidth,
            size: unit * 1.3,
            maxLines: 7
        )
        var right = bandTop
        let rightX = margin + columnWidth + unit * 3
        right += canvas.text("Closures and warnings", x: rightX, y: right, width: columnWidth, size: unit * 1.8, bold: true, color: .closure)
        right += canvas.text(noticeText(tour, limit: 4), x: rightX, y: right, width: columnWidth, size: unit * 1.3, maxLines: 7)
        y = max(left, right) + unit * 2
        canvas.line([(margin, y), (width - margin, y)], .line, lineWidth: unit * 0.1)
        y += unit * 1.5

        // The stops.
        let footerHeight = unit * 2.5
        let grid = SignGrid.fit(stops: tour.stops.count, width: inner, height: height - margin - footerHeight - y, unit: unit)
        let shown = grid.capacity >= tour.stops.count ? tour.stops.count : max(0, grid.capacity - 1)
        for index in 0..<shown {
            let stop = tour.stops[index]
            let cellX = margin + Double(index % grid.columns) * grid.cellWidth
            let cellY = y + Double(index / grid.columns) * grid.cellHeight
            try drawSignStop(stop, on: canvas, x: cellX, y: cellY, grid: grid, unit: unit)
        }
        if shown < tour.stops.count {
            // The last cell says where the rest are.
            let index = shown
            let cellX = margin + Double(index % grid.columns) * grid.cellWidth
            let cellY = y + Double(index / grid.columns) * grid.cellHeight
            let rest = tour.stops[shown...]
            let note =
                "Stops \(rest.first!.order)–\(rest.last!.order) (\(rest.count) more) are in the tour: scan the code above "
                + "and tap the stop, or take the booklet. Each stop's code is at the stop too."
            canvas.text(note, x: cellX + unit * 0.5, y: cellY + unit * 1, width: grid.cellWidth - unit, size: unit * 1.3, bold: true, color: .forest)
        }
        footer(tour, on: canvas, y: height - margin - unit * 1.2, x: margin, width: inner, size: unit * 1)
        if tour.draft { draftMark(tour, on: canvas, width: width, height: height) }
        return try canvas.finish()
    }

    /// The grid of stop codes: as few columns as hold every stop with codes no smaller than ``smallestSignCode``, or
    /// the most such codes that fit.
    struct SignGrid {
        let columns: Int
        let rows: Int
        let cellWidth: Double
        let cellHeight: Double
        let code: Double
        var capacity: Int { columns * rows }

        static func fit(stops: Int, width: Double, height: Double, unit: Double) -> SignGrid {
            var best: SignGrid?
            for columns in 4...14 {
                let cellWidth = width / Double(columns)
                let code = min(cellWidth * 0.72, unit * 16)
                guard code >= unit * PrintLayout.smallestSignCode || best == nil else { break }
                // The name (two lines) above, the address (three or four short lines) beneath.
                let cellHeight = code + unit * 8.6
                let rows = max(0, Int(height / cellHeight))
                let grid = SignGrid(columns: columns, rows: rows, cellWidth: cellWidth, cellHeight: cellHeight, code: code)
                best = grid
                if grid.capacity >= stops { return grid }
            }
            return best!
        }
    }

    private static func drawSignStop(_ stop: PrintedTour.Stop, on canvas: PDFCanvas, x: Double, y: Double, grid: SignGrid, unit: Double) throws {
        let pad = unit * 0.5
        var top = y
        let label = "\(stop.order). \(stop.name)"
        top += canvas.text(label, x: x + pad, y: top, width: grid.cellWidth - 2 * pad, size: unit * 1.25, bold: true, align: .center, maxLines: 2)
        top = max(top, y + unit * 3.2)
        canvas.qrCode(try QRCode(stop.url), x: x + (grid.cellWidth - grid.code) / 2, y: top, side: grid.code)
        if let closedBy = stop.closedBy {
            canvas.text(
                "Closed: \(closedBy)",
                x: x + pad,
                y: top + grid.code * 0.42,
                width: grid.cellWidth - 2 * pad,
                size: unit * 1.0,
                bold: true,
                color: .closure,
                align: .center,
                maxLines: 2
            )
        }
        top += grid.code + unit * 0.2
        canvas.text(
            PrintKit.printedURL(stop.url),
            x: x + pad,
            y: top,
            width: grid.cellWidth - 2 * pad,
            size: unit * 0.8,
            color: .muted,
            align: .center,
            maxLines: 5
        )
    }

    // MARK: The booklet

    static let stopsPerPage = 4

    /// A first page with the tour, its map, its code, the facts and closures; then four stops a page, each with its
    /// code. A long tour makes a longer booklet.
    static func booklet(_ tour: PrintedTour, paper: BookletPaper) throws -> Data {
        let (width, height) = paper.points
        let canvas = PDFCanvas(width: width, height: height, title: "\(tour.name): booklet")
        let margin = 50.0
        let inner = width - 2 * margin
        let pages = 1 + (tour.stops.count + stopsPerPage - 1) / stopsPerPage
        var y = margin

        y += canvas.text(tour.park, x: margin, y: y, width: inner, size: 11, color: .muted, maxLines: 1)
        y += canvas.text(tour.name, x: margin, y: y, width: inner, size: 24, bold: true, color: .forest, maxLines: 2)
        y += 6
        y += canvas.text(tour.description, x: margin, y: y, width: inner, size: 10.5, maxLines: 7)
        y += 12
        let mapHeight = height * 0.34
        PrintMap(tour: tour, tileResolution: 300).draw(on: canvas, x: margin, y: y, width: inner, height: mapHeight, unit: 9)
        y += mapHeight + 14

        let code = 118.0
        canvas.qrCode(try QRCode(tour.playerURL), x: margin, y: y, side: code)
        canvas.text(PrintKit.printedURL(tour.playerURL), x: margin, y: y + code + 2, width: code, size: 7, color: .muted, align: .center, maxLines: 5)
        let textX = margin + code + 16
        let textWidth = inner - code - 16
        let bottom = height - margin - 24
        var side = y
        side += canvas.text("Take the tour on your phone", x: textX, y: side, width: textWidth, size: 12, bold: true)
        side += canvas.text(
            "Scan the code or type the address; save the tour while you have signal and it works offline. Each stop's page has a code that opens that stop.",
            x: textX,
            y: side,
            width: textWidth,
            size: 9.5,
            color: .muted,
            maxLines: 3
        )
        side += 8
        let facts = [tour.facts].compactMap { $0 } + tour.accessibility
        if !facts.isEmpty {
            side += canvas.text("On the trail", x: textX, y: side, width: textWidth, size: 12, bold: true, color: .forest)
            side += canvas.text(facts.joined(separator: "\n"), x: textX, y: side, width: textWidth, size: 9.5, maxLines: 5)
            side += 8
        }
        side += canvas.text("Closures and warnings", x: textX, y: side, width: textWidth, size: 12, bold: true, color: .closure)
        let lines = max(1, Int((bottom - side) / (9.5 * 1.25)))
        canvas.text(noticeText(tour, limit: 6), x: textX, y: side, width: textWidth, size: 9.5, maxLines: lines)
        footer(tour, on: canvas, y: height - margin + 8, x: margin, width: inner, size: 8, page: (1, pages))
        if tour.draft { draftMark(tour, on: canvas, width: width, height: height) }

        for page in 0..<(pages - 1) {
            canvas.nextPage(width: width, height: height)
            let stops = tour.stops[(page * stopsPerPage)..<min(tour.stops.count, (page + 1) * stopsPerPage)]
            var top = margin
            top += canvas.text(
                "\(tour.name): stops \(stops.first!.order)–\(stops.last!.order)",
                x: margin,
                y: top,
                width: inner,
                size: 10,
                color: .muted,
                maxLines: 1
            )
            top += 10
            let block = (height - margin - 24 - top) / Double(stopsPerPage)
            for (index, stop) in stops.enumerated() {
                try drawBookletStop(stop, on: canvas, x: margin, y: top + Double(index) * block, width: inner, height: block)
            }
            footer(tour, on: canvas, y: height - margin + 8, x: margin, width: inner, size: 8, page: (page + 2, pages))
            if tour.draft { draftMark(tour, on: canvas, width: width, height: height) }
        }
        return try canvas.finish()
    }

    private static func drawBookletStop(_ stop: PrintedTour.Stop, on canvas: PDFCanvas, x: Double, y: Double, width: Double, height: Double) throws {
        let code = min(108.0, height - 34)
        canvas.line([(x, y), (x + width, y)], .line, lineWidth: 0.5)
        let top = y + 8
        canvas.qrCode(try QRCode(stop.url), x: x, y: top, side: code)
        canvas.text(PrintKit.printedURL(stop.url), x: x, y: top + code + 1, width: code, size: 6.5, color: .muted, align: .center, maxLines: 5)
        let textX = x + code + 16
        let textWidth = width - code - 16
        var line = top
        line += canvas.text("\(stop.order). \(stop.name)", x: textX, y: line, width: textWidth, size: 14, bold: true, color: .forest, maxLines: 2)
        if let closedBy = stop.closedBy {
            line +=
                canvas.text("Closed now: \(closedBy)", x: textX, y: line + 2, width: textWidth, size: 10, bold: true, color: .closure, maxLines: 2)
                + 2
        }
        line += 4
        let lines = max(1, Int((y + height - 8 - line) / (10 * 1.25)))
        canvas.text(stop.description, x: textX, y: line, width: textWidth, size: 10, maxLines: lines)
    }

    // MARK: Shared

    /// The closures and warnings as lines; the first `limit`, then how many more the player shows.
    static func noticeText(_ tour: PrintedTour, limit: Int) -> String {
        guard !tour.notices.isEmpty else { return "None when this was printed (\(tour.printedOn)). The tour on your phone shows any since." }
        var lines = tour.notices.prefix(limit).map { notice in
            let kind = notice.severity == .closure ? "Closed" : "Warning"
            let stops = notice.stops.map { " (\($0))" } ?? ""
            return "\(kind)\(stops): \(notice.title). \(notice.message)"
        }
        if tour.notices.count > limit { lines.append("\(tour.notices.count - limit) more in the tour on your phone.") }
        lines.append("As of \(tour.printedOn); the tour on your phone shows the latest.")
        return lines.joined(separator: "\n")
    }

    private static func footer(_ tour: PrintedTour, on canvas: PDFCanvas, y: Double, x: Double, width: Double, size: Double, page: (Int, Int)? = nil)
    {
        var text = "\(tour.park) · \(tour.name), version \(tour.version), printed \(tour.printedOn)"
        if let page { text += " · page \(page.0) of \(page.1)" }
        canvas.text(text, x: x, y: y, width: width, size: size, color: .muted, maxLines: 1)
    }

    /// "DRAFT" across the page, and a line at the top saying why: a proof's codes may lead where phones cannot go.
    private static func draftMark(_ tour: PrintedTour, on canvas: PDFCanvas, width: Double, height: Double) {
        canvas.diagonal(
            "DRAFT",
            pageWidth: width,
            pageHeight: height,
            size: width * 0.22,
            color: PDFCanvas.Color(red: 0.8, green: 0.1, blue: 0.1, alpha: 0.18)
        )
        canvas.text(
            "DRAFT: a proof, not for posting. Its codes lead to \(PrintKit.shortURL(tour.playerURL)).",
            x: width * 0.04,
            y: width * 0.012,
            width: width * 0.92,
            size: max(7, width * 0.011),
            bold: true,
            color: .closure,
            align: .center,
            maxLines: 1
        )
    }
}
