import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real S3 server for one test (Scripts/object_store.py): SeaweedFS, or moto's server as a second implementation.
/// `stop()` (or the end of the test process) leaves no process behind; `pause()` freezes it (SIGSTOP), so requests
/// hang as they do when a bucket is unreachable, and `resume()` lets it go on. It knows no S3 client: each test module
/// makes its own from `endpoint` and the keys in `info`.
public final class ObjectStore: @unchecked Sendable {
    public enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case seaweedfs, moto
        public var description: String { rawValue }
    }

    public struct Started: Decodable, Sendable {
        public let endpoint: String
        public let pid: Int32
        public let accessKey: String
        public let secretKey: String
        public let bucket: String
    }

    public let kind: Kind
    /// The server's data, and room for a test's own files; the caller owns it (and removes it).
    public let folder: URL
    public let info: Started
    private let guardProcess: Process

    public var endpoint: URL { URL(string: info.endpoint)! }

    /// Starts a server keeping its data in `folder` (made if missing), with one bucket.
    public static func start(_ kind: Kind, in folder: URL, bucket: String = "trail") async throws -> ObjectStore {
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

    /// A helper server (an object store, a proxy, a mail sink) that did not say where it listens.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    private init(kind: Kind, folder: URL, info: Started, guardProcess: Process) {
        self.kind = kind
        self.folder = folder
        self.info = info
        self.guardProcess = guardProcess
    }

    public func pause() { kill(-info.pid, SIGSTOP) }
    public func resume() { kill(-info.pid, SIGCONT) }

    public func stop() {
        guard guardProcess.isRunning else { return }
        guardProcess.terminate()
        guardProcess.waitUntilExit()
    }

    /// True while the server process exists.
    public var isRunning: Bool { kill(info.pid, 0) == 0 }

    deinit { stop() }
}

/// What a helper process prints first (where it listens), read on a Dispatch thread: a blocking read must not hold one
/// of the cooperative pool's few threads.
public func firstLine(of pipe: Pipe) async -> String {
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
