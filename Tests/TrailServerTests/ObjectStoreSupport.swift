import Foundation
import ObjectStorage

#if canImport(Glibc)
import Glibc
#endif

/// A real S3 server for one test (Scripts/object_store.py): SeaweedFS, or moto's server as a second implementation.
/// `stop()` (or the end of the test process) leaves no process behind; `pause()` freezes it (SIGSTOP), so requests
/// hang as they do when a bucket is unreachable, and `resume()` lets it go on.
final class ObjectStore: @unchecked Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case seaweedfs, moto
        var description: String { rawValue }
    }

    struct Started: Decodable {
        let endpoint: String
        let pid: Int32
        let accessKey: String
        let secretKey: String
        let bucket: String
    }

    let kind: Kind
    let folder: URL
    let info: Started
    private let guardProcess: Process

    var endpoint: URL { URL(string: info.endpoint)! }
    var credentials: S3Credentials { S3Credentials(accessKeyId: info.accessKey, secretAccessKey: info.secretKey) }

    static func start(_ kind: Kind, bucket: String = "trail") async throws -> ObjectStore {
        let folder = TestScratch.folder("objectstore-\(kind)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/object_store.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, kind.rawValue, folder.path, bucket]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let line = await firstLine(of: output)
        guard let data = line.split(separator: "\n").first.map({ Data($0.utf8) }), let started = try? JSONDecoder().decode(Started.self, from: data)
        else {
            process.terminate()
            throw StartFailure(description: "\(kind) did not start: \(line)")
        }
        return ObjectStore(kind: kind, folder: folder, info: started, guardProcess: process)
    }

    struct StartFailure: Error, CustomStringConvertible { let description: String }

    private init(kind: Kind, folder: URL, info: Started, guardProcess: Process) {
        self.kind = kind
        self.folder = folder
        self.info = info
        self.guardProcess = guardProcess
    }

    func client(bucket: String? = nil, prefix: String = "", credentials: S3Credentials? = nil, readTimeout: Int64 = 30) -> S3Client {
        S3Client(
            location: StorageLocation(bucket: bucket ?? info.bucket, prefix: prefix),
            endpoint: endpoint,
            region: "us-east-1",
            credentials: credentials ?? self.credentials,
            connectTimeout: .seconds(2),
            readTimeout: .seconds(readTimeout)
        )
    }

    func pause() { kill(-info.pid, SIGSTOP) }
    func resume() { kill(-info.pid, SIGCONT) }

    func stop() {
        guard guardProcess.isRunning else { return }
        guardProcess.terminate()
        guardProcess.waitUntilExit()
    }

    /// True while the server process exists.
    var isRunning: Bool { kill(info.pid, 0) == 0 }

    deinit { stop() }
}

/// Scripts/tcp_proxy.py: a TCP proxy between the server and a bucket that a test can cut (an outage of the path to the
/// bucket while the bucket itself stays readable) and throttle (a slow uplink).
final class TCPProxy: @unchecked Sendable {
    let port: Int
    private let process: Process

    static func start(to targetPort: Int, bytesPerSecond: Int? = nil) async throws -> TCPProxy {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/tcp_proxy.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "\(targetPort)"] + (bytesPerSecond.map { ["\($0)"] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = await firstLine(of: output)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw ObjectStore.StartFailure(description: "the proxy did not start: \(line)")
        }
        return TCPProxy(port: port, process: process)
    }

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    func cut() { kill(process.processIdentifier, SIGUSR1) }
    func restore() { kill(process.processIdentifier, SIGUSR2) }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// What a helper process prints first (where it listens), read on a Dispatch thread: a blocking read must not hold one
/// of the cooperative pool's few threads.
func firstLine(of pipe: Pipe) async -> String {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
        }
    }
}
