import Crypto
import Foundation
import GRDB

/// A signed-in browser. The cookie carries `token`; the table stores only its SHA-256.
public struct SessionRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    public var tokenHash: String
    public var userId: Int64
    public var csrfToken: String
    public var createdAt: Double
    public var lastSeenAt: Double
    public var ipAddress: String?

    public static let databaseTableName = "session"

    public enum Columns {
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let userId = Column(CodingKeys.userId)
        static let lastSeenAt = Column(CodingKeys.lastSeenAt)
    }
}

public struct APITokenRecord: Codable, Sendable, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var userId: Int64
    public var name: String
    public var tokenHash: String
    public var createdAt: Double
    public var lastUsedAt: Double?
    public var revokedAt: Double?

    public static let databaseTableName = "apiToken"

    public enum Columns {
        static let userId = Column(CodingKeys.userId)
        static let tokenHash = Column(CodingKeys.tokenHash)
        static let revokedAt = Column(CodingKeys.revokedAt)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

enum SecretToken {
    /// 32 random bytes, URL-safe base64 without padding: fits a cookie and a header as is.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares without an early exit so timing does not reveal how much of a guess was right.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
