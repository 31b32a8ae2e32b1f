import Foundation
import Hummingbird
import PackageFormat
import TrailAPI

/// The tours part of `/api/v1/manage` (tours and waypoints): the same operations and permissions as the panel, for
/// bearer-token clients. Media, tiles, import/export and publishing have their routes in their own folders.
struct ToursAPI: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let config: AppConfig

    /// Texts in one further language as sent: a field left out keeps its saved value.
    struct TextPatch: Decodable {
        let name: String?
        let description: String?
        func applied(to current: LocalizedText?) -> LocalizedText {
            LocalizedText(name: name ?? current?.name ?? "", description: description ?? current?.description ?? "")
        }
    }

    struct CreateTour: Decodable {
        let site: String
        let name: String
        let description: String?
        let mapName: String?
    }

    struct PatchTour: Decodable {
        let name: String?
        let description: String?
        let mapName: String?
        let frame: Frame?
        let minZoom: Int?
        let maxZoom: Int?
        let paceKmh: Double?
        let languages: [String]?
        /// Needed to remove a language whose texts or files are still there (they are deleted with it).
        let confirmLanguageRemoval: Bool?
        let localized: [String: TextPatch]?
        /// The whole set of accessibility fields (one left out is cleared).
        let accessibility: AccessibilityInput?
    }

    struct CreateWaypoint: Decodable {
        let name: String
        let order: Int?
        let latitude: Double
        let longitude: Double
        let description: String?
        let triggerRadiusMeters: RadiusValue?
        let localized: [String: TextPatch]?
    }

    /// A radius as sent: a number, or a string (which is refused with the field's message, not as unreadable JSON).
    struct RadiusValue: Decodable {
        let input: TriggerZone.Input
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) { input = .number(number) } else { input = .text(try container.decode(String.self)) }
        }
    }

    struct PatchWaypoint: Decodable {
        let name: String?
        let order: Int?
        let latitude: Double?
        let longitude: Double?
        let description: String?
        let triggerRadiusMeters: RadiusValue?
        let localized: [String: TextPatch]?
    }

    /// Each handler is named after its operationId in openapi.json.
    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        router.post("/tours", use: createTour)
        router.get("/tours", use: listTours)
        // A forged or malformed id is simply not found.
        router.tourGroup(authorization, .view, malformedID: .notFound).get(use: getTour)
        let editing = router.tourGroup(authorization, .edit, malformedID: .notFound)
        editing.patch(use: updateTour)
        editing.delete(use: deleteTour)
        editing.post("waypoints", use: createWaypoint)
        let editingWaypoint = router.waypointGroup(authorization, .edit, malformedID: .notFound)
        editingWaypoint.patch(use: updateWaypoint)
        editingWaypoint.delete(use: deleteWaypoint)
    }

    /// Creates a tour in the site named in the body (authors); 201 with the tour.
    func createTour(_ request: Request, _ context: SignedInContext) async throws -> EditedResponse<Components.Schemas.Tour> {
        let body = try await request.decode(as: CreateTour.self, context: context)
        let (site, access) = try await authorization.site(slug: body.site, user: context.user)
        try access.require(.author, to: "create tours")
        let tour = try await database.createTour(
            siteId: site.id,
            TourInput(name: body.name, description: body.description ?? "", mapName: body.mapName ?? ""),
            actor: context.actor
        )
        return EditedResponse(status: .created, response: try await tourBody(tour, site))
    }

    /// Tours per page of `listTours` when the request names no `limit`, and the most it may name.
    static let defaultListLimit = 50
    static let maxListLimit = 200

    /// One page of the tours of the site named in `?site=` (summaries; `GET /tours/{id}` has the waypoints), narrowed
    /// by `state` and `q`, from `cursor` on. The next page's cursor is in the body and in a `Link` header (RFC 8288).
    func listTours(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = QueryForm(request)
        guard let slug = form["site"] else { throw HTTPError(.badRequest, message: "Add ?site=<slug>.") }
        let (site, _) = try await authorization.site(slug: slug, user: context.user)
        var errors = ValidationErrors()
        var limit = Self.defaultListLimit
        if let text = form["limit"] {
            if let value = Int(text), (1...Self.maxListLimit).contains(value) {
                limit = value
            } else {
                errors["limit"] = "Ask for 1 to \(Self.maxListLimit) tours a page."
            }
        }
        let filter = TourListFilter.read(state: form["state"], query: form["q"], errors: &errors)
        var after: TourListPosition?
        if let cursor = form["cursor"], !cursor.isEmpty {
            after = ListCursor.tourPosition(cursor, siteId: site.id, filter: filter)
            if after == nil { errors["cursor"] = "This cursor is not one this list gave out: start again without it." }
        }
        try errors.throwIfAny()
        let (rows, hasMore) = try await database.tourList(siteId: site.id, filter: filter, after: after, limit: limit)
        let next = hasMore ? rows.last.map { ListCursor.tour($0.position, siteId: site.id, filter: filter) } : nil
        let body = Components.Schemas.TourList(
            tours: try rows.map { try Components.Schemas.TourSummary($0, site: site) },
            nextCursor: next
        )
        var response = try context.answer(body, to: request)
        if let next {
            var query = [("site", slug), ("limit", String(limit))]
            if let state = filter.state { query.append(("state", state.rawValue)) }
            if !filter.query.isEmpty { query.append(("q", filter.query)) }
            query.append(("cursor", next))
            response.headers[QueryForm.link] = "<\(QueryForm.url("/api/v1/manage/tours", query))>; rel=\"next\""
        }
        return response
    }

    /// One tour with its waypoints and their files.
    func getTour(_ request: Request, _ context: TourContext) async throws -> Components.Schemas.Tour {
        let (tour, site) = (context.tour, context.site)
        return try await tourBody(tour, site, listingAssetsFor: context.user)
    }

    /// Changes what the body names: languages, details, frame and zooms, texts in further languages.
    func updateTour(_ request: Request, _ context: TourContext) async throws -> Components.Schemas.Tour {
        var tour = context.tour
        let site = context.site
        let body = try await request.decode(as: PatchTour.self, context: context)
        // Checked before anything is written: a refused field stores nothing.
        _ = try body.accessibility?.validated()
        // Languages first (their tags are checked before anything is written), then details and frame, then texts.
        // A new default language swaps texts, so what follows starts from the tour as that left it.
        if let languages = body.languages {
            let (choice, problem) = LanguageChoice.parse(languages, confirmRemoval: body.confirmLanguageRemoval ?? false)
            guard let choice else { throw ValidationErrors(["languages": problem ?? "Choose the tour's languages."]) }
            let tourId = tour.id
            tour = try await database.setTourLanguages(tourId: tourId, choice, actor: context.actor)
        }
        var details: TourInput?
        var frameInput: FrameInput?
        if body.name != nil || body.description != nil || body.mapName != nil || body.paceKmh != nil {
            details = TourInput(
                name: body.name ?? tour.name,
                description: body.description ?? tour.description,
                mapName: body.mapName ?? tour.mapName,
                paceKmh: body.paceKmh
            )
        }
        if body.frame != nil || body.minZoom != nil || body.maxZoom != nil {
            let frame = body.frame ?? tour.frame
            frameInput = FrameInput(
                north: frame?.north,
                south: frame?.south,
                east: frame?.east,
                west: frame?.west,
                minZoom: body.minZoom ?? tour.minZoom,
                maxZoom: body.maxZoom ?? tour.maxZoom
            )
        }
        // Details and frame in one transaction: refused in part, neither changes (the languages above are saved already).
        let (tourId, edits, maxArea) = (tour.id, (details: details, frame: frameInput), config.maxFrameAreaKm2)
        var updated = try await database.editTour(id: tourId, details: edits.details, frame: edits.frame, maxAreaKm2: maxArea, actor: context.actor)
        if let accessibility = body.accessibility {
            updated = try await database.setAccessibility(tourId: tourId, accessibility, actor: context.actor)
        }
        for (language, text) in body.localized ?? [:] {
            updated = try await database.setTourText(
                tourId: tourId,
                language: language,
                text.applied(to: updated.localized[LanguageTag.canonical(language) ?? language]),
                actor: context.actor
            )
        }
        return try await tourBody(updated, site)
    }

    /// Deletes the tour (204).
    func deleteTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        try await database.deleteTour(id: tour.id, actor: context.actor)
        return Response(status: .noContent)
    }

    /// Adds a waypoint, with its texts in further languages; 201 with the waypoint.
    func createWaypoint(_ request: Request, _ context: TourContext) async throws -> EditedResponse<Components.Schemas.Waypoint> {
        let tour = context.tour
        let body = try await request.decode(as: CreateWaypoint.self, context: context)
        let waypoint = try await database.createWaypoint(
            tourId: tour.id,
            WaypointInput(
                name: body.name,
                description: body.description ?? "",
                latitude: body.latitude,
                longitude: body.longitude,
                order: body.order,
                triggerRadius: body.triggerRadiusMeters?.input
            ),
            actor: context.actor
        )
        return EditedResponse(
            status: .created,
            response: Components.Schemas.Waypoint(try await localize(waypoint, tour: tour, body.localized, actor: context.actor))
        )
    }

    /// Changes what the body names of a waypoint; what is left out stays as it is.
    func updateWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Components.Schemas.Waypoint {
        let tour = context.tour
        let current = context.waypoint
        let body = try await request.decode(as: PatchWaypoint.self, context: context)
        let waypoint = try await database.updateWaypoint(
            tourId: tour.id,
            waypointId: current.id,
            WaypointInput(
                name: body.name ?? current.name,
                description: body.description ?? current.description,
                latitude: body.latitude ?? current.latitude,
                longitude: body.longitude ?? current.longitude,
                order: body.order,
                triggerRadius: body.triggerRadiusMeters?.input
            ),
            actor: context.actor
        )
        return Components.Schemas.Waypoint(try await localize(waypoint, tour: tour, body.localized, actor: context.actor))
    }

    /// Deletes a waypoint (204).
    func deleteWaypoint(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let tour = context.tour
        let current = context.waypoint
        try await database.deleteWaypoint(tourId: tour.id, waypointId: current.id, actor: context.actor)
        return Response(status: .noContent)
    }

    /// Saves a waypoint's texts in further languages (sent with its POST or PATCH); returns it as saved.
    func localize(_ waypoint: Waypoint, tour: Tour, _ texts: [String: TextPatch]?, actor: AuditActor) async throws -> Waypoint {
        var waypoint = waypoint
        for (language, text) in texts ?? [:] {
            waypoint = try await database.setWaypointText(
                tourId: tour.id,
                waypointId: waypoint.id,
                language: language,
                text.applied(to: waypoint.localized[LanguageTag.canonical(language) ?? language]),
                actor: actor
            )
        }
        return waypoint
    }

    /// With `viewer`, each waypoint lists its files (what `GET /tours/{id}` answers: a script finds the files it uploaded).
    func tourBody(_ tour: Tour, _ site: Site, listingAssetsFor viewer: AuthenticatedUser? = nil) async throws -> Components.Schemas.Tour {
        let assets = viewer == nil ? nil : try await database.assets(tourId: tour.id)
        let companions = viewer == nil ? [:] : try await database.companions(tourId: tour.id)
        let copies = viewer == nil ? [:] : try await database.optimizedCopies(tourId: tour.id)
        let terrain = try await database.terrainFacts(tourId: tour.id)
        let estimate = try await database.durationEstimate(tour: tour)
        let waypoints = try await database.waypoints(tourId: tour.id).map { waypoint in
            Components.Schemas.Waypoint(
                waypoint,
                elevationMeters: terrain?.elevation(ofWaypoint: waypoint.id),
                assets: try assets.map {
                    try ($0[waypoint.id] ?? []).map {
                        try Components.Schemas.Asset(
                            $0,
                            viewer: viewer,
                            companions: companions[$0.id] ?? AssetCompanions(),
                            copy: copies[$0.id]
                        )
                    }
                }
            )
        }
        return Components.Schemas.Tour(
            id: tour.id,
            site: site.slug,
            name: tour.name,
            description: tour.description,
            mapName: tour.mapName,
            state: try WireEnum.value(tour.state),
            frame: tour.frame.map(Components.Schemas.Frame.init),
            minZoom: tour.minZoom,
            maxZoom: tour.maxZoom,
            paceKmh: tour.paceKmh,
            waypoints: waypoints,
            languages: tour.languages,
            localized: .init(additionalProperties: tour.localized.mapValues(Components.Schemas.LocalizedText.init)),
            trail: terrain.map {
                Components.Schemas.TrailFacts(
                    TrailFacts(terrain: $0, walkingMinutes: estimate.totalMinutes, accessibility: tour.accessibility)
                )
            },
            trailNote: terrain?.hasHeights == false ? terrain?.note : nil
        )
    }
}

// The domain's types are named with their module inside these extensions: there `Waypoint` alone is the wire type.
extension Components.Schemas.Waypoint {
    /// `assets` only in a whole tour's answer (absent from the JSON otherwise).
    init(_ waypoint: TrailServer.Waypoint, elevationMeters: Double? = nil, assets: [Components.Schemas.Asset]? = nil) {
        self.init(
            id: waypoint.id,
            name: waypoint.name,
            order: waypoint.position,
            latitude: waypoint.latitude,
            longitude: waypoint.longitude,
            description: waypoint.description,
            triggerRadiusMeters: waypoint.triggerRadiusMeters,
            assets: assets,
            localized: .init(additionalProperties: waypoint.localized.mapValues(Components.Schemas.LocalizedText.init)),
            elevationMeters: elevationMeters
        )
    }
}

extension Components.Schemas.TourSummary {
    init(_ row: TourListRow, site: TrailServer.Site) throws {
        self.init(
            id: row.id,
            site: site.slug,
            name: row.name,
            mapName: row.mapName,
            state: try WireEnum.value(row.state),
            waypointCount: row.waypointCount,
            assetCount: row.assetCount,
            hasFrame: row.hasFrame,
            updatedAt: row.updatedAt
        )
    }
}

extension Components.Schemas.Frame {
    init(_ frame: TrailServer.Frame) {
        self.init(north: frame.north, south: frame.south, east: frame.east, west: frame.west)
    }
}

extension Components.Schemas.LocalizedText {
    init(_ text: TrailServer.LocalizedText) {
        self.init(name: text.name, description: text.description)
    }
}

extension Components.Schemas.TrailFacts {
    init(_ facts: PackageFormat.TrailFacts) {
        self.init(
            lengthMeters: facts.lengthMeters,
            ascentMeters: facts.ascentMeters,
            descentMeters: facts.descentMeters,
            minElevationMeters: facts.minElevationMeters,
            maxElevationMeters: facts.maxElevationMeters,
            walkingMinutes: facts.walkingMinutes,
            elevationSource: facts.elevationSource.flatMap(ElevationSourcePayload.init(rawValue:)),
            profile: facts.profile,
            grades: facts.grades.map {
                .init(flat: $0.flat, gentle: $0.gentle, moderate: $0.moderate, steep: $0.steep, verySteep: $0.verySteep)
            },
            maxGradePercent: facts.maxGradePercent,
            accessibility: facts.accessibility.map {
                .init(
                    surface: $0.surface.flatMap(Components.Schemas.TrailAccessibility.SurfacePayload.init(rawValue:)),
                    minWidthCm: $0.minWidthCm,
                    stepFree: $0.stepFree,
                    notes: $0.notes
                )
            }
        )
    }
}
