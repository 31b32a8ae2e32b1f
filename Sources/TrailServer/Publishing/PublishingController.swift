import Foundation
import Hummingbird
import NIOCore
import PackageFormat
import TrailAPI

/// Submit for review, the review queue, the request page (review, approve, deny, withdraw, release),
/// package pages (unpublish, publish again, rollback), and the same through the management API.
/// Every state change goes through ``PublishingService``; this only reads requests and answers.
struct PublishingController: Sendable {
    let publishing: PublishingService
    let pages: PageResponder
    /// `--public-url`: the visitor link and QR code the package page shows.
    let publicURL: String

    var database: AppDatabase { publishing.database }
    var authorization: Authorization { publishing.authorization }
    var paths: DataPaths { publishing.paths }

    // MARK: Panel

    func addPanelRoutes(to router: some RouterMethods<SignedInContext>) {
        router.tourGroup(publishing.authorization, .edit).post("publish", use: submitTour)
        router.get("/reviews", use: listReviews)
        router.get("/requests/{rid}", use: showRequest)
        router.get("/requests/{rid}/assets/{index}", use: showStagedAsset)
        router.get("/requests/{rid}/assets/{index}/{role}", use: showStagedCompanion)
        router.post("/requests/{rid}/approve", use: approveRequest)
        router.post("/requests/{rid}/deny", use: denyRequest)
        router.post("/requests/{rid}/withdraw", use: withdrawRequest)
        router.post("/requests/{rid}/push", use: releaseRequest)
        router.get("/packages/{pid}", use: showPackage)
        router.post("/packages/{pid}/unpublish", use: unpublish)
        router.post("/packages/{pid}/publish", use: publishAgain)
        router.post("/packages/{pid}/versions/{version}/serve", use: serveVersion)
    }

    /// Submits a tour for review: the package build starts and the request page opens; a tour not ready yet goes back
    /// to its publish card with the problems.
    func submitTour(_ request: Request, _ context: TourContext) async throws -> Response {
        let tourId = context.tour.id
        do {
            let publish = try await publishing.submit(context.tour, user: context.user, actor: context.actor)
            return pages.redirect(
                to: PanelURL.request(publish.id),
                notice: "Submitted. The package is being built; reviewers will be asked once it is ready."
            )
        } catch let notReady as NotReadyToPublish {
            return pages.redirect(
                to: PanelURL.tour(tourId, at: .publish),
                notice: "Not ready to publish yet: " + notReady.problems.joined(separator: " ")
            )
        }
    }

    /// The review queue: the open requests the user may review, those waiting for them marked.
    func listReviews(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let user = context.user
        let rows = try await database.reviewQueue(for: user).map { row in
            QueueRowModel(
                id: row.request.id,
                tourName: row.tourName,
                siteName: row.siteName,
                author: row.authorName,
                age: DisplayFormat.age(row.request.createdAt),
                size: ByteFormat.string(row.request.zipSize ?? 0),
                approvals: row.approvals,
                required: row.request.requiredApprovals,
                waitingForMe: !row.reviewedByMe && row.request.authorId != user.id
            )
        }
        return await pages.render("reviews", title: "Reviews", page: QueuePage(rows: rows, isEmpty: rows.isEmpty), request: request, context: context)
    }

    /// A publish request: its package, reviews and what the user may do; `?lang=` picks a further language.
    func showRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (publish, site, access) = try await viewableRequest(context)
        return await pages.render(
            "request",
            title: "Publish request",
            page: try await requestPage(
                publish,
                site: site,
                access: access,
                user: context.user,
                language: request.uri.queryParameters["lang"].map(String.init)
            ),
            request: request,
            context: context
        )
    }

    /// One file of a request's built package (Range for players).
    func showStagedAsset(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (publish, _, _) = try await viewableRequest(context)
        return try await stagedAsset(
            publish,
            index: context.parameters.require("index", as: Int.self),
            request: request,
            eventLoop: context.eventLoop
        )
    }

    /// The captions or transcript of one file of a request's built package.
    func showStagedCompanion(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (publish, _, _) = try await viewableRequest(context)
        guard let role = CompanionRole(rawValue: try context.parameters.require("role")) else { throw NotFound() }
        return try await stagedAsset(
            publish,
            index: context.parameters.require("index", as: Int.self),
            companion: role,
            request: request,
            eventLoop: context.eventLoop
        )
    }

    /// Approves a request, with an optional comment; the notice says when it has all the approvals it needs.
    func approveRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: CommentForm.self, context: context)
        let id = try context.parameters.require("rid")
        let outcome = try await publishing.approve(
            requestId: id,
            reviewer: context.user,
            comment: form.comment,
            actor: context.actor
        )
        let notice: String
        if case .approved(_, true) = outcome {
            notice = "Approved. The request has all the approvals it needs and can be released."
        } else {
            notice = "Approved."
        }
        return pages.redirect(to: PanelURL.request(id), notice: notice)
    }

    /// Denies a request with a comment (required: the request page again with the message otherwise, 422).
    func denyRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: CommentForm.self, context: context)
        let id = try context.parameters.require("rid")
        do {
            try await publishing.deny(requestId: id, reviewer: context.user, comment: form.comment, actor: context.actor)
        } catch let errors as ValidationErrors {
            let (publish, site, access) = try await viewableRequest(context)
            var page = try await requestPage(publish, site: site, access: access, user: context.user)
            page.denyError = errors["comment"]
            return await pages.render(
                "request",
                title: "Publish request",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
        return pages.redirect(to: PanelURL.request(id), notice: "Denied. The tour is editable again and shows your comment.")
    }

    /// Withdraws a request; the tour is editable again.
    func withdrawRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("rid")
        let publish = try await publishing.withdraw(requestId: id, user: context.user, actor: context.actor)
        return pages.redirect(
            to: publish.tourId.map { PanelURL.tour($0) } ?? PanelURL.sites,
            notice: "Request withdrawn; the tour is editable again."
        )
    }

    /// Releases an approved request as the package's new version. Wherever Release was clicked (the tour page, the
    /// request page, the link in the "approved" email), the ranger lands on the tour's publishing card, where the
    /// visitor link and its QR code now are; the package page only when the tour is gone.
    func releaseRequest(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("rid")
        let version = try await publishing.release(requestId: id, user: context.user, actor: context.actor)
        if let tourId = try await database.publishRequest(id: id)?.tourId, try await database.tour(id: tourId) != nil {
            return pages.redirect(
                to: PanelURL.tour(tourId, at: .publish),
                notice: "Version \(version.version) released: the mobile apps can download it now, "
                    + "and visitors can open it with the link or QR code here."
            )
        }
        return pages.redirect(
            to: PanelURL.package(version.packageId),
            notice: "Version \(version.version) released: the mobile apps can download it now."
        )
    }

    /// A package: its versions and whether the apps list it.
    func showPackage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (package, site, access) = try await viewablePackage(context)
        return await pages.render(
            "package",
            title: "Package",
            page: try await packagePage(package, site: site, access: access),
            request: request,
            context: context
        )
    }

    /// Stops the apps listing the package (its versions stay).
    func unpublish(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let packageId = try context.parameters.require("pid")
        try await publishing.setVisible(packageId: packageId, visible: false, user: context.user, actor: context.actor)
        return pages.redirect(to: PanelURL.package(packageId), notice: "Unpublished: the mobile apps no longer list it.")
    }

    /// Lists an unpublished package in the apps again.
    func publishAgain(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let packageId = try context.parameters.require("pid")
        try await publishing.setVisible(packageId: packageId, visible: true, user: context.user, actor: context.actor)
        return pages.redirect(to: PanelURL.package(packageId), notice: "Published again.")
    }

    /// Makes an earlier (or later) version the one the apps download.
    func serveVersion(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let packageId = try context.parameters.require("pid")
        let version = try context.parameters.require("version", as: Int.self)
        try await publishing.rollback(packageId: packageId, to: version, user: context.user, actor: context.actor)
        return pages.redirect(to: PanelURL.package(packageId), notice: "Version \(version) is now the one the apps download.")
    }

    // MARK: API

    struct CommentBody: Decodable {
        let comment: String?
    }

    struct RollbackBody: Decodable {
        let version: Int
    }

    /// Each handler is named after its operationId in openapi.json.
    func addAPIRoutes(to router: some RouterMethods<SignedInContext>) {
        router.tourGroup(publishing.authorization, .edit, malformedID: .notFound).post("publish", use: startPublish)
        router.get("/publish-requests/{rid}", use: getPublishRequest)
        router.post("/publish-requests/{rid}/approve", use: approvePublishRequest)
        router.post("/publish-requests/{rid}/deny", use: denyPublishRequest)
        router.post("/publish-requests/{rid}/withdraw", use: withdrawPublishRequest)
        router.post("/publish-requests/{rid}/push", use: pushPublishRequest)
        router.post("/packages/{pid}/unpublish", use: unpublishPackage)
        router.post("/packages/{pid}/publish", use: republishPackage)
        router.post("/packages/{pid}/rollback", use: rollbackPackage)
    }

    /// Submits a tour for review (202, the request's address in Location).
    func startPublish(_ request: Request, _ context: TourContext) async throws -> Response {
        let publish = try await publishing.submit(context.tour, user: context.user, actor: context.actor)
        var response = try context.answer(Components.Schemas.PublishAccepted(requestId: publish.id), status: .accepted, to: request)
        response.headers[.location] = APIURL.managePublishRequest(publish.id)
        return response
    }

    /// A publish request: state, build progress, reviews.
    func getPublishRequest(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PublishRequest {
        let (publish, _, _) = try await viewableRequest(context)
        return try await requestBody(publish)
    }

    /// Approves a request (optional JSON `{comment}`); answers the request as it is now.
    func approvePublishRequest(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PublishRequest {
        let body = try await optionalJSON(CommentBody.self, request, context)
        let id = try context.parameters.require("rid")
        _ = try await publishing.approve(requestId: id, reviewer: context.user, comment: body?.comment ?? "", actor: context.actor)
        return try await requestBody(id: id)
    }

    /// Denies a request (JSON `{comment}`, which is required); answers the request as it is now.
    func denyPublishRequest(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PublishRequest {
        let body = try await optionalJSON(CommentBody.self, request, context)
        let id = try context.parameters.require("rid")
        try await publishing.deny(requestId: id, reviewer: context.user, comment: body?.comment ?? "", actor: context.actor)
        return try await requestBody(id: id)
    }

    /// Withdraws a request; answers the request as it is now.
    func withdrawPublishRequest(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PublishRequest {
        let id = try context.parameters.require("rid")
        _ = try await publishing.withdraw(requestId: id, user: context.user, actor: context.actor)
        return try await requestBody(id: id)
    }

    /// Releases an approved request; answers the new version.
    func pushPublishRequest(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.Release {
        let id = try context.parameters.require("rid")
        let version = try await publishing.release(requestId: id, user: context.user, actor: context.actor)
        return Components.Schemas.Release(packageId: version.packageId, version: version.version, sha256: version.sha256)
    }

    /// Stops the apps listing the package.
    func unpublishPackage(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PackageVisibility {
        let packageId = try context.parameters.require("pid")
        try await publishing.setVisible(packageId: packageId, visible: false, user: context.user, actor: context.actor)
        return Components.Schemas.PackageVisibility(packageId: packageId, visible: false)
    }

    /// Lists an unpublished package in the apps again.
    func republishPackage(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PackageVisibility {
        let packageId = try context.parameters.require("pid")
        try await publishing.setVisible(packageId: packageId, visible: true, user: context.user, actor: context.actor)
        return Components.Schemas.PackageVisibility(packageId: packageId, visible: true)
    }

    /// Makes the version in the body (`{version}`) the one the apps download.
    func rollbackPackage(_ request: Request, _ context: SignedInContext) async throws -> Components.Schemas.PackageRollback {
        let packageId = try context.parameters.require("pid")
        _ = try await publishing.managedPackage(id: packageId, user: context.user)
        let body = try await request.decode(as: RollbackBody.self, context: context)
        try await publishing.rollback(packageId: packageId, to: body.version, user: context.user, actor: context.actor)
        return Components.Schemas.PackageRollback(packageId: packageId, currentVersion: body.version)
    }

    func optionalJSON<T: Decodable>(_ type: T.Type, _ request: Request, _ context: SignedInContext) async throws -> T? {
        guard request.headers[.contentType] != nil else { return nil }
        return try await request.decode(as: type, context: context)
    }

    // MARK: Shared logic

    func viewableRequest(_ context: SignedInContext) async throws -> (PublishRequest, Site, SiteAccess) {
        guard let publish = try await database.publishRequest(id: context.parameters.require("rid")) else { throw NotFound() }
        let (site, access) = try await authorization.site(id: publish.siteId, user: context.user)
        return (publish, site, access)
    }

    func viewablePackage(_ context: SignedInContext) async throws -> (PackageRecord, Site, SiteAccess) {
        try await publishing.viewablePackage(id: context.parameters.require("pid"), user: context.user)
    }

    /// The request as it is after an action on it (which never deletes one).
    func requestBody(id: String) async throws -> Components.Schemas.PublishRequest {
        guard let publish = try await database.publishRequest(id: id) else { throw NotFound() }
        return try await requestBody(publish)
    }

    func requestBody(_ publish: PublishRequest) async throws -> Components.Schemas.PublishRequest {
        let reviews = try await database.reviews(requestId: publish.id)
        return Components.Schemas.PublishRequest(
            id: publish.id,
            tour: publish.tourId,
            packageId: publish.packageId,
            version: publish.version,
            state: try WireEnum.value(publish.state),
            approvals: reviews.filter { $0.review.decision == .approve }.count,
            requiredApprovals: publish.requiredApprovals,
            progress: .init(
                filesDone: publish.filesDone,
                filesTotal: publish.filesTotal,
                bytesDone: publish.bytesDone,
                bytesTotal: publish.bytesTotal
            ),
            failureReason: publish.failureReason,
            denialComment: publish.denialComment,
            sha256: publish.zipSha256,
            size: publish.zipSize,
            reviews: try reviews.map {
                .init(
                    reviewer: $0.reviewerName,
                    decision: try WireEnum.value($0.review.decision),
                    comment: $0.review.comment,
                    at: $0.review.createdAt
                )
            }
        )
    }

    /// A file of the built package, streamed from the staged copy that went into the zip (Range for players).
    /// With `companion`, that file's captions or transcript (WebVTT as `text/vtt`, for the review page's `<track>`).
    func stagedAsset(
        _ publish: PublishRequest,
        index: Int,
        companion: CompanionRole? = nil,
        request: Request,
        eventLoop: (any EventLoop)? = nil
    ) async throws -> Response {
        guard let manifest = try publish.decodedManifest() else { throw NotFound() }
        let assets = manifest.waypoints.flatMap(\.assets)
        guard assets.indices.contains(index) else { throw NotFound() }
        let asset = assets[index]
        let sha256: String
        let contentType: String
        if let companion {
            guard let file = companion == .captions ? asset.captions : asset.transcript else { throw NotFound() }
            sha256 = file.sha256
            contentType = file.path.hasSuffix(".vtt") ? "text/vtt; charset=utf-8" : "text/plain; charset=utf-8"
        } else {
            sha256 = asset.sha256
            contentType = asset.type == .text ? "text/plain; charset=utf-8" : asset.mimeType
        }
        let file = paths.staging.appendingPathComponent(publish.id).appendingPathComponent("files").appendingPathComponent(sha256)
        return try await FileResponder.respond(
            fileAt: file,
            contentType: contentType,
            etag: "\"\(sha256)\"",
            request: request,
            headers: [.cacheControl: "private, no-cache", .contentSecurityPolicy: "default-src 'none'; sandbox"],
            eventLoop: eventLoop
        )
    }

}

/// A reviewer's comment (approving or denying a request).
struct CommentForm: PanelForm {
    @Field var comment: String
}
