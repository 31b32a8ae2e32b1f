import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A site's storage quota is decided in the write transaction that stores a file, after the rows of what it replaces
/// went out. A check made before the write (the quick 413 that spares a ranger uploading gigabytes in vain) cannot
/// see a file stored beside it in the meantime; two such uploads at once would both pass it.
@Suite(.scratch) struct QuotaTransactionTests {
    static func tileset(tourId: Int64, size: Int64, name: String) -> TourTileset {
        TourTileset(
            tourId: tourId,
            originalName: name,
            size: size,
            sha256: String(repeating: "a", count: 64),
            format: "png",
            minZoom: 10,
            maxZoom: 12,
            boundsWest: 0,
            boundsSouth: 0,
            boundsEast: 1,
            boundsNorth: 1,
            attribution: "",
            tileCount: 1,
            scanStatus: .pending,
            scanDetail: "",
            storedPath: "tiles/\(name)",
            uploadedBy: nil,
            createdAt: Date(),
            scannedAt: nil
        )
    }

    static func setQuota(_ database: AppDatabase, siteId: Int64, bytes: Int64) async throws {
        let site = try #require(try await database.site(id: siteId))
        _ = try await database.updateSite(
            id: siteId,
            SiteInput(
                slug: site.slug,
                name: site.name,
                description: site.description,
                requiredApprovals: 1,
                storageQuotaBytes: bytes
            ),
            actor: .system
        )
    }

    @Test(
        "a tileset that overruns the quota is refused by the transaction that stores it (413 and the quota message), and nothing of it stays; a smaller replacement fits because the old one's size is given back"
    )
    func theStoringTransactionDecides() async throws {
        let (app, seed) = try await TestApp.seeded()
        let database = app.database
        try await Self.setQuota(database, siteId: seed.alphaId, bytes: 100_000)
        let other = try await database.createTour(siteId: seed.alphaId, TourInput(name: "Other", description: ""), actor: .system)
        _ = try await database.replaceTileset(Self.tileset(tourId: seed.tourId, size: 60_000, name: "first"), actor: .system)
        let before = try await database.snapshot()
        do {
            // Passed no earlier check: this is the race's second writer, whose check ran before the first file was stored.
            _ = try await database.replaceTileset(Self.tileset(tourId: other.id, size: 60_000, name: "second"), actor: .system)
            Issue.record("a second tileset was stored past the quota")
        } catch let refusal as OverQuota {
            #expect(refusal.status == .contentTooLarge)
            #expect(refusal.message.contains("has used its storage quota"), "\(refusal.message)")
        }
        try await database.expectUnchanged(since: before)
        #expect(try await database.tileset(tourId: other.id) == nil)
        // The same tour's tileset replaced by a larger one: 60 000 given back, 90 000 taken, within 100 000.
        _ = try await database.replaceTileset(Self.tileset(tourId: seed.tourId, size: 90_000, name: "larger"), actor: .system)
        #expect(try await database.tileset(tourId: seed.tourId)?.size == 90_000)
        #expect(try await database.storedBytes(siteId: seed.alphaId) == 90_000)
    }

    @Test(
        "two map tile files uploaded at once to two tours of one site, each fitting alone but not both: one is stored (201), the other refused (413), and the site stays within its quota"
    )
    func concurrentTileUploadsStayWithinTheQuota() async throws {
        let env = try await TestEnv.tiles()
        let fixture = env.folder.appendingPathComponent("topo.mbtiles")
        try MBTilesFixture.write(.raster, to: fixture)
        let data = try Data(contentsOf: fixture)
        let quota = Int64(data.count) * 3 / 2
        try await Self.setQuota(env.database, siteId: env.seed.alphaId, bytes: quota)
        let other = try await env.database.createTour(siteId: env.seed.alphaId, TourInput(name: "Other", description: ""), actor: .system)
        let frame = TestEnv.frame
        _ = try await env.database.setFrame(
            tourId: other.id,
            FrameInput(
                north: frame.north,
                south: frame.south,
                east: frame.east,
                west: frame.west,
                minZoom: 11,
                maxZoom: 15
            ),
            maxAreaKm2: 2500,
            actor: .system
        )
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            async let first = client.tilesUpload("/api/v1/manage/tours/\(env.seed.tourId)/tiles", data: data, token: token)
            async let second = client.tilesUpload("/api/v1/manage/tours/\(other.id)/tiles", data: data, token: token)
            let answers = try await [first, second]
            #expect(answers.filter { $0.status == .created }.count == 1, "\(answers.map(\.status))")
            #expect(answers.filter { $0.status == .contentTooLarge }.count == 1, "\(answers.map(\.status))")
            let refused = try #require(answers.first { $0.status == .contentTooLarge })
            #expect(refused.text.contains("has used its storage quota"), "\(refused.text)")
        }
        #expect(try await env.database.storedBytes(siteId: env.seed.alphaId) <= quota)
        #expect(try await env.database.scalar("SELECT COUNT(*) FROM tourTileset") as Int? == 1)
    }
}
