import Foundation
import GRDB

package struct User: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var email: String
    package var displayName: String
    package var passwordHash: String
    package var isAdmin: Bool
    package var isDisabled: Bool
    package var mustChangePassword: Bool
    package var createdAt: Date
    /// False for an account made from an invitation link that was shown rather than mailed: nothing proved that its
    /// maker owns the address. It does not count toward a site's required approvals until a single sign-on through the
    /// agency's provider (or an administrator) proves it.
    package var addressProven: Bool

    package static let databaseTableName = "user"

    package enum Columns {
        static let id = Column(CodingKeys.id)
        static let email = Column(CodingKeys.email)
        static let isDisabled = Column(CodingKeys.isDisabled)
        static let isAdmin = Column(CodingKeys.isAdmin)
    }

    /// An account as it is made; the second step and its notices start empty, as the schema's defaults say.
    package struct New: NewRecord {
        package typealias Stored = User
        package var email: String
        package var displayName: String
        package var passwordHash: String
        package var isAdmin: Bool
        package var isDisabled: Bool
        package var mustChangePassword: Bool
        package var createdAt: Date
        package var addressProven = true
    }
}

/// What a request knows about the signed-in user (or the owner of a bearer token).
package struct AuthenticatedUser: Sendable {
    package let id: Int64
    package let email: String
    package let displayName: String
    package let isAdmin: Bool
    package let mustChangePassword: Bool

    init(_ user: User) {
        self.id = user.id
        self.email = user.email
        self.displayName = user.displayName
        self.isAdmin = user.isAdmin
        self.mustChangePassword = user.mustChangePassword
    }
}
