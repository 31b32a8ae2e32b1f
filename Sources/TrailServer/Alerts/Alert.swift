import Foundation
import GRDB
import PackageFormat

/// How serious an alert is. `closure` is what closes stops; the player shows every severity, the strongest first.
enum AlertSeverity: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case info, warning, closure

    /// For the panel's select and list.
    var label: String {
        switch self {
        case .info: "Information"
        case .warning: "Warning"
        case .closure: "Closure"
        }
    }
}

/// An alert or closure of a site, or of one tour of it (docs/rangers.md, "Alerts and closures"). Posted by the site's
/// managers or an admin, without review; phones learn of it from the signed catalog.
struct Alert: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var siteId: Int64
    var tourId: Int64?
    var severity: AlertSeverity
    var title: String
    var message: String
    /// JSON array in the row (`closedWaypointIds`): waypoint ids of `tourId`.
    var closedWaypointIds: [Int64]
    var startsAt: Date
    var endsAt: Date
    var createdBy: Int64?
    var createdAt: Date
    var endedAt: Date?
    var endedBy: Int64?
    var retiredAt: Date?

    static let databaseTableName = "alert"
    /// Current and scheduled alerts one site may hold: every phone downloads them all with each catalog, so a loop that
    /// posts them cannot grow that for everyone without bound. A district's real closures stay far below.
    static let liveLimitPerSite = 50

    enum Columns {
        static let siteId = Column(CodingKeys.siteId)
        static let endsAt = Column(CodingKeys.endsAt)
        static let retiredAt = Column(CodingKeys.retiredAt)
    }

    /// An alert as it is posted: not ended, not yet retired from the catalog.
    struct New: NewRecord {
        typealias Stored = Alert
        var siteId: Int64
        var tourId: Int64?
        var severity: AlertSeverity
        var title: String
        var message: String
        var closedWaypointIds: [Int64]
        var startsAt: Date
        var endsAt: Date
        var createdBy: Int64?
        var createdAt: Date
    }

    /// Where it stands at `now`: `scheduled` (not started), `current`, or `ended` (ended early or past `endsAt`).
    func state(at now: Date) -> String {
        if endedAt != nil || endsAt <= now { return "ended" }
        return startsAt > now ? "scheduled" : "current"
    }
}

/// An alert as posted (API body or panel form), every field as text so each bad one is answered by name.
struct AlertDraft: Sendable {
    var title: String?
    var message: String?
    var severity: String?
    var tourId: Int64?
    var closedWaypointIds: [Int64]?
    var startsAt: String?
    var endsAt: String?
    /// The zone a time without one (the panel's `datetime-local` value) is read in: the site's, on the panel.
    var localZone = TimeZone(identifier: "UTC")!

    static let titleLimit = 120
    static let messageLimit = 2000
    /// The furthest ahead an alert may end: an alert is for what is happening now, and a forgotten one must not stay
    /// on every phone for a season.
    static let longestAhead: TimeInterval = 90 * 86_400

    /// The checked values, or every problem by field name (the API's `error.fields`, the form's messages). The tour and
    /// stop rules need the database and are checked by `AppDatabase.postAlert` in the same transaction.
    func validated(now: Date) throws -> ValidAlert {
        var errors = ValidationErrors()
        let title = (title ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if title.isEmpty {
            errors["title"] = "Give the alert a title."
        } else if title.count > Self.titleLimit {
            errors["title"] = "Keep the title to \(Self.titleLimit) characters (it has \(title.count))."
        } else if title.contains(where: { $0.isNewline }) {
            errors["title"] = "Write the title on one line."
        }
        let message = (message ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if message.isEmpty {
            errors["message"] = "Say what visitors need to know."
        } else if message.count > Self.messageLimit {
            errors["message"] = "Keep the message to \(Self.messageLimit) characters (it has \(message.count))."
        }
        let severity = AlertSeverity(rawValue: severity ?? "")
        if severity == nil { errors["severity"] = "Choose info, warning or closure." }
        var start = now
        if let text = startsAt, !text.isEmpty {
            if let date = Self.parseTime(text, localZone: localZone) {
                start = date
            } else {
                errors["startsAt"] = "Write the start as a date and time, such as 2026-11-27T14:30:00Z."
            }
        }
        var end: Date?
        if let text = endsAt, !text.isEmpty {
            if let date = Self.parseTime(text, localZone: localZone) {
                if date <= now {
                    errors["endsAt"] = "The end must be in the future."
                } else if date > now.addingTimeInterval(Self.longestAhead) {
                    errors["endsAt"] = "An alert may end at most 90 days from now; post a new one when it is still needed."
                } else if errors["startsAt"] == nil, date <= start {
                    errors["endsAt"] = "The end must be after the start."
                } else {
                    end = date
                }
            } else {
                errors["endsAt"] = "Write the end as a date and time, such as 2026-11-27T18:00:00Z."
            }
        } else {
            errors["endsAt"] = "Say when the alert ends (at most 90 days from now)."
        }
        let closed = closedWaypointIds ?? []
        if !closed.isEmpty, tourId == nil { errors["closedWaypointIds"] = "Closed stops belong to a tour: choose the tour too." }
        // A severity or an end that is missing has its message above, so the refusal is never empty.
        guard errors.isEmpty, let severity, let end else { throw errors }
        return ValidAlert(
            title: title,
            message: message,
            severity: severity,
            tourId: tourId,
            closedWaypointIds: Array(Set(closed)).sorted(),
            // Whole seconds: the catalog and the API write whole seconds, so what is stored is what they show.
            startsAt: Date(timeIntervalSince1970: start.timeIntervalSince1970.rounded(.down)),
            endsAt: Date(timeIntervalSince1970: end.timeIntervalSince1970.rounded(.down))
        )
    }

    /// RFC 3339 with a zone (`Z` or an offset), fractional seconds allowed; or the panel's `datetime-local` value
    /// (`2026-11-27T14:30`), read in `localZone` (the site's time zone, as the form says).
    static func parseTime(_ text: String, localZone: TimeZone = TimeZone(identifier: "UTC")!) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime]
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = localZone
        for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss"] {
            local.dateFormat = format
            if let date = local.date(from: text) { return date }
        }
        return nil
    }
}

struct ValidAlert: Sendable {
    let title: String
    let message: String
    let severity: AlertSeverity
    let tourId: Int64?
    let closedWaypointIds: [Int64]
    let startsAt: Date
    let endsAt: Date
}

/// An alert as the catalog and the management API show it: the alert, its site's slug and its tour's package id.
struct AlertRow: Sendable {
    let alert: Alert
    let siteSlug: String
    let packageId: String?
    let tourName: String?
}
