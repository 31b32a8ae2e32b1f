import Foundation
import HummingbirdTesting
import NIOCore
import PackageFormat
import Synchronization
import TestSupport
import Testing

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
        let codes = try await sign.decodedCodes(bands: 8)
        let shown = codes.count - 1
        #expect(shown >= 20 && shown < 100, "the sign holds \(shown) stops")
        #expect(codes.isSubset(of: Self.expectedCodes(manifest, packageId: packageId)))
        #expect(signText.contains("Stops \(shown + 1)–100"), "the sign names the stops it leaves out")
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
    func decodedCodes(bands: Int = 1) async throws -> Set<String> {
        let info = try await info()
        var codes: Set<String> = []
        for (index, size) in info.sizes.enumerated() {
            let page = String(index + 1)
            let width = Int((size.width * 150 / 72).rounded(.up))
            let height = Int((size.height * 150 / 72).rounded(.up))
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
                        "-r", "150", "-gray", "-png", "-singlefile", "-f", page, "-l", page, "-x", "0", "-y", String(window.y), "-W", String(width),
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
