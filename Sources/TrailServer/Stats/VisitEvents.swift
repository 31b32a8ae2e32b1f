import Crypto
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// What a visitor's player or app reports. The cases are the `visitCount.kind` CHECK's list (StateColumnTests).
enum VisitEventKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case opened
    case savedOffline = "saved-offline"
    case stopOpened = "stop-opened"
    case stopPlayed = "stop-played"
    case completed
    case alertShown = "alert-shown"

    /// How the panel names the measure.
    var label: String {
        switch self {
        case .opened: "Tours opened"
        case .savedOffline: "Saved for offline use"
        case .stopOpened: "Stops opened"
        case .stopPlayed: "Stops played"
        case .completed: "Tours completed"
        case .alertShown: "Alerts shown"
        }
    }
}

/// One event as counted: every field is part of the count's key, none says who sent it.
struct VisitEvent: Sendable, Hashable {
    var day: String
    var packageId: String
    var version: Int
    var kind: VisitEventKind
    /// The manifest's waypoint id as text, '' for the whole tour.
    var waypointId: String
    var language: String
    var source: String
}

/// The body of `POST /api/v1/events` as sent, every field optional so that each missing or bad one is named.
struct VisitEventBatch: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        var type: String?
        var packageId: String?
        var version: Int?
        var waypointId: Int64?
        var language: String?
        var source: String?
        var day: String?
    }
    var events: [Item]?
}

/// The rules of an event, apart from the database: the day, the source and the language are checked here; whether the
/// package is published and names the stop is the route's look-up (`EventsAPI`).
enum VisitEventRules {
    static let maxEventsPerPost = 200
    /// How far back a visitor's day may be: a phone offline for a month still sends its queue.
    static let maxDaysBack = 30
    static let maxSourceLength = 40
    /// A post's body: 200 events of about 200 bytes each, with room to spare.
    static let maxBodyBytes = 96 * 1024

    /// A `YYYY-MM-DD` the visitor's clock could show now: from `maxDaysBack` days before the UTC date (and one more
    /// day, for zones behind UTC) to the day after it (already today east of UTC). Nil when it is not such a date.
    static func checkedDay(_ text: String, now: Date = Date()) -> String? {
        guard let day = dayNumber(text) else { return nil }
        let today = Int(now.timeIntervalSince1970 / 86_400)
        guard day <= today + 1, day >= today - maxDaysBack - 1 else { return nil }
        return text
    }

    /// Days since 1970-01-01 of an exact `YYYY-MM-DD`, or nil.
    static func dayNumber(_ text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
            (1...12).contains(month), dayOfMonth >= 1
        else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard dayOfMonth <= lengths[month - 1] else { return nil }
        // Days from civil (Howard Hinnant's algorithm): no calendar object per event.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + dayOfMonth - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `YYYY-MM-DD` of a day number.
    static func dayText(_ number: Int) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(number) * 86_400)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    /// The UTC date of `date`, `YYYY-MM-DD`.
    static func utcDay(_ date: Date = Date()) -> String { dayText(Int(date.timeIntervalSince1970 / 86_400)) }

    /// Letters, digits and `-`, 1 to 40 of them: a sign's name, never free text that could carry a person's details.
    static func isSource(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maxSourceLength
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
    }
}

/// How many events each address has added in its current hour, so that one address adds at most `limit` an hour.
/// Kept in memory only (never stored, gone at a restart): the address is held as a keyed hash, with a key made at
/// start, so not even the server's memory holds a list of visitors' addresses. An IPv6 caller is taken by its /64.
/// Bounded: once `capacity` addresses are held and none has an hour that ended, a new address's events are dropped.
final class EventRateLimit: Sendable {
    private struct Window {
        var start: Date
        var used: Int
    }

    let limit: Int
    let capacity: Int
    private let key = SymmetricKey(size: .bits256)
    private let windows = NIOLockedValueBox([SHA256Digest: Window]())

    init(limit: Int = 2_000, capacity: Int = 100_000) {
        self.limit = limit
        self.capacity = capacity
    }

    /// How many of `count` events `address` may add now (the rest are to be dropped); counts them as used.
    func take(_ count: Int, address: String?, now: Date = Date()) -> Int {
        let caller = SHA256.hash(data: Data(HMAC<SHA256>.authenticationCode(for: Data(VerifiedDownloads.caller(address).utf8), using: key)))
        return windows.withLockedValue { windows in
            if windows[caller] == nil, windows.count >= capacity {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < 3_600 }
                if windows.count >= capacity { return 0 }
            }
            var window = windows[caller] ?? Window(start: now, used: 0)
            if now.timeIntervalSince(window.start) >= 3_600 { window = Window(start: now, used: 0) }
            let allowed = max(0, min(count, limit - window.used))
            window.used += allowed
            windows[caller] = window
            return allowed
        }
    }
}
