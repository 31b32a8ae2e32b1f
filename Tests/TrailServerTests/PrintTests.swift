import Foundation
import GRDB
import HummingbirdTesting
import NIOCore
import PackageFormat
import Synchronization
import TestSupport
import Testing
import ZIPFoundation

@testable import TrailServer

/// The print kit read back by readers of its own: poppler's `pdfinfo` (page sizes, exact to a point), `pdffonts` (every
/// font embedded), `pdftotext` (the tour's and the stops' names) and `pdftoppm` rasters at 150 dpi, whose QR codes
/// ZBar's `zbarimg` must read, every one, to the tour's and each stop's link.
@Suite struct PrintTests {
    static let publicURL = "https://tours.example.org"

    /// The route seed ("Lake Loop" released) on a server whose public address phones reach.
    static func app() async throws -> (TestApp, RichSeed) {
        try await TestApp.routeSeeded { $0.publicURL = publicURL }
    }

    /// The published manifest, as the print files are made of it.
    static func manifest(_ app: TestApp, tourId: Int64) async throws -> (Manifest, String) {
        guard case let .published(published, manifest, _) = try await app.database.printSource(tourId: tourId) else {
            Issue.record("the seeded tour is not published")
            throw PrintError("not published")
        }
        return (manifest, published.package.id)
    }

    /// The published version's zip in the app's data folder.
    static func zip(_ app: TestApp, _ published: PublishedPackage) -> URL {
        app.dependencies.paths.absolute(published.version.storedPath)
    }

    static func expectedCodes(_ manifest: Manifest, packageId: String) -> Set<String> {
        let player = "\(publicURL)/visit/\(packageId)"
        return Set([player] + manifest.waypoints.map { "\(player)?stop=\($0.order)" })
    }

    @Test("a sign in every size: the page size to a point, every font embedded, the names, and every QR code decodes")
    func signInEverySize() async throws {
        let (app, seed) = try await Self.app()
        let (manifest, packageId) = try await Self.manifest(app, tourId: seed.publishedTourId)
        #expect(!manifest.waypoints.isEmpty)
        let token = try await app.token(for: "reviewer@test.org")
        try await app.test { client in
            for size in SignSize.allCases {
                let response = try await client.api(
                    .get,
                    "/api/v1/manage/tours/\(seed.publishedTourId)/print/sign.pdf?size=\(size.rawValue)",
                    token: token
                )
                #expect(response.status == .ok, "\(size): \(response.text.prefix(300))")
                #expect(response.headers[.contentType] == "application/pdf")
                let pdf = try PrintedFile(Data(buffer: response.body), name: "sign-\(size.rawValue)")
                let info = try await pdf.info()
                #expect(info.pages == 1)
                for page in info.sizes {
                    #expect(abs(page.width - size.points.width) <= 1 && abs(page.height - size.points.height) <= 1, "\(size): \(page)")
                }
                try await pdf.expectFontsEmbedded()
                let text = try await pdf.text()
                #expect(text.contains(manifest.packageName))
                for waypoint in manifest.waypoints { #expect(text.contains(waypoint.name), "\(size): \(waypoint.name)") }
                // Each code's address is printed whole beneath it: the package id, and the stop's number after it.
                #expect(text.contains(packageId))
                for waypoint in manifest.waypoints { #expect(text.contains("?stop=\(waypoint.order)"), "\(size): stop \(waypoint.order)'s address") }
                #expect(!text.contains("DRAFT"))
                #expect(try await pdf.decodedCodes(bands: 8) == Self.expectedCodes(manifest, packageId: packageId), "\(size)")
            }
        }
        // The default is 24 × 36 in, through the panel as well.
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let response = try await client.get("/tours/\(seed.publishedTourId)/print/sign.pdf", session: browser)
            #expect(response.status == .ok)
            let info = try await PrintedFile(Data(buffer: response.body), name: "sign-default").info()
            #expect(info.sizes.first.map { abs($0.width - 1728) <= 1 && abs($0.height - 2592) <= 1 } == true, "\(info.sizes)")
        }
    }

    @Test("a booklet on letter and A4: a first page and a page per four stops, fonts embedded, every QR code decodes")
    func bookletOnEveryPaper() async throws {
        let (app, seed) = try await Self.app()
        let (manifest, packageId) = try await Self.manifest(app, tourId: seed.publishedTourId)
        try await app.test { client in
            let browser = try await client.signIn("reviewer@test.org")
            for paper in BookletPaper.allCases {
                let response = try await client.get("/tours/\(seed.publishedTourId)/print/booklet.pdf?paper=\(paper.rawValue)", session: browser)
                #expect(response.status == .ok, "\(paper): \(response.text.prefix(300))")
                let pdf = try PrintedFile(Data(buffer: response.body), name: "booklet-\(paper.rawValue)")
                let info = try await pdf.info()
                #expect(info.pages == 1 + (manifest.waypoints.count + 3) / 4)
                #expect(info.sizes.count == info.pages)
                for page in info.sizes {
                    #expect(abs(page.width - paper.points.width) <= 1 && abs(page.height - paper.points.height) <= 1, "\(paper): \(page)")
                }
                try await pdf.expectFontsEmbedded()
                let text = try await pdf.text()
                #expect(text.contains(manifest.packageName))
                for waypoint in manifest.waypoints { #expect(text.contains(waypoint.name), "\(paper): \(waypoint.name)") }
                for waypoint in manifest.waypoints { #expect(text.contains("?stop=\(waypoint.order)"), "\(paper): stop \(waypoint.order)'s address") }
                #expect(try await pdf.decodedCodes() == Self.expectedCodes(manifest, packageId: packageId), "\(paper)")
            }
        }
    }

    @Test("a tour of a hundred stops: the booklet grows to 26 pages with every stop's code; the sign says where the rest are")
    func hundredStops() async throws {
        let (app, seed) = try await Self.app()
        var (manifest, packageId) = try await Self.manifest(app, tourId: seed.publishedTourId)
        let first = try #require(manifest.waypoints.first)
        let frame = manifest.bounds
        manifest.waypoints = (1...100).map { order in
            var stop = first
            stop.order = order
            stop.id = Int64(10_000 + order)
            stop.name = "Marker \(order)"
            stop.description = "What there is to see at marker \(order)."
            let share = Double(order) / 101
            stop.coordinates = .init(
                latitude: frame.south + (frame.north - frame.south) * (0.1 + 0.8 * share),
                longitude: frame.west + (frame.east - frame.west) * (0.1 + 0.8 * abs(sin(share * 9)))
            )
            return stop
        }
        let tour = PrintedTour(manifest: manifest, packageId: packageId, park: "Alpha", publicURL: Self.publicURL, alerts: [], draft: false)

        let booklet = try PrintedFile(try PrintLayout.booklet(tour, paper: .letter), name: "booklet-100")
        #expect(try await booklet.info().pages == 26)
        let bookletText = try await booklet.text()
        for order in 1...100 {
            #expect(bookletText.contains("\(order). Marker \(order)"), "stop \(order)")
            #expect(bookletText.contains("?stop=\(order)\n") || bookletText.contains("?stop=\(order) "), "stop \(order)'s address")
        }
        #expect(try await booklet.decodedCodes() == Self.expectedCodes(manifest, packageId: packageId))

        let sign = try PrintedFile(try PrintLayout.sign(tour, size: .inches24x36), name: "sign-100")
        // The note is set in one narrow cell: read with its line breaks as spaces (Pango may break after the dash).
        let signText = try await sign.text().split(whereSeparator: \.isWhitespace).joined(separator: " ").replacingOccurrences(of: "– ", with: "–")
        // How many stops the sign holds, from its own note; then every one of their codes (and the tour's) must be read
        // back. A sign this large is read at 150 dpi in overlapping bands; a code zbar misses there (seen once, on a
        // loaded machine) is read again at 200 dpi before the test concludes it is not on the sign.
        let note = try #require(signText.firstMatch(of: /Stops (\d+)–100/), "the sign names the stops it leaves out: \(signText.prefix(300))")
        let shown = try #require(Int(note.1)) - 1
        #expect(shown >= 20 && shown < 100, "the sign holds \(shown) stops")
        var codes = try await sign.decodedCodes(bands: 8)
        if codes.count != shown + 1 { codes.formUnion(try await sign.decodedCodes(bands: 8, dpi: 200)) }
        let expected = Self.expectedCodes(manifest, packageId: packageId)
        #expect(codes.isSubset(of: expected))
        #expect(codes.count == shown + 1, "the tour's code and one per stop shown: \(codes.count) read for \(shown) stops")
        #expect(signText.contains("booklet"))
    }

    @Test("refusals: a loopback public address (unless a draft), an unpublished or unreleased tour, an outsider, an unknown size")
    func refusals() async throws {
        // The seed's server runs on its default address, http://127.0.0.1:8080.
        let (app, seed) = try await TestApp.routeSeeded()
        let (manifest, packageId) = try await Self.manifest(app, tourId: seed.publishedTourId)
        let token = try await app.token(for: "author@test.org")
        let outsider = try await app.token(for: "outsider@test.org")
        let base = "/api/v1/manage/tours/\(seed.publishedTourId)/print"
        try await app.test { client in
            for file in ["sign.pdf", "booklet.pdf"] {
                let loopback = try await client.api(.get, "\(base)/\(file)", token: token)
                #expect(loopback.status == .conflict)
                #expect(loopback.errorMessage?.contains("--public-url") == true, "\(loopback.text)")
                #expect(loopback.errorMessage?.contains("draft=1") == true)
            }
            // A proof prints anyway, "DRAFT" on every page; its codes still decode (to the loopback address).
            let draft = try await client.api(.get, "\(base)/booklet.pdf?draft=1", token: token)
            #expect(draft.status == .ok)
            #expect(draft.headers[.contentDisposition]?.contains("draft") == true)
            let proof = try PrintedFile(Data(buffer: draft.body), name: "booklet-draft")
            let pages = try await proof.info().pages
            #expect(pages >= 2)
            for page in 1...pages { #expect(try await proof.text(page: page).contains("DRAFT"), "page \(page)") }
            let player = "http://127.0.0.1:8080/visit/\(packageId)"
            #expect(try await proof.decodedCodes() == Set([player] + manifest.waypoints.map { "\(player)?stop=\($0.order)" }))
            let signProof = try await client.api(.get, "\(base)/sign.pdf?draft=1&size=18x24in", token: token)
            #expect(signProof.status == .ok)
            #expect(try await PrintedFile(Data(buffer: signProof.body), name: "sign-draft").text().contains("DRAFT"))

            // An unknown size or paper: 422, naming every size.
            let size = try await client.api(.get, "\(base)/sign.pdf?size=a0&draft=1", token: token)
            #expect(size.status == .unprocessableContent)
            for name in ["24x36in", "18x24in", "a1", "a2"] { #expect(size.text.contains(name), "\(name) in \(size.text)") }
            let paper = try await client.api(.get, "\(base)/booklet.pdf?paper=legal&draft=1", token: token)
            #expect(paper.status == .unprocessableContent)
            #expect(paper.text.contains("letter") && paper.text.contains("a4"))

            // Someone outside the site: not found, whatever the query; nobody signed in: 401.
            #expect(try await client.api(.get, "\(base)/sign.pdf?draft=1", token: outsider).status == .notFound)
            #expect(try await client.api(.get, "\(base)/sign.pdf?size=a0", token: outsider).status == .notFound)
            #expect(try await client.api(.get, "\(base)/sign.pdf?draft=1", token: nil).status == .unauthorized)

            // Never released: only what visitors get is printed.
            let unreleased = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)/print/sign.pdf?draft=1", token: token)
            #expect(unreleased.status == .conflict)
            #expect(unreleased.errorMessage?.contains("no published version") == true)

            // The tour page links both files beside the visitor link: proofs while the address is loopback.
            let browser = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(seed.publishedTourId)", session: browser)
            #expect(page.text.contains(#"href="/tours/\#(seed.publishedTourId)/print/sign.pdf?draft=1" data-print="sign""#))
            #expect(page.text.contains(#"href="/tours/\#(seed.publishedTourId)/print/booklet.pdf?draft=1" data-print="booklet""#))
            #expect(!(try await client.get("/tours/\(seed.tourId)", session: browser)).text.contains("data-print"))

            // Unpublished: its codes would lead to "withdrawn".
            try await app.database.setPackageVisible(id: packageId, visible: false, actor: .system)
            let hidden = try await client.api(.get, "\(base)/sign.pdf?draft=1", token: token)
            #expect(hidden.status == .conflict)
            #expect(hidden.errorMessage?.contains("unpublished") == true)
            #expect(!(try await client.get("/tours/\(seed.publishedTourId)", session: browser)).text.contains("data-print"))
        }
    }

    @Test("a closure in force is printed, and the stop it closes is marked; the tour page links the files without DRAFT")
    func closuresArePrinted() async throws {
        let (app, seed) = try await Self.app()
        let (manifest, _) = try await Self.manifest(app, tourId: seed.publishedTourId)
        let stop = try #require(manifest.waypoints.first { $0.id != nil })
        let stopId = try #require(stop.id)
        let now = Date()
        _ = try await app.database.postAlert(
            ValidAlert(
                title: "Bridge washed out",
                message: "Turn back at the river.",
                severity: .closure,
                tourId: seed.publishedTourId,
                closedWaypointIds: [stopId],
                startsAt: now.addingTimeInterval(-60),
                endsAt: now.addingTimeInterval(86_400)
            ),
            siteId: seed.alphaId,
            actor: .system
        )
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let sign = try await client.get("/tours/\(seed.publishedTourId)/print/sign.pdf?size=a2", session: browser)
            #expect(sign.status == .ok)
            let text = try await PrintedFile(Data(buffer: sign.body), name: "sign-closure").text()
            #expect(text.contains("Bridge washed out"))
            #expect(text.contains("Closed (Stop \(stop.order))"))
            let booklet = try await client.get("/tours/\(seed.publishedTourId)/print/booklet.pdf", session: browser)
            #expect(try await PrintedFile(Data(buffer: booklet.body), name: "booklet-closure").text().contains("Closed now: Bridge washed out"))
            let page = try await client.get("/tours/\(seed.publishedTourId)", session: browser)
            #expect(page.text.contains(#"href="/tours/\#(seed.publishedTourId)/print/sign.pdf" data-print="sign""#))
        }
    }

    @Test("the readers are no checks that cannot fail: a code that is not on the page is missed, and a size off by 2 pt is seen")
    func readersCanFail() async throws {
        let (app, seed) = try await Self.app()
        let (manifest, packageId) = try await Self.manifest(app, tourId: seed.publishedTourId)
        var fewer = manifest
        fewer.waypoints = Array(manifest.waypoints.prefix(1))
        let tour = PrintedTour(manifest: fewer, packageId: packageId, park: "Alpha", publicURL: Self.publicURL, alerts: [], draft: false)
        let pdf = try PrintedFile(try PrintLayout.booklet(tour, paper: .a4), name: "booklet-fewer")
        let codes = try await pdf.decodedCodes()
        #expect(codes == Self.expectedCodes(fewer, packageId: packageId))
        if manifest.waypoints.count > 1 { #expect(codes != Self.expectedCodes(manifest, packageId: packageId)) }
        let size = try #require(try await pdf.info().sizes.first)
        #expect(abs(size.width - BookletPaper.letter.points.width) > 1, "A4 is not letter")
    }
}

/// The map beneath the route: the package's tiles (PNG decoded, JPEG embedded as it is) and its drawn open-data map,
/// read back from the PDF with `pdfimages -list` and `pdftotext`; the codes must still decode over them.
@Suite struct PrintMapLayerTests {
    static let publicURL = PrintTests.publicURL

    /// Names in the drawn map that the PDF's text must hold.
    static let peakName = "Coffin Mountain"
    static let pathName = "Bruno Meadows Trail"

    /// A FeatureCollection over the seeded frame (44.36–44.43 N, 122.28–121.97 W) with every kind of the contract, one
    /// feature of an unknown kind and one whose geometry is broken (both left out, the rest still drawn).
    static let basemap = Data(
        #"""
        {"type":"FeatureCollection","features":[
        {"type":"Feature","properties":{"kind":"wood"},"geometry":{"type":"Polygon","coordinates":[[[-122.27,44.365],[-122.18,44.365],[-122.18,44.39],[-122.27,44.39],[-122.27,44.365]],[[-122.25,44.37],[-122.24,44.37],[-122.24,44.38],[-122.25,44.37]]]}},
        {"type":"Feature","properties":{"kind":"water","name":"Fish Lake"},"geometry":{"type":"MultiPolygon","coordinates":[[[[-122.06,44.37],[-122.03,44.37],[-122.03,44.385],[-122.06,44.37]]]]}},
        {"type":"Feature","properties":{"kind":"stream","class":"stream","name":"Lost Creek"},"geometry":{"type":"LineString","coordinates":[[-122.2,44.428],[-122.15,44.41],[-122.06,44.375]]}},
        {"type":"Feature","properties":{"kind":"building"},"geometry":{"type":"Polygon","coordinates":[[[-122.005,44.365],[-122.0,44.365],[-122.0,44.368],[-122.005,44.365]]]}},
        {"type":"Feature","properties":{"kind":"contour","elevation":1400},"geometry":{"type":"LineString","coordinates":[[-122.28,44.38],[-122.1,44.376],[-121.97,44.38]]}},
        {"type":"Feature","properties":{"kind":"contour","elevation":1500,"index":true},"geometry":{"type":"MultiLineString","coordinates":[[[-122.28,44.386],[-122.1,44.382],[-121.97,44.386]]]}},
        {"type":"Feature","properties":{"kind":"road","class":"primary","name":"Santiam Highway"},"geometry":{"type":"LineString","coordinates":[[-122.28,44.365],[-122.1,44.368],[-121.97,44.366]]}},
        {"type":"Feature","properties":{"kind":"road","class":"track"},"geometry":{"type":"LineString","coordinates":[[-122.15,44.365],[-122.14,44.4]]}},
        {"type":"Feature","properties":{"kind":"path","class":"path","name":"Bruno Meadows Trail"},"geometry":{"type":"LineString","coordinates":[[-122.275,44.405],[-122.24,44.408],[-122.2,44.404],[-122.16,44.41]]}},
        {"type":"Feature","properties":{"kind":"path","class":"steps"},"geometry":{"type":"LineString","coordinates":[[-122.16,44.41],[-122.155,44.415]]}},
        {"type":"Feature","properties":{"kind":"peak","name":"Coffin Mountain","elevation":1781},"geometry":{"type":"Point","coordinates":[-122.02,44.41]}},
        {"type":"Feature","properties":{"kind":"viewpoint","name":"Bachelor Overlook"},"geometry":{"type":"Point","coordinates":[-122.05,44.42]}},
        {"type":"Feature","properties":{"kind":"parking"},"geometry":{"type":"Polygon","coordinates":[[[-122.22,44.366],[-122.215,44.366],[-122.215,44.369],[-122.22,44.366]]]}},
        {"type":"Feature","properties":{"kind":"toilets"},"geometry":{"type":"Point","coordinates":[-122.21,44.372]}},
        {"type":"Feature","properties":{"kind":"shelter","name":"Hunts Cove Shelter"},"geometry":{"type":"Point","coordinates":[-122.0,44.4]}},
        {"type":"Feature","properties":{"kind":"volcano","name":"Not a kind"},"geometry":{"type":"Point","coordinates":[-122.1,44.4]}},
        {"type":"Feature","properties":{"kind":"peak","name":"Broken Peak"},"geometry":{"type":"Point","coordinates":["east"]}}
        ]}
        """#.utf8
    )

    /// The seeded tour ("Lake Loop", released with the uploaded PNG tiles) as printed.
    static func seeded() async throws -> (TestApp, RichSeed, Manifest, PublishedPackage) {
        let (app, seed) = try await PrintTests.app()
        guard case let .published(published, manifest, _) = try await app.database.printSource(tourId: seed.publishedTourId) else {
            throw PrintError("the seeded tour is not published")
        }
        return (app, seed, manifest, published)
    }

    @Test("the package's PNG tiles beneath the sign's and the booklet's map: an image in each, the tiles' credit, every code decodes")
    func packageTilesBeneath() async throws {
        let (app, seed, manifest, published) = try await Self.seeded()
        let tiles = try #require(manifest.tiles)
        #expect(tiles.format == "png")
        let token = try await app.token(for: "reviewer@test.org")
        try await app.test { client in
            for (path, name, bands) in [("sign.pdf?size=a2", "sign-tiles", 8), ("booklet.pdf", "booklet-tiles", 1)] {
                let response = try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/print/\(path)", token: token)
                #expect(response.status == .ok, "\(path): \(response.text.prefix(300))")
                let pdf = try PrintedFile(Data(buffer: response.body), name: name)
                let images = try await pdf.images()
                #expect(!images.isEmpty, "\(name): no image")
                // On the first page only (the map), each a whole tile of the fixture (8 × 8 pixels), decoded from PNG.
                #expect(images.allSatisfy { $0.page == 1 && $0.width == 8 && $0.height == 8 && $0.encoding == "image" }, "\(images)")
                let text = try await pdf.text()
                #expect(text.contains("© Test Agency"), "\(name): the tiles' credit")
                #expect(!text.contains("OpenStreetMap"))
                try await pdf.expectFontsEmbedded()
                #expect(try await pdf.decodedCodes(bands: bands) == PrintTests.expectedCodes(manifest, packageId: published.package.id), "\(name)")
            }
        }
    }

    @Test("the zoom: the highest the package has up to what the print needs, never below its lowest, lowered to keep the tile count bounded")
    func tileZoom() async throws {
        let (app, _, manifest, published) = try await Self.seeded()
        let listed = try #require(manifest.tiles)
        let mbtiles = TestScratch.folder("print-zoom").appendingPathComponent("map.mbtiles")
        try PackageTilesStore.extract(zip: PrintTests.zip(app, published), tiles: listed, to: mbtiles)
        let tiles = PrintTiles(reader: try MBTilesReader(url: mbtiles), format: "png", zooms: 10...12, attribution: "")
        let frame = Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28)
        let span = PrintMap.projectX(-121.97) - PrintMap.projectX(-122.28)
        // The frame is 0.31° wide: 2^z × 256 × 0.31 / 360 pixels at zoom z (about 900 at zoom 12).
        #expect(tiles.zoom(for: [frame], span: span, pixels: 200) == 10)
        #expect(tiles.zoom(for: [frame], span: span, pixels: 300) == 11)
        #expect(tiles.zoom(for: [frame], span: span, pixels: 800) == 12)
        #expect(tiles.zoom(for: [frame], span: span, pixels: 40_000) == 12)
        #expect(tiles.zoom(for: [frame], span: span, pixels: 10) == 10)
        let wide = PrintTiles(reader: tiles.reader, format: "png", zooms: 10...18, attribution: "")
        let chosen = wide.zoom(for: [frame], span: span, pixels: 1_000_000)
        #expect(chosen < 18 && TileMath.count(frame, zooms: chosen...chosen) <= PrintTiles.maxTiles, "zoom \(chosen)")
        #expect(TileMath.count(frame, zooms: (chosen + 1)...(chosen + 1)) > PrintTiles.maxTiles)
    }

    @Test("a tile picture is measured from its header before anything is decoded: one that claims to be huge, or is not a picture, is skipped")
    func tilePictureSizes() throws {
        let png = TileImages.png(red: 10, green: 20, blue: 30, marker: 1, size: 8)
        #expect(TileImageSize.png(png).map { [$0.0, $0.1] } == [8, 8])
        let raster = try #require(PDFCanvas.Raster.png(png, maxSide: PrintTiles.maxSide))
        #expect(raster.width == 8 && raster.height == 8)
        // The same eight pixels under a header that says 40,000 × 40,000 (6 GB once decoded): never inflated.
        var huge = png
        huge.replaceSubrange(16..<24, with: [0, 0, 0x9C, 0x40, 0, 0, 0x9C, 0x40])
        #expect(TileImageSize.png(huge).map { [$0.0, $0.1] } == [40_000, 40_000])
        #expect(PDFCanvas.Raster.png(huge, maxSide: PrintTiles.maxSide) == nil)
        #expect(PDFCanvas.Raster.png(Data("not a picture".utf8), maxSide: PrintTiles.maxSide) == nil)
        #expect(PDFCanvas.Raster.png(png.prefix(40), maxSide: PrintTiles.maxSide) == nil, "a cut-off PNG")
        #expect(PDFCanvas.Raster.jpeg(Data([0xFF, 0xD8, 0xFF, 0xDA, 0, 2]), maxSide: PrintTiles.maxSide) == nil, "a JPEG without a frame header")
        #expect(PDFCanvas.Raster.jpeg(png, maxSide: PrintTiles.maxSide) == nil)
    }

    @Test("JPEG tiles are embedded as they are (a DCT image in the PDF); WebP tiles are left out with a note on the map")
    func jpegAndWebPTiles() async throws {
        let (_, _, manifest, published) = try await Self.seeded()
        let folder = TestScratch.folder("print-jpeg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let picture = folder.appendingPathComponent("tile.jpg")
        let made = try await ChildProcess.run(
            "ffmpeg",
            ["-y", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=0x88aa66:size=256x256:duration=1", "-frames:v", "1", picture.path],
            timeout: .seconds(60)
        )
        #expect(made.status == 0, "ffmpeg: \(made.stderr)")
        let jpeg = try Data(contentsOf: picture)
        #expect(TileImageSize.jpeg(jpeg).map { [$0.0, $0.1] } == [256, 256])
        let mbtiles = folder.appendingPathComponent("jpeg.mbtiles")
        let frame = Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28)
        let queue = try DatabaseQueue(path: mbtiles.path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE metadata (name TEXT, value TEXT);
                    CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
                    INSERT INTO metadata VALUES ('name', 'Photo map'), ('format', 'jpg'), ('attribution', '© Air Photo Agency');
                    """
            )
            for tile in TileMath.tiles(frame, zooms: 11...11) {
                try db.execute(sql: "INSERT INTO tiles VALUES (?, ?, ?, ?)", arguments: [tile.z, tile.x, tile.tmsRow, jpeg])
            }
        }
        try queue.close()
        let reader = try MBTilesReader(url: mbtiles)
        var tour = PrintedTour(
            manifest: manifest,
            packageId: published.package.id,
            park: "Alpha",
            publicURL: Self.publicURL,
            alerts: [],
            draft: false
        )
        tour.map.tiles = PrintTiles(reader: reader, format: "jpg", zooms: 11...11, attribution: "© Air Photo Agency")
        let sign = try PrintedFile(try PrintLayout.sign(tour, size: .a2), name: "sign-jpeg")
        let images = try await sign.images()
        #expect(images.count == TileMath.count(frame, zooms: 11...11), "\(images)")
        #expect(images.allSatisfy { $0.encoding == "jpeg" && $0.width == 256 }, "\(images)")
        #expect(try await sign.text().contains("© Air Photo Agency"))
        #expect(try await sign.decodedCodes(bands: 8) == PrintTests.expectedCodes(manifest, packageId: published.package.id))

        tour.map.tiles = PrintTiles(reader: reader, format: "webp", zooms: 11...11, attribution: "© Air Photo Agency")
        let webp = try PrintedFile(try PrintLayout.sign(tour, size: .a2), name: "sign-webp")
        #expect(try await webp.images().isEmpty)
        #expect(try await webp.text().contains("WEBP map tiles are not printed"))
    }

    @Test("the drawn open-data map beneath the route: a peak's and a path's names, the OpenStreetMap credit, every code decodes")
    func drawnBasemap() async throws {
        let (_, _, manifest, published) = try await Self.seeded()
        let basemap = try PrintBasemap.parse(Self.basemap)
        // The unknown kind and the broken point are left out; the other fifteen are drawn.
        #expect(basemap.features.count == 15)
        #expect(basemap.attribution == "© OpenStreetMap contributors")
        var tour = PrintedTour(
            manifest: manifest,
            packageId: published.package.id,
            park: "Alpha",
            publicURL: Self.publicURL,
            alerts: [],
            draft: false
        )
        tour.map.basemap = basemap
        for size in [SignSize.inches24x36, .a2] {
            let sign = try PrintedFile(try PrintLayout.sign(tour, size: size), name: "sign-basemap-\(size.rawValue)")
            let text = try await sign.text()
            for name in [Self.peakName, Self.pathName, "© OpenStreetMap contributors"] { #expect(text.contains(name), "\(size): \(name)") }
            #expect(text.contains("1,781 m"), "the peak's height")
            #expect(text.contains("1,500"), "the index contour's height")
            #expect(!text.contains("Not a kind") && !text.contains("Broken Peak"))
            // No tiles here: the drawn map is vectors.
            #expect(try await sign.images().isEmpty)
            try await sign.expectFontsEmbedded()
            #expect(try await sign.decodedCodes(bands: 8) == PrintTests.expectedCodes(manifest, packageId: published.package.id), "\(size)")
        }
        let booklet = try PrintedFile(try PrintLayout.booklet(tour, paper: .letter), name: "booklet-basemap")
        let text = try await booklet.text(page: 1)
        for name in [Self.peakName, Self.pathName, "© OpenStreetMap contributors"] { #expect(text.contains(name), "booklet: \(name)") }
        #expect(try await booklet.decodedCodes() == PrintTests.expectedCodes(manifest, packageId: published.package.id))

        // Not a FeatureCollection: refused with the reason.
        #expect(throws: PrintError.self) { try PrintBasemap.parse(Data(#"{"type":"Feature"}"#.utf8)) }
        #expect(throws: PrintError.self) { try PrintBasemap.parse(Data("not json".utf8)) }
    }

    @Test("map/basemap.geojson in the published package, listed in its manifest: drawn over the tiles; a file that does not match is left out")
    func basemapFromThePackage() async throws {
        let (app, seed, manifest, published) = try await Self.seeded()
        let zip = PrintTests.zip(app, published)
        // What a build with an OpenStreetMap extract adds: the file in the zip, its entry in the manifest.
        let archive = try Archive(url: zip, accessMode: .update)
        let data = Self.basemap
        try archive.addEntry(with: "map/basemap.geojson", type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) {
            position,
            size in
            data.subdata(in: Int(position)..<Int(position) + size)
        }
        @Sendable func list(sha256: String) async throws {
            var object = try #require(try JSONSerialization.jsonObject(with: Data(published.version.manifestJSON.utf8)) as? [String: Any])
            object["basemap"] = [
                "path": "map/basemap.geojson", "sha256": sha256, "size": data.count, "attribution": "© OpenStreetMap contributors",
                "layers": ["wood", "water", "path", "peak"],
            ]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            try await app.database.write { db in
                try db.execute(
                    sql: "UPDATE packageVersion SET manifestJSON = ? WHERE packageId = ? AND version = ?",
                    arguments: [json, published.package.id, published.version.version]
                )
            }
        }
        try await list(sha256: MediaFixtures.sha256(data))
        let token = try await app.token(for: "reviewer@test.org")
        try await app.test { client in
            let response = try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/print/sign.pdf", token: token)
            #expect(response.status == .ok, "\(response.text.prefix(300))")
            let pdf = try PrintedFile(Data(buffer: response.body), name: "sign-package-basemap")
            let text = try await pdf.text()
            for name in [Self.peakName, Self.pathName, "© Test Agency", "© OpenStreetMap contributors"] { #expect(text.contains(name), "\(name)") }
            #expect(!(try await pdf.images()).isEmpty, "the tiles beneath the drawn map")
            #expect(try await pdf.decodedCodes(bands: 8) == PrintTests.expectedCodes(manifest, packageId: published.package.id))

            // A manifest whose hash the file does not match: the map is printed without it (and the server logs why).
            try await list(sha256: String(repeating: "0", count: 64))
            let mismatch = try await client.api(.get, "/api/v1/manage/tours/\(seed.publishedTourId)/print/sign.pdf", token: token)
            #expect(mismatch.status == .ok)
            let plain = try await PrintedFile(Data(buffer: mismatch.body), name: "sign-package-basemap-mismatch").text()
            #expect(!plain.contains(Self.peakName) && !plain.contains("OpenStreetMap"))
            #expect(plain.contains("© Test Agency"))
        }
    }

    @Test("a package with neither tiles nor a drawn map prints as before: no image, no credit, every code decodes")
    func plainFrame() async throws {
        let (app, seed) = try await PrintTests.app()
        // "Crater Rim" was released without tiles, then unpublished: published again, it prints.
        try await app.database.setPackageVisible(id: seed.hiddenPackageId, visible: true, actor: .system)
        guard case let .published(published, manifest, _) = try await app.database.printSource(tourId: seed.readyTourId) else {
            throw PrintError("Crater Rim is not published")
        }
        #expect(manifest.tiles == nil)
        let token = try await app.token(for: "reviewer@test.org")
        try await app.test { client in
            for (path, name) in [("sign.pdf", "sign-plain"), ("booklet.pdf?paper=a4", "booklet-plain")] {
                let response = try await client.api(.get, "/api/v1/manage/tours/\(seed.readyTourId)/print/\(path)", token: token)
                #expect(response.status == .ok, "\(path): \(response.text.prefix(300))")
                let pdf = try PrintedFile(Data(buffer: response.body), name: name)
                #expect(try await pdf.images().isEmpty)
                let text = try await pdf.text()
                #expect(!text.contains("©"), "\(name)")
                #expect(text.contains(manifest.packageName))
                #expect(try await pdf.decodedCodes(bands: 8) == PrintTests.expectedCodes(manifest, packageId: published.package.id), "\(name)")
            }
        }
    }
}

/// A flag two threads share.
final class PrintTestFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

@Suite struct PrintSlotsTests {
    @Test("drawings beyond the limit are refused at once with 429 and Retry-After, and admitted again once one ends")
    func drawingsAreBounded() async throws {
        let slots = PrintSlots(limit: 1)
        let entered = PrintTestFlag()
        let release = PrintTestFlag()
        let first = Task {
            try await slots.run {
                entered.set()
                while !release.isSet { usleep(1000) }
                return Data("first".utf8)
            }
        }
        while !entered.isSet { try await Task.sleep(for: .milliseconds(5)) }
        do {
            _ = try await slots.run { Data("second".utf8) }
            Issue.record("a second drawing was admitted beside the first")
        } catch let busy as TooBusy {
            #expect(busy.status == .tooManyRequests)
            #expect(busy.retryAfterSeconds == PrintSlots.retryAfterSeconds)
        }
        release.set()
        #expect(try await first.value == Data("first".utf8))
        #expect(try await slots.run { Data("third".utf8) } == Data("third".utf8))
    }
}

/// A print file on disk, read with poppler's tools and ZBar.
struct PrintedFile {
    let url: URL

    init(_ data: Data, name: String) throws {
        let folder = TestScratch.folder("print")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = folder.appendingPathComponent("\(name).pdf")
        try data.write(to: url)
        #expect(data.starts(with: Array("%PDF-".utf8)), "\(name) is not a PDF")
    }

    struct Info {
        var pages = 0
        var sizes: [(width: Double, height: Double)] = []
    }

    /// `pdfinfo -l` lists every page's size.
    func info() async throws -> Info {
        let output = try await ChildProcess.run("pdfinfo", ["-f", "1", "-l", "1000", url.path], timeout: .seconds(60))
        #expect(output.status == 0, "pdfinfo: \(output.stderr)")
        var info = Info()
        for line in output.stdout.split(separator: "\n") {
            if line.hasPrefix("Pages:") { info.pages = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? 0 }
            // "Page    1 size: 612 x 792 pts (letter)"
            if line.hasPrefix("Page"), let range = line.range(of: "size:") {
                let numbers = line[range.upperBound...].split(separator: " ").compactMap { Double($0) }
                if numbers.count >= 2 { info.sizes.append((numbers[0], numbers[1])) }
            }
        }
        return info
    }

    /// Every font `pdffonts` lists says "yes" under `emb`, and there is at least one.
    func expectFontsEmbedded(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let output = try await ChildProcess.run("pdffonts", [url.path], timeout: .seconds(60))
        #expect(output.status == 0, "pdffonts: \(output.stderr)", sourceLocation: sourceLocation)
        let rows = output.stdout.split(separator: "\n").dropFirst(2)
        #expect(!rows.isEmpty, "no fonts in \(url.lastPathComponent)", sourceLocation: sourceLocation)
        for row in rows {
            // name, type (one or two words), encoding, emb, sub, uni, object, id: emb is the fifth field from the end.
            let fields = row.split(separator: " ", omittingEmptySubsequences: true)
            #expect(fields.count >= 7 && fields[fields.count - 5] == "yes", "not embedded: \(row)", sourceLocation: sourceLocation)
            #expect(row.contains("DejaVu"), "an unexpected font: \(row)", sourceLocation: sourceLocation)
        }
    }

    struct Image {
        var page: Int
        var width: Int
        var height: Int
        /// `pdfimages -list`'s `enc`: `image` for pixels Cairo wrote (Flate), `jpeg` for JPEG bytes embedded as they are.
        var encoding: String
    }

    /// Every image `pdfimages -list` finds (soft masks left out).
    func images() async throws -> [Image] {
        let output = try await ChildProcess.run("pdfimages", ["-list", url.path], timeout: .seconds(60))
        #expect(output.status == 0, "pdfimages: \(output.stderr)")
        // page num type width height color comp bpc enc interp object ID x-ppi y-ppi size ratio, after two header lines.
        return output.stdout.split(separator: "\n").dropFirst(2).compactMap { row in
            let fields = row.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 9, fields[2] == "image", let page = Int(fields[0]), let width = Int(fields[3]), let height = Int(fields[4]) else {
                return nil
            }
            return Image(page: page, width: width, height: height, encoding: String(fields[8]))
        }
    }

    func text(page: Int? = nil) async throws -> String {
        let pages = page.map { ["-f", "\($0)", "-l", "\($0)"] } ?? []
        let output = try await ChildProcess.run("pdftotext", pages + ["-layout", url.path, "-"], timeout: .seconds(60))
        #expect(output.status == 0, "pdftotext: \(output.stderr)")
        // Pango may break a long name over two lines: the checks read it on one.
        return output.stdout.replacingOccurrences(of: "\u{00AD}", with: "")
    }

    /// Every QR code ZBar reads from 150 dpi greyscale rasters of every page. With `bands`, each page is also read in
    /// overlapping horizontal bands of the same raster (`pdftoppm -x -y -W -H`), each twice a band's height: a phone
    /// sees one code at a time, while ZBar, handed a whole 24 × 36 in sign with dozens of codes, misses one or two of
    /// them (each of which it reads in a band). Every code no taller than a band is whole in one of them.
    func decodedCodes(bands: Int = 1, dpi: Int = 150) async throws -> Set<String> {
        let info = try await info()
        var codes: Set<String> = []
        for (index, size) in info.sizes.enumerated() {
            let page = String(index + 1)
            let width = Int((size.width * Double(dpi) / 72).rounded(.up))
            let height = Int((size.height * Double(dpi) / 72).rounded(.up))
            var windows = [(y: 0, height: height)]
            if bands > 1 {
                let step = height / bands
                windows += stride(from: 0, to: height - step, by: step).map { (y: $0, height: min(2 * step, height - $0)) }
            }
            for (number, window) in windows.enumerated() {
                let prefix = url.deletingPathExtension().path + "-page\(page)-window\(number)"
                let raster = try await ChildProcess.run(
                    "pdftoppm",
                    [
                        "-r", String(dpi), "-gray", "-png", "-singlefile", "-f", page, "-l", page, "-x", "0", "-y", String(window.y), "-W",
                        String(width),
                        "-H", String(window.height), url.path, prefix,
                    ],
                    timeout: .seconds(300)
                )
                #expect(raster.status == 0, "pdftoppm: \(raster.stderr)")
                let output = try await ChildProcess.run(
                    "zbarimg",
                    ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", prefix + ".png"],
                    timeout: .seconds(300)
                )
                // The whole page has at least one code; a band may have none (zbarimg's status 4).
                #expect(output.status == 0 || (number > 0 && output.status == 4), "zbarimg page \(page): \(output.stderr)")
                for line in output.stdout.split(separator: "\n") where !line.isEmpty { codes.insert(String(line)) }
            }
        }
        return codes
    }
}
