import Foundation
import GRDB

public struct User: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var email: String
    public var displayName: String
    public var passwordHash: String
    public var isAdmin: Bool
    public var isDisabled: Bool
    public var mustChangePassword: Bool
    public var createdAt: Date

    public static let databaseTableName = "user"

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let email = Column(CodingKeys.email)
        static let isDisabled = Column(CodingKeys.isDisabled)
        static let isAdmin = Column(CodingKeys.isAdmin)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// What a request knows about the signed-in user (or the owner of a bearer token).
public struct AuthenticatedUser: Sendable {
    public let id: Int64
    public let email: String
    public let displayName: String
    public let isAdmin: Bool
    public let mustChangePassword: Bool

    init(_ user: User) {
        self.id = user.id!
        self.email = user.email
        self.displayName = user.displayName
        self.isAdmin = user.isAdmin
        self.mustChangePassword = user.mustChangePassword
    }
}
