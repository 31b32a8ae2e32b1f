import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// The mobile read routes: every change is visible at once, an unchanged answer is the same bytes (so its ETag gives a
/// 304), and no answer is stale after a rollback. Behind nginx its `proxy_cache` keeps them for a second; `NginxTests`
/// and the browser suite's nginx test cover that part.
@Suite(.scratch) struct ReadRoutesTests {
    static func get(_ client: some TestClientProtocol, _ uri: String, ifNoneMatch: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    static func version(_ response: TestResponse) -> Int? {
        if let object = response.jsonObject["version"] as? Int { return object }
        return ((try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [[String: Any]])?.first?["version"] as? Int
    }

    /// Through the router, and through the real server: every change must show at once on both.
    @Test(
        "release, rollback, unpublish, publish, a site edit and another process's commit each show at once; unchanged answers are the same bytes and 304",
        arguments: [false, true]
    )
    func changesShowAtOnce(live: Bool) async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test(live ? .live : .router) { client in
            let first = try await env.releaseThroughAPI(client)
            let list = "/api/v1/sites/alpha/packages"
            let detail = "/api/v1/packages/\(first.packageId)"
            let listV1 = try await Self.get(client, list)
            let detailV1 = try await Self.get(client, detail)
            #expect(Self.version(listV1) == 1 && Self.version(detailV1) == 1)
            let listETag = try #require(listV1.headers[.eTag])
            let detailETag = try #require(detailV1.headers[.eTag])

            // Unchanged: the same bytes, 304 for the ETag, and a verify report (a write) changes neither.
            #expect(try await Self.get(client, list).body == listV1.body)
            #expect(try await Self.get(client, list, ifNoneMatch: listETag).status == .notModified)
            #expect(try await Self.get(client, detail, ifNoneMatch: "\"other\", \(detailETag)").status == .notModified)
            let verify = try await client.execute(
                uri: "\(detail)/verify",
                method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"sha256":"\#(first.sha256)","version":1}"#)
            )
            #expect(verify.status == .ok)
            #expect(try await Self.get(client, list, ifNoneMatch: listETag).status == .notModified)

            // A release: the next answer is version 2, and the old ETag no longer matches.
            let second = try await env.releaseThroughAPI(client, seed: 31)
            #expect(second.version == 2)
            let listV2 = try await Self.get(client, list, ifNoneMatch: listETag)
            #expect(listV2.status == .ok && Self.version(listV2) == 2)
            #expect(Self.version(try await Self.get(client, detail)) == 2)

            // A rollback: version 1 again at once, byte for byte what it was (so its first ETag matches again).
            let manager = try await env.token("manager@test.org")
            #expect(try await client.managePackage(first.packageId, "rollback", token: manager, json: #"{"version":1}"#).status == .ok)
            #expect(try await Self.get(client, detail).body == detailV1.body)
            #expect(try await Self.get(client, list, ifNoneMatch: listETag).status == .notModified)
            let catalog = try await Self.get(client, "/api/v1/catalog")
            #expect((catalog.jsonObject["packages"] as? [[String: Any]])?.first?["version"] as? Int == 1)

            // Unpublish: gone at once; publish again: back.
            #expect(try await client.managePackage(first.packageId, "unpublish", token: manager).status == .ok)
            #expect(try await Self.get(client, detail).status == .gone)
            #expect(try await Self.get(client, list).text == "[]")
            #expect(try await client.managePackage(first.packageId, "publish", token: manager).status == .ok)
            #expect(try await Self.get(client, detail).body == detailV1.body)

            // A site renamed by an admin shows in /sites at once.
            let sitesBefore = try await Self.get(client, "/api/v1/sites")
            #expect(sitesBefore.text.contains("Alpha District"))
            let site = try #require(try await env.database.site(id: env.seed.alphaId))
            _ = try await env.database.updateSite(
                id: site.id,
                SiteInput(
                    slug: site.slug,
                    name: "Alpha Lakes",
                    description: site.description,
                    requiredApprovals: site.requiredApprovals
                ),
                actor: .system
            )
            let sitesAfter = try await Self.get(client, "/api/v1/sites", ifNoneMatch: sitesBefore.headers[.eTag])
            #expect(sitesAfter.status == .ok && sitesAfter.text.contains("Alpha Lakes"))

            // Another process (the command line beside the server) commits to the same file: shown at once as well.
            let other = try DatabaseQueue(path: env.databasePath)
            try await other.write { db in try db.execute(sql: "UPDATE site SET name = 'Alpha Meadows' WHERE id = ?", arguments: [env.seed.alphaId]) }
            let sitesElsewhere = try await Self.get(client, "/api/v1/sites", ifNoneMatch: sitesAfter.headers[.eTag])
            #expect(sitesElsewhere.status == .ok && sitesElsewhere.text.contains("Alpha Meadows"))
        }
    }
}
