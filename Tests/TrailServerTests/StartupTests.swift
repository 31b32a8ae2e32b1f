import Foundation
import PackageFormat
import Testing

@testable import TrailServer

/// What the server needs to run is there, or it does not start: no stand-in that would quietly do the wrong thing.
struct StartupTests {
    @Test(arguments: ["js/visit-store.js", "img/icon-512.png", "js/visit-sw.js"])
    func aMissingWebPlayerFileStopsTheStartWithItsPath(file: String) async throws {
        var config = AppConfig()
        config.root = TestScratch.folder("trail-root")
        try FileManager.default.createDirectory(at: config.root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: projectRoot.appendingPathComponent("Public"), to: config.publicFolder)
        #expect(throws: Never.self) { try PlayerAssets(publicFolder: config.publicFolder) }
        try FileManager.default.removeItem(at: config.publicFolder.appendingPathComponent(file))
        let error = #expect(throws: PlayerAssets.MissingFile.self) { try PlayerAssets(publicFolder: config.publicFolder) }
        #expect(error?.description.contains(file) == true, "\(String(describing: error))")
        // Empty is missing too: a script served empty fails on the phone with nothing in the log.
        try Data().write(to: config.publicFolder.appendingPathComponent(file))
        #expect(throws: PlayerAssets.MissingFile.self) { try PlayerAssets(publicFolder: config.publicFolder) }
    }

    @Test func aDamagedSigningKeyStopsTheStartWithItsPathInsteadOfSigningWithAThrowawayKey() async throws {
        var config = AppConfig()
        config.root = projectRoot
        config.dataFolder = TestScratch.folder("trail-startup")
        try DataFolder.prepare(config.dataFolder)
        let keyFile = config.dataPaths.signingKey
        try Data("not a key".utf8).write(to: keyFile)
        let database = try AppDatabase.inMemory(migrationsFolder: config.migrationsFolder)
        let views = try await ViewRenderer(templatesFolder: config.templatesFolder)
        await #expect(throws: SigningKeyError.invalidKeyFile(path: keyFile.path, size: 9)) {
            _ = try await AppDependencies(config: config, database: database, views: views)
        }
        #expect(try Data(contentsOf: keyFile) == Data("not a key".utf8), "the damaged key is left for the operator to look at")

        // A folder where the key file should be: not a key either.
        try FileManager.default.removeItem(at: keyFile)
        try FileManager.default.createDirectory(at: keyFile, withIntermediateDirectories: false)
        await #expect(throws: (any Error).self) { _ = try await AppDependencies(config: config, database: database, views: views) }

        // With no key at all, one is made and kept: the next start signs with the same key.
        try FileManager.default.removeItem(at: keyFile)
        let first = try await AppDependencies(config: config, database: database, views: views)
        let second = try await AppDependencies(config: config, database: database, views: views)
        #expect(first.signingKey.publicKeyBase64 == second.signingKey.publicKeyBase64)
    }
}
