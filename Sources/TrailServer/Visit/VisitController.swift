import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import PackageFormat

/// The visitor web player: the list of published tours, the player page of one (installable: a web app manifest and
/// a service worker whose scope is `/visit/`), the player's own immutable files, and one tile of a released version's
/// map for the player's offline map. No sign-in; only published packages.
///
/// The pages carry no tour content the player trusts: the player reads the signed catalog and the signed manifest,
/// checks their signatures and every file's SHA-256 itself (docs/visitors.md).
struct VisitController: Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let pages: PageResponder
    let packageTiles: PackageTilesStore
    let assets: PlayerAssets
    let authorization: Authorization
    /// Keeps `/visit`'s pages (without a search) until a release, an unpublish or a site edit changes them.
    /// `--public-url`: the player's address in QR codes.
    let publicURL: String
    /// Whether the malware scanner has signatures: an empty list says why nothing is published when it has none.
    var scannerReady: @Sendable () -> Bool = { true }
    static let immutable = "public, max-age=31536000, immutable"

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/visit", use: listTours)
        router.get("/visit/sw.js", use: serviceWorker)
        router.get("/visit/assets/{version}/{name}", use: playerAsset)
        router.get("/visit/{packageId}", use: showPlayer)
        router.get("/visit/{packageId}/app.webmanifest", use: appManifest)
    }

    /// Under `/api/v1`; named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/packages/{id}/versions/{version}/tiles/{z}/{x}/{y}", use: getPackageVersionTile)
    }

    /// The QR code of a tour's player for signs: panel routes (signed in) and, under `/api/v1/manage`, the same with a token.
    func addQRRoutes(to router: some RouterMethods<SignedInContext>) {
        let tour = router.tourGroup(authorization, .view, malformedID: .notFound)
        tour.get("qr.svg", use: getTourQRCodeSVG)
        tour.get("qr.png", use: getTourQRCodePNG)
    }

    // MARK: Pages

    /// Published tours per page of `/visit`: the page stays small (and quick) however many tours a district publishes.
    static let toursPerPage = 24

    /// Sites and their published tours, a page at a time (`?after=`), searched by name (`?q=`), optionally of one site
    /// (`?site=`): name, length, walking time, languages, download size. The same for everyone (no sign-in, nothing
    /// personal), so it has a strong ETag over its bytes and answers `If-None-Match` with 304; `no-cache` makes every
    /// client (and nginx, which keeps it a second) ask again, so a release or an unpublish shows at once.
    func listTours(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let form = QueryForm(request)
        let query = String((form["q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).prefix(TourListFilter.maxQueryLength))
        let siteSlug = form["site"].flatMap { $0.isEmpty ? nil : $0 }
        let listing = "visit site=\(siteSlug ?? "") q=\(query)"
        var after: (siteId: Int64, packageId: String)?
        if let token = form["after"], !token.isEmpty {
            guard let fields = ListCursor.read(token, listing: listing, count: 2), let siteId = Int64(fields[0]) else {
                throw ValidationErrors(["after": "This page link is out of date: open the first page of tours."])
            }
            after = (siteId, fields[1])
        }
        let scannerReady = scannerReady()
        let page = try await renderTourList(query: query, siteSlug: siteSlug, listing: listing, after: after, scannerReady: scannerReady)
        return ReadAnswer.bytes(page, contentType: Self.html, request: request)
    }

    static let html = "text/html; charset=utf-8"

    /// One page of `/visit`, rendered.
    func renderTourList(
        query: String,
        siteSlug: String?,
        listing: String,
        after: (siteId: Int64, packageId: String)?,
        scannerReady: Bool = true
    ) async throws -> ByteBuffer {
        let (tours, hasMore) = try await database.visitorTourPage(siteSlug: siteSlug, query: query, after: after, limit: Self.toursPerPage)
        var sites: [VisitListPage.Site] = []
        for tour in tours {
            let card = VisitListPage.Tour(tour)
            if sites.last?.slug == tour.published.siteSlug {
                sites[sites.count - 1].tours.append(card)
            } else {
                sites.append(VisitListPage.Site(slug: tour.published.siteSlug, name: tour.published.siteName, tours: [card]))
            }
        }
        var nextURL: String?
        if hasMore, let last = tours.last {
            var parameters: [(String, String)] = []
            if let siteSlug { parameters.append(("site", siteSlug)) }
            if !query.isEmpty { parameters.append(("q", query)) }
            let position = [String(last.published.package.siteId), last.published.package.id]
            parameters.append(("after", ListCursor.make(position, listing: listing)))
            nextURL = QueryForm.url("/visit", parameters)
        }
        let page = VisitListPage(
            sites: sites,
            isEmpty: sites.isEmpty,
            waitsForScanner: sites.isEmpty && !scannerReady,
            assets: assets.base,
            query: query,
            siteSlug: siteSlug ?? "",
            isFiltered: siteSlug != nil || !query.isEmpty,
            isContinued: after != nil,
            nextURL: nextURL
        )
        // Rendered without the panel's layout data (no user, no notices): the bytes are the same for every visitor.
        let layout = LayoutModel(title: "Tours", user: nil, isAdmin: false, csrfToken: "", notice: nil, reviewCount: 0)
        guard let html = pages.views.html(Page(layout: layout, page: page), template: "visit-list") else {
            throw HTTPError(.internalServerError, message: "Missing template visit-list")
        }
        return ByteBuffer(string: html)
    }

    /// The player of a published tour (its latest version). Unknown: 404; unpublished: 410 with a page that says so, which
    /// the player's service worker shows over the cached copy.
    func showPlayer(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try context.parameters.require("packageId")
        switch try await database.visitorPackage(id: id) {
        case .unknown:
            throw NotFound()
        case .withdrawn:
            var response = await pages.render(
                "visit-withdrawn",
                title: "Tour withdrawn",
                page: VisitWithdrawnPage(assets: assets.base),
                request: request,
                context: context,
                status: .gone
            )
            response.headers[.cacheControl] = "no-cache"
            return response
        case let .published(tour):
            let page = VisitPlayerPage(
                packageId: id,
                name: tour.manifest.packageName,
                park: tour.published.siteName,
                description: tour.manifest.description,
                assets: assets.base
            )
            var response = await pages.render("visit", title: tour.manifest.packageName, page: page, request: request, context: context)
            // Revalidated: the page names the player's current files; the tour itself comes from the signed catalog.
            response.headers[.cacheControl] = "no-cache"
            return response
        }
    }

    /// The web app manifest that makes a tour's player installable; it starts at the tour.
    func appManifest(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try context.parameters.require("packageId")
        guard case let .published(tour) = try await database.visitorPackage(id: id) else { throw NotFound() }
        let manifest = WebAppManifest(
            name: tour.manifest.packageName,
            short_name: String(tour.manifest.packageName.prefix(24)),
            start_url: "/visit/\(id)",
            scope: "/visit/",
            display: "standalone",
            background_color: "#ffffff",
            theme_color: "#1f4d2b",
            icons: PlayerAssets.sources.compactMap { source in
                source.iconSizes.map { .init(src: assets.base + source.name, sizes: $0, type: source.contentType, purpose: "any") }
            }
        )
        let body = try WireCoding.encoder.encode(manifest)
        return Response(
            status: .ok,
            headers: [.contentType: "application/manifest+json", .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }

    /// The service worker. Its URL is fixed (a worker is found again by it) and browsers revalidate it themselves;
    /// the files it caches have versioned URLs.
    func serviceWorker(_ request: Request, _ context: AppRequestContext) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: assets.serviceWorker))
        )
    }

    /// One of the player's files at its versioned, immutable URL; an old version's URL is gone (404).
    func playerAsset(_ request: Request, _ context: AppRequestContext) throws -> Response {
        guard context.parameters.get("version") == assets.version, let name = context.parameters.get("name"), let file = assets.files[name] else {
            throw NotFound()
        }
        return Response(
            status: .ok,
            headers: [.contentType: file.contentType, .cacheControl: Self.immutable, .eTag: "\"\(assets.version)\""],
            body: .init(byteBuffer: ByteBuffer(bytes: file.body))
        )
    }

    // MARK: QR codes

    /// The QR code of the tour's player address as SVG.
    func getTourQRCodeSVG(_ request: Request, _ context: TourContext) async throws -> Response {
        let (url, name) = try await playerAddress(request, context)
        let svg = try QRCode(url).svg(title: "QR code: \(name), \(url)")
        return Response(
            status: .ok,
            headers: [
                .contentType: "image/svg+xml", .cacheControl: "private, no-cache",
                .contentDisposition: "inline; filename=\"tour-qr.svg\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: svg))
        )
    }

    /// The QR code of the tour's player address as PNG.
    func getTourQRCodePNG(_ request: Request, _ context: TourContext) async throws -> Response {
        let (url, _) = try await playerAddress(request, context)
        let png = try QRCode(url).png()
        return Response(
            status: .ok,
            headers: [
                .contentType: "image/png", .cacheControl: "private, no-cache",
                .contentDisposition: "inline; filename=\"tour-qr.png\"",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: png))
        )
    }

    /// The public player address of a tour the user may see, once a version of it has been released. Before that the
    /// tour exists but has no address: 409, not 404, which would say the tour is not there. With `?src=` (the sign's
    /// name: letters, digits and '-') the address carries it, and the visitor statistics count which sign brought
    /// visitors.
    func playerAddress(_ request: Request, _ context: TourContext) async throws -> (url: String, name: String) {
        let (tour, id) = (context.tour, context.tour.id)
        let source = request.uri.queryParameters["src"].map(String.init) ?? ""
        if !source.isEmpty, !VisitEventRules.isSource(source) {
            throw ValidationErrors(["src": "A sign's name is 1 to \(VisitEventRules.maxSourceLength) letters, digits and '-'."])
        }
        guard let package = try await database.package(tourId: id), package.currentVersion != nil else {
            throw Conflict("This tour has no released version yet, so it has no player address.")
        }
        let url = Self.playerURL(publicURL: publicURL, packageId: package.id)
        return (source.isEmpty ? url : "\(url)?src=\(source)", tour.name)
    }

    static func playerURL(publicURL: String, packageId: String) -> String {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        return "\(base)/visit/\(packageId.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? packageId)"
    }

    // MARK: API

    /// One tile (XYZ) of a released version's map, read from that version's MBTiles: immutable, since a version never
    /// changes. The player checks it against `tiles/index.json`, which the signed manifest lists.
    func getPackageVersionTile(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard let number = context.parameters.get("version", as: Int.self),
            let version = try await database.servedVersion(packageId: id, version: number)
        else { throw NotFound() }
        return try await TileAnswer.respond(
            tiles: try version.decodedManifest().tiles,
            zip: paths.absolute(version.storedPath),
            store: packageTiles,
            cacheControl: Self.immutable,
            request: request,
            context: context
        )
    }
}

struct WebAppManifest: Encodable {
    struct Icon: Encodable {
        let src: String
        let sizes: String
        let type: String
        let purpose: String
    }
    let name: String
    let short_name: String
    let start_url: String
    let scope: String
    let display: String
    let background_color: String
    let theme_color: String
    let icons: [Icon]
}

struct VisitListPage: Sendable {
    struct Tour: Sendable {
        let packageId: String
        let name: String
        let description: String
        let length: String?
        let duration: String?
        let languages: String
        let size: String
        let stops: Int

        init(_ tour: VisitorTour) {
            let manifest = tour.manifest
            packageId = tour.published.package.id
            name = manifest.packageName
            description = manifest.description
            let meters = manifest.waypoints.compactMap(\.distanceFromPreviousMeters).reduce(0, +)
            length = meters > 0 ? DisplayFormat.kilometers(meters) : nil
            duration = manifest.estimatedDurationMinutes.map { $0 >= 60 ? "\($0 / 60) h \($0 % 60) min" : "\($0) min" }
            languages = (manifest.languages ?? ["en"]).map(LanguageTag.english).joined(separator: ", ")
            size = ByteFormat.string(tour.published.version.size)
            stops = manifest.waypoints.count
        }
    }
    struct Site: Sendable {
        let slug: String
        let name: String
        var tours: [Tour]
    }
    let sites: [Site]
    let isEmpty: Bool
    /// Nothing is published and the scanner has no signatures yet: the likely reason (a first start on a network that
    /// cannot reach ClamAV's mirrors), said to whoever opens the list, with what to do.
    let waitsForScanner: Bool
    let assets: String
    /// The search box's text, and the site the list is narrowed to ("" for every site).
    var query = ""
    var siteSlug = ""
    /// A search or a site is chosen: "No tours match" instead of "No tours are published yet", and a way back.
    var isFiltered = false
    /// Not the first page: a link back to it.
    var isContinued = false
    var nextURL: String? = nil
}

struct VisitPlayerPage: Sendable {
    let packageId: String
    let name: String
    let park: String
    let description: String
    let assets: String
}

struct VisitWithdrawnPage: Sendable {
    let assets: String
}
