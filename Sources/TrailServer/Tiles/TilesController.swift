import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import PackageFormat
import TrailAPI

/// Map tiles in the panel and the management API: a tour's uploaded MBTiles (streamed, scanned, checked), the admin's
/// tile server settings, and the tiles of built packages for the review map and the phone preview.
struct TilesController: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let paths: DataPaths
    let pages: PageResponder
    let config: AppConfig
    let settings: TileSettingsStore
    let packageTiles: PackageTilesStore
    let scans: ScanService
    /// The drawn map's sources, which the admin's page names beside the tile server.
    let openMap: OpenDataMap

    // MARK: Panel

    func addPanelRoutes(to router: some RouterMethods<SignedInContext>) {
        // A malformed tour id is not found; a locked tour's tiles are refused by each handler (409).
        let editing = router.tourGroup(authorization, .edit, malformedID: .notFound)
        editing.post("tiles", use: uploadTilesFile)
        editing.post("tiles/delete", use: deleteTilesFile)

        router.get("/requests/{rid}/tiles/{z}/{x}/{y}", use: requestTile)
        router.get("/requests/{rid}/basemap.geojson", use: requestBasemap)
        router.get("/packages/{pid}/versions/{version}/basemap.geojson", use: versionBasemap)
        router.get("/requests/{rid}/preview", use: previewRequest)
        router.get("/packages/{pid}/versions/{version}/tiles/{z}/{x}/{y}", use: versionTile)
        router.get("/packages/{pid}/versions/{version}/preview", use: previewVersion)

        let admin = router.group("admin/tiles").add(middleware: RequireAdminMiddleware())
        admin.get("", use: showTileSettings)
        admin.post("", use: saveTileSettings)
    }

    /// Uploads a tour's MBTiles file and goes back to the tour's tiles card.
    /// Multipart (the CSRF token is the form's first field); replaces the tour's file.
    func uploadTilesFile(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = try unlocked(context.tour)
        let tileset = try await receive(request, tour: tour, context: context)
        return pages.redirect(
            to: PanelURL.tour(tour.id, at: .tiles),
            notice:
                "Map tiles “\(tileset.originalName)” uploaded (zoom \(tileset.minZoom)–\(tileset.maxZoom), \(DisplayFormat.grouped(tileset.tileCount)) tiles); scanning for malware now."
        )
    }

    /// Deletes the tour's MBTiles file; its packages use the tile server again.
    func deleteTilesFile(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = try unlocked(context.tour)
        let released = try await database.deleteTileset(tourId: tour.id, actor: context.actor)
        await StoredFiles(paths: paths).removeUnreferenced(released)
        return pages.redirect(to: PanelURL.tour(tour.id, at: .tiles), notice: "Map tiles file deleted; packages use the tile server again.")
    }

    /// One tile of a publish request's package, for the review map.
    func requestTile(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, _) = try await requestPackage(context)
        return try await previewTile(zip: zip, manifest: manifest, request: request, context: context)
    }

    /// The drawn map of a publish request's package, for the review map: the file that will ship.
    func requestBasemap(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, _) = try await requestPackage(context)
        return try await Self.basemapAnswer(zip: zip, manifest: manifest)
    }

    /// The drawn map of a released version's package.
    func versionBasemap(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, _) = try await versionPackage(context)
        return try await Self.basemapAnswer(zip: zip, manifest: manifest)
    }

    /// `map/basemap.geojson` out of the package's zip, checked against the signed manifest's size and SHA-256 (404 when
    /// the package has none).
    static func basemapAnswer(zip: URL, manifest: Manifest) async throws -> Response {
        guard let basemap = manifest.basemap else { throw NotFound() }
        let data = try await BlockingWork.files { () throws -> Data in
            do {
                guard let data = try PackageArchiveReader(url: zip).readListed(path: basemap.path, size: basemap.size, sha256: basemap.sha256)
                else { throw NotFound() }
                return data
            } catch is ListedFileMismatch {
                throw Conflict("The package's drawn map does not match its signed manifest.")
            }
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/geo+json", .cacheControl: "private, max-age=86400"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A tile of a package the panel previews (a request's or a released version's): for the signed-in people of its
    /// site, so cached by their browser only.
    func previewTile(zip: URL, manifest: Manifest, request: Request, context: SignedInContext) async throws -> Response {
        try await TileAnswer.respond(
            tiles: manifest.tiles,
            zip: zip,
            store: packageTiles,
            cacheControl: "private, max-age=86400",
            request: request,
            context: context
        )
    }

    /// A publish request's package as a phone shows it; `?lang=` picks a further language.
    func previewRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, publish) = try await requestPackage(context)
        let page = try await previewPage(
            zip: zip,
            manifest: manifest,
            tileURL: PanelURL.requestTiles(publish.id),
            basemapURL: PanelURL.requestBasemap(publish.id),
            subtitle: "Version \(publish.version), \(publish.state.label.lowercased())",
            backURL: PanelURL.request(publish.id),
            backLabel: "Back to the request",
            base: PanelURL.requestPreview(publish.id),
            language: request.uri.queryParameters["lang"].map(String.init)
        )
        return await pages.render("package-preview", title: "Phone preview", page: page, request: request, context: context)
    }

    /// One tile of a released version's package.
    func versionTile(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, _) = try await versionPackage(context)
        return try await previewTile(zip: zip, manifest: manifest, request: request, context: context)
    }

    /// A released version as a phone shows it; `?lang=` picks a further language.
    func previewVersion(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (zip, manifest, version) = try await versionPackage(context)
        let page = try await previewPage(
            zip: zip,
            manifest: manifest,
            tileURL: PanelURL.packageVersionTiles(version.packageId, version: version.version),
            basemapURL: PanelURL.packageVersionBasemap(version.packageId, version: version.version),
            subtitle: "Version \(version.version), released \(DisplayFormat.date(version.createdAt))",
            backURL: PanelURL.package(version.packageId),
            backLabel: "Back to the package",
            base: PanelURL.packageVersionPreview(version.packageId, version: version.version),
            language: request.uri.queryParameters["lang"].map(String.init)
        )
        return await pages.render("package-preview", title: "Phone preview", page: page, request: request, context: context)
    }

    /// The tile server settings (admins).
    func showTileSettings(_ request: Request, _ context: SignedInContext) async throws -> Response {
        await pages.render("admin-tiles", title: "Map tiles", page: try await settingsPage(), request: request, context: context)
    }

    /// Saves the tile server settings, or the form again with its errors (422).
    func saveTileSettings(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: TileSettingsForm.self, context: context)
        do {
            let (template, attribution, tileCap) = (form.urlTemplate, form.attribution, TypedNumber.int(form.tileCap))
            let saved = try await settings.save(urlTemplate: template, attribution: attribution, tileCap: tileCap, actor: context.actor)
            return pages.redirect(
                to: "/admin/tiles",
                notice: saved.urlTemplate.map { "Saved: packages fetch their tiles from \(TileFetcher.host($0))." }
                    ?? "Saved: no tile server; packages get map tiles only from uploaded MBTiles files."
            )
        } catch let errors as ValidationErrors {
            var page = try await settingsPage()
            page.form = ["urlTemplate": form.urlTemplate, "attribution": form.attribution, "tileCap": form.tileCap]
            page.errors = errors.fields
            return await pages.render(
                "admin-tiles",
                title: "Map tiles",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    // MARK: API

    /// Each handler is named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<SignedInContext>) {
        let editing = router.tourGroup(authorization, .edit, malformedID: .notFound)
        editing.post("tiles", use: uploadTiles)
        router.tourGroup(authorization, .view, malformedID: .notFound).get("tiles", use: getTiles)
        editing.delete("tiles", use: deleteTiles)
    }

    /// Uploads a tour's MBTiles file (multipart `file`); 201 with the tileset and its address.
    func uploadTiles(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = try unlocked(context.tour)
        let tileset = try await receive(request, tour: tour, context: context)
        var response = try context.answer(try Components.Schemas.Tileset(tileset), status: .created, to: request)
        response.headers[.location] = APIURL.manageTourTiles(tour.id)
        return response
    }

    /// The tour's MBTiles file and its scan status; 204 when it has none (the tour is there, and uses the tile server
    /// if one is set: a 404 would say the tour is not).
    func getTiles(_ request: Request, _ context: TourContext) async throws -> Response {
        guard let tileset = try await database.tileset(tourId: context.tour.id) else { return Response(status: .noContent) }
        return try context.answer(try Components.Schemas.Tileset(tileset), to: request)
    }

    /// Deletes the tour's MBTiles file (204, also when it had none: either way the tour has no uploaded tiles after it).
    func deleteTiles(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = try unlocked(context.tour)
        let released = try await database.deleteTileset(tourId: tour.id, actor: context.actor)
        await StoredFiles(paths: paths).removeUnreferenced(released)
        return Response(status: .noContent)
    }

    // MARK: Upload

    /// The tour, unless an open publish request has locked it.
    func unlocked(_ tour: Tour) throws -> Tour {
        if tour.isLocked { throw Conflict("“\(tour.name)” is locked while its publish request is open.") }
        return tour
    }

    /// Streams the multipart body to disk (as any upload), then checks the file: SQLite magic, MBTiles schema, raster
    /// tiles, bounds overlapping the frame. A refused file is removed at once; an accepted one waits for the scanner.
    func receive(_ request: Request, tour: Tour, context: TourContext) async throws -> TourTileset {
        // The file replaces the tour's current one, so that one's size is room too.
        var budget: MultipartUpload.Budget?
        if let site = try await database.site(id: tour.siteId), let quota = site.storageQuotaBytes {
            let room =
                quota - (try await database.committedBytes(siteId: site.id))
                + (try await database.tileset(tourId: tour.id)?.size ?? 0)
            budget = .init(bytes: max(0, room), message: ByteFormat.quotaMessage(site: site, quota: quota))
        }
        let received = try await MultipartUpload.receive(request, paths: paths, maxFileSize: config.maxUploadSize, budget: budget)
        guard received.files.count == 1, let file = received.files.first else {
            received.discardFiles(paths: paths)
            throw HTTPError(.badRequest, message: "Send exactly one multipart field named “file” holding the .mbtiles file.")
        }
        let name = AssetIntake.displayName(file.originalName)
        let pendingFolder = paths.tilesets.appendingPathComponent("pending")
        let relative = "tilesets/pending/\(file.uploadId)"
        let pending = paths.absolute(relative)
        do {
            try FileManager.default.createDirectory(at: pendingFolder, withIntermediateDirectories: true)
            guard rename(paths.upload(file.uploadId).path, pending.path) == 0 else {
                throw POSIXFailure(operation: "move the upload", code: errno)
            }
        } catch {
            try? FileManager.default.removeItem(at: paths.upload(file.uploadId))
            throw error
        }
        do {
            guard FileTypeDetector.detectTiles(header: file.header) != nil else {
                throw HTTPError(.unsupportedMediaType, message: "“\(name)”: \(MBTilesError.notSQLite)")
            }
            guard let frame = tour.frame else {
                throw HTTPError(.unprocessableContent, message: "Set the tour's map frame first: an MBTiles file is checked against it.")
            }
            let info: MBTilesInfo
            do {
                info = try await BlockingWork.files {
                    let reader = try MBTilesReader(url: pending)
                    defer { reader.close() }
                    return try reader.info()
                }
            } catch let error as MBTilesError {
                throw HTTPError(error == .notSQLite ? .unsupportedMediaType : .unprocessableContent, message: "“\(name)”: \(error)")
            }
            // The site's quota: the streaming budget above stopped a file that could not fit; `replaceTileset` decides,
            // in the transaction that stores it (the tour's current file's size given back).
            guard info.bounds.overlaps(frame) else {
                let problem = MBTilesError.boundsOutsideFrame(bounds: DisplayFormat.frame(info.bounds), frame: DisplayFormat.frame(frame))
                throw HTTPError(.unprocessableContent, message: "“\(name)”: \(problem)")
            }
            let tileset = TourTileset(
                tourId: tour.id,
                originalName: name,
                size: file.size,
                sha256: file.sha256,
                format: info.format,
                minZoom: info.minZoom,
                maxZoom: info.maxZoom,
                boundsWest: info.bounds.west,
                boundsSouth: info.bounds.south,
                boundsEast: info.bounds.east,
                boundsNorth: info.bounds.north,
                attribution: String(info.attribution.prefix(500)),
                tileCount: info.tileCount,
                scanStatus: .pending,
                scanDetail: "",
                storedPath: relative,
                uploadedBy: context.user.id,
                createdAt: Date(),
                scannedAt: nil
            )
            let released = try await database.replaceTileset(tileset, actor: context.actor)
            await StoredFiles(paths: paths).removeUnreferenced(released)
            scans.wake()
            return tileset
        } catch {
            try? FileManager.default.removeItem(at: pending)
            throw error
        }
    }

    // MARK: Package tiles

    /// A request's built package: its staged zip while open, the released version's zip once pushed.
    func requestPackage(_ context: SignedInContext) async throws -> (URL, Manifest, PublishRequest) {
        guard let publish = try await database.publishRequest(id: context.parameters.require("rid")) else { throw NotFound() }
        _ = try await authorization.site(id: publish.siteId, user: context.user)
        guard let manifest = try publish.decodedManifest() else { throw NotFound() }
        let zip =
            publish.state == .published
            ? paths.packages.appendingPathComponent(publish.packageId).appendingPathComponent("\(publish.version).zip")
            : paths.staging.appendingPathComponent(publish.id).appendingPathComponent("package.zip")
        return (zip, manifest, publish)
    }

    func versionPackage(_ context: SignedInContext) async throws -> (URL, Manifest, PackageVersion) {
        guard let package = try await database.package(id: context.parameters.require("pid")) else { throw NotFound() }
        _ = try await authorization.site(id: package.siteId, user: context.user)
        guard let number = context.parameters.get("version", as: Int.self),
            let version = try await database.packageVersion(packageId: package.id, version: number)
        else { throw NotFound() }
        return (paths.absolute(version.storedPath), try version.decodedManifest(), version)
    }

    /// The package as a phone shows it, in its default language or, with `language`, in one of its further ones (the
    /// default's texts where a translation is missing, as an app would fall back).
    func previewPage(
        zip: URL,
        manifest: Manifest,
        tileURL: String,
        basemapURL: String,
        subtitle: String,
        backURL: String,
        backLabel: String,
        base: String = "",
        language: String? = nil
    ) async throws -> PackagePreviewPage {
        let languages = manifest.languages ?? []
        let chosen = LanguageTag.further(language, of: languages)
        func name(_ waypoint: Manifest.Waypoint) -> String { chosen.flatMap { waypoint.localized?[$0]?.name.nonEmpty } ?? waypoint.name }
        func description(_ waypoint: Manifest.Waypoint) -> String {
            chosen.flatMap { waypoint.localized?[$0]?.description.nonEmpty } ?? waypoint.description
        }
        var attribution = ""
        if let tiles = manifest.tiles, let reader = try? await packageTiles.reader(zip: zip, tiles: tiles) {
            attribution = (try? await BlockingWork.short { try reader.metadata()["attribution"] }) ?? nil ?? ""
        }
        let frame = Frame(north: manifest.bounds.north, south: manifest.bounds.south, east: manifest.bounds.east, west: manifest.bounds.west)
        let map = PreviewMapData(
            frame: frame,
            waypoints: manifest.waypoints.map {
                .init(order: $0.order, name: name($0), latitude: $0.coordinates.latitude, longitude: $0.coordinates.longitude)
            },
            route: (manifest.route ?? []).map { [$0.longitude, $0.latitude] },
            tileURL: manifest.tiles == nil ? nil : tileURL,
            minZoom: manifest.tiles?.minZoom,
            maxZoom: manifest.tiles?.maxZoom,
            startZoom: manifest.tiles.map { TileMath.centerZoom(frame, zooms: $0.minZoom...$0.maxZoom) },
            attribution: attribution,
            basemapURL: manifest.basemap == nil ? nil : basemapURL
        )
        let json = (try? String(decoding: WireCoding.encoder.encode(map), as: UTF8.self)) ?? "{}"
        var page = PackagePreviewPage(
            name: chosen.flatMap { manifest.localized?[$0]?.packageName.nonEmpty } ?? manifest.packageName,
            park: manifest.park,
            subtitle: subtitle,
            backURL: backURL,
            backLabel: backLabel,
            hasTiles: manifest.tiles != nil,
            tilesSummary: manifest.tiles.map {
                "\($0.format.uppercased()) tiles, zoom \($0.minZoom)–\($0.maxZoom), \(DisplayFormat.grouped($0.tileCount)) tiles, \(ByteFormat.string($0.size ?? 0))"
            } ?? "",
            attribution: attribution,
            mapJSON: json,
            waypoints: manifest.waypoints.map { waypoint in
                .init(
                    order: waypoint.order,
                    name: name(waypoint),
                    description: description(waypoint),
                    assetCount: waypoint.assets.filter { $0.language == nil || $0.language == (chosen ?? languages.first) }.count
                )
            }
        )
        page.hasLanguageTabs = languages.count > 1
        page.languageTabs = LanguageTab.tabs(languages: languages, base: base, active: chosen)
        page.lang = chosen ?? languages.first ?? "en"
        return page
    }

    func settingsPage() async throws -> AdminTilesPage {
        let current = settings.current
        return AdminTilesPage(
            form: ["urlTemplate": current.urlTemplate ?? "", "attribution": current.attribution, "tileCap": "\(current.tileCap)"],
            isSaved: settings.isSaved,
            commandLineTemplate: config.tileURLTemplate.flatMap { $0.isEmpty ? nil : $0 },
            forbidden: TileURLTemplate.forbiddenDomains.joined(separator: ", "),
            userAgent: TileFetcher.userAgent(publicURL: config.effectivePublicURL),
            openData: Self.openDataState(openMap)
        )
    }

    /// The drawn map's sources in force, in a sentence for the admin.
    static func openDataState(_ openMap: OpenDataMap) -> String {
        var parts: [String] = []
        switch openMap.indexState {
        case .off: parts.append("No OpenStreetMap extract is set (--osm-extract).")
        case .indexing(let since): parts.append("The OpenStreetMap extract is being indexed (since \(DisplayFormat.time(since))).")
        case .ready(let index):
            let metadata = index.metadata
            parts.append(
                "OpenStreetMap extract: \(metadata.files.joined(separator: ", ")), \(DisplayFormat.grouped(metadata.features)) features, indexed."
            )
        case .failed(let reason): parts.append(reason)
        }
        if let model = openMap.terrain.model {
            parts.append(
                "Terrain model: \(model.files.count == 1 ? (model.path as NSString).lastPathComponent : "\(model.files.count) tiles"), for contour lines."
            )
        } else {
            parts.append(openMap.terrain.problem ?? "No terrain model is set (--dem).")
        }
        return parts.joined(separator: " ")
    }
}

// MARK: View models

struct PreviewMapData: Encodable {
    struct Point: Encodable {
        let order: Int
        let name: String
        let latitude: Double
        let longitude: Double
    }
    let frame: Frame
    let waypoints: [Point]
    /// The package's route, `[[lon, lat], ...]`.
    let route: [[Double]]
    let tileURL: String?
    let minZoom: Int?
    let maxZoom: Int?
    let startZoom: Int?
    let attribution: String
    /// The package's drawn map (`map/basemap.geojson`), drawn over its tiles as the phone draws it.
    let basemapURL: String?
}

struct PackagePreviewPage: Sendable {
    struct Item: Sendable {
        let order: Int
        let name: String
        let description: String
        let assetCount: Int
    }
    let name: String
    let park: String
    let subtitle: String
    let backURL: String
    let backLabel: String
    let hasTiles: Bool
    let tilesSummary: String
    let attribution: String
    let mapJSON: String
    let waypoints: [Item]
    var languageTabs: [LanguageTab] = []
    var hasLanguageTabs = false
    /// The language the phone screen is in (its `lang` attribute).
    var lang = "en"
}

struct AdminTilesPage: Sendable {
    var form: [String: String]
    var errors: [String: String] = [:]
    let isSaved: Bool
    /// nil when `--tile-url` is not set (an empty string would still open the template section).
    let commandLineTemplate: String?
    let forbidden: String
    let userAgent: String
    /// What the server draws maps from (the extract and the terrain model), or why it cannot.
    let openData: String
}

/// The "Map tiles" card of the tour page.
struct TourTilesModel: Sendable {
    struct Upload: Sendable {
        let name: String
        let size: String
        let status: String
        let statusBadge: String
        let isPending: Bool
        let detail: String
        let zoom: String
        let tileCount: String
        let format: String
    }
    let tourId: Int64
    let canEdit: Bool
    let upload: Upload?
    let hasServer: Bool
    let serverHost: String
    let attribution: String
    let hasNoSource: Bool
    /// What the saved frame needs, for the page without JavaScript.
    let estimate: String?
    let overCap: Bool
    let cap: Int
    let capText: String
    let bytesPerTile: Int
    let uploadMinZoom: String?
    let uploadMaxZoom: String?
    let maxUploadSize: String

    static func make(tour: Tour, tileset: TourTileset?, settings: TileSettings, canEdit: Bool, maxUploadSize: Int64) -> TourTilesModel {
        let template = settings.usableTemplate
        let zooms = tileset?.zooms ?? (tour.minZoom...max(tour.minZoom, tour.maxZoom))
        let bytesPerTile = tileset.map { max(1, Int($0.size) / max(1, $0.tileCount)) } ?? 20 * 1024
        var estimate: String?
        var overCap = false
        if let frame = tour.frame {
            let count = TileMath.count(frame, zooms: zooms)
            overCap = tileset == nil && template != nil && count > settings.tileCap
            estimate =
                "\(DisplayFormat.grouped(count)) tiles at zoom \(zooms.lowerBound)–\(zooms.upperBound), about \(ByteFormat.string(Int64(count) * Int64(bytesPerTile)))"
        }
        return TourTilesModel(
            tourId: tour.id,
            canEdit: canEdit,
            upload: tileset.map {
                Upload(
                    name: $0.originalName,
                    size: ByteFormat.string($0.size),
                    status: $0.scanStatus.rawValue,
                    statusBadge: $0.scanStatus.badge,
                    isPending: $0.scanStatus == .pending,
                    detail: $0.scanDetail,
                    zoom: "\($0.minZoom)–\($0.maxZoom)",
                    tileCount: DisplayFormat.grouped($0.tileCount),
                    format: $0.format.uppercased()
                )
            },
            hasServer: tileset == nil && template != nil,
            serverHost: template.map(TileFetcher.host) ?? "",
            attribution: tileset?.attribution ?? settings.attribution,
            hasNoSource: tileset == nil && template == nil,
            estimate: estimate,
            overCap: overCap,
            cap: settings.tileCap,
            capText: DisplayFormat.grouped(settings.tileCap),
            bytesPerTile: bytesPerTile,
            uploadMinZoom: tileset.map { "\($0.minZoom)" },
            uploadMaxZoom: tileset.map { "\($0.maxZoom)" },
            maxUploadSize: ByteFormat.string(maxUploadSize)
        )
    }
}

extension Components.Schemas.Tileset {
    init(_ tileset: TourTileset) throws {
        self.init(
            tour: tileset.tourId,
            originalName: tileset.originalName,
            size: tileset.size,
            sha256: tileset.sha256,
            format: try WireEnum.value(tileset.format),
            minZoom: tileset.minZoom,
            maxZoom: tileset.maxZoom,
            bounds: .init(north: tileset.boundsNorth, south: tileset.boundsSouth, east: tileset.boundsEast, west: tileset.boundsWest),
            tileCount: tileset.tileCount,
            attribution: tileset.attribution,
            scanStatus: try WireEnum.value(tileset.scanStatus),
            scanDetail: tileset.scanDetail,
            createdAt: tileset.createdAt
        )
    }
}

/// The tile server settings form; the cap is typed, so it is text until `TileSettings` checks it.
struct TileSettingsForm: PanelForm {
    @Field var urlTemplate: String
    @Field var attribution: String
    @Field var tileCap: String
}
