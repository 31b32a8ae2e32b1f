import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A refused form lists every error at the top of the page, each linking to its field (the browser test checks the
/// focus lands there).
@Suite struct ErrorSummaryTests {
    /// The summary's links as (field id, message), in order.
    static func summary(_ html: String) -> [(String, String)] {
        guard let start = html.range(of: #"id="error-summary" data-error-summary>"#), let end = html[start.upperBound...].range(of: "</ul>")
        else { return [] }
        let block = String(html[start.upperBound..<end.lowerBound])
        let pattern = try! NSRegularExpression(pattern: ##"<a href="#([^"]+)" class="alert-link">([^<]*)</a>"##)
        return pattern.matches(in: block, range: NSRange(block.startIndex..., in: block)).map {
            (String(block[Range($0.range(at: 1), in: block)!]), String(block[Range($0.range(at: 2), in: block)!]))
        }
    }

    @Test("a refused frame lists each field's error at the top, in the form's order, linking to the field")
    func frameErrors() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let clean = try await client.get("/tours/\(seed.tourId)", session: author)
            #expect(!clean.text.contains("data-error-summary"), "no summary without errors")
            let refused = try await client.post(
                "/tours/\(seed.tourId)/frame",
                form: ["north": "44.3", "south": "44.4", "east": "-121.9", "west": "-122.2", "minZoom": "9", "maxZoom": "25"],
                session: author
            )
            #expect(refused.status == .unprocessableContent)
            let items = Self.summary(refused.text)
            #expect(items.map(\.0) == ["north", "maxZoom"], "\(items)")
            #expect(items.first?.1 == HTML.fieldError(refused.text, field: "north"))
            #expect(items.last?.1 == HTML.fieldError(refused.text, field: "maxZoom"))
            // The summary comes first in the page's content and is its first alert (the inline messages are none).
            let summaryAt = try #require(refused.text.range(of: "data-error-summary")).lowerBound
            #expect(summaryAt < (try #require(refused.text.range(of: #"aria-label="breadcrumb""#)).lowerBound))
            let firstAlert = try #require(refused.text.range(of: #"role="alert""#))
            #expect(refused.text[firstAlert.lowerBound...].hasPrefix(#"role="alert" aria-labelledby="error-summary-title" tabindex="-1" autofocus"#))
        }
    }

    @Test("a frame too large for the limit (a whole-form error) links to the first edge")
    func wholeFormError() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let refused = try await client.post(
                "/tours/\(seed.tourId)/frame",
                form: ["north": "50", "south": "40", "east": "-100", "west": "-120", "minZoom": "9", "maxZoom": "12"],
                session: author
            )
            #expect(refused.status == .unprocessableContent)
            let items = Self.summary(refused.text)
            #expect(items.count == 1 && items.first?.0 == "north", "\(items)")
            #expect(items.first?.1.contains("the largest allowed is 2,500 km²") == true)
        }
    }

    @Test("a refused waypoint lists its errors, linking to the waypoint form's fields")
    func waypointErrors() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let refused = try await client.post(
                "/tours/\(seed.tourId)/waypoints",
                form: ["name": "", "latitude": "95", "longitude": "-122.0", "description": ""],
                session: author
            )
            #expect(refused.status == .unprocessableContent)
            let items = Self.summary(refused.text)
            #expect(items.map(\.0) == ["wp-name", "wp-latitude"], "\(items)")
            #expect(items.first?.1 == "Enter a name of 1 to 120 characters.")
            #expect(refused.text.contains(#"id="wp-name""#) && refused.text.contains(#"id="wp-latitude""#), "the links lead somewhere")
        }
    }

    @Test("the error summary lists the errors in the order of the fields given, whole-form errors first")
    func order() throws {
        let summary = try #require(
            ErrorSummary(["maxZoom": "b", "frame": "whole", "north": "a"], fields: ErrorSummary.frameFields, fallbackId: "north")
        )
        #expect(summary.items.map(\.fieldId) == ["north", "north", "maxZoom"])
        #expect(summary.items.map(\.message) == ["whole", "a", "b"])
        #expect(ErrorSummary([:], fields: ErrorSummary.frameFields, fallbackId: "north") == nil)
    }
}

extension TwoStepTests {
    @Test("a refused two-step code shows the error summary, linking to the code field, and the field gives up autofocus")
    func codePageErrorSummary() async throws {
        let app = try await makeApp()
        try await app.test { client in
            let (secret, _) = try await enrolOnAccountPage(client, "author@test.org")
            let (browser, _) = try await Self.password(client, "author@test.org")
            let page = try await client.get("/login/code", session: browser)
            #expect(!page.text.contains("data-error-summary"))
            #expect(page.text.contains(" autofocus aria-describedby"), "before an error the code field has the focus")
            let wrong = try await client.post(
                "/login/code",
                form: ["code": "000000" == (try Self.oathtool(secret)) ? "111111" : "000000"],
                session: browser
            )
            #expect(wrong.status == .unauthorized)
            let items = ErrorSummaryTests.summary(wrong.text)
            #expect(items.count == 1 && items.first?.0 == "code", "\(items)")
            #expect(items.first?.1 == HTML.fieldError(wrong.text, field: "code"))
            #expect(!wrong.text.contains(" autofocus aria-describedby"), "the summary, not the field, takes the focus")
        }
    }
}
