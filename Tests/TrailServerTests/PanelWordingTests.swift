import Foundation
import HTTPTypes
import HummingbirdTesting
import MalwareScan
import Testing

@testable import TrailServer

/// The panel's small words a newcomer stumbles on: counts in the singular, large areas grouped, a phone copy larger
/// than its original not called "Optimized", and the scanner notice for everyone whose files wait.
@Suite(.scratch) struct PanelWordingTests {
    @Test("the home page counts tours in the singular and the plural")
    func tourCounts() async throws {
        let (app, seed) = try await TestApp.seeded()
        _ = try await app.database.createSite(
            SiteInput(slug: "charlie", name: "Charlie District", description: "", requiredApprovals: 1),
            actor: .system
        )
        try await app.test { client in
            let admin = try await client.signIn("admin@test.org")
            var home = try await client.get("/sites", session: admin).text
            #expect(home.contains(#"<span class="tour-count">1 tour</span>"#), "alpha and bravo have one tour each")
            #expect(home.contains(#"<span class="tour-count">0 tours</span>"#), "charlie has none")
            #expect(!home.contains("(s)"))
            _ = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Second Walk", description: ""), actor: .system)
            home = try await client.get("/sites", session: admin).text
            #expect(home.contains(#"<span class="tour-count">2 tours</span>"#))
        }
    }

    @Test("the tour page groups a large area's thousands")
    func groupedArea() async throws {
        let (app, seed) = try await TestApp.seeded { $0.maxFrameAreaKm2 = 5_000_000 }
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let framed = try await client.post(
                "/tours/\(seed.tourId)/frame",
                form: ["north": "50", "south": "35", "east": "-100", "west": "-125", "minZoom": "3", "maxZoom": "5"],
                session: author
            )
            #expect(framed.status == .seeOther, "\(framed.text)")
            let page = try await client.get("/tours/\(seed.tourId)", session: author).text
            let area = Frame(north: 50, south: 35, east: -100, west: -125).areaKm2
            #expect(area > 1_000_000)
            #expect(page.contains(" · \(DisplayFormat.area(area)) km²"))
            #expect(page.contains(#"· \d,\d{3},\d{3} km²"#.firstMatch(in: page) ?? "missing"), "grouped like 4,247,025")
            #expect(page.contains("Largest allowed: 5,000,000 km²."))
        }
    }

    @Test("a phone copy larger than its original is not called Optimized, and says what ships")
    func largerCopyLabel() {
        let now = Date()
        var copy = OptimizedCopy(assetId: 1, state: .ready, sourceSha256: "a", settings: "s", queuedAt: now, updatedAt: now)
        copy.size = 180_000
        // Larger than a 120 kB original: converted, and the copy ships unless the ranger keeps the original.
        #expect(copy.isLarger(thanOriginal: 120_000))
        #expect(copy.label(originalSize: 120_000, useOriginal: false) == "Converted (larger than the original)")
        #expect(copy.badge(originalSize: 120_000) == "warning")
        let note = copy.largerNote(originalSize: 120_000, useOriginal: false)
        #expect(note?.contains("Keep original") == true && note?.contains(ByteFormat.string(180_000)) == true)
        #expect(copy.label(originalSize: 120_000, useOriginal: true) == "Kept the original (smaller)")
        #expect(copy.largerNote(originalSize: 120_000, useOriginal: true)?.contains("The original ships") == true)
        // Smaller than the original: the optimizer's own word stays.
        #expect(!copy.isLarger(thanOriginal: 400_000))
        #expect(copy.label(originalSize: 400_000, useOriginal: false) == "Optimized")
        #expect(copy.badge(originalSize: 400_000) == "success")
        #expect(copy.largerNote(originalSize: 400_000, useOriginal: false) == nil)
        // Only a made copy can be larger: a skipped or pending one keeps its state's label.
        copy.state = .skipped
        #expect(copy.label(originalSize: 120_000, useOriginal: false) == "Already phone-sized")
    }

    @Test("the waypoint page shows the larger copy's label and note")
    func largerCopyOnTheWaypointPage() {
        let now = Date()
        var copy = OptimizedCopy(assetId: 7, state: .ready, sourceSha256: "a", settings: "s", queuedAt: now, updatedAt: now)
        copy.size = 2_000_000
        var asset = Asset(
            id: 7,
            waypointId: 1,
            position: 0,
            kind: .audio,
            originalName: "wind.mp3",
            mimeType: "audio/mpeg",
            size: 1_000_000,
            sha256: "b",
            scanStatus: .clean,
            scanDetail: "",
            storedPath: "assets/b",
            uploadedBy: nil,
            createdAt: now,
            scannedAt: now
        )
        var row = OptimizedRow(asset: asset, copy: copy, canEdit: true)
        #expect(row.label == "Converted (larger than the original)" && row.badge == "warning")
        #expect(row.message?.contains("larger than the original") == true)
        #expect(row.ships == "the optimized copy")
        asset.useOriginal = true
        row = OptimizedRow(asset: asset, copy: copy, canEdit: true)
        #expect(row.label == "Kept the original (smaller)" && row.ships == "the original")
    }

    @Test("while the scanner has no signatures, an author whose file waits sees why and whom to ask; others do not")
    func scannerNoticeForAuthors() async throws {
        let env = try await TestEnv.media(signatures: .none)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.text(), fileName: "notes.txt")
            let id = try #require(response.mediaAssetId)
            #expect(await env.scanAll() == 0)
            #expect(env.scans.scannerReady == false)

            let author = try await client.signIn("author@test.org")
            for path in [env.waypointPage, "/sites", "/tours/\(env.seed.tourId)"] {
                let page = try await client.get(path, session: author).text
                #expect(page.contains(#"data-notice="scanner""#), "\(path)")
                #expect(page.contains("1 of your files waits for the malware scan"), "\(path)")
                #expect(page.contains("no virus signatures"), "\(path): says why")
                #expect(page.contains("admin (admin@test.org)"), "\(path): names whom to ask")
                #expect(!page.contains(#"id="scanner-warning""#), "the admin banner stays for admins")
            }
            // Someone with nothing waiting is not told about other people's files.
            let reviewer = try await client.signIn("reviewer@test.org")
            #expect(!(try await client.get("/sites", session: reviewer)).text.contains(#"data-notice="scanner""#))
            // Admins keep their banner, which carries the same hook.
            let admin = try await client.signIn("admin@test.org")
            let adminPage = try await client.get("/sites", session: admin).text
            #expect(adminPage.contains(#"id="scanner-warning" data-notice="scanner""#))

            // Signatures arrive: the file is scanned and the notice goes.
            try EICAR.writeTestSignatures(to: env.signatures)
            #expect(await env.scanAll() == 1)
            await #expect(try env.asset(id).scanStatus == .clean)
            #expect(!(try await client.get("/sites", session: author)).text.contains(#"data-notice="scanner""#))
        }
    }
}

extension String {
    /// The first match of this regular expression in `text`.
    fileprivate func firstMatch(in text: String) -> String? {
        text.range(of: self, options: .regularExpression).map { String(text[$0]) }
    }
}
