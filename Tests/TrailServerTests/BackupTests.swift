import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

/// `trail-companion backup`, `backup verify` and `restore`, run as an operator runs them: the CLI against the data folder
/// of a live server that keeps uploading and releasing meanwhile.
@Suite(.scratch) struct BackupTests {
    static let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion").path

    static func cli(_ arguments: [String]) async throws -> ChildProcess.Output {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the CLI first (swift build --build-tests)")
        return try await ChildProcess.run(binary, arguments, timeout: .seconds(120))
    }

    struct AuditLine: Equatable {
        let id: Int64?, action: String, objectId: String, occurredAt: Double
    }

    static func audit(_ database: AppDatabase) async throws -> [AuditLine] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, action, objectId, occurredAt FROM auditEvent ORDER BY id").map {
                AuditLine(id: $0["id"], action: $0["action"], objectId: $0["objectId"], occurredAt: $0["occurredAt"])
            }
        }
    }

    @Test(
        "a backup taken while files are uploaded and packages released restores into a server that serves every earlier package, a verifying catalog and the whole audit log"
    )
    func backupUnderLoadRestores() async throws {
        try await DiskHeavyLock.hold { try await backUpWhileReleasing() }
    }

    func backUpWhileReleasing() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let backup = env.folder.appendingPathComponent("backup")
        let restored = env.folder.appendingPathComponent("restored")
        final class Load: @unchecked Sendable {
            let lock = NSLock()
            var stop = false, releases = 0, started = false
        }
        let load = Load()
        try await env.app.application.testLive { client in
            let first = try await env.releaseThroughAPI(client, videoSize: 12_000_000)
            let auditBefore = try await Self.audit(env.database)
            // Rangers keep working: upload, build, approve, release, again and again, until the backup is done.
            let worker = Task {
                var seed: UInt64 = 40
                while !load.lock.withLock({ load.stop }) {
                    load.lock.withLock { load.started = true }
                    _ = try await env.releaseThroughAPI(client, seed: seed, videoSize: 3_000_000)
                    load.lock.withLock { load.releases += 1 }
                    seed += 1
                }
            }
            while !load.lock.withLock({ load.started }) { try await Task.sleep(for: .milliseconds(5)) }
            let taken = try await Self.cli(["backup", "--to", backup.path, "--root", projectRoot.path, "--data", env.dataFolder.path])
            load.lock.withLock { load.stop = true }
            try await worker.value
            #expect(taken.status == 0, "\(taken.stdout) \(taken.stderr)")
            #expect(taken.stdout.contains("Backed up"), "\(taken.stdout)")
            #expect(load.lock.withLock { load.releases } >= 1, "the release went on while the backup ran")

            let index = try DataBackup.readIndex(backup)
            #expect(index.schemaVersion == (try MigrationTests.migrationNames.last))
            #expect(index.fileCount == index.files.count && index.totalBytes == index.files.reduce(0) { $0 + $1.size })
            #expect(index.files.contains { $0.path == "packages/\(first.packageId)/1.zip" && $0.sha256 == first.sha256 })

            let verified = try await Self.cli(["backup", "verify", backup.path])
            #expect(verified.status == 0, "\(verified.stdout)")
            #expect(verified.stdout.contains("is good"))

            // Again into the same folder: only what the releases after the snapshot added is copied; then nothing.
            let held = Set(index.files.map(\.sha256))
            // The backup copies its files on the blocking pool, so the releases beside it keep the cooperative threads.
            let again = try await DataBackup(dataFolder: env.dataFolder).run(database: env.database, to: backup)
            let added = try DataBackup.readIndex(backup).files.filter { !held.contains($0.sha256) }
            #expect(again.copiedFiles == Set(added.map(\.sha256)).count && again.copiedFiles < again.fileCount, "\(again)")
            let third = try await Self.cli(["backup", "--to", backup.path, "--root", projectRoot.path, "--data", env.dataFolder.path])
            #expect(third.status == 0)
            #expect(third.stdout.contains("copied 0 files (0 bytes)"), "nothing changed since: \(third.stdout)")

            let restore = try await Self.cli(["restore", "--from", backup.path, "--data", restored.path])
            #expect(restore.status == 0, "\(restore.stdout) \(restore.stderr)")

            // A server on the restored folder: every package released before the backup began, the catalog, the audit log.
            let database = try AppDatabase.openFile(
                at: restored.appendingPathComponent("trail.sqlite").path,
                migrationsFolder: projectRoot.appendingPathComponent("migrations")
            )
            let restoredAudit = try await Self.audit(database)
            #expect(Array(restoredAudit.prefix(auditBefore.count)) == auditBefore, "the audit log up to the backup is intact")
            let app = try await TestApp.make(database: database) { config in config.dataFolder = restored }
            #expect(app.dependencies.signingKey.publicKeyBase64 == env.publicKey, "the same signing key")
            try await app.test { restoredClient in
                let zip = try await restoredClient.execute(uri: "/api/v1/packages/\(first.packageId)/versions/1/download", method: .get)
                #expect(zip.status == .ok)
                #expect(PackageHashing.sha256Hex(Data(buffer: zip.body)) == first.sha256)
                let catalog = try await restoredClient.execute(uri: "/api/v1/catalog", method: .get)
                let verifiedCatalog = try TrailClient.verifyCatalog(
                    body: Data(buffer: catalog.body),
                    signature: catalog.headers[.catalogSignature],
                    pinnedPublicKey: env.publicKey,
                    lastSeenVersion: nil
                )
                #expect(verifiedCatalog.catalog.packages.contains { $0.id == first.packageId })
                // Every version the restored database lists downloads with its listed SHA-256.
                let versions = try await database.rows("SELECT packageId, version, sha256 FROM packageVersion")
                for row in versions {
                    let body = try await restoredClient.execute(
                        uri: "/api/v1/packages/\(row["packageId"] as String)/versions/\(row["version"] as Int)/download",
                        method: .get
                    )
                    #expect(PackageHashing.sha256Hex(Data(buffer: body.body)) == row["sha256"] as String)
                }
            }
        }
    }

    @Test("a damaged or missing file in the backup is named by backup verify and restore; restore refuses a folder that is not empty")
    func damageIsNamed() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let backup = env.folder.appendingPathComponent("backup")
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        let released = try #require(box.released)
        let report = try await DataBackup(dataFolder: env.dataFolder).run(database: env.database, to: backup)
        #expect(report.copiedFiles == report.fileCount && report.fileCount >= 3)
        #expect(try DataBackup.verify(backup).isEmpty)

        // One byte flipped in the package's stored copy.
        let stored = backup.appendingPathComponent("files").appendingPathComponent(released.sha256)
        let original = try Data(contentsOf: stored)
        var flipped = original
        flipped[flipped.count / 2] ^= 0x01
        try flipped.write(to: stored)
        let damaged = try await Self.cli(["backup", "verify", backup.path])
        #expect(damaged.status == 1)
        #expect(
            damaged.stdout.contains("packages/\(released.packageId)/1.zip: files/\(released.sha256) does not match its SHA-256 (damaged)"),
            "\(damaged.stdout)"
        )
        let target = env.folder.appendingPathComponent("restored")
        let refused = try await Self.cli(["restore", "--from", backup.path, "--data", target.path])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("packages/\(released.packageId)/1.zip"), "\(refused.stdout)")
        try original.write(to: stored)

        // A file the database names but the backup lacks.
        let index = try DataBackup.readIndex(backup)
        let asset = try #require(index.files.first { $0.path.hasPrefix("assets/") })
        var trimmed = index
        trimmed.files.removeAll { $0.path == asset.path }
        try DataBackup.encoder.encode(trimmed).write(to: backup.appendingPathComponent("backup.json"))
        let missing = try DataBackup.verify(backup)
        #expect(missing == ["\(asset.path): named by the database but not in the backup"])
        try DataBackup.encoder.encode(index).write(to: backup.appendingPathComponent("backup.json"))

        // Never over a folder that holds something.
        let occupied = env.folder.appendingPathComponent("occupied")
        try FileManager.default.createDirectory(at: occupied, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: occupied.appendingPathComponent("notes.txt"))
        let overwrite = try await Self.cli(["restore", "--from", backup.path, "--data", occupied.path])
        #expect(overwrite.status == 1)
        #expect(overwrite.stdout.contains("is not empty"), "\(overwrite.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: occupied.path) == ["notes.txt"])
        #expect(try Data(contentsOf: occupied.appendingPathComponent("notes.txt")) == Data("keep me".utf8))
        // A folder that is no backup.
        let none = try await Self.cli(["backup", "verify", occupied.path])
        #expect(none.status == 1 && none.stdout.contains("holds no backup"))
        // And the good backup restores.
        #expect(try DataBackup.restore(from: backup, to: env.folder.appendingPathComponent("fresh")) == index.files.count)
    }

    @Test("backup index paths are checked before a restore writes them")
    func unsafeIndexPaths() {
        for path in ["../escape", "/etc/passwd", "assets/../../x", "a\\b", "", "assets//x", "./assets"] {
            #expect(!PathSafety.isSafeRelative(path), "\(path)")
        }
        #expect(PathSafety.isSafeRelative("packages/abc/1.zip"))
    }
}
