import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Which (client address, package version) pairs have reported a verified download today, so that the count of
/// `POST /api/v1/packages/{id}/verify` counts each once a day: anyone may call the route, and a loop calling it
/// must neither inflate the count nor cost a database write per call.
///
/// Kept in memory and forgotten at the next UTC day (or a restart, which at worst counts one caller twice). An IPv6
/// caller is taken by its /64, since one host can hold a whole /64. Bounded: once `capacity` callers are held, new
/// ones are not counted until the day turns, so a flood of made-up addresses cannot grow the server's memory.
final class VerifiedDownloads: Sendable {
    private struct State {
        var day: Int
        var seen: Set<SHA256Digest>
    }

    let capacity: Int
    private let state: NIOLockedValueBox<State>

    init(capacity: Int = 200_000) {
        self.capacity = capacity
        self.state = NIOLockedValueBox(State(day: Self.day(Date()), seen: []))
    }

    /// True the first time today that `address` reports `version` of `packageId` (a caller with no address counts
    /// as one caller).
    func isFirst(address: String?, packageId: String, version: Int, now: Date = Date()) -> Bool {
        let key = SHA256.hash(data: Data("\(Self.caller(address))\n\(packageId)\n\(version)".utf8))
        let today = Self.day(now)
        return state.withLockedValue { state in
            if state.day != today { state = State(day: today, seen: []) }
            guard state.seen.count < capacity || state.seen.contains(key) else { return false }
            return state.seen.insert(key).inserted
        }
    }

    static func day(_ date: Date) -> Int { Int(date.timeIntervalSince1970 / 86_400) }

    /// The address, or for IPv6 its first 64 bits.
    static func caller(_ address: String?) -> String {
        guard let address else { return "-" }
        var v6 = in6_addr()
        guard address.contains(":"), !address.lowercased().hasPrefix("::ffff:"), inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        return withUnsafeBytes(of: &v6) { Array($0.prefix(8)) }.hexString + "::/64"
    }
}
