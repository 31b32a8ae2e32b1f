import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import TrailAPI

/// `POST /api/v1/events`: what the web player and the apps report (a tour opened, saved, a stop opened or played, a
/// tour completed, an alert shown), added to counts per day and kind. No sign-in and no cookie; nothing of the
/// sender is kept: not the address (the hourly share per address is counted in memory only), not the user agent,
/// no identifier. A post is checked whole: one bad event refuses it and nothing of it is counted.
struct EventsAPI: Sendable {
    let database: AppDatabase
    let metrics: AppMetrics
    let rateLimit: EventRateLimit
    /// The web player's origin (the public URL's): the only one a browser may post from.
    let playerOrigin: String?
    let facts = EventFactsCache()

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.post("/events", use: postEvents)
        router.on("/events", method: .options, use: preflightEvents)
    }

    /// Counts a batch of at most 200 events (202 with how many were counted and dropped).
    func postEvents(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let origin = try allowedOrigin(request)
        let buffer = try await request.smallBody(
            of: "application/json",
            upTo: VisitEventRules.maxBodyBytes,
            otherwise: "Send the events as application/json: {\"events\": [...]}.",
            tooLarge:
                "The body is larger than \(VisitEventRules.maxBodyBytes / 1024) KiB; send at most \(VisitEventRules.maxEventsPerPost) events a post."
        )
        let batch: VisitEventBatch
        do {
            batch = try JSONDecoder().decode(VisitEventBatch.self, from: Data(buffer: buffer))
        } catch {
            throw HTTPError(
                .badRequest,
                message: "The body is not JSON of the form {\"events\": [{\"type\", \"packageId\", \"version\", \"day\", …}]}."
            )
        }
        guard let items = batch.events else { throw ValidationErrors(["events": "The body has no \"events\" list."]) }
        guard items.count <= VisitEventRules.maxEventsPerPost else {
            throw HTTPError(
                .contentTooLarge,
                message: "\(items.count) events in one post; send at most \(VisitEventRules.maxEventsPerPost) a post, the rest in the next."
            )
        }
        let events = try await checked(items)
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let origin {
            headers[.accessControlAllowOrigin] = origin
            headers[.vary] = "Origin"
        }
        // Global Privacy Control: the visitor asked not to be counted, so nothing is (the player does not even send).
        if request.headers[.secGPC] == "1" {
            return try accepted(counted: 0, dropped: 0, headers: headers, request: request, context: context)
        }
        let allowed = rateLimit.take(events.count, address: context.remoteAddress)
        let kept = events.prefix(allowed)
        let counts = kept.reduce(into: [VisitEvent: Int]()) { $0[$1, default: 0] += 1 }
        try await database.countVisitEvents(counts)
        metrics.visitEventsCounted.increment(by: Int64(kept.count))
        let dropped = events.count - kept.count
        if dropped > 0 { metrics.visitEventsDropped.increment(by: Int64(dropped)) }
        return try accepted(counted: kept.count, dropped: dropped, headers: headers, request: request, context: context)
    }

    /// A browser's CORS preflight: allowed for the player's origin only.
    func preflightEvents(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let origin = try allowedOrigin(request) else { return Response(status: .noContent) }
        return Response(
            status: .noContent,
            headers: [
                .accessControlAllowOrigin: origin, .accessControlAllowMethods: "POST", .accessControlAllowHeaders: "Content-Type",
                .accessControlMaxAge: "86400", .vary: "Origin",
            ]
        )
    }

    func accepted(counted: Int, dropped: Int, headers: HTTPFields, request: Request, context: AppRequestContext) throws -> Response {
        var response = try context.answer(Components.Schemas.EventsAccepted(counted: counted, dropped: dropped), status: .accepted, to: request)
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    /// The request's `Origin` when a browser sent one and it is the player's (or this server's own host, as the
    /// player's pages are); nil without one (an app). Another site's page may not make its visitors' browsers post.
    func allowedOrigin(_ request: Request) throws -> String? {
        guard let origin = request.headers[.origin] else { return nil }
        let host = SecurityHeadersMiddleware.origin(of: origin).flatMap { URLComponents(string: $0) }.map {
            ($0.host ?? "") + ($0.port.map { ":\($0)" } ?? "")
        }
        if origin == playerOrigin || (host != nil && host == request.head.authority) { return origin }
        throw Forbidden("Events are taken from this server's web player and from the apps, not from pages of \(origin).")
    }

    /// Every event checked, in order; any refusal names the event (`events[3].day`) and refuses the whole post.
    func checked(_ items: [VisitEventBatch.Item]) async throws -> [VisitEvent] {
        var errors = ValidationErrors()
        var events: [VisitEvent?] = []
        let now = Date()
        func refuse(_ index: Int, _ field: String, _ message: String) {
            // A long post of bad events says what is wrong with the first few: enough to fix the sender.
            if errors.fields.count < 10 { errors["events[\(index)].\(field)"] = message }
        }
        let versions = try await database.publishedVersionNumbers(of: Set(items.compactMap(\.packageId)))
        for (index, item) in items.enumerated() {
            guard let typeText = item.type, let kind = VisitEventKind(rawValue: typeText) else {
                refuse(
                    index,
                    "type",
                    "Unknown kind \"\(item.type ?? "")\": one of \(VisitEventKind.allCases.map(\.rawValue).joined(separator: ", "))."
                )
                events.append(nil)
                continue
            }
            guard let packageId = item.packageId, let released = versions[packageId] else {
                refuse(index, "packageId", "No published package has the id \"\(item.packageId ?? "")\".")
                events.append(nil)
                continue
            }
            guard let version = item.version, released.contains(version) else {
                refuse(index, "version", "Package \(packageId) has no released version \(item.version.map(String.init) ?? "(none given)").")
                events.append(nil)
                continue
            }
            guard let dayText = item.day, let day = VisitEventRules.checkedDay(dayText, now: now) else {
                refuse(
                    index,
                    "day",
                    "The day \"\(item.day ?? "")\" is not the visitor's date as YYYY-MM-DD, today or up to \(VisitEventRules.maxDaysBack) days back."
                )
                events.append(nil)
                continue
            }
            if let source = item.source, !VisitEventRules.isSource(source) {
                refuse(index, "source", "A source is the sign's name: 1 to \(VisitEventRules.maxSourceLength) letters, digits and '-'.")
                events.append(nil)
                continue
            }
            let isStopEvent = kind == .stopOpened || kind == .stopPlayed
            if isStopEvent, item.waypointId == nil {
                refuse(index, "waypointId", "A \(kind.rawValue) event names its stop (waypointId).")
                events.append(nil)
                continue
            }
            if !isStopEvent, item.waypointId != nil {
                refuse(index, "waypointId", "Only stop-opened and stop-played events name a stop.")
                events.append(nil)
                continue
            }
            if item.waypointId != nil || item.language != nil {
                let facts = try await facts.facts(packageId: packageId, version: version, database: database)
                if let waypointId = item.waypointId, !(facts?.waypointIds.contains(waypointId) ?? false) {
                    refuse(index, "waypointId", "Version \(version) of \(packageId) has no stop \(waypointId).")
                    events.append(nil)
                    continue
                }
                if let language = item.language, !Self.isLanguage(language, of: facts) {
                    refuse(index, "language", "Version \(version) of \(packageId) is not offered in \"\(language)\".")
                    events.append(nil)
                    continue
                }
            }
            events.append(
                VisitEvent(
                    day: day,
                    packageId: packageId,
                    version: version,
                    kind: kind,
                    waypointId: item.waypointId.map(String.init) ?? "",
                    language: item.language ?? "",
                    source: item.source ?? ""
                )
            )
        }
        try errors.throwIfAny()
        return events.compactMap { $0 }
    }

    /// One of the manifest's languages; a manifest that lists none takes any short tag of letters, digits and '-'.
    static func isLanguage(_ tag: String, of facts: EventVersionFacts?) -> Bool {
        guard let facts else { return false }
        if !facts.languages.isEmpty { return facts.languages.contains(tag) }
        return (2...35).contains(tag.utf8.count) && VisitEventRules.isSource(tag)
    }
}

/// The stops and languages of released versions, read once: a released version's manifest never changes, so the
/// events route decodes each manifest once rather than once per post. Bounded: emptied when it holds too many.
final class EventFactsCache: Sendable {
    private let entries = NIOLockedValueBox([String: EventVersionFacts]())
    private let capacity = 10_000

    func facts(packageId: String, version: Int, database: AppDatabase) async throws -> EventVersionFacts? {
        let key = "\(packageId)\n\(version)"
        if let known = entries.withLockedValue({ $0[key] }) { return known }
        guard let facts = try await database.eventVersionFacts(packageId: packageId, version: version) else { return nil }
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = facts
        }
        return facts
    }
}

extension HTTPField.Name {
    static let secGPC = Self("Sec-GPC")!
}
