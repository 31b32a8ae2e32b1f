import Foundation

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
            let value = try await body()
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
