import Foundation
import GRDB
import PackageFormat

/// A released version as the events route checks an event against it: the stops and languages of its manifest.
struct EventVersionFacts: Sendable {
    let waypointIds: Set<Int64>
    let languages: Set<String>
}

/// A package the statistics page shows: its tour's name now (or the last release's, for a tour since deleted) and
/// the names of the tour's stops by the ids manifests carry.
struct StatsPackage: Sendable {
    let packageId: String
    let tourId: Int64?
    let name: String
    let stops: [(id: Int64, order: Int, name: String)]
}

/// One stored count.
struct VisitCountRow: Sendable, FetchableRecord, Decodable {
    var day: String
    var packageId: String
    var version: Int
    var kind: VisitEventKind
    var waypointId: String
    var language: String
    var source: String
    var count: Int
}

struct DownloadCountRow: Sendable, FetchableRecord, Decodable {
    var day: String
    var packageId: String
    var version: Int
    var count: Int
}

extension AppDatabase {
    /// Of `packageIds`, the published ones (visible, with a current version), each with its released version numbers.
    func publishedVersionNumbers(of packageIds: Set<String>) async throws -> [String: Set<Int>] {
        guard !packageIds.isEmpty else { return [:] }
        return try await read { db in
            let ids = Array(packageIds)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT packageVersion.packageId, packageVersion.version FROM packageVersion
                    JOIN package ON package.id = packageVersion.packageId
                    WHERE package.isVisible = 1 AND package.currentVersion IS NOT NULL
                    AND packageVersion.packageId IN (\(databaseQuestionMarks(count: ids.count)))
                    """,
                arguments: StatementArguments(ids)
            )
            return rows.reduce(into: [String: Set<Int>]()) { $0[$1["packageId"], default: []].insert($1["version"]) }
        }
    }

    /// The stops and languages of one released version's manifest (nil when there is no such version).
    func eventVersionFacts(packageId: String, version: Int) async throws -> EventVersionFacts? {
        guard let stored = try await packageVersion(packageId: packageId, version: version) else { return nil }
        let manifest = try stored.decodedManifest()
        return EventVersionFacts(waypointIds: Set(manifest.waypoints.compactMap(\.id)), languages: Set(manifest.languages ?? []))
    }

    /// Adds each event's count to its row, in one transaction: the whole post counts, or none of it. Anonymous by
    /// design, so no audit event: a row says how many, never who.
    func countVisitEvents(_ counts: [VisitEvent: Int]) async throws {
        guard !counts.isEmpty else { return }
        try await write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO visitCount (day, packageId, version, kind, waypointId, language, source, count)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (day, packageId, version, kind, waypointId, language, source) DO UPDATE SET count = count + excluded.count
                    """
            )
            for (event, count) in counts {
                try statement.execute(arguments: [
                    event.day, event.packageId, event.version, event.kind, event.waypointId, event.language, event.source, count,
                ])
            }
        }
    }

    /// Adds one complete download of a version to today's (UTC) count. Part of `recordVerifiedDownload`'s transaction.
    static func countDownload(_ db: Database, packageId: String, version: Int, day: String) throws {
        try db.execute(
            sql: """
                INSERT INTO downloadCount (day, packageId, version, count) VALUES (?, ?, ?, 1)
                ON CONFLICT (packageId, version, day) DO UPDATE SET count = count + 1
                """,
            arguments: [day, packageId, version]
        )
    }

    /// The packages of a site's tours that the statistics cover for this reader: every one, or (`createdBy`) only
    /// those of tours that user created. Ordered by name.
    func statsPackages(siteId: Int64, createdBy: Int64?) async throws -> [StatsPackage] {
        try await read { db in
            var sql = """
                SELECT package.id AS packageId, package.tourId AS tourId,
                       COALESCE(tour.name, (SELECT name FROM packageVersion WHERE packageVersion.packageId = package.id
                                             ORDER BY version DESC LIMIT 1), package.id) AS name
                FROM package LEFT JOIN tour ON tour.id = package.tourId
                WHERE package.siteId = ?
                """
            var arguments: StatementArguments = [siteId]
            if let createdBy {
                sql += " AND tour.createdBy = ?"
                arguments += [createdBy]
            }
            sql += " ORDER BY name COLLATE NOCASE, package.id"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let tourId: Int64? = row["tourId"]
                var stops: [(id: Int64, order: Int, name: String)] = []
                if let tourId {
                    stops = try Row.fetchAll(
                        db,
                        sql: "SELECT id, position, name FROM waypoint WHERE tourId = ? ORDER BY position",
                        arguments: [tourId]
                    )
                    .enumerated().map { (id: $1["id"], order: $0 + 1, name: $1["name"]) }
                }
                return StatsPackage(packageId: row["packageId"], tourId: tourId, name: row["name"], stops: stops)
            }
        }
    }

    /// The stored counts of these packages from `from` to `to` (both `YYYY-MM-DD`, included).
    func visitCounts(packageIds: [String], from: String, to: String) async throws -> [VisitCountRow] {
        guard !packageIds.isEmpty else { return [] }
        return try await read { db in
            try VisitCountRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM visitCount WHERE packageId IN (\(databaseQuestionMarks(count: packageIds.count))) AND day BETWEEN ? AND ?
                    """,
                arguments: StatementArguments(packageIds) + [from, to]
            )
        }
    }

    func downloadCounts(packageIds: [String], from: String, to: String) async throws -> [DownloadCountRow] {
        guard !packageIds.isEmpty else { return [] }
        return try await read { db in
            try DownloadCountRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM downloadCount WHERE packageId IN (\(databaseQuestionMarks(count: packageIds.count))) AND day BETWEEN ? AND ?
                    """,
                arguments: StatementArguments(packageIds) + [from, to]
            )
        }
    }
}
