import Crypto
import Foundation
import GRDB
import Testing

@testable import TrailServer

/// A backup folder is input from elsewhere: its index must not steer a restore to read or write outside the backup
/// and the new data folder, a failed restore leaves nothing, and verifying a backup changes nothing in it.
@Suite(.enabled(if: CLI.isBuilt, "build it first: swift build --build-tests"))
struct BackupSafetyTests {
    /// A real backup of a small data folder: a migrated database (WAL mode), a signing key, one asset.
    static func realBackup() async throws -> (data: URL, backup: URL) {
        let data = TestScratch.folder("trail-backup-data")
        let backup = TestScratch.folder("trail-backup")
        try DataFolder.prepare(data)
        let database = try AppDatabase.openFile(
            at: data.appendingPathComponent("trail.sqlite").path,
            migrationsFolder: projectRoot.appendingPathComponent("migrations")
        )
        try Data(repeating: 7, count: 32).write(to: data.appendingPathComponent("keys/signing.ed25519"))
        _ = try await database.createSite(SiteInput(slug: "sweet-home", name: "Sweet Home", description: "", requiredApprovals: 1), actor: .system)
        _ = try await DataBackup(dataFolder: data).run(database: database, to: backup)
        return (data, backup)
    }

    /// A backup folder written by hand: `backup.json` with the given entries, a stand-in database file, the stored files.
    static func craftedBackup(_ entries: [BackupIndex.Entry], stored: [String: Data] = [:]) throws -> URL {
        let backup = TestScratch.folder("trail-crafted")
        try FileManager.default.createDirectory(at: backup.appendingPathComponent("files"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: backup.appendingPathComponent("keys"), withIntermediateDirectories: true)
        try Data("not a database".utf8).write(to: backup.appendingPathComponent("trail.sqlite"))
        for (name, data) in stored { try data.write(to: backup.appendingPathComponent("files").appendingPathComponent(name)) }
        let index = BackupIndex(
            createdAt: Date(),
            schemaVersion: "0011_languages",
            fileCount: entries.count,
            totalBytes: entries.reduce(0) { $0 + $1.size },
            files: entries
        )
        try DataBackup.encoder.encode(index).write(to: backup.appendingPathComponent("backup.json"))
        return backup
    }

    static func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test("a backup.json whose hash is a path (absolute, traversing, not hex) is refused before anything is written")
    func hashesThatArePathsAreRefused() async throws {
        let outside = TestScratch.folder("trail-outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let secret = Data("outside the backup".utf8)
        try secret.write(to: outside.appendingPathComponent("secret"))
        let size = Int64(secret.count)
        for hash in [
            outside.appendingPathComponent("secret").path, "../../" + outside.lastPathComponent + "/secret",
            Self.hex(secret).uppercased(), String(Self.hex(secret).dropLast()), Self.hex(secret) + "/", "",
        ] {
            let backup = try Self.craftedBackup([.init(path: "assets/x", sha256: hash, size: size, modified: 0)])
            let target = TestScratch.folder("trail-restored")
            #expect(throws: BackupError.self, "\(hash)") { try DataBackup.restore(from: backup, to: target) }
            #expect(!FileManager.default.fileExists(atPath: target.path), "nothing left behind for \(hash)")
        }
        // verify names such a hash instead of reading what it points at
        let (_, backup) = try await Self.realBackup()
        var index = try DataBackup.readIndex(backup)
        index.files.append(.init(path: "assets/x", sha256: outside.appendingPathComponent("secret").path, size: size, modified: 0))
        try DataBackup.encoder.encode(index).write(to: backup.appendingPathComponent("backup.json"))
        let problems = try DataBackup.verify(backup)
        #expect(problems == ["assets/x: \(outside.appendingPathComponent("secret").path) is not a SHA-256 (64 lower-case hex digits)"])
    }

    @Test("a symbolic link in the backup (a stored file or a key) is refused and the failed restore removes what it wrote")
    func symbolicLinksAreRefused() throws {
        let outside = TestScratch.folder("trail-outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let secret = Data("a key somewhere else".utf8)
        try secret.write(to: outside.appendingPathComponent("secret"))
        let good = Data("asset bytes".utf8)

        // A stored file that is a link to a file outside, under the hash of that file's bytes.
        let linked = try Self.craftedBackup([
            .init(path: "assets/\(Self.hex(secret))", sha256: Self.hex(secret), size: Int64(secret.count), modified: 0)
        ])
        try FileManager.default.createSymbolicLink(
            atPath: linked.appendingPathComponent("files/\(Self.hex(secret))").path,
            withDestinationPath: outside.appendingPathComponent("secret").path
        )
        let target1 = TestScratch.folder("trail-restored")
        #expect(
            throws: BackupError.unsafeFile(
                linked.appendingPathComponent("files/\(Self.hex(secret))").path + ": a symbolic link; refusing to follow it"
            )
        ) {
            try DataBackup.restore(from: linked, to: target1)
        }
        #expect(!FileManager.default.fileExists(atPath: target1.path))

        // A key that is a link: the files before it were written, and are removed again. A folder that was there
        // empty stays, empty.
        let backup = try Self.craftedBackup(
            [.init(path: "assets/\(Self.hex(good))", sha256: Self.hex(good), size: Int64(good.count), modified: 0)],
            stored: [Self.hex(good): good]
        )
        try FileManager.default.createSymbolicLink(
            atPath: backup.appendingPathComponent("keys/signing.ed25519").path,
            withDestinationPath: outside.appendingPathComponent("secret").path
        )
        let target2 = TestScratch.folder("trail-restored")
        try FileManager.default.createDirectory(at: target2, withIntermediateDirectories: true)
        #expect(throws: BackupError.self) { try DataBackup.restore(from: backup, to: target2) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target2.path) == [])

        // The keys folder itself a link.
        try FileManager.default.removeItem(at: backup.appendingPathComponent("keys"))
        try FileManager.default.createSymbolicLink(atPath: backup.appendingPathComponent("keys").path, withDestinationPath: outside.path)
        let target3 = TestScratch.folder("trail-restored")
        #expect(throws: BackupError.unsafeFile("keys: a symbolic link, not a folder; refusing to follow it")) {
            try DataBackup.restore(from: backup, to: target3)
        }
        #expect(!FileManager.default.fileExists(atPath: target3.path))
    }

    /// Every file below `folder` with its bytes.
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
        for case let name as String in walker {
            let url = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            files[name] = isFolder.boolValue ? Data() : try Data(contentsOf: url)
        }
        return files
    }

    @Test("backup verify writes nothing into the backup it checks, and takes --root and --data like every command")
    func verifyWritesNothing() async throws {
        let (data, backup) = try await Self.realBackup()
        let before = try Self.snapshot(backup)
        #expect(before["trail.sqlite"] != nil && before["keys/signing.ed25519"] != nil)
        let run = try await CLI.run(["backup", "verify", backup.path], data: data)
        #expect(run.status == 0, "\(run.output) \(run.errors)")
        #expect(run.output.contains("is good"), "\(run.output)")
        let after = try Self.snapshot(backup)
        #expect(after.keys.sorted() == before.keys.sorted(), "no -shm, no -wal: \(after.keys.sorted())")
        #expect(after == before)
        // And through the environment.
        let env = try await CLI.run(
            ["backup", "verify", backup.path],
            data: nil,
            root: nil,
            environment: ["TRAIL_ROOT": projectRoot.path, "TRAIL_DATA": data.path]
        )
        #expect(env.status == 0, "\(env.output) \(env.errors)")
        #expect(try Self.snapshot(backup) == before)
    }

    @Test("restore takes --root and --data, or TRAIL_ROOT and TRAIL_DATA, and restores a backup that verify calls good")
    func restoreTakesTheLocationOptions() async throws {
        let (_, backup) = try await Self.realBackup()
        let target = TestScratch.folder("trail-restored")
        let run = try await CLI.run(["restore", "--from", backup.path], data: target)
        #expect(run.status == 0, "\(run.output) \(run.errors)")
        #expect(run.output.contains("into \(target.path)"), "\(run.output)")
        let restored = try CLI.open(target)
        await #expect(try restored.site(slug: "sweet-home") != nil)
        #expect(try Data(contentsOf: target.appendingPathComponent("keys/signing.ed25519")) == Data(repeating: 7, count: 32))

        let viaEnvironment = TestScratch.folder("trail-restored")
        let env = try await CLI.run(
            ["restore", "--from", backup.path],
            data: nil,
            root: nil,
            environment: ["TRAIL_ROOT": projectRoot.path, "TRAIL_DATA": viaEnvironment.path]
        )
        #expect(env.status == 0, "\(env.output) \(env.errors)")
        #expect(FileManager.default.fileExists(atPath: viaEnvironment.appendingPathComponent("trail.sqlite").path))
    }
}
