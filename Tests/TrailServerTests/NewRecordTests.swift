import Foundation
import GRDB
import Testing

@testable import TrailServer

/// A table's `New` record inserts only what its creator sets and hands back the stored record: the id SQLite gave it,
/// and the schema's defaults for everything else.
@Suite struct NewRecordTests {
    @Test func anInsertReturnsTheStoredRowWithItsIdAndTheSchemasDefaults() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: MigrationTests.migrationsFolder)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let (site, first, second, waypoint) = try await database.write { db in
            let site = try Site.New(
                slug: "ridge",
                name: "Ridge",
                description: "",
                requiredApprovals: 1,
                createdAt: now,
                storageQuotaBytes: nil,
                mediaAccessibility: .recommended,
                requireCompleteLanguages: false
            ).inserted(db)
            func tour(_ name: String) throws -> Tour {
                try Tour.New(
                    siteId: site.id,
                    name: name,
                    description: "",
                    mapName: name.lowercased(),
                    minZoom: 12,
                    maxZoom: 16,
                    state: .draft,
                    createdBy: nil,
                    createdAt: now,
                    updatedAt: now,
                    paceKmh: 3.5
                ).inserted(db)
            }
            let first = try tour("Falls")
            let second = try tour("Meadow")
            let waypoint = try Waypoint.New(
                tourId: first.id,
                name: "Bridge",
                position: 1,
                latitude: 44.4,
                longitude: -122.1,
                description: "",
                createdAt: now,
                updatedAt: now
            ).inserted(db)
            return (site, first, second, waypoint)
        }
        #expect(site.passwordSignIn && site.mediaAccessibility == .recommended, "the default and the value given")
        #expect(first.id != second.id && first.id > 0 && second.siteId == site.id)
        #expect(first.languages == ["en"] && first.localized.isEmpty && first.route == nil && first.frame == nil, "the schema's defaults")
        #expect(first.paceKmh == 3.5 && first.createdAt == now && first.state == .draft)
        #expect(waypoint.triggerRadiusMeters == TriggerZone.defaultRadius && waypoint.tourId == first.id)
        let stored = try await database.read { db in try Tour.fetchOne(db, id: first.id) }
        #expect(stored?.name == "Falls" && stored?.paceKmh == 3.5)
    }

    @Test func anInsertTheSchemaRefusesLeavesNoRow() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: MigrationTests.migrationsFolder)
        await #expect(throws: DatabaseError.self) {
            try await database.write { db in
                // No site 99: the foreign key refuses the tour.
                _ = try Tour.New(
                    siteId: 99,
                    name: "Orphan",
                    description: "",
                    mapName: "orphan",
                    minZoom: 12,
                    maxZoom: 16,
                    state: .draft,
                    createdBy: nil,
                    createdAt: Date(),
                    updatedAt: Date(),
                    paceKmh: 4
                ).inserted(db)
            }
        }
        #expect(try await database.read { db in try Tour.fetchCount(db) } == 0)
    }
}
