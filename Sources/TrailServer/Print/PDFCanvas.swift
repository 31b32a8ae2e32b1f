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
