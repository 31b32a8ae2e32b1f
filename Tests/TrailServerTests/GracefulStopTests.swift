import Foundation
import GRDB
import MalwareScan
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// SIGTERM to the real `serve` process while a package builds and two tus uploads are half-way: the server stops
/// accepting, lets the running PATCH that keeps sending finish, and exits; after a restart the cut upload resumes from
/// what was stored and the build, left to recovery, completes.
@Suite struct GracefulStopTests {
    static let binary = projectRoot.appendingPathComponent(".build/debug/trail-companion")
    static let script = projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/tus_paused_patch.py")

    /// The paused PATCH script as a child process; `sent` once its first half is on the wire.
    final class PausedPatch: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        init(port: Int, path: String, token: String, file: URL, half: Int, mode: String, go: URL) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", GracefulStopTests.script.path, "\(port)", path, token, file.path, "\(half)", mode, go.path]
            process.standardOutput = output
            try process.run()
        }
        /// Waits until "sent" (the script prints nothing else before it), reading on a Dispatch thread so no thread of
        /// the tests' cooperative pool is held.
        func waitUntilSent() async -> Bool {
            let handle = output.fileHandleForReading
            let line = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: String(decoding: handle.readData(ofLength: 5), as: UTF8.self)) }
            }
            return line == "sent\n"
        }
        func status() async -> Int {
            while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let json = try? JSONSerialization.jsonObject(with: Data(rest.utf8)) as? [String: Any]
            return json?["status"] as? Int ?? -1
        }
    }

    static func curl(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run("/usr/bin/curl", ["-sS", "-m", "60"] + arguments, timeout: .seconds(90))
    }

    static func header(_ name: String, in output: String) -> String? {
        output.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    @Test(
        "SIGTERM during a build and two tus PATCHes: the finishing PATCH completes, the server exits, the cut upload and the build resume after a restart",
        .enabled(if: FileManager.default.isExecutableFile(atPath: binary.path), "needs .build/debug/trail-companion (swift build --build-tests)"),
        .timeLimit(.minutes(10))
    )
    func sigtermDrainsAndResumes() async throws {
        let folder = URL(fileURLWithPath: "/tmp/trail-sigterm-\(UUID().uuidString.prefix(8))")
        let data = folder.appendingPathComponent("data")
        let signatures = folder.appendingPathComponent("signatures")
        try EICAR.writeTestSignatures(to: signatures)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = TrailServerProcess(binary: Self.binary, data: data, signatures: signatures, log: folder.appendingPathComponent("server.log"))
        defer { server.killNow() }
        let password = "correct horse battery staple"
        for arguments in [
            ["user", "create", "--email", "author@stop.test", "--name", "Author", "--password", password],
            ["site", "create", "--slug", "park", "--name", "Stop Park", "--required-approvals", "1"],
            ["member", "add", "--site", "park", "--email", "author@stop.test", "--role", "author"],
        ] {
            let output = try await server.cli(arguments)
            try #require(output.status == 0, "\(arguments): \(output.stdout) \(output.stderr)")
        }
        let author = try await server.token("author@stop.test")
        try await server.start()
        let (tourId, waypointId) = try await server.tourWithWaypoint(token: author, name: "Stop Walk")

        // A package big enough that its build is still running when the signal comes.
        let video = folder.appendingPathComponent("walk.mp4")
        // Written by a child process: the tests' cooperative threads never wait on a big write.
        let written = try await ChildProcess.run(
            "/bin/sh",
            ["-c", #"{ printf '\000\000\000\030ftypmp42\000\000\000\000mp42isom'; head -c 62914536 /dev/urandom; } > "$0""#, video.path]
        )
        try #require(written.status == 0, "\(written.stderr)")
        let upload = try await server.upload(video, to: "/api/v1/manage/tours/\(tourId)/waypoints/\(waypointId)/assets", token: author)
        let assetId = try #require(publishInt(upload.json["id"]), "\(upload.text)")
        let scanned = try await server.poll(timeout: .seconds(300)) {
            let status = try await server.call("GET", "/api/v1/manage/assets/\(assetId)", token: author).json["scanStatus"] as? String
            return status == "pending" ? nil : status
        }
        try #require(scanned == "clean")
        try await server.attachCaptions(to: assetId, token: author)

        // Two tus uploads of 6 MB to another tour (the one under review is locked), each paused after 3 MB.
        let (otherTourId, otherWaypointId) = try await server.tourWithWaypoint(token: author, name: "Next Walk")
        var files: [URL] = []
        var locations: [String] = []
        for name in ["finish", "cut"] {
            let file = folder.appendingPathComponent("\(name).png")
            try MediaFixtures.png(size: 6 << 20, seed: name == "finish" ? 5 : 6).write(to: file)
            files.append(file)
            let metadata = TestClientTus.metadata(tour: Int64(otherTourId), waypoint: Int64(otherWaypointId), fileName: "\(name).png")
            let created = try await Self.curl([
                "-i", "-X", "POST", "-H", "Authorization: Bearer \(author)", "-H", "Tus-Resumable: 1.0.0",
                "-H", "Upload-Length: \(6 << 20)", "-H", "Upload-Metadata: \(metadata)",
                "http://127.0.0.1:\(server.port)/api/v1/manage/uploads",
            ])
            locations.append(try #require(Self.header("Location", in: created.stdout), "\(created.stdout)"))
        }
        let go = folder.appendingPathComponent("go")
        let finishing = try PausedPatch(port: server.port, path: locations[0], token: author, file: files[0], half: 3 << 20, mode: "finish", go: go)
        let cut = try PausedPatch(port: server.port, path: locations[1], token: author, file: files[1], half: 3 << 20, mode: "cut", go: go)
        let finishingSent = await finishing.waitUntilSent()
        let cutSent = await cut.waitUntilSent()
        #expect(finishingSent && cutSent)

        let submit = try await server.call("POST", "/api/v1/manage/tours/\(tourId)/publish", token: author)
        let requestId = try #require(submit.json["requestId"] as? String, "\(submit.text)")
        let staging = data.appendingPathComponent("staging/\(requestId)")
        let building = try await server.poll(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: staging.path) ? true : nil }
        #expect(building == true, "the build started")

        // The signal; then the finishing client sends its second half, the other one hangs up.
        let signalled = ContinuousClock.now
        server.terminate()
        _ = FileManager.default.createFile(atPath: go.path, contents: nil)
        let finished = await finishing.status()
        #expect(finished == 204, "the running PATCH finished during the drain: \(finished)\n\(server.logText)")
        #expect(await cut.status() == 0)
        await server.waitForExit()
        let stopped = ContinuousClock.now - signalled
        #expect(stopped < .seconds(35), "the stop took \(stopped): more than the 30 s drain")
        #expect(server.logText.contains("Trail Companion is running"))

        // Restart: the cut upload goes on from what was stored; the build, left to recovery, completes.
        try await server.start()
        let head = try await Self.curl([
            "-I", "-H", "Authorization: Bearer \(author)", "-H", "Tus-Resumable: 1.0.0",
            "http://127.0.0.1:\(server.port)\(locations[1])",
        ])
        let stored = try #require(Self.header("Upload-Offset", in: head.stdout).flatMap { Int($0) }, "\(head.stdout)")
        #expect(stored > 0 && stored <= 3 << 20, "stored \(stored) of the 3 MiB sent")
        let rest = folder.appendingPathComponent("rest.bin")
        try Data(contentsOf: files[1]).dropFirst(stored).write(to: rest)
        let resumed = try await Self.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-X", "PATCH", "-H", "Authorization: Bearer \(author)",
            "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Offset: \(stored)",
            "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "@\(rest.path)",
            "http://127.0.0.1:\(server.port)\(locations[1])",
        ])
        #expect(resumed.stdout == "204", "\(resumed.stdout) \(resumed.stderr) after HEAD \(head.stdout)\n\(server.logText)")
        let built = try await server.poll(timeout: .seconds(300)) { () -> String? in
            let state = try await server.call("GET", "/api/v1/manage/publish-requests/\(requestId)", token: author).json["state"] as? String
            return state == "building" ? nil : state
        }
        #expect(built == "pending", "after the restart the request is \(built ?? "still building")")
        await server.stop()

        let database = try DatabaseQueue(path: data.appendingPathComponent("trail.sqlite").path)
        let hashes = try await database.read { try String.fetchAll($0, sql: "SELECT sha256 FROM asset") }
        for file in files {
            #expect(hashes.contains(try PackageHashing.sha256(ofFileAt: file).0), "\(file.lastPathComponent) arrived whole")
        }
    }

    @Test(
        "signatures installed after the start are picked up without a restart: the waiting upload is scanned clean and /readyz turns ready",
        .enabled(if: FileManager.default.isExecutableFile(atPath: binary.path), "needs .build/debug/trail-companion (swift build --build-tests)"),
        .timeLimit(.minutes(5))
    )
    func signaturesArrivingLaterArePickedUp() async throws {
        let folder = URL(fileURLWithPath: "/tmp/trail-signatures-\(UUID().uuidString.prefix(8))")
        let data = folder.appendingPathComponent("data")
        let signatures = folder.appendingPathComponent("signatures")
        try FileManager.default.createDirectory(at: signatures, withIntermediateDirectories: true)  // empty: a fresh machine
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = TrailServerProcess(binary: Self.binary, data: data, signatures: signatures, log: folder.appendingPathComponent("server.log"))
        server.serveArguments = ["--min-free-space", "0"]
        defer { server.killNow() }
        for arguments in [
            ["user", "create", "--email", "author@sig.test", "--name", "Author", "--password", "correct horse battery staple"],
            ["site", "create", "--slug", "park", "--name", "Signature Park"],
            ["member", "add", "--site", "park", "--email", "author@sig.test", "--role", "author"],
        ] {
            let output = try await server.cli(arguments)
            try #require(output.status == 0, "\(arguments): \(output.stdout) \(output.stderr)")
        }
        let author = try await server.token("author@sig.test")
        try await server.start()
        let (tourId, waypointId) = try await server.tourWithWaypoint(token: author, name: "Walk")
        let image = folder.appendingPathComponent("view.png")
        try MediaFixtures.png(size: 30_000).write(to: image)
        let upload = try await Self.curl([
            "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(author)", "-F", "file=@\(image.path);type=image/png",
            "http://127.0.0.1:\(server.port)/api/v1/manage/tours/\(tourId)/waypoints/\(waypointId)/assets",
        ])
        let body = upload.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let assetId = try #require(
            publishInt((try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"]),
            "\(upload.stdout)"
        )

        let notReady = try await server.call("GET", "/readyz", token: nil)
        #expect(notReady.status == 503 && notReady.text.contains("no malware signature database"), "\(notReady.text)")
        let status = { try await server.call("GET", "/api/v1/manage/assets/\(assetId)", token: author).json["scanStatus"] as? String }
        #expect(try await status() == "pending", "never marked clean without a scan")

        // freshclam's first download lands (here: the test signature); the server's watch finds it.
        try EICAR.writeTestSignatures(to: signatures)
        let scanned = try await server.poll(timeout: .seconds(120)) { () -> String? in
            let value = try await status()
            return value == "pending" ? nil : value
        }
        #expect(scanned == "clean", "\(server.logText)")
        let ready = try await server.call("GET", "/readyz", token: nil)
        #expect(ready.status == 200, "\(ready.text)")
        await server.stop()
    }
}

extension TrailServerProcess {
    /// Through the management API: a tour of site "park" with a frame and one waypoint; their ids.
    func tourWithWaypoint(token: String, name: String) async throws -> (tourId: Int, waypointId: Int) {
        let tour = try await call("POST", "/api/v1/manage/tours", token: token, json: #"{"site":"park","name":"\#(name)","description":""}"#)
        let tourId = try #require(publishInt(tour.json["id"]), "\(tour.text)")
        let frame = try await call(
            "PATCH",
            "/api/v1/manage/tours/\(tourId)",
            token: token,
            json: #"{"frame":{"north":44.43,"south":44.36,"east":-121.97,"west":-122.28},"minZoom":11,"maxZoom":12}"#
        )
        try #require(frame.status == 200, "frame: \(frame.text)")
        let waypoint = try await call(
            "POST",
            "/api/v1/manage/tours/\(tourId)/waypoints",
            token: token,
            json: #"{"name":"Fish Lake","latitude":44.40,"longitude":-122.0,"description":""}"#
        )
        return (tourId, try #require(publishInt(waypoint.json["id"]), "\(waypoint.text)"))
    }
}
