import Foundation
import Hummingbird
import TrailAPI

/// The visitor statistics of a site: the panel's page (`/sites/{slug}/stats`), and the management API's JSON and CSV
/// (`/api/v1/manage/sites/{slug}/stats`, `stats.csv`). Managers and admins see every tour of the site; an author sees
/// the tours they created; reviewers are refused. Reading changes nothing, so nothing is audited.
struct StatsPages: Sendable {
    let database: AppDatabase
    let pages: PageResponder

    struct Total: Sendable {
        let stat: String
        let label: String
        let value: String
        let count: Int
    }

    struct Cell: Sendable {
        let count: Int
        let text: String
    }

    struct Row: Sendable {
        let label: String
        let cells: [Cell]
    }

    /// A chart and the table it is drawn from: the table is the data, the chart (drawn by `stats-page.js` from it)
    /// only shows it, so the page reads the same without scripts and to a screen reader.
    struct Chart: Sendable {
        let id: String
        let title: String
        /// `line` for days, `bar` for the rest.
        let kind: String
        let headers: [String]
        let rows: [Row]
        let empty: Bool
    }

    struct TourOption: Sendable {
        let id: Int64
        let name: String
        let selected: Bool
    }

    struct Page: Sendable {
        let slug: String
        let name: String
        let from: String
        let to: String
        let tours: [TourOption]
        let totals: [Total]
        let dayCharts: [Chart]
        let breakdowns: [Chart]
        let ownToursOnly: Bool
        let csvURL: String
        let jsonURL: String
        var errors: [String: String] = [:]
        var errorSummary: ErrorSummary? = nil
    }

    func addRoutes(site: some RouterMethods<SiteMemberContext>, manageSite: some RouterMethods<SiteMemberContext>) {
        site.get("stats", use: showStats)
        manageSite.get("stats", use: getSiteStats)
        manageSite.get("stats.csv", use: exportSiteStatsCSV)
    }

    /// The statistics page: totals, a chart per measure over the chosen days, per tour, per stop, per sign and language.
    func showStats(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let query = request.uri.queryParameters
        let tourText = query["tour"].map(String.init) ?? ""
        let span: StatsSpan
        var errors: [String: String] = [:]
        do {
            span = try StatsSpan.parse(from: query["from"].map(String.init), to: query["to"].map(String.init))
        } catch let refusal as ValidationErrors {
            errors = refusal.fields
            span = try StatsSpan.parse(from: nil, to: nil)
        }
        let tourId = tourText.isEmpty ? nil : Int64(tourText)
        if !tourText.isEmpty, tourId == nil { errors["tour"] = "Choose a tour from the list." }
        let (report, readable) = try await report(context, span: span, tourId: tourId)
        var page = makePage(context.site, report: report, readable: readable, tourId: tourId, ownToursOnly: !context.access.canManage)
        if !errors.isEmpty {
            page.errors = errors
            page.errorSummary = ErrorSummary(
                errors,
                fields: ["from": "stats-from", "to": "stats-to", "tour": "stats-tour"],
                fallbackId: "stats-from"
            )
        }
        return await pages.render(
            "stats",
            title: "Visitor statistics of \(context.site.name)",
            page: page,
            request: request,
            context: context,
            status: errors.isEmpty ? .ok : .unprocessableContent
        )
    }

    /// `GET /manage/sites/{slug}/stats?from=&to=&tour=`: the page's figures as JSON, counts under 10 as `"<10"`.
    func getSiteStats(_ request: Request, _ context: SiteMemberContext) async throws -> Components.Schemas.SiteStats {
        let query = request.uri.queryParameters
        let span = try Self.apiSpan(query)
        var tourId: Int64?
        if let text = query["tour"] {
            guard let id = Int64(String(text)) else { throw ValidationErrors(["tour": "A tour is named by its id, a number."]) }
            tourId = id
        }
        let (report, _) = try await report(context, span: span, tourId: tourId)
        return report.wire(site: context.site.slug, tourId: tourId)
    }

    /// `GET /manage/sites/{slug}/stats.csv?from=&to=`: every stored count of the span, counts under 10 as `<10`.
    func exportSiteStatsCSV(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let span = try Self.apiSpan(request.uri.queryParameters)
        let packages = try await readablePackages(context)
        let ids = packages.map(\.packageId)
        let text = StatsReport.csv(
            packages: packages,
            counts: try await database.visitCounts(packageIds: ids, from: span.from, to: span.to),
            downloads: try await database.downloadCounts(packageIds: ids, from: span.from, to: span.to)
        )
        let fileName = "\(context.site.slug)-visitors-\(span.from)-\(span.to).csv"
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(fileName)\"", .cacheControl: "no-store",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    /// The API's span: `from` and `to` as dates, or left out for the default. Given empty, they are refused: a script
    /// that sends `to=` meant a day and should hear that none came (the panel's form, where an emptied field means the
    /// default, reads them itself).
    static func apiSpan(_ query: Parameters) throws -> StatsSpan {
        var errors = ValidationErrors()
        for name: Substring in ["from", "to"] where query[name]?.isEmpty == true {
            errors[String(name)] = "Write the day as YYYY-MM-DD, or leave the parameter out."
        }
        try errors.throwIfAny()
        return try StatsSpan.parse(from: query["from"].map(String.init), to: query["to"].map(String.init))
    }

    /// The packages this reader may see the statistics of: a manager's (or admin's) every one, an author's only those
    /// of the tours they created; a reviewer is refused.
    func readablePackages(_ context: SiteMemberContext) async throws -> [StatsPackage] {
        try context.access.require(.author, to: "see its visitor statistics")
        return try await database.statsPackages(siteId: context.site.id, createdBy: context.access.canManage ? nil : context.user.id)
    }

    /// The report over `span`, of one tour or all the reader may see, and the packages the reader may see.
    func report(_ context: SiteMemberContext, span: StatsSpan, tourId: Int64?) async throws -> (StatsReport, [StatsPackage]) {
        let readable = try await readablePackages(context)
        var chosen = readable
        if let tourId {
            chosen = readable.filter { $0.tourId == tourId }
            if chosen.isEmpty {
                let everyPackage = try await database.statsPackages(siteId: context.site.id, createdBy: nil)
                guard everyPackage.contains(where: { $0.tourId == tourId }) else { throw NotFound() }
                throw Forbidden("Authors see the statistics of the tours they created; this tour is someone else's.")
            }
        }
        let ids = chosen.map(\.packageId)
        let report = StatsReport(
            span: span,
            packages: chosen,
            counts: try await database.visitCounts(packageIds: ids, from: span.from, to: span.to),
            downloads: try await database.downloadCounts(packageIds: ids, from: span.from, to: span.to)
        )
        return (report, readable)
    }

    /// The measures a chart over days is drawn for, in the page's order; `data-stat` names of the totals.
    static let dayMeasures: [(stat: String, label: String, value: @Sendable (StatsMeasures) -> Int)] = [
        ("opened", "Tours opened", { $0[.opened] }),
        ("saved-offline", "Saved for offline use", { $0[.savedOffline] }),
        ("stop-played", "Stops played", { $0[.stopPlayed] }),
        ("completed", "Tours completed", { $0[.completed] }),
        ("downloads", "Complete downloads", { $0.downloads }),
    ]

    func makePage(_ site: Site, report: StatsReport, readable: [StatsPackage], tourId: Int64?, ownToursOnly: Bool) -> Page {
        func cell(_ count: Int) -> Cell { Cell(count: count, text: DisplayFormat.grouped(count)) }
        let totals = Self.dayMeasures.filter { $0.stat != "stop-played" }.map {
            Total(stat: $0.stat, label: $0.label, value: DisplayFormat.grouped($0.value(report.totals)), count: $0.value(report.totals))
        }
        let dayCharts = Self.dayMeasures.map { measure in
            Chart(
                id: "chart-\(measure.stat)",
                title: "\(measure.label) per day",
                kind: "line",
                headers: ["Day", measure.label],
                rows: report.days.map { Row(label: $0.day, cells: [cell(measure.value($0.measures))]) },
                empty: false
            )
        }
        let tourRows = report.tours.map { tour in
            Row(
                label: tour.package.name,
                cells: [
                    tour.measures[.opened], tour.measures[.savedOffline], tour.measures[.stopPlayed], tour.measures[.completed],
                    tour.measures.downloads,
                ]
                .map(cell)
            )
        }
        let multipleTours = Set(report.stops.map(\.packageId)).count > 1
        let stopRows = report.stops.map { stop in
            Row(
                label: (multipleTours ? "\(stop.tourName): " : "") + (stop.order > 0 ? "\(stop.order). " : "") + stop.name,
                cells: [cell(stop.opened), cell(stop.played)]
            )
        }
        func groupRows(_ groups: [(key: String, measures: StatsMeasures)], none: String) -> [Row] {
            groups.map {
                Row(
                    label: $0.key.isEmpty ? none : $0.key,
                    cells: [$0.measures[.opened], $0.measures[.savedOffline], $0.measures[.completed]].map(cell)
                )
            }
        }
        let groupHeaders = ["Tours opened", "Saved for offline use", "Tours completed"]
        let breakdowns = [
            Chart(
                id: "chart-tours",
                title: "Per tour",
                kind: "bar",
                headers: ["Tour", "Opened", "Saved offline", "Stops played", "Completed", "Downloads"],
                rows: tourRows,
                empty: tourRows.isEmpty
            ),
            Chart(id: "chart-stops", title: "Per stop", kind: "bar", headers: ["Stop", "Opened", "Played"], rows: stopRows, empty: stopRows.isEmpty),
            Chart(
                id: "chart-sources",
                title: "Signs visitors came from",
                kind: "bar",
                headers: ["Sign (the link's src)"] + groupHeaders,
                rows: groupRows(report.sources, none: "No sign (link without src)"),
                empty: report.sources.isEmpty
            ),
            Chart(
                id: "chart-languages",
                title: "Languages",
                kind: "bar",
                headers: ["Language"] + groupHeaders,
                rows: groupRows(report.languages, none: "The tour's first language"),
                empty: report.languages.isEmpty
            ),
        ]
        var query = "?from=\(report.span.from)&to=\(report.span.to)"
        let csvURL = "/api/v1/manage/sites/\(site.slug)/stats.csv" + query
        if let tourId { query += "&tour=\(tourId)" }
        return Page(
            slug: site.slug,
            name: site.name,
            from: report.span.from,
            to: report.span.to,
            tours: readable.compactMap { package in
                package.tourId.map { TourOption(id: $0, name: package.name, selected: $0 == tourId) }
            },
            totals: totals,
            dayCharts: dayCharts,
            breakdowns: breakdowns,
            ownToursOnly: ownToursOnly,
            csvURL: csvURL,
            jsonURL: "/api/v1/manage/sites/\(site.slug)/stats" + query
        )
    }
}
