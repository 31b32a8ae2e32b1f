import Foundation
import NIOConcurrencyHelpers
import NIOPosix

/// Runs a converter (ffmpeg, ffprobe, vips) as a child process with a time limit and an address-space limit, on threads
/// of its own (``BlockingWork/converters``): never on an event loop or a cooperative thread, which a minutes-long conversion would hold.
enum ConverterProcess {
    struct Outcome: Sendable {
        var status: Int32
        var stdout: Data
        /// The last few kilobytes of what it wrote to stderr.
        var stderr: String
        var timedOut: Bool
        var succeeded: Bool { status == 0 && !timedOut }
    }

    struct NotFound: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) is not installed (scripts/install-deps.sh installs it)" }
    }

    /// The executable's path: as given when it has a slash, else the first match on PATH.
    static func locate(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `name arguments…`; `onLine` gets each stdout line as it comes (ffmpeg's progress). `memoryLimit` goes
    /// through util-linux's `prlimit --as`, so a decoder that a hostile file sends after gigabytes fails instead of
    /// pushing the server into swap. Cancelling the calling task kills the child.
    static func run(
        _ name: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        memoryLimit: Int64?,
        timeLimit: Duration,
        keepStdout: Bool = true,
        onLine: (@Sendable (Substring) -> Void)? = nil
    ) async throws -> Outcome {
        guard let executable = locate(name) else { throw NotFound(name: name) }
        let launch =
            if let memoryLimit, let prlimit = locate("prlimit") {
                (prlimit, ["--as=\(memoryLimit)", "--", executable] + arguments)
            } else {
                (executable, arguments)
            }
        let pid = NIOLockedValueBox<Int32>(0)
        return try await withTaskCancellationHandler {
            try await BlockingWork.converters.runIfActive {
                try runBlocking(launch.0, launch.1, environment: environment, timeLimit: timeLimit, keepStdout: keepStdout, onLine: onLine, pid: pid)
            }
        } onCancel: {
            let running = pid.withLockedValue { $0 }
            if running > 0 { kill(running, SIGKILL) }
        }
    }

    private static func runBlocking(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        timeLimit: Duration,
        keepStdout: Bool,
        onLine: (@Sendable (Substring) -> Void)?,
        pid: NIOLockedValueBox<Int32>
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // A small, fixed environment: nothing of the server's (credentials included) reaches a converter.
        var childEnvironment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"]
        childEnvironment.merge(environment) { $1 }
        process.environment = childEnvironment
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        pid.withLockedValue { $0 = process.processIdentifier }

        let timedOut = NIOLockedValueBox(false)
        let deadline = DispatchWorkItem {
            guard process.isRunning else { return }
            timedOut.withLockedValue { $0 = true }
            kill(process.processIdentifier, SIGKILL)
        }
        let seconds = Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)

        // stderr on a thread of its own, so a chatty child never blocks on a full pipe while stdout is read here.
        let errorText = NIOLockedValueBox(Data())
        let errorDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while true {
                let chunk = err.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                errorText.withLockedValue { text in
                    text.append(chunk)
                    if text.count > 8192 { text = text.suffix(4096) }
                }
            }
            errorDone.signal()
        }
        var collected = Data()
        var pending = Data()
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            if keepStdout, collected.count < 4 * 1024 * 1024 { collected.append(chunk) }
            guard let onLine else { continue }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                onLine(Substring(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
        process.waitUntilExit()
        errorDone.wait()
        deadline.cancel()
        pid.withLockedValue { $0 = 0 }
        return Outcome(
            status: process.terminationStatus,
            stdout: collected,
            stderr: String(decoding: errorText.withLockedValue { $0 }, as: UTF8.self),
            timedOut: timedOut.withLockedValue { $0 }
        )
    }
}
