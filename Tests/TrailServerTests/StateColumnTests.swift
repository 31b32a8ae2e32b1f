import Foundation
import GRDB
import Testing

@testable import TrailServer

/// Every state column of the database allows exactly its Swift enum's cases, so a case added in Swift
/// without a migration (or the reverse) fails here, and a value outside the list never reaches a row.
@Suite struct StateColumnTests {
    /// (table, column, the enum's raw values).
    static let stateColumns: [(String, String, [String])] = [
        ("tour", "state", TourState.allCases.map(\.rawValue)),
        ("publishRequest", "state", PublishState.allCases.map(\.rawValue)),
        ("review", "decision", ReviewDecision.allCases.map(\.rawValue)),
        ("membership", "role", SiteRole.allCases.map(\.rawValue)),
        ("pendingSignIn", "stage", PendingStage.allCases.map(\.rawValue)),
        ("asset", "kind", AssetKind.allCases.map(\.rawValue)),
        ("asset", "scanStatus", ScanStatus.allCases.map(\.rawValue)),
        ("asset", "companionRole", CompanionRole.allCases.map(\.rawValue)),
        ("tourTileset", "scanStatus", ScanStatus.allCases.map(\.rawValue)),
        ("distributionJob", "reason", DistributionJob.Reason.allCases.map(\.rawValue)),
        ("distributionJob", "state", DistributionJob.State.allCases.map(\.rawValue)),
        ("optimizedCopy", "state", OptimizeState.allCases.map(\.rawValue)),
        ("visitCount", "kind", VisitEventKind.allCases.map(\.rawValue)),
    ]

    /// The quoted values of the first `column … IN ('a', 'b')` (a CHECK or a trigger's WHEN) in `sql`.
    static func allowedValues(of column: String, in sql: String) -> [String]? {
        guard let match = sql.range(of: "\(column)\\s+(NOT\\s+)?IN\\s*\\(", options: .regularExpression) else { return nil }
        let rest = sql[match.upperBound...]
        guard let close = rest.firstIndex(of: ")") else { return nil }
        return rest[..<close].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
    }

    @Test("each state column's CHECK (or trigger) lists exactly its enum's cases")
    func listsMatchEnums() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: MigrationTests.migrationsFolder)
        try await database.read { db in
            for (table, column, cases) in Self.stateColumns {
                let sources = try String.fetchAll(
                    db,
                    sql: "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('table', 'trigger')",
                    arguments: [table]
                )
                let lists = sources.compactMap { sql -> [String]? in
                    // The table's own column definition, or a trigger guarding NEW.<column>.
                    if sql.hasPrefix("CREATE TRIGGER") {
                        return sql.contains("NEW.\(column) NOT IN") ? Self.allowedValues(of: "NEW.\(column)", in: sql) : nil
                    }
                    // The column's definition, on its own line (CREATE TABLE) or after a comma (ADD COLUMN appends it).
                    guard let start = sql.range(of: "(^|[\\s,])\(column) TEXT", options: .regularExpression) else { return nil }
                    return Self.allowedValues(of: column, in: String(sql[start.lowerBound...]))
                }
                #expect(!lists.isEmpty, "\(table).\(column) has no CHECK and no trigger")
                for list in lists { #expect(Set(list) == Set(cases), "\(table).\(column): \(list) against \(cases)") }
            }
        }
    }

    @Test("a tour state outside TourState is refused on insert and on update; the allowed ones pass")
    func tourStateIsChecked() async throws {
        let database = try AppDatabase.inMemory(migrationsFolder: MigrationTests.migrationsFolder)
        try await database.write { db in
            try db.execute(sql: "INSERT INTO site (slug, name, description, requiredApprovals, createdAt) VALUES ('s', 'S', '', 1, 0)")
            let siteId = db.lastInsertedRowID
            for state in TourState.allCases {
                try db.execute(
                    sql: "INSERT INTO tour (siteId, name, mapName, state, createdAt, updatedAt) VALUES (?, 'T', 'M', ?, 0, 0)",
                    arguments: [siteId, state]
                )
            }
            let tourId = db.lastInsertedRowID
            for state in TourState.allCases {
                try db.execute(sql: "UPDATE tour SET state = ? WHERE id = ?", arguments: [state, tourId])
            }
            do {
                try db.execute(
                    sql: "INSERT INTO tour (siteId, name, mapName, state, createdAt, updatedAt) VALUES (?, 'T', 'M', 'archived', 0, 0)",
                    arguments: [siteId]
                )
                Issue.record("an unknown state was inserted")
            } catch let error as DatabaseError {
                #expect(error.message?.contains("tour.state must be one of") == true, "\(error)")
            }
            do {
                try db.execute(sql: "UPDATE tour SET state = 'Published' WHERE id = ?", arguments: [tourId])
                Issue.record("an unknown state was written")
            } catch let error as DatabaseError {
                #expect(error.message?.contains("tour.state must be one of") == true, "\(error)")
            }
            #expect(try String.fetchOne(db, sql: "SELECT state FROM tour WHERE id = ?", arguments: [tourId]) == TourState.allCases.last?.rawValue)
        }
    }
}
