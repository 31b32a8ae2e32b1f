import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// Manifest waypoints carry the server's waypoint id, the same in every version, so a closure names the same stop in
/// every saved copy; an alert about a released tour names its package in the catalog.
@Suite(.scratch) struct AlertManifestTests {
    /// The signed manifest of one version, as `GET /packages/{id}/versions/{n}/manifest` serves it.
    static func manifest(_ client: some TestClientProtocol, _ packageId: String, _ version: Int) async throws -> [[String: Any]] {
        let response = try await client.execute(uri: "/api/v1/packages/\(packageId)/versions/\(version)/manifest", method: .get)
        #expect(response.status == .ok)
        return response.jsonObject["waypoints"] as? [[String: Any]] ?? []
    }

    @Test("manifest waypoint ids match the API's across two versions; a tour's alert names its package")
    func waypointIdsAreStable() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let first = try await env.releaseThroughAPI(client)
            let author = try await env.token("author@test.org")
            let tour = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)", token: author)
            let apiIds = (tour.jsonObject["waypoints"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            #expect(!apiIds.isEmpty)
            let v1 = try await Self.manifest(client, first.packageId, first.version)
            #expect(v1.compactMap { $0["id"] as? Int } == apiIds, "\(v1)")
            // A second stop, then version 2: the first stop keeps its id, the new one has its own.
            let added = try await client.api(
                .post,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints",
                token: author,
                json: #"{"name":"Summit","latitude":44.41,"longitude":-122.05,"description":"Top."}"#
            )
            #expect(added.status == .created, "\(added.text)")
            let addedId = try #require(added.jsonObject["id"] as? Int)
            let second = try await env.releaseThroughAPI(client, seed: 31)
            #expect(second.version == first.version + 1)
            let v2 = try await Self.manifest(client, second.packageId, second.version)
            #expect(v2.compactMap { $0["id"] as? Int } == apiIds + [addedId], "\(v2)")
            #expect(v2.first?["name"] as? String == v1.first?["name"] as? String)
            // A closure of the new stop on this tour: the catalog names the package and the stop's id.
            let manager = try await env.token("manager@test.org")
            let posted = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/alerts",
                token: manager,
                json: AlertAPITests.body(tourId: env.seed.tourId, closed: [Int64(addedId)])
            )
            #expect(posted.status == .created, "\(posted.text)")
            #expect(posted.jsonObject["packageId"] as? String == second.packageId)
            let read = try await AlertAPITests.independentlyRead(client)
            let alert = try #require(read.alerts.first)
            #expect(alert["packageId"] as? String == second.packageId)
            #expect(alert["closedWaypoints"] as? [Int] == [addedId])
        }
    }

    @Test("a tour's alert before the tour's first release stays out of the catalog, and joins it with the release")
    func aTourAlertWaitsForTheFirstRelease() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let manager = try await env.token("manager@test.org")
            let posted = try await client.api(
                .post,
                "/api/v1/manage/sites/alpha/alerts",
                token: manager,
                json: AlertAPITests.body(title: "Draft tour closed", tourId: env.seed.tourId, closed: [env.seed.waypointId])
            )
            #expect(posted.status == .created, "\(posted.text)")
            #expect(posted.jsonObject["packageId"] == nil)
            // Listed for the managers, but phones know tours by package: without one it would read as site-wide.
            #expect(try await client.api(.get, "/api/v1/manage/sites/alpha/alerts", token: manager).jsonArray.count == 1)
            let before = try await AlertAPITests.independentlyRead(client)
            #expect(before.alerts.isEmpty, "\(before.alerts)")
            let released = try await env.releaseThroughAPI(client)
            let after = try await AlertAPITests.independentlyRead(client)
            #expect(after.version > before.version)
            let alert = try #require(after.alerts.first, "the release brings the alert into the catalog")
            #expect(alert["packageId"] as? String == released.packageId)
            #expect(alert["title"] as? String == "Draft tour closed")
        }
    }
}
