import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

#if canImport(Glibc)
import Glibc
#endif

/// Crash safety: what a restart finds after a crash, in-process (a fresh app on the same database file and data folder)
/// and for real (`kill -9` of the server binary in the middle of a build).
@Suite("Publishing: crash safety and recovery", .scratch)
struct PublishingRecoveryTests {
    /// Every packageVersion row names a zip that is there.
    static func expectEveryVersionHasItsZip(_ database: AppDatabase, paths: DataPaths, sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        let rows = try await database.read { try PackageVersion.fetchAll($0) }
        for row in rows {
            #expect(
                FileManager.default.fileExists(atPath: paths.absolute(row.storedPath).path),
                "\(row.storedPath) is missing",
                sourceLocation: sourceLocation
            )
        }
    }

    @Test("A request left `building` by a crash (half-written staging folder, an attempt counted) is rebuilt on the next start and ends pending")
    func stuckBuildIsRebuilt() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in try await env.addCleanMedia(client, token: try env.token("author@test.org")) }
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        // Times are stored as seconds, as every reader expects (a submission once wrote them as text).
        let types = try await env.app.database.rows(
            "SELECT typeof(tour.updatedAt) AS tour, typeof(buildJob.queuedAt) AS job FROM tour, buildJob WHERE tour.id = ? AND buildJob.requestId = ?",
            [env.seed.tourId, request.id]
        )
        #expect(types.map { [$0["tour"] as String, $0["job"] as String] } == [["real", "real"]])
        // The crash: the builder had started (one attempt), copied a file, and was writing the zip.
        try await env.sql("UPDATE buildJob SET attempts = 1 WHERE requestId = ?", [request.id])
        try await env.sql("UPDATE publishRequest SET filesDone = 1, bytesDone = 40000 WHERE id = ?", [request.id])
        let files = env.stagingFolder(request.id).appendingPathComponent("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try Data("half a file".utf8).write(to: files.appendingPathComponent(String(repeating: "0", count: 64)))
        try Data("PK\u{3}\u{4} half a zip".utf8).write(to: env.stagingFolder(request.id).appendingPathComponent("package.zip.partial"))

        // The restart: a fresh app on the same files, recovery, then the build service.
        let restarted = try await env.reopen()
        let report = try await PublishingRecovery.run(database: restarted.database, paths: restarted.paths)
        #expect(report.staleStagingFolders == 0, "the staging folder of an open request was removed: \(report)")
        await #expect(try restarted.request(request.id).state == .building)
        #expect(try await restarted.database.queuedBuilds().map(\.id) == [request.id])
        #expect(await restarted.buildAll() == 1)
        let rebuilt = try await restarted.request(request.id)
        #expect(rebuilt.state == .pending, "\(rebuilt.state) \(rebuilt.failureReason ?? "")")
        #expect(rebuilt.filesDone == rebuilt.filesTotal && rebuilt.filesTotal == 4, "three files and the video's captions")
        #expect(!restarted.exists(restarted.stagingFolder(request.id).appendingPathComponent("package.zip.partial")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: files.path).count == 4, "the half-copied file was kept")
        try await expectPackageMatchesManifest(restarted.stagedZip(request.id))
        #expect(PackageVerifier.verify(zipAt: restarted.stagedZip(request.id), publicKeyBase64: restarted.publicKey).isValid)
        #expect(restarted.publicKey == env.publicKey, "the signing key changed across the restart")
    }

    @Test("A build interrupted three times is marked failed, with the reason, and the tour is editable again")
    func tooManyInterruptionsFail() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        try await env.sql("UPDATE buildJob SET attempts = 3 WHERE requestId = ?", [request.id])
        let restarted = try await env.reopen()
        try await PublishingRecovery.run(database: restarted.database, paths: restarted.paths)
        #expect(await restarted.buildAll() == 1)
        let failed = try await restarted.request(request.id)
        #expect(failed.state == .failed)
        #expect(failed.failureReason?.contains("interrupted 3 times") == true, "\(failed.failureReason ?? "")")
        await #expect(try restarted.tour().state == .draft)
        #expect(!restarted.exists(restarted.stagingFolder(request.id)))
    }

    @Test("Recovery removes staging folders of closed requests and zips without a version row, and keeps what rows point at")
    func recoveryRemovesOrphans() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in try await env.addCleanMedia(client, token: author) }
        // Version 1, released through the API.
        let released = try await env.readyRequest(approvers: ["reviewer@test.org"])
        try await env.app.test { client in
            let push = try await client.publishAction(released.id, "push", token: author)
            #expect(push.status == .ok, "\(push.text)")
        }
        let packageId = released.packageId
        // A denied request whose staging folder was left behind (denied straight in the database, so nothing removed it),
        // a stray folder, a zip for a version that has no row, and a folder of a package that does not exist.
        let denied = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        #expect(await env.buildAll() == 1)
        try await env.database.deny(requestId: denied.id, reviewer: try env.user("reviewer@test.org"), comment: "No.", actor: .system)
        #expect(env.exists(env.stagedZip(denied.id)))
        try FileManager.default.createDirectory(at: env.paths.staging.appendingPathComponent("not-a-request"), withIntermediateDirectories: true)
        try Data("orphan".utf8).write(to: env.packageZip(packageId, version: 2))
        try FileManager.default.createDirectory(at: env.paths.packages.appendingPathComponent("ghost"), withIntermediateDirectories: true)
        try Data("ghost".utf8).write(to: env.paths.packages.appendingPathComponent("ghost/1.zip"))
        // And an open request, whose staging folder must stay.
        let open = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        #expect(await env.buildAll() == 1)

        let restarted = try await env.reopen()
        let report = try await PublishingRecovery.run(database: restarted.database, paths: restarted.paths)
        #expect(report.staleStagingFolders == 2, "\(report)")
        #expect(report.orphanZips == 2, "\(report)")
        #expect(report.lostBuilds == 0, "\(report)")
        #expect(!restarted.exists(restarted.stagingFolder(denied.id)))
        #expect(!restarted.exists(restarted.paths.staging.appendingPathComponent("not-a-request")))
        #expect(!restarted.exists(restarted.packageZip(packageId, version: 2)))
        #expect(!restarted.exists(restarted.paths.packages.appendingPathComponent("ghost/1.zip")))
        #expect(restarted.exists(restarted.packageZip(packageId, version: 1)), "recovery removed a released zip")
        #expect(restarted.exists(restarted.stagedZip(open.id)), "recovery removed an open request's package")
        try await Self.expectEveryVersionHasItsZip(restarted.database, paths: restarted.paths)
        // A second run finds nothing more.
        await #expect(try PublishingRecovery.run(database: restarted.database, paths: restarted.paths) == PublishingRecovery.Report())
    }

    @Test("A crash between the release's file move and its commit: the stray zip goes, the request is rebuilt (same bytes) and is ready again")
    func crashDuringPush() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let author = try await env.token("author@test.org")
        try await env.app.test { client in try await env.addCleanMedia(client, token: author) }
        let ready = try await env.readyRequest()
        #expect(ready.state == .ready)
        // `push` renames the staged zip into packages/ inside its transaction; the crash comes before the commit.
        let target = env.packageZip(ready.packageId, version: 1)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(rename(env.stagedZip(ready.id).path, target.path) == 0)

        let restarted = try await env.reopen()
        let report = try await PublishingRecovery.run(database: restarted.database, paths: restarted.paths)
        #expect(report.orphanZips == 1 && report.lostBuilds == 1, "\(report)")
        #expect(!restarted.exists(target))
        await #expect(try restarted.request(ready.id).state == .building)
        #expect(await restarted.buildAll() == 1)
        let rebuilt = try await restarted.request(ready.id)
        #expect(rebuilt.zipSha256 == ready.zipSha256, "the rebuild changed the bytes the reviewers approved")
        #expect(rebuilt.state == .ready, "the approved request came back \(rebuilt.state) after the rebuild")
        try await restarted.app.test { client in
            let push = try await client.publishAction(ready.id, "push", token: author)
            #expect(push.status == .ok, "\(push.text)")
        }
        #expect(restarted.exists(target))
        #expect(try PackageHashing.sha256(ofFileAt: target).0 == ready.zipSha256)
        try await Self.expectEveryVersionHasItsZip(restarted.database, paths: restarted.paths)
    }

    // MARK: kill -9 of the real server

    static let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion")

    @Test(
        "kill -9 of the server binary while it builds a 200 MB package, then a restart: the request ends pending (rebuilt) or failed, never stuck building",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: binary.path),
            "needs .build/debug/trail-companion (scripts/test.sh builds it with swift build --build-tests)"
        ),
        .timeLimit(.minutes(10))
    )
    func killDuringBuild() async throws {
        let folder = URL(fileURLWithPath: "/tmp/trail-kill-\(UUID().uuidString.prefix(8))")
        let data = folder.appendingPathComponent("data")
        let signatures = folder.appendingPathComponent("signatures")
        try EICAR.writeTestSignatures(to: signatures)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = TrailServerProcess(binary: Self.binary, data: data, signatures: signatures, log: folder.appendingPathComponent("server.log"))
        defer { server.killNow() }

        // Users, site and tokens with the CLI.
        let password = "correct horse battery staple"
        for arguments in [
            ["user", "create", "--email", "author@kill.test", "--name", "Author", "--password", password],
            ["user", "create", "--email", "reviewer@kill.test", "--name", "Reviewer", "--password", password],
            ["site", "create", "--slug", "park", "--name", "Crash Park", "--required-approvals", "1"],
            ["member", "add", "--site", "park", "--email", "author@kill.test", "--role", "author"],
            ["member", "add", "--site", "park", "--email", "reviewer@kill.test", "--role", "reviewer"],
        ] {
            let output = try await server.cli(arguments)
            try #require(output.status == 0, "trail-companion \(arguments.joined(separator: " ")): \(output.stdout) \(output.stderr)")
        }
        let author = try await server.token("author@kill.test")
        let reviewer = try await server.token("reviewer@kill.test")

        try await server.start()
        let tour = try await server.call(
            "POST",
            "/api/v1/manage/tours",
            token: author,
            json: #"{"site":"park","name":"Crash Walk","description":"Killed and restarted."}"#
        )
        try #require(tour.status == 201, "create tour: \(tour.status) \(tour.text)")
        let tourId = try #require(publishInt(tour.json["id"]))
        let frame = try await server.call(
            "PATCH",
            "/api/v1/manage/tours/\(tourId)",
            token: author,
            json: #"{"frame":{"north":44.43,"south":44.36,"east":-121.97,"west":-122.28},"minZoom":11,"maxZoom":12}"#
        )
        try #require(frame.status == 200, "frame: \(frame.status) \(frame.text)")
        let waypoint = try await server.call(
            "POST",
            "/api/v1/manage/tours/\(tourId)/waypoints",
            token: author,
            json: #"{"name":"Fish Lake","latitude":44.40,"longitude":-122.0,"description":""}"#
        )
        try #require(waypoint.status == 201, "waypoint: \(waypoint.status) \(waypoint.text)")
        let waypointId = try #require(publishInt(waypoint.json["id"]))

        // 200 MB of random bytes behind an MP4 header.
        let video = folder.appendingPathComponent("big.mp4")
        try Self.writeRandomMP4(to: video, size: 200 << 20)
        let upload = try await server.upload(video, to: "/api/v1/manage/tours/\(tourId)/waypoints/\(waypointId)/assets", token: author)
        try #require(upload.status == 201, "upload: \(upload.status) \(upload.text)")
        let assetId = try #require(publishInt(upload.json["id"]))
        let scanned = try await server.poll(timeout: .seconds(300)) {
            let asset = try await server.call("GET", "/api/v1/manage/assets/\(assetId)", token: author)
            let status = asset.json["scanStatus"] as? String
            return status == "pending" ? nil : status
        }
        try #require(scanned == "clean", "the upload was scanned \(scanned ?? "never")")
        try await server.attachCaptions(to: assetId, token: author)

        // Submit, and kill -9 while the zip is being written. The killer is its own process polling every millisecond,
        // started before the submit: a task of this (busy, parallel) test process could be scheduled too late.
        let killer = try server.killWhenPresent(pattern: "staging/*/package.zip.partial")
        let submit = try await server.call("POST", "/api/v1/manage/tours/\(tourId)/publish", token: author)
        try #require(submit.status == 202, "submit: \(submit.status) \(submit.text)")
        let rid = try #require(submit.json["requestId"] as? String)
        let staging = data.appendingPathComponent("staging/\(rid)")
        let partial = staging.appendingPathComponent("package.zip.partial")
        let killed = await killer.value
        await server.waitForExit()
        try #require(killed, "the killer never saw the partial zip")
        print("kill -9 while writing the zip")
        let atCrash = try Self.readState(data, requestId: rid)
        #expect(atCrash.state == "building", "the build finished before the kill (\(atCrash.state)): make the file larger")

        // Restart: recovery, then the build service picks the job up again.
        try await server.start()
        let final = try await server.poll(timeout: .seconds(300)) {
            let state = try await server.call("GET", "/api/v1/manage/publish-requests/\(rid)", token: author).json["state"] as? String
            return state == "building" ? nil : state
        }
        #expect(final == "pending" || final == "failed", "after the restart the request is \(final ?? "still building")")
        print("after the restart the request ended \(final ?? "still building")")
        let restarted = try Self.readState(data, requestId: rid)
        #expect(restarted.state != "building")
        #expect(!FileManager.default.fileExists(atPath: partial.path), "the partial zip survived the rebuild")
        if final == "pending" {
            let zip = staging.appendingPathComponent("package.zip")
            let key = try SigningKey.load(at: data.appendingPathComponent("keys/signing.ed25519"))
            let report = PackageVerifier.verify(zipAt: zip, publicKeyBase64: key.publicKeyBase64)
            #expect(report.isValid, "\(report.problems)")
            #expect(try PackageHashing.sha256(ofFileAt: zip).0 == restarted.zipSha256)

            // Release it, then kill -9 straight after the release and restart: the released zip is there.
            let approve = try await server.call("POST", "/api/v1/manage/publish-requests/\(rid)/approve", token: reviewer)
            #expect(approve.status == 200, "\(approve.text)")
            let push = try await server.call("POST", "/api/v1/manage/publish-requests/\(rid)/push", token: author)
            #expect(push.status == 200, "\(push.text)")
            server.killNow()
            await server.waitForExit()
            try await server.start()
            let health = try await server.call("GET", "/healthz", token: nil)
            #expect(health.status == 200)
        } else {
            print("the rebuild failed: \(restarted.failureReason ?? "")")
            #expect(restarted.failureReason?.isEmpty == false)
        }
        await server.stop()
        // No row points at a missing zip, and nothing is left half-built.
        let versions = try Self.readVersions(data)
        if final == "pending" { #expect(versions.count == 1) }
        for path in versions {
            #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent(path).path), "\(path) is missing")
        }
        let building = try Self.readState(data, requestId: rid)
        #expect(building.state != "building")
    }

    static func writeRandomMP4(to url: URL, size: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let output = try FileHandle(forWritingTo: url)
        defer { try? output.close() }
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        defer { try? random.close() }
        let header = Data([0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8))
        try output.write(contentsOf: header)
        var remaining = size - header.count
        while remaining > 0 {
            let chunk = try random.read(upToCount: min(remaining, 8 << 20)) ?? Data()
            try #require(!chunk.isEmpty)
            try output.write(contentsOf: chunk)
            remaining -= chunk.count
        }
    }

    struct RequestRow {
        let state: String
        let zipSha256: String?
        let failureReason: String?
    }

    /// Reads the database file directly (the server is not running).
    static func readState(_ data: URL, requestId: String) throws -> RequestRow {
        let queue = try DatabaseQueue(path: data.appendingPathComponent("trail.sqlite").path)
        return try queue.read { db in
            let row = try #require(
                try Row.fetchOne(db, sql: "SELECT state, zipSha256, failureReason FROM publishRequest WHERE id = ?", arguments: [requestId])
            )
            return RequestRow(state: row["state"], zipSha256: row["zipSha256"], failureReason: row["failureReason"])
        }
    }

    static func readVersions(_ data: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: data.appendingPathComponent("trail.sqlite").path)
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT 'packages/' || packageId || '/' || version || '.zip' FROM packageVersion")
        }
    }
}

/// The real server binary as a child process of the test, and its CLI; HTTP through curl.
final class TrailServerProcess: @unchecked Sendable {
    let binary: URL
    let data: URL
    let signatures: URL
    let log: URL
    private(set) var port = 0
    private var process: Process?
    /// The running server's process id (for `/proc/<pid>/status`); nil when it is not running.
    var pid: pid_t? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    init(binary: URL, data: URL, signatures: URL, log: URL) {
        self.binary = binary
        self.data = data
        self.signatures = signatures
        self.log = log
    }

    var locationArguments: [String] { ["--root", projectRoot.path, "--data", data.path] }
    /// More `serve` flags for the next `start()`.
    var serveArguments: [String] = []
    /// Variables added to the test process's environment for the next `start()` (the bucket's keys, say).
    var environment: [String: String] = [:]

    func cli(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run(binary.path, arguments + locationArguments, timeout: .seconds(60))
    }

    func token(_ email: String) async throws -> String {
        let output = try await cli(["token", "create", "--email", email])
        try #require(output.status == 0, "token create: \(output.stderr)")
        let token = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? ""
        try #require(!token.isEmpty)
        return token
    }

    /// Starts `serve` on a free port and waits for `/healthz`.
    func start() async throws {
        port = Int(try freeLocalPort())
        let process = Process()
        process.executableURL = binary
        // No phone-sized copies: these servers get random bytes behind media headers, which no converter reads.
        process.arguments =
            ["serve", "--port", "\(port)", "--clamav-db", signatures.path, "--no-optimize-media"] + locationArguments + serveArguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        try handle.seekToEnd()
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let healthy = try await poll(timeout: .seconds(60)) { () -> Bool? in
            guard process.isRunning else { return false }
            return try await self.call("GET", "/healthz", token: nil).status == 200 ? true : nil
        }
        try #require(healthy == true, "the server did not start:\n\(logText)")
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// A separate process that sends SIGKILL to the server as soon as a file matching `pattern` (a glob in the data
    /// folder) exists; true when it did, false after two minutes without.
    func killWhenPresent(pattern: String) throws -> Task<Bool, Never> {
        guard let process, process.isRunning else { throw MediaTestError("the server is not running") }
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        watcher.arguments = [
            "python3", "-c",
            """
            import glob, os, signal, sys, time
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if glob.glob(os.path.join(sys.argv[1], sys.argv[2])):
                    os.kill(int(sys.argv[3]), signal.SIGKILL)
                    sys.exit(0)
                time.sleep(0.001)
            sys.exit(1)
            """, data.path, pattern, "\(process.processIdentifier)",
        ]
        try watcher.run()
        return Task {
            while watcher.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            return watcher.terminationStatus == 0
        }
    }

    /// SIGKILL, no clean-up: the crash.
    func killNow() {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    func waitForExit() async {
        while process?.isRunning == true { try? await Task.sleep(for: .milliseconds(20)) }
        process = nil
    }

    /// SIGTERM only: what systemd's stop sends; `waitForExit()` waits for the drain.
    func terminate() {
        if let process, process.isRunning { kill(process.processIdentifier, SIGTERM) }
    }

    /// SIGTERM (graceful shutdown), SIGKILL after 15 s.
    func stop() async {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(15)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        killNow()
        await waitForExit()
    }

    struct Answer {
        let status: Int
        let text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
    }

    func call(_ method: String, _ path: String, token: String?, json: String? = nil) async throws -> Answer {
        var arguments = ["-sS", "-m", "60", "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let json { arguments += ["-H", "Content-Type: application/json", "--data-binary", json] }
        return try await curl(arguments + ["http://127.0.0.1:\(port)\(path)"])
    }

    func upload(_ file: URL, to path: String, token: String) async throws -> Answer {
        try await curl([
            "-sS", "-m", "600", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)",
            "-F", "file=@\(file.path);type=video/mp4;filename=big walk.mp4", "http://127.0.0.1:\(port)\(path)",
        ])
    }

    /// Short WebVTT captions on a video, waited for until the scanner finds them clean: sites require captions on
    /// every video before a submission (the default).
    func attachCaptions(to assetId: Int, token: String) async throws {
        let file = data.deletingLastPathComponent().appendingPathComponent("captions-\(assetId).vtt")
        try PublishFixtures.captions.write(to: file)
        let added = try await curl([
            "-sS", "-m", "60", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)",
            "-F", "file=@\(file.path);type=text/vtt;filename=captions.vtt",
            "http://127.0.0.1:\(port)/api/v1/manage/assets/\(assetId)/captions",
        ])
        try #require(added.status == 201, "captions: \(added.status) \(added.text)")
        let captionsId = try #require(publishInt(added.json["id"]))
        let scanned = try await poll(timeout: .seconds(300)) {
            let status = try await call("GET", "/api/v1/manage/assets/\(captionsId)", token: token).json["scanStatus"] as? String
            return status == "pending" ? nil : status
        }
        try #require(scanned == "clean", "the captions were scanned \(scanned ?? "never")")
    }

    private func curl(_ arguments: [String]) async throws -> Answer {
        let output = try await ChildProcess.run("/usr/bin/curl", arguments, timeout: .seconds(660))
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = lines.last.flatMap { Int($0) } ?? 0
        return Answer(status: output.status == 0 ? status : 0, text: lines.dropLast().joined(separator: "\n"))
    }

    /// Calls `check` every 100 ms until it returns a value or `timeout` passes.
    func poll<T>(timeout: Duration, _ check: () async throws -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await check() { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    deinit { killNow() }
}
