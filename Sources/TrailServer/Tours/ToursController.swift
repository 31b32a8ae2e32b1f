import Foundation
import Hummingbird
import TrailAPI

/// The panel's tour pages: create, edit, frame, delete, and the waypoints on the map.
struct ToursController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let authorization: Authorization
    let config: AppConfig
    /// The tile settings in force, for the tile card and the cap.
    let tileSettings: TileSettingsStore
    let paths: DataPaths
    /// What the server can draw for a tour's frame: the publishing card says which map visitors get.
    let openMap: OpenDataMap

    func addRoutes(to router: some RouterMethods<SignedInContext>, site: some RouterMethods<SiteMemberContext>) {
        // /sites/{slug}/…
        site.get("tours/new", use: newTour)
        site.post("tours", use: createTour)
        // /tours/{id}/…: the tour (and the waypoint) read and checked by the group's middleware before the handler.
        let viewing = router.tourGroup(authorization, .view)
        let editing = router.tourGroup(authorization, .edit)
        viewing.get(use: showTour)
        viewing.get("status", use: showTourStatus)
        editing.get("edit", use: editTour)
        // Languages: which ones (the default first), then per further language the tour's and each waypoint's texts.
        editing.post("languages", use: saveLanguages)
        editing.post("text/{lang}", use: saveTourText)
        editing.post("edit", use: saveTour)
        editing.post("frame", use: saveFrame)
        editing.post("accessibility", use: saveAccessibility)
        editing.post("delete", use: deleteTour)

        // Waypoints
        editing.post("waypoints", use: createWaypoint)
        editing.post("waypoints/order", use: reorderWaypoints)
        router.waypointGroup(authorization, .view).get(use: showWaypoint)
        let editingWaypoint = router.waypointGroup(authorization, .edit)
        editingWaypoint.post("text/{lang}", use: saveWaypointText)
        editingWaypoint.post(use: saveWaypoint)
        editingWaypoint.post("move", use: moveWaypoint)
        editingWaypoint.post("delete", use: deleteWaypoint)
        for (direction, step) in [("up", -1), ("down", 1)] {
            editingWaypoint.post("\(direction)") { request, context in
                try await shiftWaypoint(request, context, direction: direction, step: step)
            }
        }
    }

    // MARK: Tours

    /// The form for a new tour in a site (authors).
    func newTour(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.author, to: "create tours")
        return await pages.render("tour-form", title: "New tour", page: newTourPage(site, form: [:]), request: request, context: context)
    }

    /// Creates a tour and opens it, or the form again with its errors (422).
    func createTour(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.author, to: "create tours")
        let form = try await request.decode(as: TourForm.self, context: context)
        do {
            let tour = try await database.createTour(siteId: site.id, form.input, actor: context.actor)
            return pages.redirect(to: PanelURL.tour(tour.id), notice: "Tour created. Now frame its area on the map.")
        } catch let errors as ValidationErrors {
            var page = newTourPage(site, form: form.typed)
            page.errors = errors.fields
            return await pages.render("tour-form", title: "New tour", page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// The tour page: details, frame, waypoints on the map, checklist, tiles and publishing.
    func showTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let page = try await tourPage(tour, site, access, user: context.user)
        return await pages.render("tour", title: tour.name, page: page, request: request, context: context)
    }

    /// The tour page's duration and publishing card, from the same page model as the page: after a waypoint is added or
    /// changed on the map (no page load), the page swaps these in, so its checklist and estimate never go stale.
    func showTourStatus(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let page = try await tourPage(tour, site, access, user: context.user)
        return await pages.render("tour-status", title: tour.name, page: page, request: request, context: context)
    }

    /// The tour's edit form; `?lang=` opens one further language's tab.
    func editTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        let page = tourEditPage(tour, site, language: request.uri.queryParameters["lang"].map(String.init))
        return await pages.render("tour-form", title: "Edit \(tour.name)", page: page, request: request, context: context)
    }

    /// Saves the tour's languages; removing one whose texts or files are there needs the confirmation box.
    func saveLanguages(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        let form = try await request.decode(as: TourLanguagesForm.self, context: context)
        let chosen = form.chosen
        let (choice, problem) = LanguageChoice.parse(chosen, confirmRemoval: form.confirmRemoval == "on")
        do {
            guard let choice else { throw ValidationErrors(["languages": problem ?? "Choose the tour's language."]) }
            let saved = try await database.setTourLanguages(tourId: tour.id, choice, actor: context.actor)
            return pages.redirect(
                to: PanelURL.tourEdit(tour.id),
                notice: "Languages saved: \(saved.languages.map(LanguageTag.english).joined(separator: ", "))."
            )
        } catch let errors as ValidationErrors {
            var page = tourEditPage(tour, site, language: nil)
            page.languages = LanguagesForm.make(tour, chosen: choice?.tags ?? chosen)
            page.languages?.error = errors["languages"]
            page.languages?.needsConfirmation = errors["languages"]?.contains("Confirm the removal") == true
            return await pages.render(
                "tour-form",
                title: "Edit \(tour.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Saves the tour's name and description in one further language.
    func saveTourText(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        let language = try context.parameters.require("lang")
        let text = try await request.decode(as: LocalizedTextForm.self, context: context).text
        do {
            try await database.setTourText(tourId: tour.id, language: language, text, actor: context.actor)
            return pages.redirect(to: PanelURL.tourEdit(tour.id, language: language), notice: "\(LanguageTag.english(language)) text saved.")
        } catch let errors as ValidationErrors where errors["language"] == nil {
            // (A language the tour lacks has no tab to show the message on: the error page says it.)
            var page = tourEditPage(tour, site, language: language)
            page.translation?.name = text.name
            page.translation?.description = text.description
            page.translation?.errors = errors.fields
            return await pages.render(
                "tour-form",
                title: "Edit \(tour.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Saves the tour's name, description, map name and pace.
    func saveTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        let form = try await request.decode(as: TourForm.self, context: context)
        do {
            _ = try await database.updateTour(id: tour.id, form.input, actor: context.actor)
            return pages.redirect(to: PanelURL.tour(tour.id), notice: "Tour saved.")
        } catch let errors as ValidationErrors {
            let page = TourFormPage(
                siteSlug: site.slug,
                siteName: site.name,
                action: PanelURL.tourEdit(tour.id),
                isNew: false,
                cancelURL: PanelURL.tour(tour.id),
                form: form.typed,
                errors: errors.fields
            )
            return await pages.render(
                "tour-form",
                title: "Edit \(tour.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Saves the tour's map frame and zoom levels, or the tour page again with the frame form's errors (422).
    func saveFrame(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let form = try await request.decode(as: FrameForm.self, context: context)
        do {
            _ = try await database.setFrame(tourId: tour.id, form.input, maxAreaKm2: config.maxFrameAreaKm2, actor: context.actor)
            return pages.redirect(to: PanelURL.tour(tour.id), notice: "Frame saved.")
        } catch let errors as ValidationErrors {
            let page = try await tourPage(tour, site, access, frameForm: form.typed, frameErrors: errors.fields, user: context.user)
            return await pages.render("tour", title: tour.name, page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Saves the ranger's accessibility fields, or the tour page again with the form's errors (422), nothing stored.
    func saveAccessibility(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let input = try await request.decode(as: AccessibilityForm.self, context: context).input
        do {
            _ = try await database.setAccessibility(tourId: tour.id, input, actor: context.actor)
            return pages.redirect(to: PanelURL.tour(tour.id, at: .trailFacts), notice: "Accessibility saved.")
        } catch let errors as ValidationErrors {
            var page = try await tourPage(tour, site, access, user: context.user)
            page.trailFacts = try await trailFactsCard(tour, access: access, form: input, errors: errors.fields)
            page.errorSummary = ErrorSummary(errors.fields, fields: ErrorSummary.accessibilityFields, fallbackId: "access-surface")
            return await pages.render("tour", title: tour.name, page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Deletes the tour and goes back to its site.
    func deleteTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site) = (context.tour, context.site)
        try await database.deleteTour(id: tour.id, actor: context.actor)
        return pages.redirect(to: PanelURL.site(site.slug), notice: "Tour “\(tour.name)” deleted.")
    }

    // MARK: Waypoints

    /// Adds a waypoint (JSON for the map, 201), or the tour page again with the form's errors (422).
    func createWaypoint(_ request: Request, _ context: TourContext) async throws -> Response {
        let (tour, site, access) = (context.tour, context.site, context.access)
        let form = try await request.decode(as: WaypointForm.self, context: context)
        do {
            let waypoint = try await database.createWaypoint(tourId: tour.id, form.input, actor: context.actor)
            if request.wantsJSON { return try context.answer(Components.Schemas.Waypoint(waypoint), status: .created, to: request) }
            return pages.redirect(to: PanelURL.tour(tour.id, at: .waypoints), notice: "Waypoint “\(waypoint.name)” added.")
        } catch let errors as ValidationErrors where !request.wantsJSON {
            let page = try await tourPage(
                tour,
                site,
                access,
                waypointForm: form.typed,
                waypointErrors: errors.fields,
                user: context.user
            )
            return await pages.render("tour", title: tour.name, page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Saves the order of the waypoints (the map's drag and drop answers with JSON).
    func reorderWaypoints(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        let ids = try await request.decode(as: WaypointOrderForm.self, context: context).ids.compactMap { Int64($0) }
        try await database.reorderWaypoints(tourId: tour.id, ids: ids, actor: context.actor)
        if request.wantsJSON {
            return try await context.answer(database.waypoints(tourId: tour.id).map { Components.Schemas.Waypoint($0) }, to: request)
        }
        return pages.redirect(to: PanelURL.tour(tour.id, at: .waypoints), notice: "Order saved.")
    }

    /// The waypoint page: its form, its files and their texts; `?lang=` opens one further language's tab.
    func showWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let (tour, access) = (context.tour, context.access)
        let waypoint = context.waypoint
        return await pages.render(
            "waypoint",
            title: waypoint.name,
            page: try await waypointPage(
                tour,
                waypoint,
                canEdit: access.canAuthor,
                user: context.user,
                language: request.uri.queryParameters["lang"].map(String.init)
            ),
            request: request,
            context: context
        )
    }

    /// Saves the waypoint's name and description in one further language.
    func saveWaypointText(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let (tour, access) = (context.tour, context.access)
        let waypoint = context.waypoint
        let language = try context.parameters.require("lang")
        let text = try await request.decode(as: LocalizedTextForm.self, context: context).text
        do {
            try await database.setWaypointText(tourId: tour.id, waypointId: waypoint.id, language: language, text, actor: context.actor)
            return pages.redirect(
                to: PanelURL.waypoint(tourId: tour.id, waypoint.id, language: language),
                notice: "\(LanguageTag.english(language)) text of “\(waypoint.name)” saved."
            )
        } catch let errors as ValidationErrors where errors["language"] == nil {
            var page = try await waypointPage(tour, waypoint, canEdit: access.canAuthor, user: context.user, language: language)
            page.translation?.name = text.name
            page.translation?.description = text.description
            page.translation?.errors = errors.fields
            return await pages.render("waypoint", title: waypoint.name, page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Saves the waypoint's name, description, place and trigger radius.
    func saveWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let (tour, access) = (context.tour, context.access)
        let waypoint = context.waypoint
        let form = try await request.decode(as: WaypointForm.self, context: context)
        do {
            _ = try await database.updateWaypoint(tourId: tour.id, waypointId: waypoint.id, form.input, actor: context.actor)
            return pages.redirect(to: PanelURL.waypoint(tourId: tour.id, waypoint.id), notice: "Waypoint saved.")
        } catch let errors as ValidationErrors {
            var page = try await waypointPage(tour, waypoint, canEdit: access.canAuthor, user: context.user)
            page.form = form.typed
            page.errors = errors.fields
            return await pages.render("waypoint", title: waypoint.name, page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Moves the waypoint to a new place (dragged on the map, which gets JSON back).
    func moveWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let tour = context.tour
        let waypoint = context.waypoint
        let form = try await request.decode(as: WaypointMoveForm.self, context: context)
        let moved = try await database.moveWaypoint(
            tourId: tour.id,
            waypointId: waypoint.id,
            latitude: TypedNumber.double(form.latitude),
            longitude: TypedNumber.double(form.longitude),
            actor: context.actor
        )
        if request.wantsJSON { return try context.answer(Components.Schemas.Waypoint(moved), to: request) }
        return pages.redirect(to: PanelURL.tour(tour.id, at: .waypoints), notice: "Waypoint moved.")
    }

    /// Deletes the waypoint.
    func deleteWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let tour = context.tour
        let waypoint = context.waypoint
        try await database.deleteWaypoint(tourId: tour.id, waypointId: waypoint.id, actor: context.actor)
        return pages.redirect(to: PanelURL.tour(tour.id, at: .waypoints), notice: "Waypoint “\(waypoint.name)” deleted.")
    }

    /// Moves the waypoint one place up (`step` -1) or down (+1) in the tour's order.
    func shiftWaypoint(_ request: Request, _ context: WaypointContext, direction: String, step: Int) async throws -> Response {
        let tour = context.tour
        let waypoint = context.waypoint
        try await database.shiftWaypoint(tourId: tour.id, waypointId: waypoint.id, by: step, actor: context.actor)
        return pages.redirect(to: PanelURL.tour(tour.id, at: .waypoint(waypoint.id)), notice: "Moved “\(waypoint.name)” \(direction).")
    }

    // MARK: Lookups and page models

    /// The panel maps' basemap with the package tile settings in force (an admin may change them while running).
    func editorBasemap(_ tiles: TileSettings) -> EditorBasemap? {
        EditorBasemap.resolve(editorTileURL: config.editorTileURL, editorTileAttribution: config.editorTileAttribution, packageTiles: tiles)
    }

    func newTourPage(_ site: Site, form: [String: String]) -> TourFormPage {
        TourFormPage(
            siteSlug: site.slug,
            siteName: site.name,
            action: PanelURL.siteTours(site.slug),
            isNew: true,
            cancelURL: PanelURL.site(site.slug),
            form: form
        )
    }

    func tourPage(
        _ tour: Tour,
        _ site: Site,
        _ access: SiteAccess,
        frameForm: [String: String]? = nil,
        frameErrors: [String: String] = [:],
        waypointForm: [String: String] = [:],
        waypointErrors: [String: String] = [:],
        user: AuthenticatedUser? = nil
    ) async throws -> TourPage {
        let canEdit = access.canAuthor && !tour.isLocked
        let tiles = tileSettings.current
        let state = try await database.tourPageState(tour: tour, tiles: tiles)
        let (waypoints, readiness, openRequest, package) = (state.waypoints, state.readiness, state.openRequest, state.package)
        let (duration, tileset, mediaSize) = (state.duration, state.tileset, state.mediaSize)
        let (checklist, accessibilityWarnings) = (readiness.problems, readiness.warnings)
        let overlaps = TourPageBuilder.overlapWarnings(waypoints)
        let visitorMap = VisitorMap.planned(
            tileSource: VisitorMap.tileSource(tileset: state.tileset, settings: tiles),
            frame: tour.frame,
            openMap: openMap
        )
        let warnings = overlaps.warnings + accessibilityWarnings + (visitorMap.warning.map { [$0] } ?? [])
        let home = tour.frame == nil && waypoints.isEmpty ? try await database.homeArea(of: site) : nil
        var page = TourPage(
            id: tour.id,
            name: tour.name,
            description: tour.description,
            mapName: tour.mapName,
            siteSlug: site.slug,
            siteName: site.name,
            stateLabel: tour.state.label,
            stateBadge: tour.state.badge,
            isLocked: tour.isLocked,
            reviewComment: tour.reviewComment,
            canEdit: canEdit,
            hasFrame: tour.frame != nil,
            frameSummary: tour.frame.map(DisplayFormat.frame) ?? "not set",
            areaKm2: tour.frame.map { DisplayFormat.area($0.areaKm2) },
            maxAreaKm2: DisplayFormat.area(config.maxFrameAreaKm2),
            frameForm: frameForm ?? TourPageBuilder.frameForm(tour),
            frameErrors: frameErrors,
            waypoints: TourPageBuilder.rows(waypoints, overlapping: overlaps.waypointIds),
            hasWaypoints: !waypoints.isEmpty,
            waypointForm: waypointForm,
            waypointErrors: waypointErrors,
            mapJSON: TourPageBuilder.mapJSON(
                tour: tour,
                waypoints: waypoints,
                editable: canEdit,
                basemap: editorBasemap(tiles),
                overlapping: overlaps.waypointIds,
                maxAreaKm2: config.maxFrameAreaKm2,
                maxUploadBytes: config.maxUploadSize,
                home: home
            ),
            checklist: checklist,
            warnings: warnings,
            hasWarnings: !warnings.isEmpty,
            routeSummary: tour.route.map { "\($0.points.count) points, \(DisplayFormat.kilometers($0.lengthMeters))" },
            durationSummary: DisplayFormat.duration(duration),
            isReady: checklist.isEmpty,
            canSubmit: canEdit && checklist.isEmpty,
            openRequestId: openRequest?.id,
            openRequestLabel: openRequest?.state.label ?? "",
            packageId: package?.currentVersion != nil ? package?.id : nil
        )
        page.visitorMap = visitorMap.summary
        page.visitorMapKind = visitorMap.kind.rawValue
        page.alerts = try await TourAlertsCard.make(database: database, tour: tour, site: site, access: access)
        page.trailFacts = TrailFactsCard.make(
            tour: tour,
            terrain: state.terrain,
            estimate: duration,
            waypoints: waypoints,
            terrainProblem: database.terrain.problem,
            canEdit: canEdit
        )
        page.tiles = TourTilesModel.make(
            tour: tour,
            tileset: tileset,
            settings: tiles,
            canEdit: canEdit,
            maxUploadSize: config.maxUploadSize
        )
        page.mediaSizeSummary = mediaSize.originalBytes > 0 ? mediaSize.summary : nil
        page.errorSummary =
            ErrorSummary(frameErrors, fields: ErrorSummary.frameFields, fallbackId: "north")
            ?? ErrorSummary(waypointErrors, fields: ErrorSummary.waypointFields, fallbackId: "wp-name")
        if let package, package.currentVersion != nil {
            page.playerURL = VisitController.playerURL(publicURL: config.effectivePublicURL, packageId: package.id)
            page.playerIsVisible = package.isVisible
            page.publicURLWarning = PublicAddress.warning(for: config.effectivePublicURL)
            if package.isVisible {
                page.printIsDraft = page.publicURLWarning != nil
                page.printSignURL = PanelURL.tourSign(page.id, draft: page.printIsDraft)
                page.printBookletURL = PanelURL.tourBooklet(page.id, draft: page.printIsDraft)
            }
        }
        if let openRequest, openRequest.state == .ready {
            page.readyRequestId = openRequest.id
            page.readyVersion = openRequest.version
            page.canRelease = user.map { PublishingController.isAuthorOrManager(openRequest, user: $0, access: access) } ?? false
        }
        // (Release moves `updatedAt` to the release's own time: any later edit, upload or withdrawn request moves it on.)
        if tour.state == .published, openRequest == nil, let released = state.latestRelease, tour.updatedAt <= released {
            page.isUnchangedSinceRelease = true
            page.canSubmit = false
        }
        return page
    }

    /// The trail facts card with a refused accessibility form's values and errors.
    func trailFactsCard(_ tour: Tour, access: SiteAccess, form: AccessibilityInput, errors: [String: String]) async throws -> TrailFactsCard {
        let state = try await database.tourPageState(tour: tour, tiles: tileSettings.current)
        return TrailFactsCard.make(
            tour: tour,
            terrain: state.terrain,
            estimate: state.duration,
            waypoints: state.waypoints,
            terrainProblem: database.terrain.problem,
            canEdit: access.canAuthor && !tour.isLocked,
            form: form,
            errors: errors
        )
    }

    /// The tour's edit form; with `language` one of its further languages, that language's tab open.
    func tourEditPage(_ tour: Tour, _ site: Site, language: String?) -> TourFormPage {
        var page = TourFormPage(
            siteSlug: site.slug,
            siteName: site.name,
            action: PanelURL.tourEdit(tour.id),
            isNew: false,
            cancelURL: PanelURL.tour(tour.id),
            form: [
                "name": tour.name, "description": tour.description, "mapName": tour.mapName,
                "paceKmh": String(format: "%g", tour.paceKmh),
            ]
        )
        page.languages = LanguagesForm.make(tour)
        let tag = LanguageTag.further(language, of: tour.languages)
        page.languageTabs = LanguageTab.tabs(languages: tour.languages, base: PanelURL.tourEdit(tour.id), active: tag)
        page.hasLanguageTabs = tour.languages.count > 1
        page.translation = tag.map {
            TranslationForm(
                tag: $0,
                language: LanguageTag.label($0),
                action: PanelURL.tourText(tour.id, language: $0),
                name: tour.localized[$0]?.name ?? "",
                description: tour.localized[$0]?.description ?? "",
                defaultName: tour.name,
                defaultDescription: tour.description,
                defaultLanguage: LanguageTag.english(tour.defaultLanguage)
            )
        }
        return page
    }

    func waypointPage(
        _ tour: Tour,
        _ waypoint: Waypoint,
        canEdit: Bool,
        user: AuthenticatedUser,
        language: String? = nil
    ) async throws -> WaypointPage {
        let editable = canEdit && !tour.isLocked
        let assets = try await database.assets(waypointId: waypoint.id)
        let companions = try await database.companions(waypointId: waypoint.id)
        let copies = try await database.optimizedCopies(tourId: tour.id)
        let tag = LanguageTag.further(language, of: tour.languages)
        let base = PanelURL.waypoint(tourId: tour.id, waypoint.id)
        var page = WaypointPage(
            tourId: tour.id,
            tourName: tour.name,
            id: waypoint.id,
            order: waypoint.position,
            canEdit: editable,
            isLocked: tour.isLocked,
            form: [
                "name": waypoint.name, "description": waypoint.description,
                "latitude": DisplayFormat.coordinate(waypoint.latitude), "longitude": DisplayFormat.coordinate(waypoint.longitude),
                "triggerRadiusMeters": "\(waypoint.triggerRadiusMeters)",
            ],
            mapJSON: TourPageBuilder.mapJSON(tour: tour, waypoints: [waypoint], editable: false, basemap: editorBasemap(tileSettings.current)),
            assets: MediaController.assetRows(
                assets,
                companions: companions,
                copies: copies,
                user: user,
                canEdit: editable,
                paths: paths
            ),
            hasAssets: !assets.isEmpty,
            isAdmin: user.isAdmin,
            maxUploadSize: ByteFormat.string(config.maxUploadSize),
            maxUploadBytes: config.maxUploadSize,
            acceptedTypes: FileTypeDetector.acceptedDescription
        )
        page.languageTabs = LanguageTab.tabs(languages: tour.languages, base: base, active: tag)
        page.hasLanguageTabs = tour.languages.count > 1
        page.translation = tag.map {
            TranslationForm(
                tag: $0,
                language: LanguageTag.label($0),
                action: "\(base)/text/\($0)",
                name: waypoint.localized[$0]?.name ?? "",
                description: waypoint.localized[$0]?.description ?? "",
                defaultName: waypoint.name,
                defaultDescription: waypoint.description,
                defaultLanguage: LanguageTag.english(tour.defaultLanguage)
            )
        }
        page.hasLanguageOptions = tour.languages.count > 1
        page.languageOptions = tour.languages.map { LanguageOption(tag: $0, label: LanguageTag.label($0)) }
        page.assets = page.assets.map { row in
            var row = row
            row.languageChoices =
                [LanguageChoiceRow(tag: "", label: "Every language", isSelected: row.language == nil)]
                + tour.languages.map { LanguageChoiceRow(tag: $0, label: LanguageTag.label($0), isSelected: row.language == $0) }
            return row
        }
        return page
    }
}
