import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// The lists that grow with a district: the management API's tour list (keyset pages of summaries, `Link: rel=next`,
/// filters, 422 for a bad limit, state, search or cursor), the site page (25 a page, Next / Previous, search and state
/// filter), `/visit` (pages, search, strong ETag and 304), and the query plans behind all three (an index, never a
/// table scan).
@Suite struct ListPagingTests {
    /// Adds tours to a site through the real database method (names mixing case: the order ignores it).
    static func addTours(_ app: TestApp, siteId: Int64, names: [String]) async throws {
        for name in names {
            _ = try await app.database.createTour(siteId: siteId, TourInput(name: name, description: ""), actor: .system)
        }
    }

    /// The site's tour names in list order, as SQLite orders them (the expectation the pages are checked against).
    static func expectedNames(_ app: TestApp, siteId: Int64) async throws -> [String] {
        try await app.database.rows("SELECT name FROM tour WHERE siteId = ? ORDER BY name COLLATE NOCASE, id", [siteId]).map { $0["name"] as String }
    }

    @Test func apiListPagesThroughEveryTourWithCursorsAndLinkHeaders() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await Self.addTours(
            app,
            siteId: seed.alphaId,
            names: ["apple Orchard", "Basalt Rim", "aspen Grove", "Cedar Creek", "blue Pool", "Delta Old Growth", "Zigzag Falls"]
        )
        let expected = try await Self.expectedNames(app, siteId: seed.alphaId)
        #expect(expected.count >= 8)
        #expect(Array(expected.prefix(3)) == ["apple Orchard", "aspen Grove", "Basalt Rim"], "case does not change the order")
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            var names: [String] = []
            var uri = "/api/v1/manage/tours?site=alpha&limit=3"
            var pages = 0
            while true {
                let page = try await client.api(.get, uri, token: token)
                #expect(page.status == .ok)
                pages += 1
                let tours = try #require(page.jsonObject["tours"] as? [[String: Any]])
                #expect(tours.count <= 3)
                names += tours.compactMap { $0["name"] as? String }
                #expect(tours.allSatisfy { $0["waypoints"] == nil }, "summaries carry no waypoints")
                guard let next = page.jsonObject["nextCursor"] as? String else {
                    #expect(page.headers[QueryForm.link] == nil, "the last page links nowhere")
                    break
                }
                let link = try #require(page.headers[QueryForm.link])
                #expect(link.hasPrefix("</api/v1/manage/tours?site=alpha&limit=3&cursor="))
                #expect(link.hasSuffix(">; rel=\"next\""))
                uri = String(link.dropFirst().prefix { $0 != ">" })
                #expect(uri.contains(QueryForm.url("", [("cursor", next)]).dropFirst()), "the header names the body's cursor")
                #expect(pages < 10)
            }
            #expect(names == expected, "every tour once, in order")
            #expect(pages == (expected.count + 2) / 3)

            // The counts of a summary are the tour's own: a file counts, its captions (a companion file) do not.
            try await app.database.execute(
                """
                INSERT INTO asset (waypointId, position, kind, originalName, mimeType, size, sha256, storedPath, createdAt)
                VALUES (?, 1, 'video', 'falls.mp4', 'video/mp4', 10, 'ab', 'uploads/x', 0)
                """,
                [seed.waypointId]
            )
            try await app.database.execute(
                """
                INSERT INTO asset (waypointId, position, kind, originalName, mimeType, size, sha256, storedPath, createdAt, companionOf, companionRole)
                VALUES (?, 2, 'text', 'falls.vtt', 'text/vtt', 10, 'cd', 'uploads/y', 0, last_insert_rowid(), 'captions')
                """,
                [seed.waypointId]
            )
            let all = try await client.api(.get, "/api/v1/manage/tours?site=alpha&q=Ridge+Walk", token: token)
            let ridge = try #require((all.jsonObject["tours"] as? [[String: Any]])?.first)
            #expect(ridge["id"] as? Int == Int(seed.tourId))
            let waypoints: Int = try #require(try await app.database.scalar("SELECT COUNT(*) FROM waypoint WHERE tourId = ?", [seed.tourId]))
            let assets: Int = try #require(
                try await app.database.scalar(
                    "SELECT COUNT(*) FROM asset JOIN waypoint ON waypoint.id = asset.waypointId WHERE tourId = ? AND companionOf IS NULL",
                    [seed.tourId]
                )
            )
            #expect(waypoints > 0 && assets > 0, "the seed tour has waypoints and files to count")
            #expect(ridge["waypointCount"] as? Int == waypoints)
            #expect(ridge["assetCount"] as? Int == assets)
            #expect(ridge["state"] as? String == "draft")
            #expect(ridge["site"] as? String == "alpha")
            #expect((ridge["updatedAt"] as? String).flatMap { try? Date($0, strategy: .iso8601) } != nil)
        }
    }

    @Test func apiListFiltersByStateAndNameAndRefusesBadParameters() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await Self.addTours(app, siteId: seed.alphaId, names: ["Lava Cast Forest", "lava River Cave", "Big Obsidian Flow", "100% Wild"])
        try await app.database.execute("UPDATE tour SET state = 'published' WHERE name IN ('Lava Cast Forest', 'Big Obsidian Flow')")
        try await app.database.execute("UPDATE tour SET state = 'inReview' WHERE name = 'lava River Cave'")
        // A date written as text by raw SQL (as the demo sample's rows can be) is read, not a crash.
        try await app.database.execute("UPDATE tour SET updatedAt = '2026-11-27 13:05:02.496' WHERE name = 'Big Obsidian Flow'")
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            func names(_ query: String) async throws -> [String] {
                let answer = try await client.api(.get, "/api/v1/manage/tours?site=alpha&\(query)", token: token)
                #expect(answer.status == .ok, "\(query): \(answer.text)")
                return (answer.jsonObject["tours"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
            }
            #expect(try await names("state=published") == ["Big Obsidian Flow", "Lava Cast Forest"])
            #expect(try await names("state=inReview") == ["lava River Cave"])
            // Every state reaches the summary's enum (a state missing from openapi.json would be a 500).
            for state in TourState.allCases {
                let listed = try await client.api(.get, "/api/v1/manage/tours?site=alpha&state=\(state.rawValue)", token: token)
                let states = (listed.jsonObject["tours"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
                #expect(states?.isEmpty == false && states?.allSatisfy { $0 == state.rawValue } == true, "\(state)")
            }
            #expect(try await names("q=LAVA") == ["Lava Cast Forest", "lava River Cave"], "the search ignores case")
            #expect(try await names("q=lava&state=published") == ["Lava Cast Forest"])
            #expect(try await names("q=%25") == ["100% Wild"], "a % typed in the search matches itself")
            #expect(try await names("q=river+cave") == ["lava River Cave"], "+ is a space, as a form sends it")
            #expect(try await names("q=nothing-like-this").isEmpty)

            // A cursor belongs to its listing: with the same filters it pages on, with others it is refused.
            let first = try await client.api(.get, "/api/v1/manage/tours?site=alpha&q=lava&limit=1", token: token)
            let cursor = try #require(first.jsonObject["nextCursor"] as? String)
            let second = try await client.api(.get, "/api/v1/manage/tours?site=alpha&q=lava&limit=1&cursor=\(cursor)", token: token)
            #expect((second.jsonObject["tours"] as? [[String: Any]])?.first?["name"] as? String == "lava River Cave")
            #expect(second.jsonObject["nextCursor"] == nil)

            var tampered = Array(cursor)
            tampered[2] = tampered[2] == "A" ? "B" : "A"
            let refusals: [(String, String)] = [
                ("limit=0", "limit"), ("limit=201", "limit"), ("limit=ten", "limit"), ("state=archived", "state"),
                ("q=" + String(repeating: "x", count: 101), "q"), ("cursor=\(String(tampered))", "cursor"),
                ("cursor=not-a-cursor", "cursor"), ("cursor=\(cursor)", "cursor"), ("q=lava&state=draft&cursor=\(cursor)", "cursor"),
            ]
            for (query, field) in refusals {
                let refused = try await client.api(.get, "/api/v1/manage/tours?site=alpha&\(query)", token: token)
                #expect(refused.status == .unprocessableContent, "\(query)")
                let fields = (refused.jsonObject["error"] as? [String: Any])?["fields"] as? [String: String]
                #expect(fields?[field] != nil, "\(query) names \(field): \(refused.text)")
            }
            #expect(try await client.api(.get, "/api/v1/manage/tours?site=alpha&limit=200", token: token).status == .ok)
            #expect(try await client.api(.get, "/api/v1/manage/tours", token: token).status == .badRequest)
            #expect(try await client.api(.get, "/api/v1/manage/tours?site=nowhere", token: token).status == .notFound)
        }
    }

    @Test func sitePageShowsTwentyFiveToursAPageWithSearchAndStateFilter() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await Self.addTours(app, siteId: seed.alphaId, names: (1...64).map { String(format: "Trail %03d", $0) })
        let expected = try await Self.expectedNames(app, siteId: seed.alphaId)
        try await app.database.execute("UPDATE tour SET state = 'published' WHERE name = 'Trail 007'")
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            func rows(_ html: String) -> [String] {
                html.components(separatedBy: "<td><a href=\"/tours/").dropFirst().compactMap { cell in
                    cell.split(separator: ">", maxSplits: 1).last?.split(separator: "<", maxSplits: 1).first.map(String.init)
                }
            }
            func link(_ html: String, rel: String) -> String? {
                guard let range = html.range(of: "rel=\"\(rel)\" href=\"") else { return nil }
                return String(html[range.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
            }
            let perPage = SitesController.toursPerPage
            #expect(expected.count > 2 * perPage, "three pages at least")
            let first = try await client.get("/sites/alpha", session: browser)
            #expect(first.status == .ok)
            #expect(rows(first.text) == Array(expected.prefix(perPage)))
            #expect(link(first.text, rel: "prev") == nil)
            #expect(first.text.contains("<label for=\"tour-search\""), "the search box has a label")
            #expect(first.text.contains("<label for=\"tour-state\""), "the state filter has a label")
            #expect(first.text.contains("aria-label=\"Pages of tours\""))

            // Next to the end: every tour once, in order.
            var seen = rows(first.text)
            var page = first
            var second: String?
            while let nextURL = link(page.text, rel: "next") {
                page = try await client.get(nextURL, session: browser)
                second = second ?? page.text
                #expect(rows(page.text).count == min(perPage, expected.count - seen.count))
                seen += rows(page.text)
            }
            #expect(seen == expected, "every tour once, in order, across the pages")
            let secondPage = try #require(second)
            #expect(rows(secondPage) == Array(expected.dropFirst(perPage).prefix(perPage)))
            let back = try await client.get(try #require(link(secondPage, rel: "prev")), session: browser)
            #expect(rows(back.text) == Array(expected.prefix(perPage)), "Previous shows the first page again")
            #expect(link(back.text, rel: "prev") == nil)
            let lastBack = try await client.get(try #require(link(page.text, rel: "prev")), session: browser)
            #expect(rows(lastBack.text) == Array(expected.dropLast(rows(page.text).count).suffix(perPage)), "Previous from the last page")

            let searched = try await client.get("/sites/alpha?q=trail+06&state=", session: browser)
            #expect(rows(searched.text) == ["Trail 060", "Trail 061", "Trail 062", "Trail 063", "Trail 064"])
            #expect(searched.text.contains("value=\"trail 06\""), "the search box keeps its text")
            let published = try await client.get("/sites/alpha?state=published", session: browser)
            #expect(rows(published.text) == ["Trail 007"])
            #expect(published.text.contains("<option value=\"published\" selected>"))
            let none = try await client.get("/sites/alpha?q=no+such+tour", session: browser)
            #expect(none.text.contains("No tours match."))
            #expect(try await client.get("/sites/alpha?after=forged", session: browser).status == .unprocessableContent)
        }
    }

    @Test func visitPagesSearchesAndAnswers304ToItsOwnETag() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        // 30 more published packages: copies of the released one under other ids and names (the same signed manifest).
        for number in 1...30 {
            let id = String(format: "copy-%02d", number)
            try await app.database.execute(
                """
                INSERT INTO package (id, tourId, siteId, currentVersion, isVisible, createdAt, updatedAt)
                SELECT ?, NULL, siteId, currentVersion, 1, createdAt, updatedAt FROM package WHERE id = ?
                """,
                [id, seed.packageId]
            )
            try await app.database.execute(
                """
                INSERT INTO packageVersion (packageId, version, requestId, name, description, mapName, sha256, size, signature,
                    manifestJSON, releasedBy, createdAt)
                SELECT ?, version, NULL, ?, description, mapName, sha256, size, signature, manifestJSON, releasedBy, createdAt
                FROM packageVersion WHERE packageId = ?
                """,
                [id, "Copy \(number)", seed.packageId]
            )
        }
        try await app.test { client in
            func ids(_ html: String) -> [String] {
                html.components(separatedBy: "data-package-id=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
            }
            let first = try await client.get("/visit", session: nil)
            #expect(first.status == .ok)
            #expect(ids(first.text).count == VisitController.toursPerPage)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"), "a strong validator")
            #expect(first.headers[.cacheControl] == "no-cache")
            #expect(etag == HTTPCaching.etag(of: first.body), "the ETag is the hash of the bytes sent")
            #expect(first.headers[.setCookie] == nil, "nothing personal: nginx keeps no answer that sets a cookie")

            let again = try await client.get("/visit", session: nil, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            #expect(again.headers[.eTag] == etag)
            #expect(try await client.get("/visit", session: nil, headers: [.ifNoneMatch: "\"other\""]).status == .ok)

            let range = try #require(first.text.range(of: "rel=\"next\" href=\""))
            let next = String(first.text[range.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
            let second = try await client.get(next, session: nil)
            #expect(second.headers[.eTag] != etag)
            let all = ids(first.text) + ids(second.text)
            #expect(Set(all).count == 31, "every published tour once: \(all)")
            #expect(!all.contains(seed.hiddenPackageId))
            #expect(!second.text.contains("rel=\"next\""))

            let searched = try await client.get("/visit?q=copy+2", session: nil)
            #expect(ids(searched.text).sorted() == ["copy-02"] + (20...29).map { "copy-\($0)" })
            #expect(searched.text.contains("value=\"copy 2\""))
            #expect(try await client.get("/visit?q=nothing+like+it", session: nil).text.contains("No tours match."))
            #expect(try await client.get("/visit?after=\(next.split(separator: "=").last!)x", session: nil).status == .unprocessableContent)

            // A change to what is listed changes the page, and so its ETag.
            try await app.database.setPackageVisible(id: "copy-01", visible: false, actor: .system)
            let changed = try await client.get("/visit", session: nil, headers: [.ifNoneMatch: etag])
            #expect(changed.status == .ok)
            #expect(!ids(changed.text).contains("copy-01"))

            // The page is kept rendered between changes: asked again, the same bytes; a site's new name shows at once.
            let kept = try await client.get("/visit", session: nil)
            #expect(kept.headers[.eTag] == changed.headers[.eTag])
            #expect(kept.text == changed.text)
            try await app.database.execute("UPDATE site SET name = 'Renamed Park'", [])
            let renamed = try await client.get("/visit", session: nil, headers: [.ifNoneMatch: try #require(kept.headers[.eTag])])
            #expect(renamed.status == .ok)
            #expect(renamed.text.contains("Renamed Park"))
        }
    }

    /// Each list query, in each of its forms, searches an index in list order: no `SCAN <table>` without an index, and
    /// no sort of its own (a temp B-tree would read every row before the first is answered).
    @Test func everyListQuerySearchesAnIndex() async throws {
        let (app, seed) = try await TestApp.seeded()
        let position = TourListPosition(name: "M", id: 5)
        var queries: [(String, (String, StatementArguments))] = []
        for state in [nil, TourState.draft] {
            for query in ["", "walk"] {
                let filter = TourListFilter(state: state, query: query)
                let label = "tours state=\(state?.rawValue ?? "any") q=\(query)"
                queries.append(
                    ("\(label) first", AppDatabase.tourListQuery(siteId: seed.alphaId, filter: filter, after: nil, before: nil, limit: 51))
                )
                queries.append(
                    ("\(label) after", AppDatabase.tourListQuery(siteId: seed.alphaId, filter: filter, after: position, before: nil, limit: 51))
                )
                queries.append(
                    ("\(label) before", AppDatabase.tourListQuery(siteId: seed.alphaId, filter: filter, after: nil, before: position, limit: 51))
                )
            }
        }
        for site in [nil, "alpha"] {
            for query in ["", "loop"] {
                for after in [nil, (siteId: Int64(1), packageId: "abc")] {
                    let label = "visit site=\(site ?? "any") q=\(query) after=\(after != nil)"
                    queries.append((label, AppDatabase.visitorListQuery(siteSlug: site, query: query, after: after, limit: 25)))
                }
            }
        }
        for (label, (sql, arguments)) in queries {
            let plan = try await app.database.rows("EXPLAIN QUERY PLAN " + sql, arguments).map { $0["detail"] as String }
            #expect(!plan.isEmpty)
            for step in plan {
                let scansTable = step.hasPrefix("SCAN ") && !step.contains("USING INDEX") && !step.contains("USING COVERING INDEX")
                #expect(!scansTable, "\(label): \(step)")
                #expect(!step.contains("TEMP B-TREE"), "\(label): \(step)")
            }
        }
    }
}
