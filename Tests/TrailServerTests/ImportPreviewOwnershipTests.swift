import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// An import preview belongs to the person and the tour that made it: its id, seen in a URL, proves nothing.
@Suite struct ImportPreviewOwnershipTests {
    @Test("another user's preview id → 404 (view and apply), and nothing is applied; the owner's works")
    func previewsAreTiedToTheirOwner() async throws {
        let (app, seed) = try await TestApp.seeded()
        try FileManager.default.createDirectory(at: app.dependencies.paths.uploads, withIntermediateDirectories: true)
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let posted = try await client.tilesUpload(
                "/tours/\(seed.tourId)/import",
                data: RouteFixtures.geoJSON,
                fileName: "stops.geojson",
                session: author
            )
            #expect(posted.status == .seeOther, "\(posted.status) \(posted.text)")
            let location = try #require(posted.location)
            #expect(location.hasPrefix("/tours/\(seed.tourId)/import/import-"))
            let before = try await app.database.waypoints(tourId: seed.tourId).count

            // The manager may edit the tour, but this preview is the author's.
            let manager = try await client.signIn("manager@test.org")
            #expect(try await client.get(location, session: manager).status == .notFound)
            #expect(try await client.post(location + "/apply", form: [:], session: manager).status == .notFound)
            #expect(try await app.database.waypoints(tourId: seed.tourId).count == before, "nothing applied")
            // The same id under another tour is not the preview either.
            let admin = try await client.signIn("admin@test.org")
            let importId = String(location.split(separator: "/").last!)
            #expect(try await client.get("/tours/\(seed.bravoTourId)/import/\(importId)", session: admin).status == .notFound)

            // The owner sees it and applies it.
            let page = try await client.get(location, session: author)
            #expect(page.status == .ok && page.text.contains("Lookout"))
            let applied = try await client.post(location + "/apply", form: [:], session: author)
            #expect(applied.status == .seeOther && applied.location == "/tours/\(seed.tourId)")
            #expect(try await app.database.waypoints(tourId: seed.tourId).count == before + 1)
        }
    }
}
