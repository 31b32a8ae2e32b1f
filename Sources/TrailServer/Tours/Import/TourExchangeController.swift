import Foundation
import Hummingbird
import MalwareScan
import PackageFormat
import TourFormats
import TrailAPI

/// GeoJSON export, import (GeoJSON, GPX, KML, KMZ, CSV) with a preview, and the route drawn on the map.
struct TourExchangeController: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let pages: PageResponder
    let paths: DataPaths
    let config: AppConfig
    /// KMZ pictures become assets the way uploads do (type, quota, scan queue), through ``ImportService``.
    let intake: AssetIntake
    /// For the tour page an import refusal is shown on.
    let tileSettings: TileSettingsStore
    /// Passed on to the tour page it renders (which says which map visitors get).
    let openMap: OpenDataMap
    /// Imports read at once, weighed by size (429 beyond); taken once a file has arrived.
    let slots: ImportSlots

    /// A KMZ picture in the preview: its size in the panel's unit (MiB), as every size the panel shows.
    struct ImageRow: Sendable {
        let file: String
        let waypoint: String
        let size: String
    }

    struct PreviewPage: Sendable {
        let tourId: Int64
        let tourName: String
        let importId: String
        let items: [ImportPlan.Item]
        let added: Int
        let changed: Int
        let skipped: Int
        /// "2 waypoints will be added, 1 changed, 0 skipped."
        let counts: String
        let routePoints: Int
        let routeLength: String
        /// Whether the file brings a route (which replaces the tour's); a number would be truthy even at 0.
        let hasRoute: Bool
        let setsFrame: Bool
        let hasChanges: Bool
        let format: String
        let folders: [String]
        let columns: [String]
        let notes: [String]
        let leftOut: [ImportedTour.LeftOut]
        /// "and 12,345 more" below the list, when more were left out than it shows.
        let leftOutMore: String
        let images: [ImageRow]
        let outsideFrame: Int
        /// "1 point falls", "3 points fall".
        let outsideFrameText: String
        let canFitFrame: Bool
        let fittedFrame: String
        // Stored, not computed: templates read values through reflection.
        let hasColumns: Bool
        let hasFolders: Bool
        let hasNotes: Bool
        let hasImages: Bool
        let hasLeftOut: Bool
        let hasLeftOutMore: Bool
    }

    func addPanelRoutes(to router: some RouterMethods<SignedInContext>) {
        // The exports answer a malformed tour id with 404, as the management API's do: they are the same handlers.
        let exporting = router.tourGroup(authorization, .view, malformedID: .notFound)
        exporting.get("export.geojson", use: exportTourGeoJSON)
        exporting.get("export.gpx", use: exportTourGPX)
        let editing = router.tourGroup(authorization, .edit)
        editing.post("import", use: uploadImport)
        editing.get("import/{importId}", use: showImportPreview)
        editing.post("import/{importId}/apply", use: applyImport)
        editing.post("route", use: saveRoute)
    }

    /// Receives an import file and sends the browser to its preview; a refused file shows the tour page again
    /// with the reason.
    func uploadImport(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let importId: String
        do {
            (importId, _) = try await receive(request, owner: (context.user.id, tour.id))
        } catch let refusal as any AppError where refusal.status == .unprocessableContent {
            return try await refusedImport(
                refusal.fieldMessages?["file"] ?? refusal.message,
                status: .unprocessableContent,
                tour: tour,
                site: site,
                access: access,
                request: request,
                context: context
            )
        } catch let busy as TooBusy {
            var response = try await refusedImport(
                busy.message,
                status: busy.status,
                tour: tour,
                site: site,
                access: access,
                request: request,
                context: context
            )
            response.headers[.retryAfter] = busy.retryAfterSeconds.map { "\($0)" }
            return response
        } catch let refusal as HTTPError where refusal.status == .contentTooLarge {
            return try await refusedImport(
                refusal.body ?? "The file is too large.",
                status: .contentTooLarge,
                tour: tour,
                site: site,
                access: access,
                request: request,
                context: context
            )
        }
        // Post/redirect/get: the preview gets an address of its own, so the form's URL (which carries the CSRF
        // token, as streaming multipart forms do) never lands in the history, and a reload does not upload again.
        return Response(status: .seeOther, headers: [.location: PanelURL.tourImport(tour.id, importId: importId)])
    }

    /// What importing the uploaded file would add, change and skip; nothing is saved yet.
    func showImportPreview(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        let (importId, file) = try importFile(context, owner: (context.user.id, tour.id))
        guard FileManager.default.fileExists(atPath: file.path) else {
            return pages.redirect(to: PanelURL.tour(tour.id), notice: "That import preview has expired. Choose the file again.")
        }
        let imported = try await read(file)
        let plan = TourImport.plan(
            imported,
            tour: tour,
            existing: try await database.waypoints(tourId: tour.id),
            maxAreaKm2: config.maxFrameAreaKm2
        )
        let columnOrder = ["latitude", "longitude", "name", "description", "order"]
        let page = PreviewPage(
            tourId: tour.id,
            tourName: tour.name,
            importId: importId,
            items: plan.waypoints,
            added: plan.added,
            changed: plan.changed,
            skipped: plan.skipped,
            counts: "\(DisplayFormat.count(plan.added, "waypoint")) will be added, \(DisplayFormat.grouped(plan.changed)) changed, "
                + "\(DisplayFormat.grouped(plan.skipped)) skipped.",
            routePoints: plan.routePoints,
            routeLength: plan.routeLengthMeters.map(DisplayFormat.kilometers) ?? "",
            hasRoute: plan.routePoints > 0,
            setsFrame: plan.setsFrame,
            hasChanges: plan.added + plan.changed > 0 || plan.routePoints > 0 || plan.setsFrame,
            format: plan.format?.rawValue ?? "",
            folders: plan.folders,
            columns: columnOrder.compactMap { key in plan.columns[key].map { "\(key): “\($0)”" } },
            notes: plan.notes,
            leftOut: plan.leftOut,
            leftOutMore: "… and \(DisplayFormat.grouped(plan.leftOutMore)) more (the list shows the first \(plan.leftOut.count)).",
            images: plan.images.map { ImageRow(file: $0.file, waypoint: $0.waypoint, size: ByteFormat.string(Int64($0.bytes))) },
            outsideFrame: plan.outsideFrame,
            outsideFrameText: DisplayFormat.count(plan.outsideFrame, "point") + (plan.outsideFrame == 1 ? " falls" : " fall"),
            canFitFrame: plan.fittedFrame != nil,
            fittedFrame: plan.fittedFrame.map { String(format: "N %.5f, S %.5f, E %.5f, W %.5f", $0.north, $0.south, $0.east, $0.west) } ?? "",
            hasColumns: !plan.columns.isEmpty,
            hasFolders: !plan.folders.isEmpty,
            hasNotes: !plan.notes.isEmpty,
            hasImages: !plan.images.isEmpty,
            hasLeftOut: !plan.leftOut.isEmpty,
            hasLeftOutMore: plan.leftOutMore > 0
        )
        return await pages.render("import-preview", title: "Import preview", page: page, request: request, context: context)
    }

    /// Applies the previewed import and removes its file.
    func applyImport(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        let (_, file) = try importFile(context, owner: (context.user.id, tour.id))
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw Conflict("The uploaded file is gone (an import preview is kept until the server restarts). Upload it again.")
        }
        let fitFrame = (try? await request.decode(as: ImportApplyForm.self, context: context))?.fitFrame == "1"
        let imported = try await read(file)
        // Removed once read, not before: a refusal for a busy server leaves the preview to apply again.
        defer { try? FileManager.default.removeItem(at: file) }
        let plan = TourImport.plan(
            imported,
            tour: tour,
            existing: try await database.waypoints(tourId: tour.id),
            maxAreaKm2: config.maxFrameAreaKm2,
            fitFrame: fitFrame
        )
        let attached = try await apply(imported, plan: plan, tourId: tour.id, actor: context.actor)
        return pages.redirect(
            to: PanelURL.tour(tour.id),
            notice: "Imported: \(plan.added) added, \(plan.changed) changed, \(plan.skipped) skipped"
                + (attached > 0 ? ", \(DisplayFormat.count(attached, "picture")) attached (scanned before they are used)." : ".")
        )
    }

    /// Saves the route drawn on the map (JSON for the map), or removes it when empty.
    func saveRoute(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        let text = try await request.decode(as: RouteForm.self, context: context).route.trimmed
        let route = text.isEmpty || text == "[]" ? nil : try RoutePath(json: text)
        try await database.setRoute(tourId: tour.id, route: route, actor: context.actor)
        if request.wantsJSON {
            return try context.answer(["points": route?.points.count ?? 0, "lengthMeters": Int(route?.lengthMeters ?? 0)], to: request)
        }
        return pages.redirect(to: PanelURL.tour(tour.id), notice: route == nil ? "Route removed." : "Route saved.")
    }

    /// Each handler is named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<SignedInContext>) {
        let exporting = router.tourGroup(authorization, .view, malformedID: .notFound)
        exporting.get("export.geojson", use: exportTourGeoJSON)
        exporting.get("export.gpx", use: exportTourGPX)
        router.tourGroup(authorization, .edit, malformedID: .notFound).post("import", use: importTour)
    }

    /// Imports a GeoJSON, GPX, KML, KMZ or CSV file at once; with `?dryRun=true` only answers what it would do, with
    /// `?fitFrame=true` sets the tour's frame around the file's points.
    func importTour(_ request: Request, _ context: TourContext) async throws -> Components.Schemas.ImportResult {
        let tour = context.tour
        let dryRun = request.uri.queryParameters["dryRun"].map { $0 == "true" || $0 == "1" } ?? false
        let fitFrame = request.uri.queryParameters["fitFrame"].map { $0 == "true" || $0 == "1" } ?? false
        let (importId, imported) = try await receive(request, owner: nil, scanPictures: dryRun)
        try? FileManager.default.removeItem(at: paths.uploads.appendingPathComponent(importId))
        let plan = TourImport.plan(
            imported,
            tour: tour,
            existing: try await database.waypoints(tourId: tour.id),
            maxAreaKm2: config.maxFrameAreaKm2,
            fitFrame: fitFrame
        )
        var attached = 0
        if !dryRun { attached = try await apply(imported, plan: plan, tourId: tour.id, actor: context.actor) }
        return Components.Schemas.ImportResult(dryRun: dryRun, applied: !dryRun, imagesAttached: attached, plan: try .init(plan))
    }

    /// Applies the plan and the KMZ's pictures as one outcome (``ImportService``).
    func apply(_ imported: ImportedTour, plan: ImportPlan, tourId: Int64, actor: AuditActor) async throws -> Int {
        try await ImportService(database: database, intake: intake, paths: paths).apply(imported, plan: plan, tourId: tourId, actor: actor)
    }

    /// Every KMZ picture of a preview is scanned before it is shown: one that carries malware goes to `quarantine/` and
    /// the whole file is refused. (Applying scans the pictures again, as it stores them; see ``ImportService``.)
    func refuseInfectedImages(_ imported: ImportedTour) async throws {
        let images = imported.points.flatMap(\.images)
        guard !images.isEmpty, await intake.scans.scanner.hasSignatures else { return }
        let importer = ImportService(database: database, intake: intake, paths: paths)
        try FileManager.default.createDirectory(at: paths.uploads, withIntermediateDirectories: true)
        for image in images {
            let file = paths.upload("scan-\(UUID().uuidString.lowercased())")
            try image.data.write(to: file)
            // The same verdicts as when the import is applied: malware quarantined (the file moves), any other failure
            // refused with its reason.
            defer { try? FileManager.default.removeItem(at: file) }
            try await importer.scan(file, name: image.path)
        }
    }

    /// The tour as a GeoJSON download (panel and API alike).
    func exportTourGeoJSON(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        return Self.download(try await database.exportGeoJSON(tour: tour, site: site), type: "application/geo+json", name: "\(tour.mapName).geojson")
    }

    /// An export as a download: never cached (it is the tour as it is now), named after the tour's map name.
    static func download(_ data: Data, type: String, name: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-store", .contentDisposition: "attachment; filename=\"\(name)\""],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// The tour as a GPX download, with heights (panel and API alike).
    func exportTourGPX(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        return Self.download(try await database.exportGPX(tour: tour, site: site), type: "application/gpx+xml", name: "\(tour.mapName).gpx")
    }

    /// Streams the multipart file to `uploads/import-<uuid>` (size-limited), then parses it in an import slot: the slot
    /// is taken once the whole file is on disk, so a slow or stalled upload holds none. Stores the file as `uploads/import-<uuid>` (the API, which applies it at once) or, for the panel's preview,
    /// `uploads/import-<uuid>.u<user>.t<tour>`: a preview belongs to the person and the tour that made it.
    /// `scanPictures`: for a preview; an import applied at once has its pictures scanned as they are stored.
    func receive(_ request: Request, owner: (userId: Int64, tourId: Int64)?, scanPictures: Bool = true) async throws -> (String, ImportedTour) {
        let received: MultipartUpload.Result
        do {
            received = try await MultipartUpload.receive(request, paths: paths, maxFileSize: Int64(config.importMaxSize))
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw HTTPError(.contentTooLarge, message: "Import files are limited to \(DisplayFormat.megabytes(config.importMaxSize)).")
        }
        guard let file = received.files.first else { throw ValidationErrors(["file": "Choose a GeoJSON, GPX, KML, KMZ or CSV file."]) }
        for extra in received.files.dropFirst() { try? FileManager.default.removeItem(at: paths.upload(extra.uploadId)) }
        let importId = "import-\(file.uploadId)"
        let target = paths.uploads.appendingPathComponent(owner.map { Self.previewName(importId, userId: $0.userId, tourId: $0.tourId) } ?? importId)
        try FileManager.default.moveItem(at: paths.upload(file.uploadId), to: target)
        do {
            let imported = try await slots.run(bytes: Self.size(of: target)) {
                let imported = try await parse(fileAt: target)
                if scanPictures { try await refuseInfectedImages(imported) }
                return imported
            }
            return (importId, imported)
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw error
        }
    }

    static func previewName(_ importId: String, userId: Int64, tourId: Int64) -> String { "\(importId).u\(userId).t\(tourId)" }

    /// The caller's stored preview named in the path; only names this server makes (`import-<uuid>`) are accepted.
    /// Another person's preview, or one made for another tour, is 404 (its id proves nothing); a preview that is
    /// simply gone (used, or removed at a restart) is a file that does not exist, which the handlers explain.
    func importFile(_ context: TourContext, owner: (userId: Int64, tourId: Int64)) throws -> (String, URL) {
        let importId = try context.parameters.require("importId")
        guard importId.hasPrefix("import-"), importId.count <= 60, importId.dropFirst(7).allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            throw NotFound()
        }
        let mine = paths.uploads.appendingPathComponent(Self.previewName(importId, userId: owner.userId, tourId: owner.tourId))
        if !FileManager.default.fileExists(atPath: mine.path) {
            let others = (try? FileManager.default.contentsOfDirectory(atPath: paths.uploads.path)) ?? []
            if others.contains(where: { $0.hasPrefix(importId + ".") }) { throw NotFound() }
        }
        return (importId, mine)
    }

    /// The tour page again, with the reason under the import field (like every other form of the page).
    func refusedImport(
        _ message: String,
        status: HTTPResponse.Status,
        tour: Tour,
        site: Site,
        access: SiteAccess,
        request: Request,
        context: TourContext
    ) async throws -> Response {
        var page = try await ToursController(
            database: database,
            pages: pages,
            authorization: authorization,
            config: config,
            tileSettings: tileSettings,
            paths: paths,
            openMap: openMap
        )
        .tourPage(tour, site, access)
        page.importError = message
        return await pages.render("tour", title: tour.name, page: page, request: request, context: context, status: status)
    }

    /// Reads a stored import file in an import slot of its size.
    func read(_ file: URL) async throws -> ImportedTour {
        try await slots.run(bytes: Self.size(of: file)) { try await parse(fileAt: file) }
    }

    /// Reads an import file on the import pool: never on a cooperative thread, which every request needs. A large one
    /// hands its memory back to the system when it is read, refused or not (``ImportMemory``).
    func parse(fileAt url: URL) async throws -> ImportedTour {
        let maxBytes = config.importMaxSize
        let bytes = Self.size(of: url)
        return try await BlockingWork.imports {
            defer { ImportMemory.trim(afterImportOf: bytes) }
            return try TourImport.parse(fileAt: url, maxBytes: maxBytes)
        }
    }

    static func size(of file: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

extension Components.Schemas.ImportResult.PlanPayload {
    /// The preview as the API answers it: every list present (empty when there is nothing), the format as read.
    init(_ plan: ImportPlan) throws {
        self.init(
            waypoints: try plan.waypoints.map {
                .init(action: try WireEnum.value($0.action), name: $0.name, latitude: $0.latitude, longitude: $0.longitude, reason: $0.reason)
            },
            routePoints: plan.routePoints,
            routeLengthMeters: plan.routeLengthMeters,
            frame: plan.frame.map(Components.Schemas.Frame.init),
            setsFrame: plan.setsFrame,
            format: try WireEnum.value(plan.format?.rawValue ?? ""),
            outsideFrame: plan.outsideFrame,
            fittedFrame: plan.fittedFrame.map(Components.Schemas.Frame.init),
            leftOut: plan.leftOut.map { .init(kind: $0.kind, name: $0.name, reason: $0.reason) },
            leftOutMore: plan.leftOutMore,
            folders: plan.folders,
            columns: .init(additionalProperties: plan.columns),
            images: plan.images.map { .init(waypoint: $0.waypoint, file: $0.file, bytes: $0.bytes) },
            notes: plan.notes,
            added: plan.added,
            changed: plan.changed,
            skipped: plan.skipped
        )
    }
}

/// Applying an import preview: `fitFrame` "1" grows the tour's frame to what the file holds.
struct ImportApplyForm: PanelForm {
    @Field var fitFrame: String
}

/// The route drawn on the map, as the JSON text of its points (empty or `[]` removes it).
struct RouteForm: PanelForm {
    @Field var route: String
}
