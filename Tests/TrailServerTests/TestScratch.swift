import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Temp folders that outlive the test that made them (the data folder of an app built for a few requests, a seeded
/// template): named here, removed when the test process exits, so a run leaves nothing in the temp directory.
enum TestScratch {
    private static let folders = Mutex<[URL]>([])
    private static let removalAtExit: Void = { atexit { TestScratch.removeAll() } }()

    /// A new path `<temp>/<prefix>-<uuid>` (not created).
    static func folder(_ prefix: String) -> URL {
        _ = removalAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        folders.withLock { $0.append(url) }
        return url
    }

    private static func removeAll() {
        for url in folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
    }
}
