import Foundation
import GRDB
import Testing

@testable import TrailServer

/// The tile settings in force: the command line's until an admin saves others, read once at start, never a quiet
/// fallback when the saved ones cannot be read.
@Suite struct TileSettingsStoreTests {
    static let commandLine = TileSettings(
        urlTemplate: "https://tiles.example.org/{z}/{x}/{y}.png",
        attribution: "© Example",
        tileCap: TileSettings.defaultTileCap
    )

    @Test("the command line's settings until a save; a save is in force at once and survives a restart")
    func commandLineThenSaved() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        let store = try await TileSettingsStore(database: database, commandLine: Self.commandLine)
        #expect(store.current == Self.commandLine && !store.isSaved)
        let saved = try await store.save(urlTemplate: "https://maps.example.net/{z}/{x}/{y}.png", attribution: "© Net", tileCap: 2000, actor: .system)
        #expect(store.current == saved && store.isSaved)
        let restarted = try await TileSettingsStore(database: database, commandLine: Self.commandLine)
        #expect(restarted.current == saved && restarted.isSaved)
    }

    @Test("saved settings that cannot be read stop the start with an error instead of falling back to the command line's")
    func unreadableSettingsAreAStartUpError() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        try await database.write { try $0.execute(sql: "DROP TABLE tileSettings") }
        await #expect(throws: (any Error).self) { try await TileSettingsStore(database: database, commandLine: Self.commandLine) }
    }
}
