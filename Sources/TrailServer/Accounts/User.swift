import Foundation
import GRDB

package struct User: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var email: String
    var displayName: String
    var passwordHash: String
    var isAdmin: Bool
    var isDisabled: Bool
    var mustChangePassword: Bool
    var createdAt: Date
    /// False for an account made from an invitation link that was shown rather than mailed: nothing proved that its
    /// maker owns the address. It does not count toward a site's required approvals until a single sign-on through the
    /// agency's provider (or an administrator) proves it.
    var addressProven: Bool

    package static let databaseTableName = "user"

    package enum Columns {
        static let id = Column(CodingKeys.id)
        static let email = Column(CodingKeys.email)
        static let isDisabled = Column(CodingKeys.isDisabled)
        static let isAdmin = Column(CodingKeys.isAdmin)
    }

    /// An account as it is made; the second step and its notices start empty, as the schema's defaults say.
    struct New: NewRecord {
        typealias Stored = User
        var email: String
        var displayName: String
        var passwordHash: String
        var isAdmin: Bool
        var isDisabled: Bool
        var mustChangePassword: Bool
        var createdAt: Date
        var addressProven = true
    }
}

/// What a request knows about the signed-in user (or the owner of a bearer token).
struct AuthenticatedUser: Sendable {
    let id: Int64
    let email: String
    let displayName: String
    let isAdmin: Bool
    let mustChangePassword: Bool

    init(_ user: User) {
        self.id = user.id
        self.email = user.email
        self.displayName = user.displayName
        self.isAdmin = user.isAdmin
        self.mustChangePassword = user.mustChangePassword
    }
}
