import Foundation
import Hummingbird

/// The panel's help: the rangers' guide as a page, with its screenshots. Public, so the sign-in page can link to it.
struct HelpController: Sendable {
    let pages: PageResponder
    /// `docs/screenshots`, the pictures the guide shows.
    let screenshots: URL

    struct HelpPage: Sendable {
        let html: String
    }

    func addRoutes(to router: Router<AppRequestContext>) {
        router.get("/help", use: showGuide)
        router.get("/help/screenshots/{name}", use: showScreenshot)
    }

    /// The whole guide on one page; each page's "Help" link jumps to its section.
    @Sendable func showGuide(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let guide = pages.views.guide else {
            throw HTTPError(.notFound, message: "The rangers' guide (docs/rangers.md) is not installed on this server.")
        }
        return await pages.render("help", title: "Help", page: HelpPage(html: guide.html), request: request, context: context)
    }

    /// One screenshot of the guide. Names are the guide's own (letters, digits, hyphens, `.png`), never a path.
    @Sendable func showScreenshot(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.parameters.require("name")
        guard name.hasSuffix(".png"), name.count <= 80,
            name.dropLast(4).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else {
            throw HTTPError(.notFound)
        }
        let file = screenshots.appendingPathComponent(name)
        guard let data = try? await Self.read(file) else { throw HTTPError(.notFound) }
        return Response(
            status: .ok,
            headers: [.contentType: "image/png", .cacheControl: "public, max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    private static func read(_ file: URL) async throws -> Data {
        try await Task.detached { try Data(contentsOf: file) }.value
    }
}
