import Foundation
import GRDB

extension AppDatabase {
    /// One read transaction, so the gauges of one scrape agree with each other.
    func metricsState() async throws -> MetricsState {
        try await read { db in
            var state = MetricsState()
            for row in try Row.fetchAll(db, sql: "SELECT scanStatus, COUNT(*) AS n FROM asset GROUP BY scanStatus") {
                state.assetsByStatus[row["scanStatus"]] = row["n"]
            }
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM publishRequest GROUP BY state") {
                state.requestsByState[row["state"]] = row["n"]
            }
            state.scanJobs = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scanJob") ?? 0
            state.buildJobs = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM buildJob") ?? 0
            state.publishedPackages =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM package WHERE currentVersion IS NOT NULL AND isVisible = 1") ?? 0
            state.packageVersions = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM packageVersion") ?? 0
            state.verifiedDownloads = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(verifiedCount), 0) FROM packageVersion") ?? 0
            state.catalogVersion = try Int.fetchOne(db, sql: "SELECT version FROM catalogState WHERE id = 1") ?? 0
            return state
        }
    }
}
