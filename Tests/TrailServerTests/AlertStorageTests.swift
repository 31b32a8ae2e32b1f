import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// An alert reaches the object-storage mirror (a real SeaweedFS): posting and ending each write a durable `alert`
/// job, and the bucket's `catalog.json` is then the exact signed bytes `GET /catalog` serves, with and without it.
@Suite(.serialized, .scratch) struct AlertStorageTests {
    @Test("the bucket's catalog.json carries a posted alert and drops it once ended")
    func mirrorCarriesAlerts() async throws {
        let store = try await ObjectStore.start(.seaweedfs)
        defer { store.stop() }
        let settings = StorageSyncTests.settings(store)
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.storage = settings })
        let sync = try #require(env.app.dependencies.makeDistributionSync())
        defer { Task { await sync.shutdown() } }
        let client = store.client()
        defer { Task { await client.shutdown() } }
        try await sync.checkBucket()
        let key = "\(StorageSyncTests.prefix)/catalog.json"

        try await env.app.test { api in
            let manager = try await env.token("manager@test.org")
            let posted = try await api.api(
                .post,
                "/api/v1/manage/sites/alpha/alerts",
                token: manager,
                json: AlertAPITests.body(title: "Fire closure")
            )
            #expect(posted.status == .created, "\(posted.text)")
            let id = try #require(posted.jsonObject["id"] as? Int)
            #expect(try await env.database.waitingDistributionJobs().map(\.reason) == [.alert])
            #expect(try await sync.syncOnce().catalogUploaded)

            func bucketCatalog() async throws -> (body: Data, alerts: [[String: Any]]) {
                let body = try await client.getObject(key)
                let signature = String(decoding: try await client.getObject("\(key).sig"), as: UTF8.self)
                #expect(SignatureCheck.verify(signature: try #require(Data(base64Encoded: signature)), of: body, publicKeyBase64: env.publicKey))
                let served = try await api.execute(uri: "/api/v1/catalog", method: .get)
                #expect(Data(buffer: served.body) == body, "the bucket holds the bytes the API serves")
                let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                return (body, object["alerts"] as? [[String: Any]] ?? [])
            }
            let withAlert = try await bucketCatalog()
            #expect(withAlert.alerts.map { $0["id"] as? Int } == [id])
            #expect(withAlert.alerts.first?["title"] as? String == "Fire closure")

            #expect(try await api.api(.delete, "/api/v1/manage/alerts/\(id)", token: manager).status == .ok)
            #expect(try await env.database.waitingDistributionJobs().map(\.reason) == [.alert])
            #expect(try await sync.syncOnce().catalogUploaded)
            #expect(try await bucketCatalog().alerts.isEmpty)
            #expect(try await env.database.waitingDistributionJobs().isEmpty)
        }
    }
}
