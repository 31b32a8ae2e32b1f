import Foundation
import GRDB

// The tile server settings an admin saved.

extension AppDatabase {
    /// The settings an admin saved, if any.
    func savedTileSettings() async throws -> TileSettings? {
        try await read { db in try Self.tileSettingsRow(db) }
    }

    static func tileSettingsRow(_ db: Database) throws -> TileSettings? {
        try TileSettingsRecord.fetchOne(db, key: 1).map {
            TileSettings(urlTemplate: $0.urlTemplate, attribution: $0.attribution, tileCap: $0.tileCap)
        }
    }

    /// Validates and saves the panel's tile settings (an empty template means no tile server).
    func saveTileSettings(urlTemplate: String, attribution: String, tileCap: Int?, actor: AuditActor) async throws -> TileSettings {
        var errors = ValidationErrors()
        let template = urlTemplate.trimmingCharacters(in: .whitespacesAndNewlines)
        if !template.isEmpty, let problem = TileURLTemplate.problem(template) { errors["urlTemplate"] = problem }
        let attribution = attribution.trimmingCharacters(in: .whitespacesAndNewlines)
        if attribution.count > 500 || attribution.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            errors["attribution"] = "Keep the attribution to one line under 500 characters."
        }
        if !template.isEmpty && attribution.isEmpty {
            errors["attribution"] = "Say whose map it is (e.g. “© Example Mapping, CC BY 4.0”): most tile licences require a credit."
        }
        if let cap = tileCap, cap < 1 || cap > TileSettings.maxTileCap {
            errors["tileCap"] = "Enter a number of tiles from 1 to \(TileSettings.maxTileCap)."
        } else if tileCap == nil {
            errors["tileCap"] = "Enter a number of tiles from 1 to \(TileSettings.maxTileCap)."
        }
        guard errors.isEmpty, let cap = tileCap else { throw errors }
        let settings = TileSettings(urlTemplate: template, attribution: attribution, tileCap: cap)
        try await write { db in
            try TileSettingsRecord(
                urlTemplate: settings.urlTemplate,
                attribution: settings.attribution,
                tileCap: cap,
                updatedBy: actor.userId,
                updatedAt: Date()
            ).save(db)
            try AuditEvent.record(
                db,
                actor: actor,
                objectId: "1",
                action: .tilesSettings,
                detail: "\(settings.urlTemplate ?? "no tile server"), cap \(cap)"
            )
        }
        return settings
    }
}
