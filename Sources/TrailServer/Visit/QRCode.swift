import CQRencode
import Foundation

/// A QR code made by libqrencode, drawn as SVG or PNG for signs at a trailhead.
struct QRCode: Sendable {
    /// Modules per side (without the quiet zone).
    let width: Int
    /// Row-major, true for a dark module.
    let modules: [Bool]
    /// The quiet zone around the symbol, in modules (ISO/IEC 18004 asks for four).
    static let margin = 4

    /// Encodes `text` with error correction level M (a sign survives some dirt and scratches).
    init(_ text: String) throws {
        guard let code = text.withCString({ QRcode_encodeString($0, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }) else {
            throw QRCodeError("The address is too long for a QR code.")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // libqrencode: bit 0 of each byte is the module's colour (1 = dark); the other bits describe its role.
        let buffer = UnsafeBufferPointer(start: UnsafePointer(code.pointee.data), count: width * width)
        self.width = width
        self.modules = buffer.map { $0 & 1 == 1 }
    }

    func isDark(_ x: Int, _ y: Int) -> Bool { modules[y * width + x] }

    /// One path of unit squares, crisp at any size; `title` names the code for screen readers.
    func svg(title: String) -> String {
        let side = width + 2 * Self.margin
        var path = ""
        for y in 0..<width {
            var x = 0
            while x < width {
                guard isDark(x, y) else {
                    x += 1
                    continue
                }
                var run = 1
                while x + run < width && isDark(x + run, y) { run += 1 }
                path += "M\(x + Self.margin) \(y + Self.margin)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * 8)" height="\(side * 8)" \
            shape-rendering="crispEdges" role="img" aria-label="\(Self.escape(title))"><title>\(Self.escape(title))</title>\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>

            """
    }

    /// A greyscale PNG, `scale` pixels per module.
    func png(scale: Int = 8) throws -> Data {
        let side = (width + 2 * Self.margin) * scale
        var pixels = [UInt8]()
        pixels.reserveCapacity(side * side)
        for row in 0..<side {
            let y = row / scale - Self.margin
            for column in 0..<side {
                let x = column / scale - Self.margin
                let dark = x >= 0 && y >= 0 && x < width && y < width && isDark(x, y)
                pixels.append(dark ? 0 : 255)
            }
        }
        return try PNGImage.encode(width: side, height: side, color: .grey, pixels: pixels)
    }

    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}

struct QRCodeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
