import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The tests' one way to run another program (an independent reader such as Python's `zipfile` or Info-ZIP, a
/// converter, a CLI): to completion, awaited without holding a thread, killed after `timeout`. Output goes through
/// files in a scratch folder, so a large output cannot dead-lock a pipe.
public enum ChildProcess {
    public struct Output: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String

        /// The last line of standard output as a JSON object (the helper scripts print one).
        public var lastLineJSON: [String: Any] {
            let lastLine = stdout.split(separator: "\n").last.map(String.init) ?? ""
            return (try? JSONSerialization.jsonObject(with: Data(lastLine.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// `executable` is a path, or a name looked up on `PATH` (through /usr/bin/env). `environment` adds to (or
    /// replaces entries of) the test process's own; `input` is standard input (empty when nil).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: Data? = nil,
        timeout: Duration = .seconds(300)
    ) async throws -> Output {
        let child = try Child(executable, arguments, environment: environment, input: input)
        defer { child.scratch.remove() }
        let process = child.process
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            let pid = process.processIdentifier
            Task {
                try? await Task.sleep(for: timeout)
                if process.isRunning { kill(pid, SIGKILL) }
            }
        }
        return child.finish(status: status)
    }

    /// The same, waited for on the calling thread: for the synchronous tests of small, quick programs only (a
    /// blocked cooperative thread is one of two on this machine's test runs).
    public static func runBlocking(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: Data? = nil
    ) throws -> Output {
        let child = try Child(executable, arguments, environment: environment, input: input)
        defer { child.scratch.remove() }
        try child.process.run()
        child.process.waitUntilExit()
        return child.finish(status: child.process.terminationStatus)
    }

    /// A process with its standard streams on files in a scratch folder.
    private struct Child {
        let process = Process()
        let scratch: TemporaryFolder
        let handles: [FileHandle]

        init(_ executable: String, _ arguments: [String], environment: [String: String]?, input: Data?) throws {
            process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
            process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
            if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
            scratch = try TemporaryFolder("proc")
            try (input ?? Data()).write(to: scratch.file("in"))
            _ = FileManager.default.createFile(atPath: scratch.file("out").path, contents: nil)
            _ = FileManager.default.createFile(atPath: scratch.file("err").path, contents: nil)
            let stdin = try FileHandle(forReadingFrom: scratch.file("in"))
            let out = try FileHandle(forWritingTo: scratch.file("out"))
            let err = try FileHandle(forWritingTo: scratch.file("err"))
            process.standardInput = stdin
            process.standardOutput = out
            process.standardError = err
            handles = [stdin, out, err]
        }

        func finish(status: Int32) -> Output {
            for handle in handles { try? handle.close() }
            return Output(
                status: status,
                stdout: (try? String(contentsOf: scratch.file("out"), encoding: .utf8)) ?? "",
                stderr: (try? String(contentsOf: scratch.file("err"), encoding: .utf8)) ?? ""
            )
        }
    }
}
