import Foundation
import GRDB

/// What the layout's notices read: asked only while the notice can show (the scanner has no signatures), so an
/// ordinary page pays nothing for it.
extension AppDatabase {
    /// The user's files (media and tilesets they uploaded) that still wait for the malware scanner.
    func filesWaitingForScan(uploadedBy userId: Int64) async throws -> Int {
        try await read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT (SELECT COUNT(*) FROM asset WHERE uploadedBy = ? AND scanStatus = 'pending')
                         + (SELECT COUNT(*) FROM tourTileset WHERE uploadedBy = ? AND scanStatus = 'pending')
                    """,
                arguments: [userId, userId]
            ) ?? 0
        }
    }

    /// The server's administrators who can sign in, as "Name (email)", to name whom to ask.
    func activeAdministrators() async throws -> [String] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT displayName, email FROM user WHERE isAdmin = 1 AND isDisabled = 0 ORDER BY displayName")
                .map { "\($0["displayName"] as String) (\($0["email"] as String))" }
        }
    }
}
