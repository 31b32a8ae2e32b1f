import Crypto
import Foundation
import GRDB

/// A signed-in browser. The cookie carries `token`; the table stores only its SHA-256.
struct SessionRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var tokenHash: String
    var userId: Int64
    var csrfToken: String
    var createdAt: Date
    var lastSeenAt: Date
    var ipAddress: String?

    static let databaseTableName = "session"

    enum Columns {
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let userId = Column(CodingKeys.userId)
        static let lastSeenAt = Column(CodingKeys.lastSeenAt)
    }
}

package struct APITokenRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var userId: Int64
    var name: String
    var tokenHash: String
    var createdAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?

    package static let databaseTableName = "apiToken"

    package enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let revokedAt = Column(CodingKeys.revokedAt)
    }

    /// A token as it is made: not yet used, not revoked.
    struct New: NewRecord {
        typealias Stored = APITokenRecord
        var userId: Int64
        var name: String
        var tokenHash: String
        var createdAt: Date
    }
}

enum SecretToken {
    /// 32 random bytes, URL-safe base64 without padding: fits a cookie and a header as is.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return base64URL(bytes)
    }

    private static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// URL-safe base64 without padding (RFC 4648 §5), written out: Foundation's base64 and three
    /// `replacingOccurrences` cost more than the random bytes.
    static func base64URL(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            let count = min(3, bytes.count - index) + 1
            for position in 0..<count { out.append(base64URLAlphabet[Int(group >> (18 - 6 * UInt32(position)) & 63)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }

    /// Compares without an early exit so timing does not reveal how much of a guess was right.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
