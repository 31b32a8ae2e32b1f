import Foundation
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import PackageFormat
import Testing

@testable import TrailServer

/// `trail-companion doctor` on a healthy and on a broken data folder: a line per check, a fix for each failure, exit 1.
@Suite struct DoctorTests {
    /// A data folder as `serve` leaves it (migrated, a key), fresh EICAR signatures, and a root with the migrations.
    struct Site {
        let folder: URL
        var data: URL { folder.appendingPathComponent("data") }
        var signatures: URL { folder.appendingPathComponent("signatures") }
        var root: URL { folder.appendingPathComponent("root") }

        static func make() throws -> Site {
            let site = Site(folder: TestScratch.folder("doctor"))
            try FileManager.default.createDirectory(at: site.root, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: projectRoot.appendingPathComponent("migrations"), to: site.root.appendingPathComponent("migrations"))
            try DataFolder.prepare(site.data)
            _ = try AppDatabase.openFile(
                at: site.data.appendingPathComponent("trail.sqlite").path,
                migrationsFolder: site.root.appendingPathComponent("migrations")
            )
            _ = try SigningKey.loadOrCreate(at: DataPaths(root: site.data).signingKey)
            try EICAR.writeTestSignatures(to: site.signatures)
            return site
        }

        func arguments(tileURL: String, publicURL: String, minFreeSpace: String = "1M") -> [String] {
            [
                "doctor", "--root", root.path, "--data", data.path, "--clamav-db", signatures.path, "--tile-url", tileURL,
                "--public-url", publicURL, "--min-free-space", minFreeSpace, "--tile-allow-private",
            ]
        }
    }

    /// A tile server on loopback: a PNG at /good/0/0/0.png, HTML at /html/…, 500 at /down/….
    static func withTileServer(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        let png = MediaFixtures.png(size: 2_000)
        router.get("/good/{z}/{x}/{y}") { _, _ in
            Response(status: .ok, headers: [.contentType: "image/png"], body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
        router.get("/html/{z}/{x}/{y}") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>login</html>")))
        }
        router.get("/down/{z}/{x}/{y}") { _, _ in Response(status: .internalServerError) }
        try await Application(router: router).testLive { client in
            try await body("http://127.0.0.1:\(try #require(client.port))")
        }
    }

    @Test("a healthy server: every check passes and the exit status is 0")
    func healthy() async throws {
        let site = try Site.make()
        defer { try? FileManager.default.removeItem(at: site.folder) }
        try await Self.withTileServer { tiles in
            let run = try await BackupTests.cli(site.arguments(tileURL: "\(tiles)/good/{z}/{x}/{y}.png", publicURL: "https://tours.example.org"))
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            for name in ["malware signatures", "data folder", "signing key", "free space", "database", "tile source", "public URL", "media tools"] {
                #expect(run.stdout.contains("[ok]   \(name): "), "\(name): \(run.stdout)")
            }
            #expect(!run.stdout.contains("[FAIL]") && !run.stdout.contains("[warn]"))
            #expect(run.stdout.contains("answered a png tile"))
            #expect(run.stdout.hasSuffix("All checks passed.\n"), "\(run.stdout)")
        }
    }

    @Test("a broken server: each problem is named with its fix, and the exit status is 1")
    func broken() async throws {
        let site = try Site.make()
        defer { try? FileManager.default.removeItem(at: site.folder) }
        // Signatures gone, the key and the data folder readable by all, a migration this database lacks.
        for file in try FileManager.default.contentsOfDirectory(atPath: site.signatures.path) {
            try FileManager.default.removeItem(at: site.signatures.appendingPathComponent(file))
        }
        chmod(DataPaths(root: site.data).signingKey.path, 0o644)
        chmod(site.data.path, 0o755)
        try Data("CREATE TABLE later (id INTEGER PRIMARY KEY);".utf8).write(to: site.root.appendingPathComponent("migrations/9999_later.sql"))
        try await Self.withTileServer { tiles in
            let run = try await BackupTests.cli(
                site.arguments(
                    tileURL: "\(tiles)/down/{z}/{x}/{y}.png",
                    publicURL: "http://tours.example.org",
                    minFreeSpace: "1000000T"
                )
            )
            #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
            let expected = [
                ("malware signatures", "no ClamAV signature files", "apt-get install clamav-freshclam"),
                ("data folder", "has mode 755", "chmod 700"),
                ("signing key", "has mode 644", "chmod 600"),
                ("free space", "below the floor", "--min-free-space"),
                ("database", "1 migration(s) not applied: 9999_later", "trail-companion migrate"),
                ("tile source", "answered HTTP 500", "check the template"),
                ("public URL", "is not https", "deploy/nginx.conf"),
            ]
            for (name, problem, fix) in expected {
                let line = run.stdout.components(separatedBy: "\n").firstIndex { $0.hasPrefix("[FAIL] \(name): ") }
                let index = try #require(line, "\(name) did not fail: \(run.stdout)")
                let lines = run.stdout.components(separatedBy: "\n")
                #expect(lines[index].contains(problem), "\(lines[index])")
                #expect(lines[index + 1].contains("fix: ") && lines[index + 1].contains(fix), "\(lines[index + 1])")
            }
            #expect(run.stdout.contains("7 check(s) failed."))
        }
    }

    @Test("old signatures and a tile server that answers HTML: a warning and a failure; a missing key after releases fails")
    func subtlerProblems() async throws {
        let site = try Site.make()
        defer { try? FileManager.default.removeItem(at: site.folder) }
        let old = Date().addingTimeInterval(-5 * 86_400)
        for file in try FileManager.default.contentsOfDirectory(atPath: site.signatures.path) {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: site.signatures.appendingPathComponent(file).path)
        }
        var config = AppConfig()
        config.root = site.root
        config.dataFolder = site.data
        config.clamavDatabaseFolders = [site.signatures.path]
        config.minFreeSpace = 0
        let signatures = Doctor(config: config).signatures()
        #expect(signatures.status == .warning && signatures.message.contains("5.0 days old"), "\(signatures)")
        #expect(signatures.fix?.contains("clamav-freshclam") == true)

        try await Self.withTileServer { [config] tiles in
            var html = config
            html.tileURLTemplate = "\(tiles)/html/{z}/{x}/{y}.png"
            let refused = await Doctor(config: html).tileSource()
            #expect(refused.status == .failure && refused.message.contains("own network"), "a loopback tile server without the flag: \(refused)")
            html.tileFetch.allowPrivateAddresses = true
            let check = await Doctor(config: html).tileSource()
            #expect(check.status == .failure && check.message.contains("not a PNG, JPEG or WebP"), "\(check)")
        }

        // Without a key, nothing released: a warning (serve makes one). With a released version: a failure.
        try FileManager.default.removeItem(at: DataPaths(root: site.data).signingKey)
        #expect(Doctor(config: config).signingKey().status == .warning)
        let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
        try await database.write { db in
            try db.execute(sql: "INSERT INTO site (slug, name, description, requiredApprovals, createdAt) VALUES ('s', 'S', '', 1, 0)")
            try db.execute(sql: "INSERT INTO package (id, siteId, currentVersion, isVisible, createdAt, updatedAt) VALUES ('p', 1, 1, 1, 0, 0)")
            try db.execute(
                sql: """
                    INSERT INTO packageVersion (packageId, version, name, description, mapName, sha256, size, signature, manifestJSON, createdAt)
                    VALUES ('p', 1, 'P', '', 'p', 'x', 1, 's', '{}', 0)
                    """
            )
        }
        let missing = Doctor(config: config).signingKey()
        #expect(missing.status == .failure && missing.message.contains("apps will refuse"), "\(missing)")
    }
}
