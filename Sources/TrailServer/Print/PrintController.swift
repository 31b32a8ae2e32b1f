import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PackageFormat
import Synchronization

/// The print kit: a trailhead sign and a booklet of a published tour, as PDF (docs/rangers.md, "Print a sign and a
/// booklet"). Panel routes (signed in) and, under `/api/v1/manage`, the same with a token; handlers are named after
/// their operationId. Only the published version is printed, from its signed manifest, so a sign never shows what
/// visitors cannot get.
struct PrintController: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    /// `--public-url`: the address in every code.
    let publicURL: String
    let slots: PrintSlots
    /// The published packages' MBTiles, taken out of their zips once (shared with the player's tile route).
    let packageTiles: PackageTilesStore
    let paths: DataPaths

    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        // A tour the user may not see is a 404 before the query is looked at.
        let printing = router.tourGroup(authorization, .view, malformedID: .notFound)
        printing.get("print/sign.pdf", use: getTourPrintSign)
        printing.get("print/booklet.pdf", use: getTourPrintBooklet)
    }

    /// The trailhead sign (`?size=`, default 24 × 36 in; `?draft=1` for a proof).
    func getTourPrintSign(_ request: Request, _ context: TourContext) async throws -> Response {
        let id = context.tour.id
        let form = QueryForm(request)
        var size = SignSize.standard
        if let value = form["size"], !value.isEmpty {
            guard let chosen = SignSize(rawValue: value.lowercased()) else { throw PrintKit.unknownSize(value) }
            size = chosen
        }
        let (tour, map) = try await printedTour(id: id, form)
        let signSize = size
        let logger = context.logger
        let pdf = try await slots.run { try PrintLayout.sign(map.drawn(on: tour, logger: logger), size: signSize) }
        return Self.answer(pdf, name: "sign-\(size.rawValue)", draft: tour.draft)
    }

    /// The booklet (`?paper=`, default letter; `?draft=1` for a proof).
    func getTourPrintBooklet(_ request: Request, _ context: TourContext) async throws -> Response {
        let id = context.tour.id
        let form = QueryForm(request)
        var paper = BookletPaper.standard
        if let value = form["paper"], !value.isEmpty {
            guard let chosen = BookletPaper(rawValue: value.lowercased()) else { throw PrintKit.unknownPaper(value) }
            paper = chosen
        }
        let (tour, map) = try await printedTour(id: id, form)
        let bookletPaper = paper
        let logger = context.logger
        let pdf = try await slots.run { try PrintLayout.booklet(map.drawn(on: tour, logger: logger), paper: bookletPaper) }
        return Self.answer(pdf, name: "booklet-\(paper.rawValue)", draft: tour.draft)
    }

    /// The tour as printed: released and published now, with the alerts in force, and where its map's layers come
    /// from. A public address that phones cannot open is refused unless a proof is asked for: a sign is posted for
    /// months, and its codes would lead nowhere.
    private func printedTour(id: Int64, _ form: QueryForm) async throws -> (PrintedTour, PrintMapSource) {
        let draft = ["1", "true", "yes"].contains(form["draft"]?.lowercased() ?? "")
        switch try await database.printSource(tourId: id) {
        case .notReleased:
            throw Conflict("This tour has no published version yet: only what visitors get is printed. Release it, then print its sign.")
        case .unpublished:
            throw Conflict("This tour is unpublished: its codes would tell visitors it was withdrawn. Publish it again to print it.")
        case let .published(published, manifest, alerts):
            if !draft, let host = PublicAddress.host(of: publicURL), let kind = PublicAddress.kind(of: host) {
                throw Conflict(
                    "The server's public address \(publicURL) is \(kind.name), which visitors' phones cannot open, so the codes "
                        + "would lead nowhere. Start the server with --public-url (or TRAIL_PUBLIC_URL) set to the address phones "
                        + "reach, or add ?draft=1 for a proof marked DRAFT."
                )
            }
            let tour = PrintedTour(
                manifest: manifest,
                packageId: published.package.id,
                park: published.siteName,
                publicURL: publicURL,
                alerts: alerts,
                draft: draft
            )
            let zip = paths.absolute(published.version.storedPath)
            var tiles: Result<MBTilesReader, PrintError>?
            if let listed = manifest.tiles {
                // The same file the player's tiles come from, taken out of the zip (and checked) the first time.
                do { tiles = .success(try await packageTiles.reader(zip: zip, tiles: listed)) } catch { tiles = .failure(PrintError("\(error)")) }
            }
            let source = PrintMapSource(
                zip: zip,
                tiles: manifest.tiles.map { ($0, tiles) },
                basemap: manifest.basemap
            )
            return (tour, source)
        }
    }

    private static func answer(_ pdf: Data, name: String, draft: Bool) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "application/pdf", .cacheControl: "private, no-cache",
                .contentDisposition: "inline; filename=\"tour-\(name)\(draft ? "-draft" : "").pdf\"",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: pdf))
        )
    }
}

/// Where a printed map's layers come from: the published package's zip, its tiles' reader (opened before drawing) and
/// its drawn map's listing in the signed manifest.
struct PrintMapSource: Sendable {
    let zip: URL
    /// The manifest's tiles, and their reader, or why the file could not be taken out of the zip.
    let tiles: (listed: Manifest.Tiles, reader: Result<MBTilesReader, PrintError>?)?
    let basemap: Manifest.Basemap?

    /// `tour` with its map's layers read, on the drawing thread. A layer that cannot be read is logged and left out:
    /// the sign still prints, over what could be read.
    func drawn(on tour: PrintedTour, logger: Logger) -> PrintedTour {
        var tour = tour
        if let listed = tiles?.listed {
            switch tiles?.reader {
            case .success(let reader):
                let attribution = (try? reader.metadata()["attribution"]) ?? nil
                tour.map.tiles = PrintTiles(
                    reader: reader,
                    format: listed.format,
                    zooms: listed.minZoom...max(listed.minZoom, listed.maxZoom),
                    attribution: attribution ?? ""
                )
            case .failure(let problem):
                logger.warning("print: the map tiles of \(zip.path) cannot be read (\(problem)); the map is printed without them")
            case nil:
                break
            }
        }
        if let basemap {
            do {
                tour.map.basemap = try PrintBasemap.read(zip: zip, listing: basemap)
            } catch {
                logger.warning("print: the drawn map of \(zip.path) cannot be read (\(error)); the map is printed without it")
            }
        }
        return tour
    }
}

/// How many print files are drawn at once: two, on ``BlockingWork/printing(_:)``'s two threads. A sign takes a core
/// for about a second; beyond two at once the answer is 429 with `Retry-After`, before any drawing, so a script asking
/// for a hundred signs cannot queue minutes of work ahead of everyone's pages.
final class PrintSlots: Sendable {
    static let defaultLimit = 2
    static let retryAfterSeconds = 2

    let limit: Int
    private let inUse = Mutex(0)

    init(limit: Int = PrintSlots.defaultLimit) { self.limit = limit }

    func run(_ work: @escaping @Sendable () throws -> Data) async throws -> Data {
        let admitted = inUse.withLock { used in
            guard used < limit else { return false }
            used += 1
            return true
        }
        guard admitted else {
            throw TooBusy("The server is drawing other print files. Try again in a few seconds.", retryAfterSeconds: Self.retryAfterSeconds)
        }
        defer { inUse.withLock { $0 -= 1 } }
        return try await BlockingWork.printing(work)
    }
}
