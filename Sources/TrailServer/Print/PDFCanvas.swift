import CPangoCairo
import Foundation

/// A PDF being drawn with Cairo, its text laid out by Pango: the one place the print kit calls C. Lengths are PDF
/// points (1/72 in), the origin at a page's top left. Text is real text (searchable, and what `pdftotext` reads), in
/// DejaVu Sans from Debian's `fonts-dejavu-core`, which Cairo embeds as a subset. Not thread-safe: one render, one
/// thread.
final class PDFCanvas {
    /// The bytes Cairo writes, collected as it writes them (a sign is a few hundred kilobytes).
    private final class Sink {
        var data = Data()
    }

    /// Text alignment inside a box.
    enum Align: Sendable {
        case left, center, right
    }

    struct Color: Sendable {
        let red: Double
        let green: Double
        let blue: Double
        var alpha = 1.0

        static let black = Color(red: 0, green: 0, blue: 0)
        static let white = Color(red: 1, green: 1, blue: 1)
        static let ink = Color(red: 0.12, green: 0.16, blue: 0.13)
        static let forest = Color(red: 0.12, green: 0.30, blue: 0.17)
        static let muted = Color(red: 0.35, green: 0.38, blue: 0.36)
        static let paper = Color(red: 0.95, green: 0.95, blue: 0.92)
        static let closure = Color(red: 0.70, green: 0.10, blue: 0.08)
        static let line = Color(red: 0.70, green: 0.72, blue: 0.70)
    }

    /// The family every text uses. Pango asks fontconfig for it; a machine without it would fall back silently, so the
    /// tests read the PDF's fonts back.
    static let fontFamily = "DejaVu Sans"

    private let sink = Sink()
    private let surface: OpaquePointer
    let cr: OpaquePointer

    /// A PDF whose first page is `width` × `height` points. `title` goes into the document's metadata.
    init(width: Double, height: Double, title: String) {
        let unmanaged = Unmanaged.passUnretained(sink)
        surface = cairo_pdf_surface_create_for_stream(
            { closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
                Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().data.append(data, count: Int(length))
                return CAIRO_STATUS_SUCCESS
            },
            unmanaged.toOpaque(),
            width,
            height
        )!
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Trail Companion")
        cr = cairo_create(surface)!
    }

    deinit {
        cairo_destroy(cr)
        cairo_surface_destroy(surface)
    }

    /// Ends the current page; the next one is `width` × `height`.
    func nextPage(width: Double, height: Double) {
        cairo_show_page(cr)
        cairo_pdf_surface_set_size(surface, width, height)
    }

    /// Ends the last page and answers the file.
    func finish() throws -> Data {
        cairo_show_page(cr)
        cairo_surface_finish(surface)
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw PrintError("Cairo could not write the PDF: \(String(cString: cairo_status_to_string(status))).")
        }
        return sink.data
    }

    // MARK: Shapes

    func setColor(_ color: Color) {
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
    }

    func fillRect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, _ color: Color) {
        setColor(color)
        cairo_rectangle(cr, x, y, width, height)
        cairo_fill(cr)
    }

    func strokeRect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, _ color: Color, lineWidth: Double) {
        setColor(color)
        cairo_set_line_width(cr, lineWidth)
        cairo_rectangle(cr, x, y, width, height)
        cairo_stroke(cr)
    }

    func line(_ points: [(Double, Double)], _ color: Color, lineWidth: Double) {
        guard let first = points.first, points.count > 1 else { return }
        setColor(color)
        cairo_set_line_width(cr, lineWidth)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_move_to(cr, first.0, first.1)
        for point in points.dropFirst() { cairo_line_to(cr, point.0, point.1) }
        cairo_stroke(cr)
    }

    func circle(_ x: Double, _ y: Double, radius: Double, fill: Color, stroke: Color? = nil, lineWidth: Double = 0) {
        cairo_new_sub_path(cr)
        cairo_arc(cr, x, y, radius, 0, 2 * Double.pi)
        setColor(fill)
        if let stroke {
            cairo_fill_preserve(cr)
            setColor(stroke)
            cairo_set_line_width(cr, lineWidth)
            cairo_stroke(cr)
        } else {
            cairo_fill(cr)
        }
    }

    /// Many lines of one style as one path, stroked once: a map's hundred contours or paths are one operator in the
    /// file, not a hundred. With `dash` (on and off lengths) the lines are dashed, with butt ends so the gaps stay open.
    func lines(_ paths: [[(Double, Double)]], _ color: Color, lineWidth: Double, dash: [Double] = []) {
        cairo_new_path(cr)
        var any = false
        for path in paths where path.count > 1 {
            cairo_move_to(cr, path[0].0, path[0].1)
            for point in path.dropFirst() { cairo_line_to(cr, point.0, point.1) }
            any = true
        }
        guard any else { return }
        setColor(color)
        cairo_set_line_width(cr, lineWidth)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_cap(cr, dash.isEmpty ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT)
        cairo_set_dash(cr, dash, Int32(dash.count), 0)
        cairo_stroke(cr)
        cairo_set_dash(cr, nil, 0, 0)
    }

    /// Rings filled as one path, even-odd: a polygon's holes (a clearing in a wood, an island in a lake) stay open
    /// whichever way round their rings run.
    func fillRings(_ rings: [[(Double, Double)]], _ color: Color) {
        cairo_new_path(cr)
        var any = false
        for ring in rings where ring.count > 2 {
            cairo_move_to(cr, ring[0].0, ring[0].1)
            for point in ring.dropFirst() { cairo_line_to(cr, point.0, point.1) }
            cairo_close_path(cr)
            any = true
        }
        guard any else { return }
        setColor(color)
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
        cairo_fill(cr)
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
    }

    /// A closed shape through `points`, filled, and outlined when `stroke` is given (a map's small symbols).
    func polygon(_ points: [(Double, Double)], fill: Color, stroke: Color? = nil, lineWidth: Double = 0) {
        guard let first = points.first, points.count > 2 else { return }
        cairo_new_path(cr)
        cairo_move_to(cr, first.0, first.1)
        for point in points.dropFirst() { cairo_line_to(cr, point.0, point.1) }
        cairo_close_path(cr)
        setColor(fill)
        if let stroke {
            cairo_fill_preserve(cr)
            setColor(stroke)
            cairo_set_line_width(cr, lineWidth)
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            cairo_stroke(cr)
        } else {
            cairo_fill(cr)
        }
    }

    /// Drawing inside `x, y, width, height` only, until `body` returns.
    func clipped(_ x: Double, _ y: Double, _ width: Double, _ height: Double, _ body: () -> Void) {
        cairo_save(cr)
        cairo_rectangle(cr, x, y, width, height)
        cairo_clip(cr)
        body()
        cairo_restore(cr)
    }

    /// A QR code as vector squares, `side` points wide with its quiet zone (white), so a print shop can scale it
    /// without loss. Each row's runs of dark modules are one rectangle, all filled as one path: no seams between
    /// neighbours when a rasteriser anti-aliases the edges.
    func qrCode(_ code: QRCode, x: Double, y: Double, side: Double) {
        fillRect(x, y, side, side, .white)
        let module = side / Double(code.width + 2 * QRCode.margin)
        let origin = (x + module * Double(QRCode.margin), y + module * Double(QRCode.margin))
        cairo_new_path(cr)
        for row in 0..<code.width {
            var column = 0
            while column < code.width {
                guard code.isDark(column, row) else {
                    column += 1
                    continue
                }
                var run = 1
                while column + run < code.width && code.isDark(column + run, row) { run += 1 }
                cairo_rectangle(cr, origin.0 + Double(column) * module, origin.1 + Double(row) * module, Double(run) * module, module)
                column += run
            }
        }
        setColor(.black)
        cairo_fill(cr)
    }

    // MARK: Images

    /// A raster image for the page (a map tile): a Cairo image surface, freed with this object. The PDF keeps what it
    /// needs of it once drawn.
    final class Raster {
        fileprivate let surface: OpaquePointer
        let width: Int
        let height: Int

        private init(surface: OpaquePointer, width: Int, height: Int) {
            self.surface = surface
            self.width = width
            self.height = height
        }

        deinit { cairo_surface_destroy(surface) }

        /// The bytes Cairo's PNG reader asks for, handed over from `data` as it asks.
        private final class Source {
            let data: Data
            var offset = 0
            init(_ data: Data) { self.data = data }
        }

        /// A PNG, decoded by Cairo (libpng). Nil when it is not a PNG Cairo reads, or wider or taller than `maxSide`
        /// pixels: the size is read from the header first, so a small file that claims to be huge is never inflated.
        static func png(_ data: Data, maxSide: Int) -> Raster? {
            guard let (width, height) = TileImageSize.png(data), width <= maxSide, height <= maxSide else { return nil }
            let source = Source(data)
            let surface = withExtendedLifetime(source) {
                cairo_image_surface_create_from_png_stream(
                    { closure, buffer, length in
                        guard let closure, let buffer else { return CAIRO_STATUS_READ_ERROR }
                        let source = Unmanaged<Source>.fromOpaque(closure).takeUnretainedValue()
                        let wanted = Int(length)
                        guard source.offset + wanted <= source.data.count else { return CAIRO_STATUS_READ_ERROR }
                        source.data.copyBytes(to: buffer, from: source.offset..<(source.offset + wanted))
                        source.offset += wanted
                        return CAIRO_STATUS_SUCCESS
                    },
                    Unmanaged.passUnretained(source).toOpaque()
                )
            }
            guard let surface else { return nil }
            guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
                cairo_surface_destroy(surface)
                return nil
            }
            return Raster(surface: surface, width: Int(cairo_image_surface_get_width(surface)), height: Int(cairo_image_surface_get_height(surface)))
        }

        /// A JPEG, not decoded: Cairo's PDF writer embeds JPEG bytes attached to a surface as they are (a DCT image in
        /// the file), so the surface only needs the picture's size, read from its frame header. Nil when there is no
        /// frame header or the picture is larger than `maxSide`.
        static func jpeg(_ data: Data, maxSide: Int) -> Raster? {
            guard let (width, height) = TileImageSize.jpeg(data), width <= maxSide, height <= maxSide,
                let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
            else { return nil }
            guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let copy = malloc(data.count) else {
                cairo_surface_destroy(surface)
                return nil
            }
            data.copyBytes(to: copy.assumingMemoryBound(to: UInt8.self), count: data.count)
            let status = cairo_surface_set_mime_data(
                surface,
                "image/jpeg",
                copy.assumingMemoryBound(to: UInt8.self),
                UInt(data.count),
                { free($0) },
                copy
            )
            guard status == CAIRO_STATUS_SUCCESS else {
                free(copy)
                cairo_surface_destroy(surface)
                return nil
            }
            return Raster(surface: surface, width: width, height: height)
        }
    }

    /// `image` stretched over `x, y, width, height`.
    func image(_ image: Raster, x: Double, y: Double, width: Double, height: Double) {
        guard image.width > 0, image.height > 0 else { return }
        cairo_save(cr)
        cairo_translate(cr, x, y)
        cairo_scale(cr, width / Double(image.width), height / Double(image.height))
        cairo_set_source_surface(cr, image.surface, 0, 0)
        cairo_paint(cr)
        cairo_restore(cr)
    }

    // MARK: Text

    /// Lays `text` out in a box `width` wide at `size` points and draws it with its top at `y`; at most `maxLines`
    /// lines (the last ends in "…" when cut). Answers the height it took.
    @discardableResult
    func text(
        _ text: String,
        x: Double,
        y: Double,
        width: Double,
        size: Double,
        bold: Bool = false,
        color: Color = .ink,
        align: Align = .left,
        maxLines: Int? = nil
    ) -> Double {
        guard !text.isEmpty else { return 0 }
        let layout = makeLayout(text, width: width, size: size, bold: bold, align: align, maxLines: maxLines)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        setColor(color)
        cairo_move_to(cr, x, y)
        pango_cairo_show_layout(cr, layout)
        return Self.height(of: layout)
    }

    /// The height `text` would take, without drawing it.
    func measure(_ text: String, width: Double, size: Double, bold: Bool = false, maxLines: Int? = nil) -> Double {
        guard !text.isEmpty else { return 0 }
        let layout = makeLayout(text, width: width, size: size, bold: bold, align: .left, maxLines: maxLines)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        return Self.height(of: layout)
    }

    /// The width and height of `text` on one line (no wrapping), without drawing it: room for a label on a map.
    func lineSize(_ text: String, size: Double, bold: Bool = false) -> (width: Double, height: Double) {
        guard !text.isEmpty else { return (0, 0) }
        let layout = makeLayout(text, width: nil, size: size, bold: bold, align: .left, maxLines: nil)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        var width: Int32 = 0
        var height: Int32 = 0
        pango_layout_get_size(layout, &width, &height)
        return (Double(width) / Double(PANGO_SCALE), Double(height) / Double(PANGO_SCALE))
    }

    /// Large text rotated about the page's centre, drawn at `color` (a DRAFT mark across a proof).
    func diagonal(_ text: String, pageWidth: Double, pageHeight: Double, size: Double, color: Color) {
        cairo_save(cr)
        cairo_translate(cr, pageWidth / 2, pageHeight / 2)
        cairo_rotate(cr, -atan2(pageHeight, pageWidth))
        let layout = makeLayout(text, width: nil, size: size, bold: true, align: .center, maxLines: nil)
        var ink = PangoRectangle()
        var logical = PangoRectangle()
        pango_layout_get_extents(layout, &ink, &logical)
        let width = Double(logical.width) / Double(PANGO_SCALE)
        let height = Double(logical.height) / Double(PANGO_SCALE)
        setColor(color)
        cairo_move_to(cr, -width / 2, -height / 2)
        pango_cairo_show_layout(cr, layout)
        g_object_unref(UnsafeMutableRawPointer(layout))
        cairo_restore(cr)
    }

    private func makeLayout(_ text: String, width: Double?, size: Double, bold: Bool, align: Align, maxLines: Int?) -> OpaquePointer {
        let layout = pango_cairo_create_layout(cr)!
        let font = pango_font_description_new()!
        pango_font_description_set_family(font, Self.fontFamily)
        pango_font_description_set_weight(font, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL)
        pango_font_description_set_absolute_size(font, size * Double(PANGO_SCALE))
        pango_layout_set_font_description(layout, font)
        pango_font_description_free(font)
        if let width {
            pango_layout_set_width(layout, Int32(width * Double(PANGO_SCALE)))
            pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        }
        if let maxLines {
            pango_layout_set_height(layout, -Int32(maxLines))
            pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
        }
        switch align {
        case .left: pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
        case .center: pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
        case .right: pango_layout_set_alignment(layout, PANGO_ALIGN_RIGHT)
        }
        pango_layout_set_text(layout, text, -1)
        return layout
    }

    private static func height(of layout: OpaquePointer) -> Double {
        var width: Int32 = 0
        var height: Int32 = 0
        pango_layout_get_size(layout, &width, &height)
        return Double(height) / Double(PANGO_SCALE)
    }
}

struct PrintError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
