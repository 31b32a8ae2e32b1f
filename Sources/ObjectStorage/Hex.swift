import Crypto
import Foundation

// The module's own hex helpers: it knows nothing of the server, which has its own for its own hashing.

extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits a byte: how S3 writes an MD5 in an ETag and SigV4 a SHA-256 or a signature.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Digest {
    var hexString: String { Array(self.makeIterator()).hexString }
}

extension Data {
    init?(hex: String) {
        guard hex.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
