import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the test that writes gigabytes (the ZIP64 package) apart from the tests whose live requests must answer within
/// HummingbirdTesting's fixed 20 s read time-out while the server fsyncs (the backup under load). On a two-core
/// machine the multi-gigabyte write can make one fsync, and so one request, outlast that time-out; run apart, each
/// test still checks what it checks, and neither waits on a quiet machine.
actor DiskHeavyGate {
    static let shared = DiskHeavyGate()

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` while no other test holds the gate.
    static func exclusive<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await shared.enter()
        do {
            let value = try await DiskHeavyLock.hold(body)
            await shared.leave()
            return value
        } catch {
            await shared.leave()
            throw error
        }
    }

    private func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

/// The same gate across test modules: PackageFormatTests writes its own 4 GiB zip in this process, and an actor of one
/// module cannot see the other's. An exclusive `flock` on one file in the temporary folder can (a lock belongs to an
/// open file, so two opens in one process exclude each other); closing the file lets the next test in.
enum DiskHeavyLock {
    static let path = FileManager.default.temporaryDirectory.appendingPathComponent("trail-companion-disk-heavy.lock").path

    static func hold<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        precondition(descriptor >= 0, "cannot open \(path)")
        defer { close(descriptor) }
        // flock waits; it waits on a Dispatch thread, never on one of the cooperative pool's two threads.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
                continuation.resume()
            }
        }
        return try await body()
    }
}
