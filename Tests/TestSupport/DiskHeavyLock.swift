import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One test at a time among those that write gigabytes or need quick fsyncs, across the test modules of the one test
/// process (PackageFormatTests writes a 4 GiB zip; TrailServerTests a 4.5 GiB package and a backup under load whose
/// live requests must answer within the live test client's read time-out). Two multi-gigabyte writes at once on a
/// two-core machine make such a request outlast that time-out. An exclusive `flock` on one file in the temporary
/// folder does it: a lock belongs to an open file, so two opens in one process exclude each other, and closing the
/// file lets the next test in.
public enum DiskHeavyLock {
    public static let path = FileManager.default.temporaryDirectory.appendingPathComponent("trail-companion-disk-heavy.lock").path

    public static func hold<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
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

/// Runs blocking work (a child process waited for, minutes of hashing) on a Dispatch thread. The cooperative pool has
/// as many threads as cores, two here: a test that blocks one of them halves what every other suite running beside it
/// gets, and their live servers stall past the live test client's read time-out.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
