import Foundation
import ObjectStorage
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

extension ObjectStore {
    /// A server whose data goes in a scratch folder (``TestScratch``), removed by the test's scope.
    static func start(_ kind: Kind, bucket: String = "trail") async throws -> ObjectStore {
        try await start(kind, in: TestScratch.folder("objectstore-\(kind)"), bucket: bucket)
    }

    var credentials: S3Credentials { S3Credentials(accessKeyId: info.accessKey, secretAccessKey: info.secretKey) }

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
