import Foundation
import GRDB
import Testing

@testable import TrailServer

/// A publish request's frozen tour and its scan report are typed JSON columns. What the build wrote reads
/// back as values; a damaged column is an error, not a silent default (such as a "?" in the review queue).
@Suite(.scratch) struct TypedColumnsTests {
    /// A package released through the API: every table these tests read has rows.
    static func release(_ env: TestEnv) async throws -> ReleasedPackage {
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        return try #require(box.released)
    }

    @Test func publishRequestJSONColumnsReadBackAndDamageIsAnError() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let released = try await Self.release(env)

        let row = try #require(
            try await env.database.rows(
                "SELECT id, json_valid(snapshot) AS snapshotIsJSON, json_valid(scanReport) AS reportIsJSON FROM publishRequest WHERE packageId = ?",
                [released.packageId]
            ).first
        )
        #expect(row["snapshotIsJSON"] as Int == 1 && row["reportIsJSON"] as Int == 1, "stored as JSON text SQLite can read")
        let id: String = row["id"]
        let request = try #require(try await env.database.publishRequest(id: id))
        #expect(request.snapshot.tourId == env.seed.tourId && !request.snapshot.waypoints.isEmpty)
        let report = try #require(request.scanReport)
        #expect(report.count == request.snapshot.fileCount && report.allSatisfy { $0.sha256.count == 64 && !$0.verdict.isEmpty })

        try await env.database.write {
            try $0.execute(sql: "UPDATE publishRequest SET snapshot = '{\"tourId\": ' WHERE id = ?", arguments: [id])
        }
        var refused: (any Error)?
        do { _ = try await env.database.publishRequest(id: id) } catch { refused = error }
        #expect(refused is DecodingError, "a damaged snapshot is an error, not a default: \(String(describing: refused))")
    }

    /// A tour's route is a typed JSON column too: stored as a position array, read back as the same `RoutePath`, and a
    /// damaged one is an error when the tour is read (not "no route", which would drop it from the next package).
    @Test func tourRouteIsATypedColumn() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let route = try RoutePath(positions: [[-122.2412345678, 44.39], [-122.19, 44.395, 1203.44], [-122.14, 44.4]])
        try await env.database.setRoute(tourId: env.seed.tourId, route: route, actor: AuditActor(userId: nil, ipAddress: "test"))
        let stored = try #require(
            try await env.database.rows("SELECT route, json_type(route) AS type FROM tour WHERE id = ?", [env.seed.tourId]).first
        )
        #expect(stored["type"] as String? == "array", "stored as JSON SQLite can read: \(String(describing: stored["route"] as String?))")
        let read = try #require(try await env.database.tour(id: env.seed.tourId)?.route)
        #expect(read.points.count == 3 && read.points[0].longitude == -122.2412346, "7 decimals kept, as before")
        #expect(read.points[1].elevation == 1203.4 && read.points[2].elevation == nil)

        for damaged in ["[[-122.2, 44.3", "[[500, 44.3], [1, 2]]", "[[1, 2]]", "{\"type\": \"LineString\"}"] {
            try await env.database.write {
                try $0.execute(sql: "UPDATE tour SET route = ? WHERE id = ?", arguments: [damaged, env.seed.tourId])
            }
            var refused: (any Error)?
            do { _ = try await env.database.tour(id: env.seed.tourId) } catch { refused = error }
            // Not JSON at all is Foundation's parse error (as GRDB reports it); a wrong shape or a bad point is a DecodingError.
            #expect(
                damaged.hasSuffix("44.3") ? refused != nil : refused is DecodingError,
                "\(damaged) is an error, not a missing route: \(String(describing: refused))"
            )
        }
    }

    /// Snapshots frozen before the route was typed hold it as a JSON string inside the snapshot; they still read, as
    /// the same route, so an old request still builds its package.
    @Test func snapshotsReadTheRouteInBothShapes() throws {
        let legacy =
            #"{"tourId":1,"name":"T","description":"","mapName":"t","siteName":"S","siteSlug":"s","frame":{"north":1,"south":0,"east":1,"west":0},"minZoom":11,"maxZoom":15,"waypoints":[],"route":"[[-122.2400000,44.3900000],[-122.1900000,44.3950000,12.5]]"}"#
        let current =
            #"{"tourId":1,"name":"T","description":"","mapName":"t","siteName":"S","siteSlug":"s","frame":{"north":1,"south":0,"east":1,"west":0},"minZoom":11,"maxZoom":15,"waypoints":[],"route":[[-122.24,44.39],[-122.19,44.395,12.5]]}"#
        let old = try JSONDecoder().decode(TourSnapshot.self, from: Data(legacy.utf8))
        let new = try JSONDecoder().decode(TourSnapshot.self, from: Data(current.utf8))
        #expect(old.route != nil && old.route == new.route)
        let damaged = current.replacingOccurrences(of: "[[-122.24,44.39],", with: "[[-122.24],")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TourSnapshot.self, from: Data(damaged.utf8)) }
    }

    /// Timestamps are `Date`s in the records and stay numbers (seconds since 1970) in every table: GRDB's default for a
    /// `Date` is text, which would sort and compare wrongly against the numbers raw SQL writes (`UnixTimeRecord`).
    @Test func timestampsAreDatesStoredAsNumbers() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let before = Date().addingTimeInterval(-1)
        let released = try await Self.release(env)
        let version = try #require(try await env.database.packageVersion(packageId: released.packageId, version: 1))
        #expect(version.createdAt >= before && version.createdAt <= Date(), "read back as the moment it was written")

        let kinds = try await env.database.read { db -> [String: Set<String>] in
            var kinds: [String: Set<String>] = [:]
            for table in try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'"
            ) {
                for column in try db.columns(in: table) where column.name.hasSuffix("At") {
                    let found = try String.fetchAll(db, sql: "SELECT DISTINCT typeof(\(column.name)) FROM \(table)")
                    kinds["\(table).\(column.name)"] = Set(found)
                }
            }
            return kinds
        }
        let written = kinds.filter { !$0.value.subtracting(["null"]).isEmpty }
        #expect(written.count >= 10, "the release wrote timestamps in many tables: \(written.keys.sorted())")
        let notNumbers = written.filter { !$0.value.subtracting(["null", "real", "integer"]).isEmpty }
        #expect(notNumbers.isEmpty, "timestamps stored as something else than numbers: \(notNumbers)")
    }

    /// A released version's manifest is exact signed text, never rewritten; when it cannot be read, the pages that need
    /// it answer with an error (and the log says why) instead of a page without the package (a request page showing no
    /// files and no update cost, or a map preview answering 404 as if the version did not exist).
    @Test func damagedManifestIsAnErrorNotAnEmptyPage() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let released = try await Self.release(env)
        let requestId = try #require(
            try await env.database.read {
                try String.fetchOne($0, sql: "SELECT id FROM publishRequest WHERE packageId = ?", arguments: [released.packageId])
            }
        )
        try await env.app.test { client in
            let author = try await client.signIn("author@test.org")
            #expect(try await client.get("/requests/\(requestId)", session: author).status == .ok)
            try await env.database.write {
                try $0.execute(
                    sql: "UPDATE packageVersion SET manifestJSON = '{\"formatVersion\": 1' WHERE packageId = ?",
                    arguments: [released.packageId]
                )
                try $0.execute(sql: "UPDATE publishRequest SET manifestJSON = '[]' WHERE id = ?", arguments: [requestId])
            }
            let page = try await client.get("/requests/\(requestId)", session: author)
            #expect(page.status == .internalServerError, "\(page.status) \(page.text.prefix(300))")
            #expect(try await client.get("/packages/\(released.packageId)/versions/1/preview", session: author).status == .internalServerError)
            #expect(
                try await client.get("/packages/\(released.packageId)/versions/2/preview", session: author).status == .notFound,
                "a version that does not exist is still a 404"
            )
        }
        var refused: (any Error)?
        do { _ = try await env.database.distributionItems(paths: env.paths, signingKey: nil) } catch { refused = error }
        #expect(refused != nil, "the storage sync stops with the error instead of leaving the version's files out of the bucket")
    }
}
