import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TrailAPI

/// Assets on the panel (upload form, delete, reorder, rescan, previews) and in the management API.
struct MediaController: Sendable {
    let database: AppDatabase
    let authorization: Authorization
    let paths: DataPaths
    let intake: AssetIntake
    let pages: PageResponder
    let config: AppConfig
    /// For the waypoint page a refused file form is shown on again.
    let tileSettings: TileSettingsStore
    /// Passed on to the tour page it renders (which says which map visitors get).
    let openMap: OpenDataMap

    func addPanelRoutes(to router: some RouterMethods<SignedInContext>) {
        // A malformed tour or waypoint id is not found, before anything is read.
        router.waypointGroup(authorization, .edit, malformedID: .notFoundUnread).post("assets", use: uploadAssets)
        // A malformed or unknown file id is not found; so is a file of a tour the user may not see.
        let viewable = router.assetGroup(database, .view)
        let editable = router.assetGroup(database, .edit)
        // GET and HEAD (players and download managers ask HEAD for the size); FileResponder leaves the body out for HEAD.
        for method in [HTTPRequest.Method.get, .head] {
            viewable.on("content", method: method, use: showAssetContent)
        }
        editable.post("describe", use: saveAssetText)
        // Captions (a WebVTT file) and a transcript (a file, or text typed in the box) for a video or audio file. A
        // refusal shows the waypoint page again with the message under the field.
        for role in CompanionRole.allCases {
            editable.post(RouterPath(role.rawValue)) { request, context in try await addCompanion(request, context, role: role) }
        }
        editable.post("delete", use: deleteAsset)
        for (direction, step) in [("up", -1), ("down", 1)] {
            editable.post(RouterPath(direction)) { request, context in try await shiftAsset(request, context, direction: direction, step: step) }
        }
        viewable.post("rescan", use: rescanAsset)
        editable.post("original", use: chooseOriginal)
    }

    /// The waypoint page's "Keep original" switch: `useOriginal=1` ships the original, `0` the optimized copy again.
    func chooseOriginal(_ request: Request, _ context: AssetContext) async throws -> Response {
        let (asset, tourId) = (context.asset, context.tour.id)
        let form = try await request.decode(as: UseOriginalForm.self, context: context)
        let keep = form.useOriginal == "1"
        _ = try await database.setUseOriginal(assetId: asset.id, keep, actor: context.actor)
        return pages.redirect(
            to: PanelURL.waypoint(tourId: tourId, asset.waypointId, at: .assets),
            notice: keep ? "“\(asset.originalName)” ships as uploaded." : "“\(asset.originalName)” ships as its phone-sized copy."
        )
    }

    /// Uploads one or more files to a waypoint (multipart); with several, a refused one is named in the notice and the
    /// others are kept. JSON (201) for the page's script.
    func uploadAssets(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let (tour, waypoint) = try unlocked(context)
        let received = try await MultipartUpload.receive(
            request,
            paths: paths,
            maxFileSize: config.maxUploadSize,
            budget: try await intake.uploadBudget(tourId: tour.id)
        )
        let replacing = try received.replacedAssetId(paths: paths)
        guard !received.files.isEmpty else {
            throw ValidationErrors(["file": "Choose at least one file to upload."])
        }
        var added: [Asset] = []
        var problems: [String] = []
        for (index, file) in received.files.enumerated() {
            do {
                added.append(
                    try await intake.register(
                        file,
                        tourId: tour.id,
                        waypointId: waypoint.id,
                        replacing: index == 0 ? replacing : nil,
                        actor: context.actor
                    )
                )
            } catch let error as HTTPError {
                if received.files.count == 1 { throw error }
                problems.append(error.body ?? "\(file.originalName) was refused.")
            }
        }
        if request.wantsJSON {
            var bodies: [Components.Schemas.Asset] = []
            for asset in added { bodies.append(try await body(asset, viewer: context.user)) }
            return try context.answer(bodies, status: .created, to: request)
        }
        let notice = ["\(added.count) file(s) uploaded; scanning for malware now."] + problems
        return pages.redirect(to: PanelURL.waypoint(tourId: tour.id, waypoint.id, at: .assets), notice: notice.joined(separator: " "))
    }

    /// Plays or shows a clean file (Range, and HEAD for its size).
    func showAssetContent(_ request: Request, _ context: AssetContext) async throws -> Response {
        let asset = context.asset
        guard asset.scanStatus == .clean else {
            throw Forbidden("Only files the malware scanner found clean can be previewed (this one is \(asset.scanStatus.rawValue)).")
        }
        return try await preview(asset, request: request, eventLoop: context.eventLoop)
    }

    /// Saves a file's title, alt text (images) and language, or the waypoint page again with the message under the
    /// field (422).
    func saveAssetText(_ request: Request, _ context: AssetContext) async throws -> Response {
        let form = try await request.decode(as: AssetTextForm.self, context: context)
        let (asset, tourId) = (context.asset, context.tour.id)
        let back = PanelURL.waypoint(tourId: tourId, asset.waypointId, at: .asset(asset.id))
        do {
            let (title, altText, language) = (
                form.title, asset.kind == .image ? form.altText : nil,
                form.language.map { .some($0) } ?? String??.none
            )
            try await database.describeAsset(id: asset.id, title: title, altText: altText, language: language, actor: context.actor)
        } catch let errors as ValidationErrors {
            // The waypoint page again, the message under the field and the text as typed.
            return try await waypointPageAgain(request: request, context: context) { row in
                row.title = form.title
                row.altText = form.altText
                row.titleError = errors["title"]
                row.altTextError = errors["altText"]
            }
        }
        return pages.redirect(to: back, notice: "Saved the text of “\(asset.originalName)”.")
    }

    /// Deletes a file (and its captions and transcript); stored files nothing else uses are removed.
    func deleteAsset(_ request: Request, _ context: AssetContext) async throws -> Response {
        let (asset, tourId) = (context.asset, context.tour.id)
        await StoredFiles(paths: paths).removeUnreferenced(try await database.deleteAsset(id: asset.id, actor: context.actor))
        return pages.redirect(to: PanelURL.waypoint(tourId: tourId, asset.waypointId, at: .assets), notice: "“\(asset.originalName)” deleted.")
    }

    /// Moves a file one place up (`step` -1) or down (+1) in the waypoint's order.
    func shiftAsset(_ request: Request, _ context: AssetContext, direction: String, step: Int) async throws -> Response {
        let (asset, tourId) = (context.asset, context.tour.id)
        try await database.shiftAsset(id: asset.id, by: step, actor: context.actor)
        return pages.redirect(
            to: PanelURL.waypoint(tourId: tourId, asset.waypointId, at: .asset(asset.id)),
            notice: "Moved “\(asset.originalName)” \(direction)."
        )
    }

    /// Queues a file for the malware scanner again (admins only).
    func rescanAsset(_ request: Request, _ context: AssetContext) async throws -> Response {
        // The object first (the group's check): someone who may not see the asset is told it does not exist, not that
        // they lack the right.
        let asset = context.asset
        guard context.user.isAdmin else { throw Forbidden("Only administrators can ask for a rescan.") }
        try await database.queueRescan(assetId: asset.id, actor: context.actor)
        intake.scans.wake()
        return pages.redirect(
            to: PanelURL.waypoint(tourId: context.tour.id, asset.waypointId, at: .assets),
            notice: "Rescan queued for “\(asset.originalName)”."
        )
    }

    /// Each handler is named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<SignedInContext>) {
        router.waypointGroup(authorization, .edit, malformedID: .notFoundUnread).post("assets", use: uploadAsset)
        router.assetGroup(database, .view).get(use: getAsset)
        let editable = router.assetGroup(database, .edit)
        for role in CompanionRole.allCases {
            editable.post(RouterPath(role.rawValue)) { request, context in try await attachCompanion(request, context, role: role) }
        }
        editable.patch(use: describeAsset)
    }

    /// Uploads exactly one file to a waypoint (multipart `file`); 201 with the asset and its address.
    func uploadAsset(_ request: Request, _ context: WaypointContext) async throws -> Response {
        let (tour, waypoint) = try unlocked(context)
        let received = try await MultipartUpload.receive(
            request,
            paths: paths,
            maxFileSize: config.maxUploadSize,
            budget: try await intake.uploadBudget(tourId: tour.id)
        )
        guard received.files.count == 1, let file = received.files.first else {
            received.discardFiles(paths: paths)
            throw HTTPError(.badRequest, message: "Send exactly one multipart field named “file”.")
        }
        let replacing = try received.replacedAssetId(paths: paths)
        let asset = try await intake.register(
            file,
            tourId: tour.id,
            waypointId: waypoint.id,
            replacing: replacing,
            actor: context.actor
        )
        var response = try await context.answer(body(asset, viewer: context.user), status: .created, to: request)
        response.headers[.location] = APIURL.manageAsset(asset.id)
        return response
    }

    /// One file, with its captions and transcript.
    func getAsset(_ request: Request, _ context: AssetContext) async throws -> Components.Schemas.Asset {
        try await body(context.asset, viewer: context.user)
    }

    /// Changes a file's title, alt text or language; what is left out stays as it is.
    func describeAsset(_ request: Request, _ context: AssetContext) async throws -> Components.Schemas.Asset {
        let asset = context.asset
        let patch = try await request.decode(as: AssetPatch.self, context: context)
        // Title, alt text, language and the choice of original in one transaction: refused in part, nothing changes.
        let described = try await database.describeAsset(
            id: asset.id,
            title: patch.title,
            altText: patch.altText,
            language: patch.language,
            useOriginal: patch.useOriginal,
            actor: context.actor
        )
        return try await body(described, viewer: context.user)
    }

    /// The waypoint page again after a refused form on the route's file (422), that file's row changed by `edit`
    /// (the text as typed, the message under its field).
    func waypointPageAgain(request: Request, context: AssetContext, edit: (inout AssetRow) -> Void) async throws -> Response {
        let (asset, tour) = (context.asset, context.tour)
        let ownerId = asset.companionOf ?? asset.id
        guard let waypoint = try await database.waypoint(tourId: tour.id, id: asset.waypointId) else { throw NotFound() }
        var page = try await ToursController(
            database: database,
            pages: pages,
            authorization: authorization,
            config: config,
            tileSettings: tileSettings,
            paths: paths,
            openMap: openMap
        )
        .waypointPage(tour, waypoint, canEdit: context.access.canAuthor, user: context.user)
        page.assets = page.assets.map { row in
            guard row.id == ownerId else { return row }
            var row = row
            edit(&row)
            return row
        }
        return await pages.render("waypoint", title: waypoint.name, page: page, request: request, context: context, status: .unprocessableContent)
    }

    /// `PATCH /manage/assets/{aid}`: what is left out stays as it is.
    struct AssetPatch: Decodable {
        let title: String?
        let altText: String?
        /// Present (a tag, or null for every language) only when the key was sent.
        let language: String??
        let useOriginal: Bool?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            altText = try container.decodeIfPresent(String.self, forKey: .altText)
            language =
                container.contains(.language)
                ? .some(try container.decodeNil(forKey: .language) ? nil : try container.decode(String.self, forKey: .language)) : .none
            useOriginal = try container.decodeIfPresent(Bool.self, forKey: .useOriginal)
        }

        enum CodingKeys: String, CodingKey { case title, altText, language, useOriginal }
    }

    // MARK: Authorization on the object

    /// The route's tour and waypoint (the group's middleware has checked that the user may change them), unless an
    /// open publish request has locked the tour.
    func unlocked(_ context: WaypointContext) throws -> (Tour, Waypoint) {
        let tour = context.tour
        if tour.isLocked { throw Conflict("“\(tour.name)” is locked while its publish request is open.") }
        return (tour, context.waypoint)
    }

    // MARK: Views

    func body(_ asset: Asset, viewer: AuthenticatedUser) async throws -> Components.Schemas.Asset {
        guard asset.companionOf == nil else { return try Components.Schemas.Asset(asset, viewer: viewer) }
        let companions = try await database.companions(of: asset.id)
        let copy = try await database.optimizedCopy(assetId: asset.id)
        return try Components.Schemas.Asset(asset, viewer: viewer, companions: companions, copy: copy)
    }

    /// Clean files only, never as HTML or SVG (we accept neither), `nosniff` on every answer, Range for players.
    /// With the connection's event loop, a slow player holds about two chunks in memory, not the whole file.
    func preview(_ asset: Asset, request: Request, eventLoop: (any EventLoop)? = nil) async throws -> Response {
        // Captions are served as WebVTT so a <track> plays them; every other text as plain text.
        let contentType =
            asset.mimeType == CompanionText.Format.webVTT.mimeType
            ? "text/vtt; charset=utf-8"
            : asset.kind == .text ? "text/plain; charset=utf-8" : asset.mimeType
        let fileName =
            asset.originalName.replacingOccurrences(of: "\"", with: "")
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._"))) ?? "file"
        return try await FileResponder.respond(
            fileAt: paths.absolute(asset.storedPath),
            contentType: contentType,
            etag: "\"\(asset.sha256)\"",
            request: request,
            headers: [
                .contentDisposition: "inline; filename*=UTF-8''\(fileName)", .cacheControl: "private, no-cache",
                .contentSecurityPolicy: "default-src 'none'; sandbox",
            ],
            eventLoop: eventLoop
        )
    }

    /// The start of a clean text file, shown escaped on the waypoint page (at most 2,000 bytes, cut at a character).
    static func textExcerpt(_ asset: Asset, paths: DataPaths) -> String? {
        guard asset.kind == .text, asset.scanStatus == .clean,
            let handle = FileHandle(forReadingAtPath: paths.absolute(asset.storedPath).path)
        else { return nil }
        defer { try? handle.close() }
        guard let bytes = try? handle.read(upToCount: 2_000) else { return nil }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\u{FFFD}") { text.removeLast() }
        return asset.size > 2_000 ? text + " …" : text
    }

    static func assetRows(
        _ assets: [Asset],
        companions: [Int64: AssetCompanions],
        copies: [Int64: OptimizedCopy] = [:],
        user: AuthenticatedUser?,
        canEdit: Bool,
        paths: DataPaths
    ) -> [AssetRow] {
        assets.enumerated().map { index, asset in
            let mayReadDetail = user?.isAdmin == true || user?.id == asset.uploadedBy
            let own = companions[asset.id] ?? AssetCompanions()
            var row = AssetRow(
                id: asset.id,
                kind: asset.kind.rawValue,
                originalName: asset.originalName,
                size: ByteFormat.string(asset.size),
                status: asset.scanStatus.rawValue,
                statusBadge: asset.scanStatus.badge,
                isPending: asset.scanStatus == .pending,
                detail: mayReadDetail && !asset.scanDetail.isEmpty ? asset.scanDetail : nil,
                isClean: asset.scanStatus == .clean,
                isVideo: asset.kind == .video,
                isAudio: asset.kind == .audio,
                isImage: asset.kind == .image,
                isText: asset.kind == .text,
                textExcerpt: textExcerpt(asset, paths: paths),
                mimeType: asset.mimeType,
                title: asset.title,
                altText: asset.altText,
                missingAltText: asset.kind == .image && asset.altText.isEmpty,
                isFirst: index == 0,
                isLast: index == assets.count - 1,
                canEdit: canEdit
            )
            row.captions = own.captions.map { CompanionRow($0, user: user) }
            row.transcript = own.transcript.map { CompanionRow($0, user: user) }
            row.transcriptExcerpt = own.transcript.flatMap { textExcerpt($0, paths: paths) }
            row.takesCaptions = asset.kind == .video || own.captions != nil
            row.takesTranscript = asset.kind == .audio || own.transcript != nil
            row.missingCaptions = asset.kind == .video && own.captions == nil
            row.missingTranscript = asset.kind == .audio && own.transcript == nil
            row.language = asset.language
            row.languageLabel = asset.language.map(LanguageTag.label)
            if OptimizedCopy.applies(to: asset.kind), let copy = copies[asset.id] {
                row.optimized = OptimizedRow(asset: asset, copy: copy, canEdit: canEdit)
            }
            return row
        }
    }
}

struct AssetRow: Sendable {
    let id: Int64
    let kind: String
    let originalName: String
    let size: String
    let status: String
    let statusBadge: String
    let isPending: Bool
    let detail: String?
    let isClean: Bool
    let isVideo: Bool
    let isAudio: Bool
    let isImage: Bool
    let isText: Bool
    let textExcerpt: String?
    let mimeType: String
    var title: String
    var altText: String
    /// An image without its text alternative (the checklist names it).
    let missingAltText: Bool
    let isFirst: Bool
    let isLast: Bool
    let canEdit: Bool
    /// A refused *Save text*: the message under its field (the typed text is kept in `title` / `altText`).
    var titleError: String? = nil
    var altTextError: String? = nil
    /// Captions and transcript (visitor content): present files, which forms to show, what the checklist will name.
    var captions: CompanionRow? = nil
    var transcript: CompanionRow? = nil
    var transcriptExcerpt: String? = nil
    var takesCaptions = false
    var takesTranscript = false
    var missingCaptions = false
    var missingTranscript = false
    var captionsError: String? = nil
    var transcriptError: String? = nil
    /// The one language the file is for (nil: every language), and the choices of its select.
    var language: String? = nil
    var languageChoices: [LanguageChoiceRow] = []
    var languageLabel: String? = nil
    /// The phone-sized copy: its state, sizes and measurements, and the "keep original" choice.
    var optimized: OptimizedRow? = nil
}

/// A media file's phone-sized copy on the waypoint page.
struct OptimizedRow: Sendable {
    let assetId: Int64
    let state: String
    let label: String
    let badge: String
    let isPending: Bool
    let isFailed: Bool
    let progressPercent: Int
    let originalSize: String
    /// The copy's size when it is ready.
    let copySize: String?
    /// "1280 × 720", "3 min 05 s" when measured.
    let dimensions: String?
    let duration: String?
    let message: String?
    let useOriginal: Bool
    /// The choice is offered once there is a copy to choose against, or a failed one to override.
    let canChoose: Bool
    /// What ships, in words.
    let ships: String

    init(asset: Asset, copy: OptimizedCopy, canEdit: Bool) {
        assetId = asset.id
        state = copy.state.rawValue
        label = copy.label(originalSize: asset.size, useOriginal: asset.useOriginal)
        badge = copy.badge(originalSize: asset.size)
        isPending = copy.state == .pending
        isFailed = copy.state == .failed
        progressPercent = Int((copy.progress * 100).rounded(.down))
        originalSize = ByteFormat.string(asset.size)
        copySize = copy.state == .ready ? copy.size.map(ByteFormat.string) : nil
        dimensions = copy.width.flatMap { width in copy.height.map { "\(width) × \($0) px" } }
        duration = (copy.durationSeconds ?? asset.durationSeconds).map(DisplayFormat.playTime)
        message = copy.message.isEmpty ? copy.largerNote(originalSize: asset.size, useOriginal: asset.useOriginal) : copy.message
        useOriginal = asset.useOriginal
        canChoose = canEdit && (copy.state == .ready || copy.state == .failed)
        ships = asset.useOriginal || copy.state != .ready ? "the original" : "the optimized copy"
    }
}

struct LanguageChoiceRow: Sendable {
    let tag: String
    let label: String
    let isSelected: Bool
}

// The domain's types are named with their module inside these extensions: there `Asset` alone is the wire type.
extension Components.Schemas.Asset {
    /// The scanner's finding (`scanDetail`, it may name a signature) is for the uploader and admins only. Media files
    /// carry the file as uploaded, its phone-sized copy (absent before the scan, or with optimization off) and whether
    /// the package ships the original anyway; a caption or transcript file names the media file it belongs to.
    init(
        _ asset: TrailServer.Asset,
        viewer: AuthenticatedUser?,
        companions: AssetCompanions = AssetCompanions(),
        copy: TrailServer.OptimizedCopy? = nil
    ) throws {
        let mayReadDetail = viewer?.isAdmin == true || viewer?.id == asset.uploadedBy
        let isMedia = asset.companionOf == nil && TrailServer.OptimizedCopy.applies(to: asset.kind)
        self.init(
            id: asset.id,
            waypoint: asset.waypointId,
            order: asset.position,
            kind: try WireEnum.value(asset.kind),
            originalName: asset.originalName,
            mimeType: asset.mimeType,
            size: asset.size,
            sha256: asset.sha256,
            scanStatus: try WireEnum.value(asset.scanStatus),
            scanDetail: mayReadDetail ? asset.scanDetail : nil,
            previewURL: asset.scanStatus == .clean ? PanelURL.assetContent(asset.id) : nil,
            createdAt: asset.createdAt,
            title: asset.title,
            altText: asset.altText,
            captions: try companions.captions.map(Components.Schemas.CompanionFile.init),
            transcript: try companions.transcript.map(Components.Schemas.CompanionFile.init),
            companionOf: asset.companionOf,
            role: try asset.companionRole.map { try WireEnum.value($0) },
            language: asset.language,
            original: isMedia ? .init(size: asset.size, sha256: asset.sha256, mimeType: asset.mimeType) : nil,
            optimized: isMedia ? try copy.map(Components.Schemas.OptimizedCopy.init) : nil,
            useOriginal: isMedia ? asset.useOriginal : nil
        )
    }
}

extension Components.Schemas.OptimizedCopy {
    /// Size, hash and type only once made; progress 1 unless still being made.
    init(_ copy: TrailServer.OptimizedCopy) throws {
        self.init(
            state: try WireEnum.value(copy.state),
            progress: copy.state == .pending ? copy.progress : 1,
            size: copy.state == .ready ? copy.size : nil,
            sha256: copy.state == .ready ? copy.sha256 : nil,
            mimeType: copy.state == .ready ? copy.mimeType : nil,
            width: copy.width,
            height: copy.height,
            durationSeconds: copy.durationSeconds,
            message: copy.message.isEmpty ? nil : copy.message
        )
    }
}

extension Components.Schemas.CompanionFile {
    /// A caption or transcript file as the API lists it under its media file.
    init(_ asset: TrailServer.Asset) throws {
        self.init(
            id: asset.id,
            originalName: asset.originalName,
            mimeType: try WireEnum.value(asset.mimeType),
            size: asset.size,
            sha256: asset.sha256,
            scanStatus: try WireEnum.value(asset.scanStatus),
            previewURL: asset.scanStatus == .clean ? PanelURL.assetContent(asset.id) : nil
        )
    }
}

/// Whether a file ships as uploaded ("1") or as its phone-sized copy.
struct UseOriginalForm: PanelForm {
    @Field var useOriginal: String
}

/// A file's texts. `language` absent leaves the file's language as it is; empty is every language.
struct AssetTextForm: PanelForm {
    @Field var title: String
    @Field var altText: String
    var language: String?
}
