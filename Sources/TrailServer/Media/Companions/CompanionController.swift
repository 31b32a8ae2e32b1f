import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TrailAPI

// Captions and transcripts: the panel's form, the API's upload, and what both receive.
extension MediaController {
    /// Adds the captions or the transcript of a video or audio file.
    func addCompanion(_ request: Request, _ context: AssetContext, role: CompanionRole) async throws -> Response {
        let (asset, tourId) = (context.asset, context.tour.id)
        do {
            let companion = try await receiveCompanion(request, context: context, owner: asset, tourId: tourId, role: role)
            return pages.redirect(
                to: PanelURL.waypoint(tourId: tourId, asset.waypointId, at: .asset(asset.id)),
                notice: "Added “\(companion.originalName)” as the \(role.label) of “\(asset.originalName)”; scanning for malware now."
            )
        } catch let errors as ValidationErrors {
            return try await waypointPageAgain(request: request, context: context) { row in
                if role == .captions {
                    row.captionsError = errors["file"] ?? errors.message
                } else {
                    row.transcriptError = errors["text"] ?? errors["file"] ?? errors.message
                }
            }
        }
    }

    /// Adds the captions or the transcript of a video or audio file; 201 with the new file and its address.
    func attachCompanion(_ request: Request, _ context: AssetContext, role: CompanionRole) async throws -> Response {
        let (asset, tourId) = (context.asset, context.tour.id)
        let companion = try await receiveCompanion(request, context: context, owner: asset, tourId: tourId, role: role)
        var response = try await context.answer(body(companion, viewer: context.user), status: .created, to: request)
        response.headers[.location] = APIURL.manageAsset(companion.id)
        return response
    }

    /// `POST /manage/assets/{aid}/transcript` as JSON.
    struct TranscriptText: Decodable {
        let text: String
    }

    /// A caption or transcript for `owner`: a multipart `file` (both roles), or, for a transcript, typed text (the
    /// panel's urlencoded `text` field, the API's JSON `{text}`).
    func receiveCompanion(_ request: Request, context: AssetContext, owner: Asset, tourId: Int64, role: CompanionRole) async throws -> Asset {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        if role == .transcript, contentType.hasPrefix("application/json") {
            let body = try await request.decode(as: TranscriptText.self, context: context)
            return try await intake.registerTranscript(text: body.text, ownerId: owner.id, actor: context.actor)
        }
        if role == .transcript, contentType.hasPrefix("application/x-www-form-urlencoded") {
            let form = try await request.decode(as: TranscriptForm.self, context: context)
            return try await intake.registerTranscript(text: form.text, ownerId: owner.id, actor: context.actor)
        }
        guard contentType.hasPrefix("multipart/form-data") else {
            throw HTTPError(
                .unsupportedMediaType,
                message: role == .captions
                    ? "Send the captions as multipart/form-data with one field named “file” (a WebVTT file)."
                    : "Send the transcript as multipart/form-data with one field named “file”, or as JSON {\"text\": …}."
            )
        }
        let received = try await MultipartUpload.receive(
            request,
            paths: paths,
            maxFileSize: CompanionText.maxSize,
            budget: try await intake.uploadBudget(tourId: tourId)
        )
        guard received.files.count <= 1 else {
            received.discardFiles(paths: paths)
            throw HTTPError(.badRequest, message: "Send one \(role.label) file at a time.")
        }
        guard let file = received.files.first else {
            throw ValidationErrors(["file": role == .captions ? "Choose a WebVTT caption file (.vtt)." : "Choose a transcript file (.txt or .vtt)."])
        }
        return try await intake.registerCompanion(file, ownerId: owner.id, role: role, actor: context.actor)
    }
}

/// A caption or transcript file under its media file on the waypoint page.
struct CompanionRow: Sendable {
    let id: Int64
    let originalName: String
    let size: String
    let status: String
    let statusBadge: String
    let isPending: Bool
    let isClean: Bool
    let isWebVTT: Bool
    /// Named apart from the media row's `detail`: Mustache would fall back to that one when this is nil.
    let companionDetail: String?

    init(_ asset: Asset, user: AuthenticatedUser?) {
        id = asset.id
        originalName = asset.originalName
        size = ByteFormat.string(asset.size)
        status = asset.scanStatus.rawValue
        statusBadge = asset.scanStatus.badge
        isPending = asset.scanStatus == .pending
        isClean = asset.scanStatus == .clean
        isWebVTT = asset.mimeType == CompanionText.Format.webVTT.mimeType
        companionDetail = (user?.isAdmin == true || user?.id == asset.uploadedBy) && !asset.scanDetail.isEmpty ? asset.scanDetail : nil
    }
}

/// A transcript typed into the page.
struct TranscriptForm: PanelForm {
    @Field var text: String
}
