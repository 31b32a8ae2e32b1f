import Foundation
import GRDB
import Testing
@testable import TrailServer

/// #15 item 7: a publish request's frozen tour and its scan report are typed JSON columns. What the build wrote reads
/// back as values; a damaged column is an error, not a silent default (the review queue used to show "?" for it).
@Suite struct TypedColumnsTests {
    @Test func publishRequestJSONColumnsReadBackAndDamageIsAnError() async throws {
        let env = try await PublishEnv.make(requiredApprovals: 1)
        defer { env.remove() }
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        let released = try #require(box.released)

        let row = try #require(try env.database.writer.read {
            try Row.fetchOne($0, sql: "SELECT id, json_valid(snapshot) AS snapshotIsJSON, json_valid(scanReport) AS reportIsJSON FROM publishRequest WHERE packageId = ?",
                             arguments: [released.packageId])
        })
        #expect(row["snapshotIsJSON"] as Int == 1 && row["reportIsJSON"] as Int == 1, "stored as JSON text SQLite can read")
        let id: String = row["id"]
        let request = try #require(try env.database.publishRequest(id: id))
        #expect(request.snapshot.tourId == env.seed.tourId && !request.snapshot.waypoints.isEmpty)
        let report = try #require(request.scanReport)
        #expect(report.count == request.snapshot.fileCount && report.allSatisfy { $0.sha256.count == 64 && !$0.verdict.isEmpty })

        try await env.database.writer.write { try $0.execute(sql: "UPDATE publishRequest SET snapshot = '{\"tourId\": ' WHERE id = ?", arguments: [id]) }
        var refused: (any Error)?
        do { _ = try env.database.publishRequest(id: id) } catch { refused = error }
        #expect(refused is DecodingError, "a damaged snapshot is an error, not a default: \(String(describing: refused))")
    }
}
