import Foundation
import GRDB

// What single sign-on records.

extension AppDatabase {
    /// A refused single sign-on, in the audit log (the reason, never a token).
    func recordSingleSignOnFailure(reason: String, ipAddress: String?) async throws {
        try await write { db in
            try AuditEvent.record(
                db,
                actor: AuditActor(userId: nil, ipAddress: ipAddress),
                objectType: "session",
                objectId: "-",
                action: "session.ssoFailed",
                detail: reason
            )
        }
    }
}
