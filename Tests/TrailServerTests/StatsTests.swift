import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import Testing

@testable import TrailServer

/// Visitor statistics without tracking: `POST /api/v1/events` (each kind, batches, every refusal, the cap per
/// address), what the database holds afterwards (no address, no user agent), and the totals of a scripted run in the
/// JSON, the CSV and the panel's page, for the people who may see them.
@Suite(.scratch) struct StatsTests {
    /// "Lake Loop" of the route seed: published, serving version 2; its first stop's manifest id and a language.
    struct Target {
        let packageId: String
        let version: Int
        let stop: Int64
        let language: String
        let hiddenPackageId: String
    }

    static func target(_ app: TestApp, _ seed: RichSeed) async throws -> Target {
        let version = try #require(try await app.database.packageVersion(packageId: seed.packageId, version: 2))
        let manifest = try version.decodedManifest()
        let stop = try #require(manifest.waypoints.first?.id, "the released manifest names its stops")
        return Target(
            packageId: seed.packageId,
            version: 2,
            stop: stop,
            language: manifest.languages?.first ?? "en",
            hiddenPackageId: seed.hiddenPackageId
        )
    }

    static let today = VisitEventRules.utcDay()
    static func daysAgo(_ days: Int) -> String { VisitEventRules.dayText(VisitEventRules.dayNumber(today)! - days) }

    /// One event as JSON.
    static func event(
        _ type: String,
        _ target: Target,
        stop: Bool = false,
        day: String = today,
        language: String? = nil,
        source: String? = nil,
        version: Int? = nil
    ) -> String {
        var fields = [
            #""type":"\#(type)""#, #""packageId":"\#(target.packageId)""#, #""version":\#(version ?? target.version)"#, #""day":"\#(day)""#,
        ]
        if stop { fields.append(#""waypointId":\#(target.stop)"#) }
        if let language { fields.append(#""language":"\#(language)""#) }
        if let source { fields.append(#""source":"\#(source)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func batch(_ events: [String]) -> String { #"{"events":["# + events.joined(separator: ",") + "]}" }

    static func post(_ client: some TestClientProtocol, _ body: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        headers.append(contentsOf: extra)
        return try await client.execute(uri: "/api/v1/events", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func storedTotal(_ app: TestApp) async throws -> Int {
        try await app.database.read { try Int.fetchOne($0, sql: "SELECT COALESCE(SUM(count), 0) FROM visitCount") ?? 0 }
    }

    static func stored(_ app: TestApp, kind: VisitEventKind) async throws -> Int {
        try await app.database.read {
            try Int.fetchOne($0, sql: "SELECT COALESCE(SUM(count), 0) FROM visitCount WHERE kind = ?", arguments: [kind]) ?? 0
        }
    }

    // MARK: The route

    @Test func eachKindIsCountedAndAPostAddsToTheCounts() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        let all = VisitEventKind.allCases.map { Self.event($0.rawValue, target, stop: $0 == .stopOpened || $0 == .stopPlayed) }
        try await app.test { client in
            let first = try await Self.post(client, Self.batch(all))
            #expect(first.status == .accepted, "\(first.text)")
            #expect(first.json as? [String: Int] == ["counted": 6, "dropped": 0])
            #expect(first.headers[.setCookie] == nil, "the events route sets no cookie")
            for kind in VisitEventKind.allCases { #expect(try await Self.stored(app, kind: kind) == 1, "\(kind)") }
            _ = try await Self.post(client, Self.batch(all))
            for kind in VisitEventKind.allCases { #expect(try await Self.stored(app, kind: kind) == 2, "\(kind) adds to its row") }
            // One row per (day, package, version, kind, stop, language, source): a second post made no new rows.
            let rows = try await app.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM visitCount") }
            #expect(rows == 6)
            // An earlier released version is counted as itself.
            let older = try await Self.post(client, Self.batch([Self.event("opened", target, version: 1)]))
            #expect(older.status == .accepted)
            let versionOne = try await app.database.read {
                try Int.fetchOne($0, sql: "SELECT count FROM visitCount WHERE version = 1 AND kind = 'opened'")
            }
            #expect(versionOne == 1)
        }
    }

    @Test func aBatchOf200CountsAndOf201IsRefusedWhole() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        try await app.test { client in
            let full = try await Self.post(client, Self.batch(Array(repeating: Self.event("opened", target, source: "gate-1"), count: 200)))
            #expect(full.status == .accepted)
            #expect(try await Self.stored(app, kind: .opened) == 200)
            let over = try await Self.post(client, Self.batch(Array(repeating: Self.event("opened", target), count: 201)))
            #expect(over.status == .contentTooLarge)
            #expect(over.text.contains("at most 200"))
            #expect(try await Self.stored(app, kind: .opened) == 200, "nothing of a refused post is counted")
        }
    }

    @Test func everyRefusalSaysWhyAndCountsNothing() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        let good = Self.event("opened", target)
        let cases: [(String, String, HTTPResponse.Status, String)] = [
            ("unknown kind", Self.batch([good, Self.event("clicked", target)]), .unprocessableContent, "Unknown kind"),
            (
                "unpublished package",
                Self.batch([good, #"{"type":"opened","packageId":"\#(target.hiddenPackageId)","version":1,"day":"\#(Self.today)"}"#]),
                .unprocessableContent, "No published package"
            ),
            (
                "unknown package", Self.batch([#"{"type":"opened","packageId":"no-such","version":1,"day":"\#(Self.today)"}"#]),
                .unprocessableContent, "No published package"
            ),
            ("unreleased version", Self.batch([Self.event("opened", target, version: 99)]), .unprocessableContent, "no released version 99"),
            (
                "a day in the future", Self.batch([Self.event("opened", target, day: Self.daysAgo(-2))]), .unprocessableContent,
                "today or up to 30 days back"
            ),
            (
                "a day too far back", Self.batch([Self.event("opened", target, day: Self.daysAgo(33))]), .unprocessableContent,
                "today or up to 30 days back"
            ),
            ("a day that is no date", Self.batch([Self.event("opened", target, day: "2026-02-30")]), .unprocessableContent, "YYYY-MM-DD"),
            ("a source with a space", Self.batch([Self.event("opened", target, source: "north gate")]), .unprocessableContent, "letters, digits"),
            (
                "a source too long", Self.batch([Self.event("opened", target, source: String(repeating: "a", count: 41))]), .unprocessableContent,
                "letters, digits"
            ),
            ("a stop event without its stop", Self.batch([Self.event("stop-played", target)]), .unprocessableContent, "names its stop"),
            (
                "a stop the version lacks",
                Self.batch([
                    Self.event("opened", target).replacingOccurrences(of: "\"opened\"", with: "\"stop-opened\"").replacingOccurrences(
                        of: "}",
                        with: ",\"waypointId\":987654}"
                    )
                ]), .unprocessableContent, "no stop 987654"
            ),
            ("a language the version lacks", Self.batch([Self.event("opened", target, language: "tlh")]), .unprocessableContent, "not offered"),
            ("no events list", #"{"evts":[]}"#, .unprocessableContent, "The body has no"),
            ("not JSON", "opened,p,2", .badRequest, "not JSON"),
            ("JSON of another shape", #"{"events":{"type":"opened"}}"#, .badRequest, "not JSON"),
        ]
        try await app.test { client in
            for (name, body, status, message) in cases {
                let response = try await Self.post(client, body)
                #expect(response.status == status, "\(name): \(response.status) \(response.text)")
                #expect(response.text.contains(message), "\(name): \(response.text)")
            }
            let form = try await client.execute(
                uri: "/api/v1/events",
                method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "type=opened")
            )
            #expect(form.status == .unsupportedMediaType)
            #expect(try await Self.storedTotal(app) == 0, "a refused post counts nothing, not even its good events")
            // The same events without the bad one are counted: the refusals above were about the bad ones.
            #expect(try await Self.post(client, Self.batch([good])).status == .accepted)
            #expect(try await Self.storedTotal(app) == 1)
        }
    }

    @Test func oneAddressAddsAtMost2000EventsAnHourTheRestAreDroppedAndCounted() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        let post = Self.batch(Array(repeating: Self.event("stop-opened", target, stop: true), count: 200))
        try await app.test { client in
            for _ in 0..<10 {
                let response = try await Self.post(client, post)
                #expect(response.json as? [String: Int] == ["counted": 200, "dropped": 0])
            }
            let over = try await Self.post(client, Self.batch(Array(repeating: Self.event("opened", target), count: 50)))
            #expect(over.status == .accepted, "dropped events are not an error the player should retry")
            #expect(over.json as? [String: Int] == ["counted": 0, "dropped": 50])
        }
        #expect(try await Self.storedTotal(app) == 2_000)
        #expect(app.metric("trail_visit_events_dropped_total") == 50)
        #expect(app.metric("trail_visit_events_counted_total") == 2_000)
    }

    @Test func theCapIsPerAddressAndPerHour() {
        let limit = EventRateLimit(limit: 100, capacity: 2)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(limit.take(80, address: "203.0.113.5", now: start) == 80)
        #expect(limit.take(80, address: "203.0.113.5", now: start) == 20, "only what is left of the hour's share")
        #expect(limit.take(80, address: "198.51.100.7", now: start) == 80, "another address has its own share")
        // One IPv6 host holds a whole /64: its addresses share one share.
        #expect(limit.take(60, address: "2001:db8::1", now: start) == 0, "no room for a third address while both hours run")
        #expect(limit.take(10, address: "203.0.113.5", now: start.addingTimeInterval(3_600)) == 10, "a new hour, a new share")
        let six = EventRateLimit(limit: 100)
        #expect(six.take(70, address: "2001:db8:1:2::1", now: start) == 70)
        #expect(six.take(70, address: "2001:db8:1:2::ffff", now: start) == 30)
    }

    @Test func browsersMayPostFromThePlayerOnlyAndGlobalPrivacyControlCountsNothing() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        let playerOrigin = try #require(SecurityHeadersMiddleware.origin(of: app.config.effectivePublicURL))
        try await app.test { client in
            let preflight = try await client.execute(uri: "/api/v1/events", method: .options, headers: [.origin: playerOrigin])
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == playerOrigin)
            let foreign = try await client.execute(uri: "/api/v1/events", method: .options, headers: [.origin: "https://elsewhere.example"])
            #expect(foreign.status == .forbidden)
            #expect(foreign.headers[.accessControlAllowOrigin] == nil)
            let fromElsewhere = try await Self.post(
                client,
                Self.batch([Self.event("opened", target)]),
                headers: [.origin: "https://elsewhere.example"]
            )
            #expect(fromElsewhere.status == .forbidden)
            let fromPlayer = try await Self.post(client, Self.batch([Self.event("opened", target)]), headers: [.origin: playerOrigin])
            #expect(fromPlayer.status == .accepted)
            #expect(fromPlayer.headers[.accessControlAllowOrigin] == playerOrigin)
            let refused = try await Self.post(client, Self.batch([Self.event("opened", target)]), headers: [.secGPC: "1"])
            #expect(refused.status == .accepted)
            #expect(refused.json as? [String: Int] == ["counted": 0, "dropped": 0])
        }
        #expect(try await Self.storedTotal(app) == 1, "only the player's post counted")
    }

    // MARK: What is stored

    @Test func theDatabaseFileHoldsNoAddressAndNoUserAgent() async throws {
        let (template, seed, _) = try await RouteTemplate.database.value
        let folder = TestScratch.folder("trail-stats-file")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("trail.sqlite").path
        let database = try AppDatabase.openFile(at: path, migrationsFolder: projectRoot.appendingPathComponent("migrations"))
        try DatabaseAccess.opening { try template.backup(to: database.writer) }
        let app = try await TestApp.make(database: database) { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8, ::1") }
        let target = try await Self.target(app, seed)
        let address = "203.0.113.77"
        let userAgent = "DistinctiveAgent/7.3 (stats-bytes-check)"
        let sign = "zz-bytes-check-sign"
        let version = try #require(try await app.database.packageVersion(packageId: target.packageId, version: target.version))
        try await app.test(.live) { client in
            let headers: HTTPFields = [.xForwardedFor: address, .userAgent: userAgent]
            for kind in VisitEventKind.allCases {
                let response = try await Self.post(
                    client,
                    Self.batch([Self.event(kind.rawValue, target, stop: kind == .stopOpened || kind == .stopPlayed, source: sign)]),
                    headers: headers
                )
                #expect(response.status == .accepted)
            }
            var verifyHeaders = headers
            verifyHeaders[.contentType] = "application/json"
            let verified = try await client.execute(
                uri: "/api/v1/packages/\(target.packageId)/verify",
                method: .post,
                headers: verifyHeaders,
                body: ByteBuffer(string: #"{"sha256":"\#(version.sha256)","version":\#(target.version)}"#)
            )
            #expect(verified.status == .ok)
        }
        #expect(try await Self.storedTotal(app) == 6)
        #expect(try await app.database.read { try Int.fetchOne($0, sql: "SELECT SUM(count) FROM downloadCount") } == 1)
        var bytes = Data()
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
        }
        func holds(_ text: String) -> Bool { bytes.range(of: Data(text.utf8)) != nil }
        // The check can fail: the sign the events carried is in the file, as a count's key.
        #expect(holds(sign), "the file's bytes were read")
        #expect(!holds(address), "the visitor's address is in the database file")
        #expect(!holds(userAgent), "the visitor's user agent is in the database file")
        #expect(!holds("DistinctiveAgent"))
    }

    // MARK: The figures

    /// A scripted run: known events over three days, two signs, a language and none, as a player would send them.
    static func scriptedRun(_ client: some TestClientProtocol, _ target: Target) async throws {
        var events: [String] = []
        // Today: 12 opened from gate-a in the language, 3 from gate-b; 11 saved; 4 completed; stops opened 15, played 2.
        events += Array(repeating: event("opened", target, language: target.language, source: "gate-a"), count: 12)
        events += Array(repeating: event("opened", target, source: "gate-b"), count: 3)
        events += Array(repeating: event("saved-offline", target, source: "gate-a"), count: 11)
        events += Array(repeating: event("completed", target, source: "gate-a"), count: 4)
        events += Array(repeating: event("stop-opened", target, stop: true, source: "gate-a"), count: 15)
        events += Array(repeating: event("stop-played", target, stop: true), count: 2)
        // Two days ago (sent late, as from a phone that was offline): 5 opened, 1 alert shown.
        events += Array(repeating: event("opened", target, day: daysAgo(2)), count: 5)
        events += [event("alert-shown", target, day: daysAgo(2))]
        // Forty days ago would be refused; 29 days ago is outside the default span of the page only when it is not chosen.
        events += Array(repeating: event("opened", target, day: daysAgo(29), source: "gate-b"), count: 2)
        let response = try await post(client, batch(events))
        #expect(response.status == .accepted, "\(response.text)")
    }

    @Test func aScriptedRunsTotalsInTheJSONTheCSVAndThePage() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        let version = try #require(try await app.database.packageVersion(packageId: target.packageId, version: target.version))
        try await app.test { client in
            try await Self.scriptedRun(client, target)
            // A verified download is counted per version and day.
            let verify = try await client.api(
                .post,
                "/api/v1/packages/\(target.packageId)/verify",
                token: nil,
                json: #"{"sha256":"\#(version.sha256)","version":\#(target.version)}"#
            )
            #expect(verify.status == .ok)
            let token = try await app.token(for: "manager@test.org")
            let json = try await client.api(.get, "/api/v1/manage/sites/alpha/stats?from=\(Self.daysAgo(29))&to=\(Self.today)", token: token)
            #expect(json.status == .ok, "\(json.text)")
            let body = try #require(json.json as? [String: Any])
            let totals = try #require(body["totals"] as? [String: Any])
            #expect(totals["opened"] as? Int == 22)
            #expect(totals["savedOffline"] as? Int == 11)
            #expect(totals["stopOpened"] as? Int == 15)
            #expect(totals["completed"] as? String == "<10", "4 completed is a small count")
            #expect(totals["stopPlayed"] as? String == "<10")
            #expect(totals["downloads"] as? String == "<10")
            let days = try #require(body["days"] as? [[String: Any]])
            #expect(days.count == 30, "every day of the span, counted or not")
            let todayCounts = try #require(days.first { $0["day"] as? String == Self.today }?["counts"] as? [String: Any])
            #expect(todayCounts["opened"] as? Int == 15)
            let twoDaysAgo = try #require(days.first { $0["day"] as? String == Self.daysAgo(2) }?["counts"] as? [String: Any])
            #expect(twoDaysAgo["opened"] as? String == "<10")
            let sources = try #require(body["sources"] as? [[String: Any]])
            let gateA = try #require(sources.first { $0["key"] as? String == "gate-a" }?["counts"] as? [String: Any])
            #expect(gateA["opened"] as? Int == 12)
            #expect(gateA["savedOffline"] as? Int == 11)
            let languages = try #require(body["languages"] as? [[String: Any]])
            let inLanguage = try #require(languages.first { $0["key"] as? String == target.language }?["counts"] as? [String: Any])
            #expect(inLanguage["opened"] as? Int == 12)
            let tours = try #require(body["tours"] as? [[String: Any]])
            let lake = try #require(tours.first { $0["packageId"] as? String == target.packageId }?["counts"] as? [String: Any])
            #expect(lake["opened"] as? Int == 22)
            let stops = try #require(body["stops"] as? [[String: Any]])
            let stop = try #require(stops.first { ($0["waypointId"] as? NSNumber)?.int64Value == target.stop })
            #expect(stop["opened"] as? Int == 15)
            // One tour: the same figures of that tour alone; a span without the late events leaves them out.
            let oneTour = try await client.api(
                .get,
                "/api/v1/manage/sites/alpha/stats?from=\(Self.daysAgo(1))&to=\(Self.today)&tour=\(seed.publishedTourId)",
                token: token
            )
            let oneTotals = try #require((oneTour.json as? [String: Any])?["totals"] as? [String: Any])
            #expect(oneTotals["opened"] as? Int == 15)

            let csv = try await client.get(
                "/api/v1/manage/sites/alpha/stats.csv?from=\(Self.daysAgo(29))&to=\(Self.today)",
                session: nil,
                headers: [.authorization: "Bearer \(token)"]
            )
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let lines = csv.text.split(separator: "\r\n").map(String.init)
            #expect(lines.first == "day,tour,packageId,version,measure,stop,language,source,count")
            #expect(lines.contains { $0.hasPrefix("\(Self.today),Lake Loop,\(target.packageId),2,opened,,\(target.language),gate-a,12") })
            #expect(lines.contains { $0.hasPrefix("\(Self.today),Lake Loop,\(target.packageId),2,opened,,,gate-b,<10") })
            #expect(lines.contains { $0.hasPrefix("\(Self.today),Lake Loop,\(target.packageId),2,saved-offline,,,gate-a,11") })
            #expect(lines.contains { $0.hasPrefix("\(Self.today),Lake Loop,\(target.packageId),2,completed,,,gate-a,<10") })
            #expect(lines.contains { $0.hasPrefix("\(Self.today),Lake Loop,\(target.packageId),2,downloads,,,,<10") })
            #expect(lines.contains { $0.hasPrefix("\(Self.daysAgo(2)),Lake Loop,\(target.packageId),2,alert-shown,,,,<10") })
            let counts = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).last.map(String.init) ?? "" }
            #expect(counts.allSatisfy { $0 == "<10" || (Int($0) ?? 0) >= 10 }, "every count under 10 is <10")

            let manager = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/stats?from=\(Self.daysAgo(29))&to=\(Self.today)", session: manager)
            #expect(page.status == .ok)
            // The page is for the site's staff: it shows the exact figures the exports round down.
            #expect(page.text.contains(#"data-stat="opened" data-count="22""#))
            #expect(page.text.contains(#"data-stat="saved-offline" data-count="11""#))
            #expect(page.text.contains(#"data-stat="completed" data-count="4""#))
            #expect(page.text.contains(#"data-stat="downloads" data-count="1""#))
            for chart in ["chart-opened", "chart-saved-offline", "chart-completed", "chart-downloads", "chart-tours", "chart-stops", "chart-sources"]
            {
                #expect(page.text.contains(#"id="\#(chart)" data-chart="#), "\(chart) has its table")
            }
            #expect(page.text.contains("gate-a"))
            let site = try await client.get("/sites/alpha", session: manager)
            #expect(site.text.contains(#"href="/sites/alpha/stats""#), "the site page links the statistics")
        }
    }

    @Test func managersAndAdminsSeeEveryTourAuthorsTheirOwnOthersNothing() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        let target = try await Self.target(app, seed)
        // Alpha's author created Lake Loop; Crater Rim is nobody's (made by the system).
        try await app.database.execute("UPDATE tour SET createdBy = ? WHERE id = ?", [seed.authorId, seed.publishedTourId])
        try await app.test { client in
            try await Self.scriptedRun(client, target)
            func tours(_ email: String) async throws -> (HTTPResponse.Status, [String]) {
                let token = try await app.token(for: email)
                let response = try await client.api(.get, "/api/v1/manage/sites/alpha/stats", token: token)
                let names = ((response.json as? [String: Any])?["tours"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
                return (response.status, names.sorted())
            }
            let (managerStatus, managerTours) = try await tours("manager@test.org")
            #expect(managerStatus == .ok)
            #expect(managerTours == ["Crater Rim", "Lake Loop"])
            #expect(try await tours("admin@test.org").1 == ["Crater Rim", "Lake Loop"])
            let (authorStatus, authorTours) = try await tours("author@test.org")
            #expect(authorStatus == .ok)
            #expect(authorTours == ["Lake Loop"], "an author sees the tours they created")
            #expect(try await tours("reviewer@test.org").0 == .forbidden)
            #expect(try await tours("outsider@test.org").0 == .notFound)
            #expect(try await client.api(.get, "/api/v1/manage/sites/alpha/stats", token: nil).status == .unauthorized)

            let authorToken = try await app.token(for: "author@test.org")
            let other = try await client.api(.get, "/api/v1/manage/sites/alpha/stats?tour=\(seed.readyTourId)", token: authorToken)
            #expect(other.status == .forbidden, "another's tour: \(other.text)")
            let csv = try await client.get("/api/v1/manage/sites/alpha/stats.csv", session: nil, headers: [.authorization: "Bearer \(authorToken)"])
            #expect(csv.status == .ok)
            #expect(!csv.text.contains("Crater Rim"))
            #expect(csv.text.contains("Lake Loop"))

            let author = try await client.signIn("author@test.org")
            let page = try await client.get("/sites/alpha/stats", session: author)
            #expect(page.status == .ok)
            #expect(page.text.contains("data-own-tours"))
            #expect(!page.text.contains("Crater Rim"))
            let reviewer = try await client.signIn("reviewer@test.org")
            #expect(try await client.get("/sites/alpha/stats", session: reviewer).status == .forbidden)
            let site = try await client.get("/sites/alpha", session: reviewer)
            #expect(!site.text.contains(#"href="/sites/alpha/stats""#), "no link to a page the reviewer may not open")
        }
    }

    @Test func aBadSpanIsRefusedWithAMessage() async throws {
        let (app, _) = try await TestApp.routeSeeded()
        try await app.test { client in
            let token = try await app.token(for: "manager@test.org")
            for query in ["from=2026-13-01", "from=2026-05-02&to=2026-05-01", "from=2024-01-01&to=2026-01-01", "tour=lake", "to=", "from=", "tour="] {
                let response = try await client.api(.get, "/api/v1/manage/sites/alpha/stats?\(query)", token: token)
                #expect(response.status == .unprocessableContent, "\(query): \(response.text)")
            }
            let manager = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/stats?from=nope", session: manager)
            #expect(page.status == .unprocessableContent)
            #expect(page.text.contains("is-invalid"))
        }
    }

    // MARK: The visitor side

    @Test func theVisitorSideSetsNoCookieThePanelStillDoes() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            let player = try await client.get("/visit/\(seed.packageId)?src=north-gate", session: nil)
            #expect(player.status == .ok)
            let version = try #require(
                player.text.range(of: #"/visit/assets/[0-9a-f]+/"#, options: .regularExpression).map { String(player.text[$0]) }
            )
            for path in [
                "/visit", "/visit/\(seed.packageId)?src=north-gate", "/visit/sw.js", "\(version)visit-events.js", "\(version)visit-player.js",
            ] {
                let response = try await client.get(path, session: nil)
                #expect(response.status == .ok, "\(path): \(response.status)")
                #expect(response.headers[.setCookie] == nil, "\(path) sets a cookie")
            }
            let login = try await client.get("/login", session: nil)
            #expect(login.headers[.setCookie]?.hasPrefix("tc_csrf=") == true, "the panel's forms keep their CSRF cookie")
        }
    }

    @Test func theQRCodeCarriesTheSign() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            let token = try await app.token(for: "manager@test.org")
            let signed = try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/qr.svg?src=north-gate", token: token)
            #expect(signed.status == .ok)
            #expect(signed.text.contains("/visit/\(seed.packageId)?src=north-gate"))
            let bad = try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/qr.png?src=north%20gate", token: token)
            #expect(bad.status == .unprocessableContent)
        }
    }

    // MARK: Rules

    @Test func daysAndSpans() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 UTC
        let today = VisitEventRules.utcDay(now)
        #expect(today == "2027-01-15")
        #expect(VisitEventRules.checkedDay("2027-01-16", now: now) != nil, "already today east of UTC")
        #expect(VisitEventRules.checkedDay("2027-01-17", now: now) == nil)
        #expect(VisitEventRules.checkedDay("2026-12-16", now: now) != nil, "30 days back")
        #expect(VisitEventRules.checkedDay("2026-12-13", now: now) == nil)
        #expect(VisitEventRules.checkedDay("2027-1-15", now: now) == nil)
        #expect(VisitEventRules.dayNumber("2024-02-29") != nil)
        #expect(VisitEventRules.dayNumber("2023-02-29") == nil)
        #expect(VisitEventRules.dayText(VisitEventRules.dayNumber("2000-03-01")!) == "2000-03-01")
        let span = try StatsSpan.parse(from: nil, to: nil, now: now)
        #expect(span == StatsSpan(from: "2026-12-17", to: "2027-01-15"))
        #expect(span.days.count == 30)
        #expect(throws: ValidationErrors.self) { try StatsSpan.parse(from: "2027-01-16", to: "2027-01-15", now: now) }
        #expect(StatsReport.csvField("=HYPERLINK(\"x\")") == "\"'=HYPERLINK(\"\"x\"\")\"")
        #expect(StatsReport.csvField("Falls, upper") == "\"Falls, upper\"")
        #expect(StatsReport.masked(9) == "<10")
        #expect(StatsReport.masked(10) == "10")
    }
}
