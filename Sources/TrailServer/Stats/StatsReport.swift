import Foundation
import TrailAPI

/// The seven measures of the statistics: the six kinds of visitor event and the complete downloads.
struct StatsMeasures: Sendable, Equatable {
    var byKind: [VisitEventKind: Int] = [:]
    var downloads = 0

    subscript(kind: VisitEventKind) -> Int {
        get { byKind[kind] ?? 0 }
        set { byKind[kind] = newValue }
    }

    mutating func add(_ other: StatsMeasures) {
        for (kind, count) in other.byKind { self[kind] += count }
        downloads += other.downloads
    }
}

/// The days a report covers, both included, as `YYYY-MM-DD`.
struct StatsSpan: Sendable, Equatable {
    let from: String
    let to: String

    /// The longest span: a year and a day, so a whole leap year fits.
    static let maxDays = 366

    /// From the query's `from` and `to`: left out, the 30 days up to today (UTC); refused when a date is not
    /// `YYYY-MM-DD`, `from` is after `to`, or the span is longer than a year.
    static func parse(from: String?, to: String?, now: Date = Date()) throws -> StatsSpan {
        var errors = ValidationErrors()
        let today = Int(now.timeIntervalSince1970 / 86_400)
        let toText = to.flatMap { $0.isEmpty ? nil : $0 }
        let fromText = from.flatMap { $0.isEmpty ? nil : $0 }
        let toDay = toText.map(VisitEventRules.dayNumber) ?? today
        if toDay == nil { errors["to"] = "Write the last day as YYYY-MM-DD." }
        let fromDay = fromText.map(VisitEventRules.dayNumber) ?? toDay.map { $0 - 29 }
        if fromDay == nil, fromText != nil { errors["from"] = "Write the first day as YYYY-MM-DD." }
        try errors.throwIfAny()
        guard let fromDay, let toDay else { throw ValidationErrors(["from": "Write the first day as YYYY-MM-DD."]) }
        if fromDay > toDay { throw ValidationErrors(["from": "The first day comes after the last day."]) }
        if toDay - fromDay >= maxDays { throw ValidationErrors(["from": "Choose at most \(maxDays) days."]) }
        return StatsSpan(from: VisitEventRules.dayText(fromDay), to: VisitEventRules.dayText(toDay))
    }

    /// Every day of the span, in order (a day with no counts is a zero, not a gap in the chart).
    var days: [String] {
        guard let first = VisitEventRules.dayNumber(from), let last = VisitEventRules.dayNumber(to) else { return [] }
        return (first...last).map(VisitEventRules.dayText)
    }
}

/// What the statistics page, its JSON and its CSV show: the counts of the packages a reader may see, over a span.
struct StatsReport: Sendable {
    struct Stop: Sendable {
        let packageId: String
        let tourName: String
        let waypointId: Int64
        let order: Int
        let name: String
        var opened: Int
        var played: Int
    }

    let span: StatsSpan
    let packages: [StatsPackage]
    var totals = StatsMeasures()
    /// By day, every day of the span.
    var days: [(day: String, measures: StatsMeasures)] = []
    /// By package, in the packages' order.
    var tours: [(package: StatsPackage, measures: StatsMeasures)] = []
    var stops: [Stop] = []
    /// By sign ('' for none), most opened first.
    var sources: [(key: String, measures: StatsMeasures)] = []
    var languages: [(key: String, measures: StatsMeasures)] = []

    init(span: StatsSpan, packages: [StatsPackage], counts: [VisitCountRow], downloads: [DownloadCountRow]) {
        self.span = span
        self.packages = packages
        var byDay: [String: StatsMeasures] = [:]
        var byPackage: [String: StatsMeasures] = [:]
        var bySource: [String: StatsMeasures] = [:]
        var byLanguage: [String: StatsMeasures] = [:]
        var byStop: [String: [Int64: (opened: Int, played: Int)]] = [:]
        for row in counts {
            totals[row.kind] += row.count
            byDay[row.day, default: StatsMeasures()][row.kind] += row.count
            byPackage[row.packageId, default: StatsMeasures()][row.kind] += row.count
            bySource[row.source, default: StatsMeasures()][row.kind] += row.count
            byLanguage[row.language, default: StatsMeasures()][row.kind] += row.count
            if let waypointId = Int64(row.waypointId), row.kind == .stopOpened || row.kind == .stopPlayed {
                var stop = byStop[row.packageId, default: [:]][waypointId] ?? (0, 0)
                if row.kind == .stopOpened { stop.opened += row.count } else { stop.played += row.count }
                byStop[row.packageId, default: [:]][waypointId] = stop
            }
        }
        for row in downloads {
            totals.downloads += row.count
            byDay[row.day, default: StatsMeasures()].downloads += row.count
            byPackage[row.packageId, default: StatsMeasures()].downloads += row.count
        }
        days = span.days.map { ($0, byDay[$0] ?? StatsMeasures()) }
        tours = packages.map { ($0, byPackage[$0.packageId] ?? StatsMeasures()) }
        for package in packages {
            let counted = byStop[package.packageId] ?? [:]
            var listed = Set<Int64>()
            for stop in package.stops {
                listed.insert(stop.id)
                let count = counted[stop.id] ?? (0, 0)
                stops.append(
                    Stop(
                        packageId: package.packageId,
                        tourName: package.name,
                        waypointId: stop.id,
                        order: stop.order,
                        name: stop.name,
                        opened: count.opened,
                        played: count.played
                    )
                )
            }
            // A stop since removed from the tour still has the counts of the versions that had it.
            for (id, count) in counted.sorted(by: { $0.key < $1.key }) where !listed.contains(id) {
                stops.append(
                    Stop(
                        packageId: package.packageId,
                        tourName: package.name,
                        waypointId: id,
                        order: 0,
                        name: "A removed stop (\(id))",
                        opened: count.opened,
                        played: count.played
                    )
                )
            }
        }
        func ranked(_ groups: [String: StatsMeasures]) -> [(key: String, measures: StatsMeasures)] {
            groups.sorted { ($0.value[.opened], $1.key) > ($1.value[.opened], $0.key) }.map { ($0.key, $0.value) }
        }
        sources = ranked(bySource)
        languages = ranked(byLanguage)
    }

    /// Exports show a count under 10 as `<10`: a small number could point at one visitor.
    static let smallest = 10

    static func masked(_ count: Int) -> String { count < smallest ? "<10" : String(count) }

    static func wire(_ count: Int) -> Components.Schemas.StatsCount { count < smallest ? .case2(._lt_10) : .case1(count) }

    static func wire(_ measures: StatsMeasures) -> Components.Schemas.StatsMeasures {
        Components.Schemas.StatsMeasures(
            opened: wire(measures[.opened]),
            savedOffline: wire(measures[.savedOffline]),
            stopOpened: wire(measures[.stopOpened]),
            stopPlayed: wire(measures[.stopPlayed]),
            completed: wire(measures[.completed]),
            alertShown: wire(measures[.alertShown]),
            downloads: wire(measures.downloads)
        )
    }

    /// The JSON answer: the same figures as the page, every count under 10 as `"<10"`.
    func wire(site: String, tourId: Int64?) -> Components.Schemas.SiteStats {
        Components.Schemas.SiteStats(
            site: site,
            from: span.from,
            to: span.to,
            tourId: tourId,
            totals: Self.wire(totals),
            days: days.map { .init(day: $0.day, counts: Self.wire($0.measures)) },
            tours: tours.map {
                .init(tourId: $0.package.tourId, packageId: $0.package.packageId, name: $0.package.name, counts: Self.wire($0.measures))
            },
            stops: stops.map {
                .init(packageId: $0.packageId, waypointId: $0.waypointId, name: $0.name, opened: Self.wire($0.opened), played: Self.wire($0.played))
            },
            sources: sources.map { .init(key: $0.key, counts: Self.wire($0.measures)) },
            languages: languages.map { .init(key: $0.key, counts: Self.wire($0.measures)) }
        )
    }

    /// The CSV export: one line per stored count and per day's downloads of a version, each count under 10 as `<10`.
    static func csv(packages: [StatsPackage], counts: [VisitCountRow], downloads: [DownloadCountRow]) -> String {
        let names = Dictionary(packages.map { ($0.packageId, $0.name) }, uniquingKeysWith: { first, _ in first })
        var stopNames: [String: String] = [:]
        for package in packages { for stop in package.stops { stopNames["\(package.packageId)\n\(stop.id)"] = "\(stop.order). \(stop.name)" } }
        var lines = ["day,tour,packageId,version,measure,stop,language,source,count"]
        // Tuples compare up to six members: the key as one line of text sorts the same way (a version's digits padded).
        func key(_ row: VisitCountRow) -> String {
            [row.day, row.packageId, String(format: "%09d", row.version), row.kind.rawValue, row.waypointId, row.language, row.source].joined(
                separator: "\u{1}"
            )
        }
        let sortedCounts = counts.sorted { key($0) < key($1) }
        for row in sortedCounts {
            let stop = row.waypointId.isEmpty ? "" : stopNames["\(row.packageId)\n\(row.waypointId)"] ?? "stop \(row.waypointId)"
            lines.append(
                [
                    row.day, names[row.packageId] ?? row.packageId, row.packageId, String(row.version), row.kind.rawValue, stop, row.language,
                    row.source, masked(row.count),
                ]
                .map(csvField).joined(separator: ",")
            )
        }
        for row in downloads.sorted(by: { ($0.day, $0.packageId, $0.version) < ($1.day, $1.packageId, $1.version) }) {
            lines.append(
                [row.day, names[row.packageId] ?? row.packageId, row.packageId, String(row.version), "downloads", "", "", "", masked(row.count)]
                    .map(csvField).joined(separator: ",")
            )
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// RFC 4180 quoting, and a leading `'` before `=`, `+`, `-`, `@` (and tab, CR) in a name, so a spreadsheet opening
    /// the file never runs a tour's name as a formula. `<10` and dates are left as they are.
    static func csvField(_ value: String) -> String {
        var text = value
        if let first = text.first, "=+-@\t\r".contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
