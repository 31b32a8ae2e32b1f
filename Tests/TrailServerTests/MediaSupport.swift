import Crypto
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

/// What the media tests ask of the app harness.
extension TestEnv {
    var assetsURI: String { "/api/v1/manage/tours/\(seed.tourId)/waypoints/\(seed.waypointId)/assets" }
    var panelAssetsURI: String { "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)/assets" }
    var waypointPage: String { "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)" }

    /// File names in `data/<folder>` (uploads, assets, quarantine), sorted.
    func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataFolder.appendingPathComponent(folder).path)) ?? []).sorted()
    }

    /// Every file below the data folder, as paths relative to it.
    func allFiles() -> [String] {
        let root = dataFolder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(relative)
            }
        }
        return found.sorted()
    }

    func contents(_ relative: String) throws -> Data { try Data(contentsOf: paths.absolute(relative)) }
}

// MARK: Files to upload

enum MediaFixtures {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Bytes that start like a PNG (the detector looks at magic numbers only), `size` long.
    static func png(size: Int, seed: UInt64 = 1) -> Data {
        var bytes = pngSignature + [0, 0, 0, 13] + Array("IHDR".utf8)
        bytes += fillerBytes(count: size - bytes.count, seed: seed)
        return Data(bytes)
    }

    /// An ISO base media file (`ftyp` box, brand `isom`): MP4 video.
    static func mp4(size: Int = 4096, seed: UInt64 = 2) -> Data {
        var bytes: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        bytes += [0, 0, 0, 8] + Array("free".utf8)
        bytes += fillerBytes(count: size - bytes.count, seed: seed)
        return Data(bytes)
    }

    /// A PNG-looking file of `size` bytes whose last bytes are the EICAR test string.
    static func pngEndingWithEICAR(size: Int) -> Data {
        var data = png(size: size - eicar.count, seed: 7)
        data.append(eicar)
        return data
    }

    static var eicar: Data { Data(EICAR.testFileBody.utf8) }
    static func text(_ line: String = "Fish Lake trailhead: 1.2 miles to the lava flow overlook.") -> Data { Data((line + "\n").utf8) }
    static let html = Data("<!DOCTYPE html>\n<html><body><script>alert(document.cookie)</script></body></html>\n".utf8)
    static let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="4"/></svg>"#.utf8)

    /// Worked out with swift-crypto here, not with the server's own helper, so a test checks the server's figure.
    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
    static func sha256(fileAt url: URL) throws -> String { sha256(try Data(contentsOf: url)) }
}

// MARK: multipart/form-data bodies

enum MediaMultipart {
    struct Part {
        var headers: [String]
        var body: Data
    }

    static func file(_ data: Data, fileName: String, contentType: String = "application/octet-stream", field: String = "file") -> Part {
        Part(headers: ["Content-Disposition: form-data; name=\"\(field)\"; filename=\"\(fileName)\"", "Content-Type: \(contentType)"], body: data)
    }

    static func field(_ name: String, _ value: String) -> Part {
        Part(headers: ["Content-Disposition: form-data; name=\"\(name)\""], body: Data(value.utf8))
    }

    static func encode(_ parts: [Part], boundary: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        for part in parts {
            buffer.writeString("--\(boundary)\r\n")
            for header in part.headers { buffer.writeString(header + "\r\n") }
            buffer.writeString("\r\n")
            buffer.writeBytes(part.body)
            buffer.writeString("\r\n")
        }
        buffer.writeString("--\(boundary)--\r\n")
        return buffer
    }
}

extension TestClientProtocol {
    /// `POST /api/v1/manage/tours/{id}/waypoints/{wid}/assets` with one `file` part.
    func mediaAPIUpload(
        _ env: TestEnv,
        token: String,
        data: Data,
        fileName: String = "file.bin",
        contentType: String = "application/octet-stream"
    ) async throws -> TestResponse {
        try await mediaAPIUpload(uri: env.assetsURI, token: token, parts: [MediaMultipart.file(data, fileName: fileName, contentType: contentType)])
    }

    func mediaAPIUpload(
        uri: String,
        token: String,
        parts: [MediaMultipart.Part],
        boundary: String = "trail-\(UUID().uuidString)"
    ) async throws -> TestResponse {
        let headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"]
        return try await execute(uri: uri, method: .post, headers: headers, body: MediaMultipart.encode(parts, boundary: boundary))
    }

    /// The panel's upload form: a signed-in browser, the CSRF token its first field.
    func mediaPanelUpload(_ env: TestEnv, session: BrowserSession, parts: [MediaMultipart.Part]) async throws -> TestResponse {
        let boundary = "----WebKitFormBoundary\(UUID().uuidString.prefix(16))"
        let headers: HTTPFields = [.cookie: session.cookieHeader, .contentType: "multipart/form-data; boundary=\(boundary)"]
        return try await execute(
            uri: env.panelAssetsURI,
            method: .post,
            headers: headers,
            body: MediaMultipart.encode([MediaMultipart.field("_csrf", session.csrf)] + parts, boundary: boundary)
        )
    }

    /// `GET /api/v1/manage/assets/{aid}` as JSON.
    func mediaAsset(_ id: Int64, token: String) async throws -> [String: Any] {
        let response = try await execute(uri: "/api/v1/manage/assets/\(id)", method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "GET asset \(id): \(response.status) \(response.text)")
        return response.mediaJSON
    }
}

extension TestResponse {
    var mediaJSON: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:] }
    var mediaErrorMessage: String? { (mediaJSON["error"] as? [String: Any])?["message"] as? String }
    var mediaErrorCode: String? { (mediaJSON["error"] as? [String: Any])?["code"] as? String }

    /// The `id` of an asset in a 201 answer.
    var mediaAssetId: Int64? { (mediaJSON["id"] as? NSNumber)?.int64Value }
}

// MARK: A real clamd

/// A clamd started for one test from a clamd.conf in a temp folder, with the test's signature folder
/// (the approach of Tests/MalwareScanTests: Foreground, a unix socket in the temp folder, AlertExceedsMax).
final class MediaClamd: @unchecked Sendable {
    static let executable = "/usr/sbin/clamd"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let folder: URL
    let socketPath: String
    private let process = Process()

    init(signatureFolder: URL, streamMaxLength: String = "1M") throws {
        // Short path: a unix socket path must fit in 108 bytes.
        folder = URL(fileURLWithPath: "/tmp/trail-clamd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        socketPath = folder.appendingPathComponent("clamd.sock").path
        let configuration = """
            Foreground yes
            LocalSocket \(socketPath)
            LocalSocketMode 600
            DatabaseDirectory \(signatureFolder.path)
            TemporaryDirectory \(folder.appendingPathComponent("tmp").path)
            LogFile \(folder.appendingPathComponent("clamd.log").path)
            PidFile \(folder.appendingPathComponent("clamd.pid").path)
            StreamMaxLength \(streamMaxLength)
            AlertExceedsMax yes
            MaxThreads 2
            SelfCheck 3600

            """
        let configurationURL = folder.appendingPathComponent("clamd.conf")
        try Data(configuration.utf8).write(to: configurationURL)
        // Started under a small Python guard that stops clamd when told to (SIGTERM) or when the test process dies
        // (its parent changes), so a killed test run leaves no clamd behind. Not prctl(PR_SET_PDEATHSIG): that fires
        // when the *thread* that spawned the child exits, and Foundation spawns from pool threads that come and go.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import os, signal, subprocess, sys, time
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # Foundation's Process may start us with it blocked
            parent = os.getppid()
            child = subprocess.Popen([sys.argv[1], "-c", sys.argv[2]])
            def stop(*_):
                child.terminate()
                try:
                    child.wait(10)
                except subprocess.TimeoutExpired:
                    child.kill()
                sys.exit(0)
            signal.signal(signal.SIGTERM, stop)
            while child.poll() is None:
                if os.getppid() != parent:
                    stop()
                time.sleep(0.2)
            sys.exit(child.returncode)
            """, Self.executable, configurationURL.path,
        ]
        let outPath = folder.appendingPathComponent("clamd.out").path
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        if let handle = FileHandle(forWritingAtPath: outPath) {
            process.standardOutput = handle
            process.standardError = handle
        }
        try process.run()
    }

    var log: String {
        ["clamd.out", "clamd.log"].map { (try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) ?? "" }.joined()
    }

    var isRunning: Bool { process.isRunning }

    func waitUntilReady(timeout: Duration = .seconds(90)) async throws {
        let probe = ClamdScanner(endpoint: .unixSocket(path: socketPath), timeouts: .init(connect: .seconds(1), io: .seconds(2)))
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await probe.ping() { return }
            guard process.isRunning else { throw MediaTestError("clamd exited with status \(process.terminationStatus):\n\(log)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw MediaTestError("clamd did not answer PING within \(timeout):\n\(log)")
    }

    func stop() async {
        if process.isRunning {
            process.terminate()
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                while process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct MediaTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ChildProcess.Output {
    var json: [String: Any] { lastLineJSON }
}
