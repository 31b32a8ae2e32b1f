import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Every panel page links to its section of the rangers' guide, which the server renders from `docs/rangers.md`.
struct HelpTests {
    @Test func everyPanelPageHasASectionInTheGuide() throws {
        let markdown = try String(contentsOf: projectRoot.appendingPathComponent("docs/rangers.md"), encoding: .utf8)
        let guide = RangerGuide(markdown: markdown)
        let templates = try FileManager.default.contentsOfDirectory(atPath: projectRoot.appendingPathComponent("Templates").path)
            .filter { $0.hasSuffix(".mustache") }.map { String($0.dropLast(".mustache".count)) }
        // Partials and frames are parts of other pages; the error page, the guide itself and the visitors' player pages
        // (public, outside the panel) need no section of their own.
        let notPages: Set = [
            "layout", "error", "error-summary", "help", "language-tabs", "site-fields", "tour-tile-estimate", "visit", "visit-layout", "visit-list",
            "visit-withdrawn",
        ]
        for template in templates where !notPages.contains(template) {
            let section = RangerGuide.sections[template]
            #expect(section != nil, "Templates/\(template).mustache has no section in RangerGuide.sections")
            if let section { #expect(guide.anchors.contains(section), "docs/rangers.md has no heading with the id \(section) (for \(template))") }
        }
        // The ids are GitHub's, so the guide's own links and the panel's agree.
        #expect(guide.anchors == Markdown.anchors(in: markdown).filter { !$0.isEmpty })
        #expect(guide.html.contains("<h2 id=\"\(RangerGuide.sections["tour"]!)\""))
    }

    @Test func theHelpPageShowsTheGuideAndEachPageLinksToItsSection() async throws {
        let app = try await TestApp.make()
        let seed = try await app.seed()
        try await app.test { client in
            let help = try await client.execute(uri: "/help", method: .get)
            #expect(help.status == .ok)
            let html = String(buffer: help.body)
            #expect(html.contains("id=\"\(RangerGuide.sections["waypoint"]!)\""))
            #expect(html.contains("src=\"/help/screenshots/"), "the guide's screenshots are served under /help/")

            let login = String(buffer: try await client.execute(uri: "/login", method: .get).body)
            #expect(login.contains("href=\"/help#\(RangerGuide.sections["login"]!)\""))
            let session = try await client.signIn("author@test.org")
            let tour = String(buffer: try await client.get("/tours/\(seed.tourId)", session: session).body)
            #expect(tour.contains("href=\"/help#\(RangerGuide.sections["tour"]!)\""), "\(tour.prefix(400))")

            let picture = try await client.execute(uri: "/help/screenshots/tour-editor.png", method: .get)
            #expect(picture.status == .ok && picture.headers[.contentType] == "image/png")
            #expect(Array(picture.body.readableBytesView.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
            // A path in the name is refused before the route (400); any other name that is not a screenshot is not found.
            for (name, refusal) in [
                ("..%2F..%2FPackage.swift", HTTPResponse.Status.badRequest), ("..%2Fsecurity.md", .badRequest),
                ("tour-editor.svg", .notFound), ("nope.png", .notFound), ("tour-editor.png.md", .notFound),
            ] {
                let status = try await client.execute(uri: "/help/screenshots/\(name)", method: .get).status
                #expect(status == refusal, "\(name): \(status)")
            }
        }
    }
}
