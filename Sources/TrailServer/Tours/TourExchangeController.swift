import Foundation
import Hummingbird

/// GeoJSON export, GeoJSON/GPX import with a preview, and the route drawn on the map.
struct TourExchangeController: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let pages: PageResponder
    let paths: DataPaths
    let config: AppConfig

    struct PreviewPage: Sendable {
        let tourId: Int64
        let tourName: String
        let importId: String
        let items: [ImportPlan.Item]
        let added: Int
        let changed: Int
        let skipped: Int
        let routePoints: Int
        let routeLength: String
        let setsFrame: Bool
        let hasChanges: Bool
    }

    func addPanelRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/tours/{id}/export.geojson") { request, context in try await exportTourGeoJSON(request, context) }
        router.post("/tours/{id}/import") { request, context in try await uploadImport(request, context) }
        router.get("/tours/{id}/import/{importId}") { request, context in try await showImportPreview(request, context) }
        router.post("/tours/{id}/import/{importId}/apply") { request, context in try await applyImport(request, context) }
        router.post("/tours/{id}/route") { request, context in try await saveRoute(request, context) }
    }

    /// Receives a GeoJSON or GPX file and sends the browser to its preview; a refused file shows the tour page again
    /// with the reason.
    func uploadImport(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (tour, site, access) = try await authorization.editableTour(id: context.parameters.require("id", as: Int64.self), user: context.requireUser())
        let importId: String
        do {
            (importId, _) = try await receive(request, owner: (try context.requireUser().id, tour.id!))
        } catch let refusal as any AppError where refusal.status == .unprocessableContent {
            return try await refusedImport(refusal.fieldMessages?["file"] ?? refusal.message, status: .unprocessableContent,
                                     tour: tour, site: site, access: access, request: request, context: context)
        } catch let refusal as HTTPError where refusal.status == .contentTooLarge {
            return try await refusedImport(refusal.body ?? "The file is too large.", status: .contentTooLarge,
                                     tour: tour, site: site, access: access, request: request, context: context)
        }
        // Post/redirect/get: the preview gets an address of its own, so the form's URL (which carries the CSRF
        // token, as streaming multipart forms do) never lands in the history, and a reload does not upload again.
        return Response(status: .seeOther, headers: [.location: PanelURL.tourImport(tour.id!, importId: importId)])
    }

    /// What importing the uploaded file would add, change and skip; nothing is saved yet.
    func showImportPreview(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (tour, _, _) = try await authorization.editableTour(id: context.parameters.require("id", as: Int64.self), user: context.requireUser())
        let (importId, file) = try importFile(context, owner: (try context.requireUser().id, tour.id!))
        guard let data = try? Data(contentsOf: file) else {
            return pages.redirect(to: PanelURL.tour(tour.id!), notice: "That import preview has expired. Choose the file again.")
        }
        let imported = try parse(data)
        let plan = TourImport.plan(imported, tour: tour, existing: try await database.perform { try $0.waypoints(tourId: tour.id!) }, maxAreaKm2: config.maxFrameAreaKm2)
        let page = PreviewPage(tourId: tour.id!, tourName: tour.name, importId: importId, items: plan.waypoints, added: plan.added,
                               changed: plan.changed, skipped: plan.skipped, routePoints: plan.routePoints,
                               routeLength: plan.routeLengthMeters.map(DisplayFormat.kilometers) ?? "",
                               setsFrame: plan.setsFrame, hasChanges: plan.added + plan.changed > 0 || plan.routePoints > 0 || plan.setsFrame)
        return pages.render("import-preview", title: "Import preview", page: page, request: request, context: context)
    }

    /// Applies the previewed import and removes its file.
    func applyImport(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (tour, _, _) = try await authorization.editableTour(id: context.parameters.require("id", as: Int64.self), user: context.requireUser())
        let (_, file) = try importFile(context, owner: (try context.requireUser().id, tour.id!))
        guard let data = try? Data(contentsOf: file) else {
            throw Conflict("The uploaded file is gone (an import preview is kept until the server restarts). Upload it again.")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let imported = try parse(data)
        let plan = TourImport.plan(imported, tour: tour, existing: try await database.perform { try $0.waypoints(tourId: tour.id!) }, maxAreaKm2: config.maxFrameAreaKm2)
        try await database.perform { try $0.applyImport(tourId: tour.id!, imported: imported, plan: plan, actor: context.actor) }
        return pages.redirect(to: PanelURL.tour(tour.id!), notice: "Imported: \(plan.added) added, \(plan.changed) changed, \(plan.skipped) skipped.")
    }

    /// Saves the route drawn on the map (JSON for the map), or removes it when empty.
    func saveRoute(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (tour, _, _) = try await authorization.editableTour(id: context.parameters.require("id", as: Int64.self), user: context.requireUser())
        var request = request
        let form = try await request.form(context: context)
        let text = form.string("route").trimmed
        let route = text.isEmpty || text == "[]" ? nil : try RoutePath(json: text)
        try await database.perform { try $0.setRoute(tourId: tour.id!, route: route, actor: context.actor) }
        if request.wantsJSON {
            return try JSONResponse.make(["points": route?.points.count ?? 0, "lengthMeters": Int(route?.lengthMeters ?? 0)])
        }
        return pages.redirect(to: PanelURL.tour(tour.id!), notice: route == nil ? "Route removed." : "Route saved.")
    }

    /// Each handler is named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/tours/{id}/export.geojson") { request, context in try await exportTourGeoJSON(request, context) }
        router.post("/tours/{id}/import") { request, context in try await importTour(request, context) }
    }

    /// Imports a GeoJSON or GPX file at once; with `?dryRun=true` only answers what it would do.
    func importTour(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let tourId = context.parameters.get("id", as: Int64.self) else { throw NotFound() }
        let (tour, _, _) = try await authorization.editableTour(id: tourId, user: context.requireUser())
        let dryRun = request.uri.queryParameters["dryRun"].map { $0 == "true" || $0 == "1" } ?? false
        let (importId, imported) = try await receive(request, owner: nil)
        try? FileManager.default.removeItem(at: paths.uploads.appendingPathComponent(importId))
        let plan = TourImport.plan(imported, tour: tour, existing: try await database.perform { try $0.waypoints(tourId: tourId) }, maxAreaKm2: config.maxFrameAreaKm2)
        if !dryRun { try await database.perform({ try $0.applyImport(tourId: tourId, imported: imported, plan: plan, actor: context.actor) }) }
        return try JSONResponse.make(ImportAnswer(dryRun: dryRun, applied: !dryRun, plan: plan))
    }

    struct ImportAnswer: Encodable {
        let dryRun: Bool
        let applied: Bool
        let plan: ImportPlan
    }

    /// The tour as a GeoJSON download (panel and API alike).
    func exportTourGeoJSON(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let tourId = context.parameters.get("id", as: Int64.self) else { throw NotFound() }
        let (tour, site, _) = try await authorization.tour(id: tourId, user: context.requireUser())
        let data = try await database.perform { try $0.exportGeoJSON(tour: tour, site: site) }
        return Response(status: .ok, headers: [.contentType: "application/geo+json", .cacheControl: "no-store",
                                               .contentDisposition: "attachment; filename=\"\(tour.mapName).geojson\""],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Streams the multipart file to `uploads/import-<uuid>` (size-limited), then parses it.
    /// Stores the file as `uploads/import-<uuid>` (the API, which applies it at once) or, for the panel's preview,
    /// `uploads/import-<uuid>.u<user>.t<tour>`: a preview belongs to the person and the tour that made it.
    func receive(_ request: Request, owner: (userId: Int64, tourId: Int64)?) async throws -> (String, ImportedTour) {
        let received: MultipartUpload.Result
        do {
            received = try await MultipartUpload.receive(request, paths: paths, maxFileSize: Int64(config.importMaxSize))
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw HTTPError(.contentTooLarge, message: "Import files are limited to \(DisplayFormat.megabytes(config.importMaxSize)).")
        }
        guard let file = received.files.first else { throw ValidationErrors(["file": "Choose a GeoJSON or GPX file."]) }
        for extra in received.files.dropFirst() { try? FileManager.default.removeItem(at: paths.upload(extra.uploadId)) }
        let importId = "import-\(file.uploadId)"
        let target = paths.uploads.appendingPathComponent(owner.map { Self.previewName(importId, userId: $0.userId, tourId: $0.tourId) } ?? importId)
        try FileManager.default.moveItem(at: paths.upload(file.uploadId), to: target)
        do {
            return (importId, try parse(try Data(contentsOf: target)))
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw error
        }
    }

    static func previewName(_ importId: String, userId: Int64, tourId: Int64) -> String { "\(importId).u\(userId).t\(tourId)" }

    /// The caller's stored preview named in the path; only names this server makes (`import-<uuid>`) are accepted.
    /// Another person's preview, or one made for another tour, is 404 (its id proves nothing); a preview that is
    /// simply gone (used, or removed at a restart) is a file that does not exist, which the handlers explain.
    func importFile(_ context: AppRequestContext, owner: (userId: Int64, tourId: Int64)) throws -> (String, URL) {
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
    func refusedImport(_ message: String, status: HTTPResponse.Status, tour: Tour, site: Site, access: SiteAccess,
                       request: Request, context: AppRequestContext) async throws -> Response {
        var page = try await ToursController(database: database, pages: pages, authorization: authorization, config: config)
            .tourPage(tour, site, access)
        page.importError = message
        return pages.render("tour", title: tour.name, page: page, request: request, context: context, status: status)
    }

    func parse(_ data: Data) throws -> ImportedTour { try TourImport.parse(data, maxBytes: config.importMaxSize) }
}
