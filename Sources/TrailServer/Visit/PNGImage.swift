import Foundation

#if canImport(CZlib)
import CZlib
#elseif canImport(zlib)
import zlib
#endif

/// PNG files the server draws itself (QR codes for signs, the demo's sample picture), written with zlib's `compress2`
/// and `crc32`: no image library for a few hundred lines of pixels.
enum PNGImage {
    enum Color: UInt8 {
        /// One byte a pixel.
        case grey = 0
        /// Three bytes a pixel: red, green, blue.
        case rgb = 2

        var bytesPerPixel: Int { self == .grey ? 1 : 3 }
    }

    /// `pixels` row by row, top to bottom, `color.bytesPerPixel` bytes each.
    static func encode(width: Int, height: Int, color: Color, pixels: [UInt8]) throws -> Data {
        let stride = width * color.bytesPerPixel
        precondition(pixels.count == stride * height, "\(pixels.count) bytes for a \(width)×\(height) image")
        var raw = [UInt8]()
        raw.reserveCapacity((stride + 1) * height)
        for row in 0..<height {
            raw.append(0)  // filter: none
            raw += pixels[row * stride..<(row + 1) * stride]
        }
        var compressedSize = compressBound(uLong(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedSize))
        let status = compress2(&compressed, &compressedSize, raw, uLong(raw.count), 9)
        guard status == Z_OK else { throw PNGImageError(description: "zlib could not compress the image (\(status)).") }
        var header = Data()
        header.append(bigEndian: UInt32(width))
        header.append(bigEndian: UInt32(height))
        header.append(contentsOf: [8, color.rawValue, 0, 0, 0])  // 8 bits, the colour type, deflate, adaptive filtering, no interlace
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.appendChunk("IHDR", header)
        png.appendChunk("IDAT", Data(compressed.prefix(Int(compressedSize))))
        png.appendChunk("IEND", Data())
        return png
    }
}

struct PNGImageError: Error, CustomStringConvertible {
    let description: String
}

extension Data {
    fileprivate mutating func append(bigEndian value: UInt32) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// A PNG chunk: length, type, data, and the CRC-32 of type and data.
    fileprivate mutating func appendChunk(_ type: String, _ data: Data) {
        append(bigEndian: UInt32(data.count))
        let body = Data(type.utf8) + data
        append(body)
        let crc = body.withUnsafeBytes { raw in zlibCRC32(0, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)) }
        append(bigEndian: UInt32(truncatingIfNeeded: crc))
    }
}

/// zlib's `crc32`, named so that it does not clash with ZIPFoundation's `Data.crc32`.
private func zlibCRC32(_ crc: uLong, _ buffer: UnsafePointer<Bytef>!, _ length: uInt) -> uLong {
    crc32(crc, buffer, length)
}
