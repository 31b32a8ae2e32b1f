import Foundation
import GRDB
import MalwareScan
import TestSupport
import Testing

@testable import TrailServer

/// The tests' one app harness with files on disk: a `TestApp` whose data folder is real, a real libclamav engine loaded
/// from a signature folder the test writes (the EICAR body signature) unless the test brings its own scanner, and the
/// `TestApp` seed. Its folder comes from the test's scope (`TestScratch`), so it goes when the test case ends.
///
/// Three set-ups, each what its tests need; everything else (helpers for people, queues and files) is shared, and a
/// feature's own helpers are extensions in its support file (`MediaSupport`, `PublishingSupport`, `TilesSupport`):
/// - ``media(signatures:engineMaxFileSize:scanner:configure:)``: an in-memory database, the fastest;
/// - ``publishing(requiredApprovals:scanner:configure:)``: a database file as the server runs it (WAL,
///   `synchronous=FULL`), two approvals and a second reviewer; ``reopen(scanner:)`` is a restart on the same files;
/// - ``tiles(configure:)``: a database file and tile fetch options short enough for tests.
struct TestEnv {
    let app: TestApp
    let seed: TestApp.Seed
    /// Holds `data/` (the app's data folder) and `signatures/`.
    let folder: URL
    let setUp: SetUp

    enum SetUp { case media, publishing, tiles }

    var signatures: URL { folder.appendingPathComponent("signatures") }
    var database: AppDatabase { app.database }
    var config: AppConfig { app.config }
    var paths: DataPaths { app.dependencies.paths }
    var scans: ScanService { app.dependencies.scans }
    var builds: PackageBuildService { app.dependencies.builds }
    var dataFolder: URL { config.dataFolder }
    var databasePath: String { dataFolder.appendingPathComponent("trail.sqlite").path }
    var publicKey: String { app.dependencies.signingKey.publicKeyBase64 }

    enum Signatures { case eicar, none }

    // MARK: Set-ups

    /// - Parameters:
    ///   - signatures: `.eicar` writes the EICAR body signature; `.none` leaves the signature folder empty.
    ///   - engineMaxFileSize: the engine's file size limit (default: the upload limit, as the server sets it).
    ///   - scanner: a scanner of the test's own (e.g. clamd), given the signature folder, which is still written.
    static func media(
        signatures: Signatures = .eicar,
        engineMaxFileSize: Int64? = nil,
        scanner: ((URL) -> any MalwareScanner)? = nil,
        configure: (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestEnv {
        let folder = TestScratch.folder("trail-media")
        try writeSignatures(signatures, in: folder)
        return try await open(.media, folder: folder, engineMaxFileSize: engineMaxFileSize, scanner: scanner, configure: configure)
    }

    /// Site alpha requires `requiredApprovals` approvals, and `reviewer2@test.org` reviews there too.
    static func publishing(
        requiredApprovals: Int = 2,
        scanner: ((URL) -> any MalwareScanner)? = nil,
        terrain: TerrainSource = TerrainSource(),
        configure: (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestEnv {
        let folder = TestScratch.folder("trail-publish")
        try writeSignatures(.eicar, in: folder)
        let env = try await open(.publishing, folder: folder, scanner: scanner, terrain: terrain, configure: configure)
        try await env.setRequiredApprovals(requiredApprovals)
        try await env.addMember("reviewer2@test.org", role: .reviewer)
        return env
    }

    /// The seed's tour is framed N 44.43, S 44.36, E −121.97, W −122.28 (``frame``); the signatures are loaded.
    static func tiles(configure: (inout AppConfig) -> Void = { _ in }) async throws -> TestEnv {
        let folder = TestScratch.folder("trail-tiles")
        try writeSignatures(.eicar, in: folder)
        let env = try await open(.tiles, folder: folder, configure: configure)
        await env.scans.scanner.reloadIfChanged()
        return env
    }

    /// A fresh app (new database connections, new scanner, new build service) on the same files, with the set-up's
    /// settings but not the test's own `configure`: what a restart after a crash sees.
    func reopen(scanner: ((URL) -> any MalwareScanner)? = nil) async throws -> TestEnv {
        precondition(setUp != .media, "a media env's database is in memory: nothing to reopen")
        return try await Self.open(setUp, folder: folder, seed: seed, scanner: scanner)
    }

    private static func writeSignatures(_ signatures: Signatures, in folder: URL) throws {
        let signatureFolder = folder.appendingPathComponent("signatures")
        try FileManager.default.createDirectory(at: signatureFolder, withIntermediateDirectories: true)
        if signatures == .eicar { try EICAR.writeTestSignatures(to: signatureFolder) }
    }

    private static func open(
        _ setUp: SetUp,
        folder: URL,
        seed: TestApp.Seed? = nil,
        engineMaxFileSize: Int64? = nil,
        scanner: ((URL) -> any MalwareScanner)? = nil,
        terrain: TerrainSource = TerrainSource(),
        configure: (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestEnv {
        let signatures = folder.appendingPathComponent("signatures")
        let dataFolder = folder.appendingPathComponent("data")
        try DataFolder.prepare(dataFolder)
        let database =
            setUp != .media
            ? try AppDatabase.openFile(
                at: dataFolder.appendingPathComponent("trail.sqlite").path,
                migrationsFolder: projectRoot.appendingPathComponent("migrations"),
                terrain: terrain
            ) : nil
        var probe = AppConfig()
        configure(&probe)
        // The scanner's limit is the upload limit, as the server sets it, unless the test names another.
        let chosen: any MalwareScanner =
            scanner?(signatures)
            ?? ClamAVEngineScanner(
                configuration: ClamAVEngineConfiguration(
                    databaseDirectories: [signatures.path],
                    maxFileSize: engineMaxFileSize ?? probe.maxUploadSize,
                    maxConcurrentScans: 1
                )
            )
        let app = try await TestApp.make(database: database, scanner: chosen) { config in
            config.dataFolder = dataFolder
            config.clamavDatabaseFolders = [signatures.path]
            if setUp == .tiles { config.tileFetch = fastFetch() }
            configure(&config)
        }
        var chosenSeed = seed
        if chosenSeed == nil { chosenSeed = try await app.seed() }
        return TestEnv(app: app, seed: chosenSeed!, folder: folder, setUp: setUp)
    }

    // MARK: People

    @discardableResult
    func addMember(_ email: String, role: SiteRole, siteId: Int64? = nil) async throws -> Int64 {
        var user = try await database.user(email: email)
        if user == nil {
            user = try await database.createUser(
                email: email,
                displayName: email.components(separatedBy: "@")[0],
                password: TestApp.password,
                isAdmin: false,
                bcryptCost: 4,
                actor: .system
            )
        }
        try await database.setMembership(siteId: siteId ?? seed.alphaId, email: email, role: role, actor: .system)
        return user!.id
    }

    /// A new API token of the user.
    func token(_ email: String) async throws -> String {
        let user = try #require(try await database.user(email: email), "no user \(email)")
        return try await database.createAPIToken(userId: user.id, name: "test", actor: .system).token
    }

    func user(_ email: String) async throws -> AuthenticatedUser {
        AuthenticatedUser(try #require(try await database.user(email: email), "no user \(email)"))
    }

    func actor(_ email: String) async throws -> AuditActor { AuditActor(userId: try await user(email).id, ipAddress: "127.0.0.1") }

    func setRequiredApprovals(_ count: Int, siteId: Int64? = nil) async throws {
        try await sql("UPDATE site SET requiredApprovals = ? WHERE id = ?", [count, siteId ?? seed.alphaId])
    }

    /// One statement in its own write transaction.
    func sql(_ statement: String, _ arguments: StatementArguments = StatementArguments()) async throws {
        try await database.write { db in try db.execute(sql: statement, arguments: arguments) }
    }

    // MARK: Work queues

    /// Loads the signatures (as the scan service does at start) and scans every queued upload.
    @discardableResult
    func scanAll() async -> Int {
        await scans.scanner.reloadIfChanged()
        return await scans.drain()
    }

    /// Builds every queued publish request (what the build service does in the background).
    @discardableResult
    func buildAll() async -> Int { await builds.drain() }

    // MARK: Reading state

    func asset(_ id: Int64) async throws -> Asset { try #require(try await database.asset(id: id), "no asset \(id)") }

    func tour(_ id: Int64? = nil) async throws -> Tour {
        let id = id ?? seed.tourId
        return try #require(try await database.read { try Tour.fetchOne($0, id: id) })
    }

    func stagingFolder(_ requestId: String) -> URL { paths.staging.appendingPathComponent(requestId) }

    func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }
}

/// The Python helpers in `Scripts/` and Info-ZIP, the independent readers of what the server writes, through the
/// tests' one child-process runner.
enum TestScripts {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts")

    /// `python3 Scripts/<name> arguments…`, with `input` on standard input.
    static func python(
        _ name: String,
        _ arguments: [String],
        input: Data? = nil,
        timeout: Duration = .seconds(120)
    ) async throws
        -> ChildProcess.Output
    {
        try await ChildProcess.run("python3", [folder.appendingPathComponent(name).path] + arguments, input: input, timeout: timeout)
    }

    /// `unzip -t -qq <zip>`: Info-ZIP tests every entry's CRC.
    static func unzipTest(_ zip: URL) async throws -> ChildProcess.Output {
        try await ChildProcess.run("/usr/bin/unzip", ["-t", "-qq", zip.path])
    }
}
