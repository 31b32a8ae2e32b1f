import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// What every page's frame needs: who is signed in, the CSRF token, a one-time notice, navigation.
struct LayoutModel: Sendable {
    let title: String
    let user: AuthenticatedUser?
    let isAdmin: Bool
    let csrfToken: String
    let notice: String?
    let reviewCount: Int
    /// Admins are told when the malware scanner has no signatures (uploads then stay pending).
    var scannerWarning = false
    /// Everyone else whose files wait for that scanner: why, and which admins to ask (nil: nothing of theirs waits).
    var scannerNotice: String? = nil
    /// Admins are told when the object-storage mirror is failing ("retrying since …: <error>").
    var storageWarning: String? = nil
    /// Stored, not computed: templates read properties by reflection (Mirror), which sees stored ones only.
    let hasReviews: Bool
    /// The rangers' guide section for this page (`/help#…`); nil when the server has no guide to show.
    var helpLink: String? = nil

    init(title: String, user: AuthenticatedUser?, isAdmin: Bool, csrfToken: String, notice: String?, reviewCount: Int, scannerWarning: Bool = false) {
        self.title = title
        self.user = user
        self.isAdmin = isAdmin
        self.csrfToken = csrfToken
        self.notice = notice
        self.reviewCount = reviewCount
        self.scannerWarning = scannerWarning
        self.hasReviews = reviewCount > 0
    }
}

/// The root object a template sees: `layout` for the frame, `page` for its own view model.
struct Page<Content: Sendable>: Sendable {
    let layout: LayoutModel
    let page: Content
}

struct ErrorPageModel: Sendable {
    let status: Int
    let reason: String
    let message: String
}

/// Renders Mustache templates from `Templates/` (escaped by default) into HTML responses.
struct ViewRenderer: Sendable {
    let library: MustacheLibrary
    /// The rangers' guide that each page's "Help" link opens; by default `docs/rangers.md` beside `Templates/`.
    let guide: RangerGuide?

    init(templatesFolder: URL, guideFile: URL? = nil) async throws {
        library = try await MustacheLibrary(directory: templatesFolder.path)
        let file = guideFile ?? templatesFolder.deletingLastPathComponent().appendingPathComponent("docs/rangers.md")
        guide = RangerGuide.load(from: file)
    }

    func render<Content: Sendable>(
        _ template: String,
        title: String,
        page: Content,
        context: some AppContextProviding,
        status: HTTPResponse.Status = .ok,
        notice: String? = nil,
        reviewCount: Int = 0,
        scannerWarning: Bool = false,
        scannerNotice: String? = nil,
        storageWarning: String? = nil
    ) -> Response {
        let context = context.app
        var layout = LayoutModel(
            title: title,
            user: context.user,
            isAdmin: context.user?.isAdmin == true,
            csrfToken: context.csrfToken,
            notice: notice,
            reviewCount: reviewCount,
            scannerWarning: scannerWarning
        )
        layout.storageWarning = storageWarning
        layout.scannerNotice = scannerNotice
        layout.helpLink = guide?.link(forTemplate: template)
        guard let html = html(Page(layout: layout, page: page), template: template) else {
            return Response(
                status: .internalServerError,
                headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "Missing template \(template)"))
            )
        }
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }

    /// `root` rendered with `template`, read once into a ``TemplateModel``; nil when there is no such template.
    func html(_ root: some Sendable, template: String) -> String? {
        let html = library.render(TemplateModel.make(root), withTemplate: template)
        #if DEBUG
        // Every page a test renders checks that the model reads as swift-mustache's own reflection does.
        let reflected = library.render(root, withTemplate: template)
        precondition(html == reflected, "\(template): the template model renders differently from the page model")
        #endif
        return html
    }

    func errorPage(status: HTTPResponse.Status, message: String, context: some AppContextProviding) -> Response {
        render(
            "error",
            title: status.reasonPhrase,
            page: ErrorPageModel(status: status.code, reason: status.reasonPhrase, message: message),
            context: context,
            status: status
        )
    }
}

/// A one-time message shown on the next page after a redirect ("Tour created."), carried in a short-lived cookie.
enum Flash {
    static func redirect(to location: String, notice: String, secure: Bool) -> Response {
        var response = Response.redirect(to: location)
        let value = Data(notice.prefix(300).utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        response.setCookie(AppCookie.flash(value, secure: secure))
        return response
    }

    /// Reads the notice, if any; the caller clears the cookie with `clear(_:)`.
    static func read(_ request: Request) -> String? {
        guard var value = request.cookies[CookieName.flash]?.value, !value.isEmpty else { return nil }
        value = value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while value.count % 4 != 0 { value += "=" }
        return Data(base64Encoded: value).flatMap { String(data: $0, encoding: .utf8) }
    }
}

/// Renders pages for controllers, adding the flash notice and the review badge.
struct PageResponder: Sendable {
    let views: ViewRenderer
    let database: AppDatabase
    let secureCookies: Bool
    let scans: ScanService?
    /// The object-storage mirror, with `--storage`: its failures are an admin banner.
    var distribution: DistributionState? = nil

    func render<Content: Sendable>(
        _ template: String,
        title: String,
        page: Content,
        request: Request,
        context: some AppContextProviding,
        status: HTTPResponse.Status = .ok
    ) async -> Response {
        let context = context.app
        let notice = Flash.read(request)
        var reviewCount = 0
        if let user = context.user { reviewCount = (try? await database.reviewQueueCount(for: user)) ?? 0 }
        let scannerWarning = context.user?.isAdmin == true && scans?.scannerReady == false
        var scannerNotice: String? = nil
        if scans?.scannerReady == false, let user = context.user, !user.isAdmin {
            scannerNotice = await Self.scannerNotice(for: user, database: database)
        }
        let storageWarning = context.user?.isAdmin == true ? distribution?.lastFailure.map(DistributionStatus.failureText) : nil
        var response = views.render(
            template,
            title: title,
            page: page,
            context: context,
            status: status,
            notice: notice,
            reviewCount: reviewCount,
            scannerWarning: scannerWarning,
            scannerNotice: scannerNotice,
            storageWarning: storageWarning
        )
        if notice != nil {
            response.setCookie(AppCookie.clearedFlash(secure: secureCookies))
        }
        return response
    }

    /// The notice for someone who is not an admin while the scanner has no signatures, when files of theirs wait:
    /// the grey "pending" badge alone does not say that nothing will change until an admin acts, nor who that is.
    static func scannerNotice(for user: AuthenticatedUser, database: AppDatabase) async -> String? {
        guard let waiting = try? await database.filesWaitingForScan(uploadedBy: user.id), waiting > 0 else { return nil }
        let admins = (try? await database.activeAdministrators()) ?? []
        let whom =
            admins.isEmpty
            ? "the server's administrators"
            : "the server's administrators (" + admins.prefix(3).joined(separator: ", ") + (admins.count > 3 ? ", …" : "") + ")"
        let files = waiting == 1 ? "1 of your files waits" : "\(DisplayFormat.count(waiting, "file")) of yours wait"
        return "\(files) for the malware scan. The server's scanner has no virus signatures yet, so uploads stay "
            + "“pending” and cannot be published until they are installed. Ask \(whom) to install them; "
            + "your files are scanned by themselves once they are."
    }

    func redirect(to location: String, notice: String) -> Response {
        Flash.redirect(to: location, notice: notice, secure: secureCookies)
    }
}
