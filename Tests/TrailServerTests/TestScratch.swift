import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Temp folders of the tests (data folders, signature folders, media made by ffmpeg): named here and removed by
/// scope, never by hand. In a suite with the `.scratch` trait each test case has a folder of its own, removed when the
/// case ends; other folders go when the test process exits. A run leaves nothing in the temp directory.
enum TestScratch {
    private static let folders = Mutex<[URL]>([])
    private static let removalAtExit: Void = { atexit { TestScratch.removeAll() } }()

    /// The folder of the test case running now, in a suite with the `.scratch` trait (``ScratchScope``).
    @TaskLocal static var scope: URL?

    /// A new path `<scope>/<prefix>-<uuid>` (not created): removed when the test case ends, pass or fail. Outside a
    /// `.scratch` suite, `<temp>/<prefix>-<uuid>`, removed when the test process exits.
    static func folder(_ prefix: String) -> URL {
        if let scope { return scope.appendingPathComponent("\(prefix)-\(UUID().uuidString)") }
        _ = removalAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        folders.withLock { $0.append(url) }
        return url
    }

    private static func removeAll() {
        for url in folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
    }
}

/// Gives each test case of a suite (or a test) its own scratch folder, `TestScratch.scope`, and removes it when the case
/// ends: the apps, data folders and media a test makes are cleaned up by the test's scope, not by a `defer` per test.
struct ScratchScope: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> ScratchScope? { testCase == nil ? nil : self }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("trail-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await TestScratch.$scope.withValue(root) { try await function() }
    }
}

extension Trait where Self == ScratchScope {
    /// Each test case gets a scratch folder of its own, removed when it ends (``ScratchScope``).
    static var scratch: Self { ScratchScope() }
}
