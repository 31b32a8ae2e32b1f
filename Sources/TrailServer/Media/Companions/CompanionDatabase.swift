import Foundation
import GRDB

/// A finished caption or transcript upload, checked as text (``CompanionText``), for one media file.
struct NewCompanion: Sendable {
    let ownerId: Int64
    let role: CompanionRole
    let format: CompanionText.Format
    let originalName: String
    let size: Int64
    let sha256: String
    /// The received file, uploads/<uploadId> under the data folder.
    let uploadId: String
    var storedPath: String { "uploads/\(uploadId)" }
}

extension AppDatabase {
    /// Attaches a checked caption or transcript file to a media file, replacing the one it had in that role, with its
    /// scan job, in one transaction. Refused (422 on `file`) for a kind that does not take the role, or for a companion
    /// itself. Returns the new row and the stored paths that may have become unreferenced.
    func addCompanion(_ new: NewCompanion, actor: AuditActor) async throws -> (Asset, [String]) {
        try await write { db in
            guard let owner = try Asset.fetchOne(db, id: new.ownerId), let waypoint = try Waypoint.fetchOne(db, id: owner.waypointId) else {
                throw NotFound()
            }
            let tour = try Self.editableTour(db, id: waypoint.tourId)
            guard owner.companionOf == nil else {
                throw ValidationErrors([
                    "file":
                        "“\(owner.originalName)” is itself a \(owner.companionRole?.label ?? "companion") file; attach to the video or audio file."
                ])
            }
            guard new.role.accepts(owner.kind) else { throw ValidationErrors(["file": CompanionRole.refusal(new.role, for: owner.kind)]) }
            var released: [String] = []
            if let previous = try Asset.filter(Asset.Columns.companionOf == owner.id && Asset.Columns.companionRole == new.role).fetchOne(db) {
                try previous.delete(db)
                released.append(previous.storedPath)
            }
            let companion = try Asset.New(
                waypointId: owner.waypointId,
                position: 0,
                kind: .text,
                originalName: String(new.originalName.prefix(255)),
                mimeType: new.format.mimeType,
                size: new.size,
                sha256: new.sha256,
                storedPath: new.storedPath,
                uploadedBy: actor.userId,
                createdAt: Date(),
                companionOf: owner.id,
                companionRole: new.role
            ).inserted(db)
            try db.execute(sql: "INSERT INTO scanJob (assetId, queuedAt) VALUES (?, ?)", arguments: [companion.id, Date().dbTime])
            try Self.touch(db, tourId: tour.id)
            try AuditEvent.record(
                db,
                actor: actor,
                siteId: tour.siteId,
                objectId: "\(owner.id)",
                action: .companion(new.role),
                detail: "\(companion.originalName) (\(companion.size) bytes) for \(owner.originalName)"
            )
            try Self.requireRoom(db, siteId: tour.siteId, excludingUpload: new.uploadId)
            return (companion, try released.filter { try !Self.isReferenced(db, storedPath: $0) })
        }
    }
}
