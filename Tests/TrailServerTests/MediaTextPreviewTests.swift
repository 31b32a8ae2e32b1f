import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A clean text file is previewed on the waypoint page as escaped text, never as markup.
@Suite(.scratch) struct MediaTextPreviewTests {
    @Test("hostile text in a clean text file shows escaped in the waypoint page's preview, cut at 2,000 bytes")
    func textPreviewIsEscaped() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        // Not starting with "<": a file that does is refused as markup (HTML, SVG, XML) before it is ever stored.
        let hostile = "Notes: <script>alert('x')</script> & <img src=x onerror=alert(1)> “quoted”\n" + String(repeating: "é", count: 1_500)
        try await env.app.test { client in
            _ = try await client.publishUpload(env, token: token, data: Data(hostile.utf8), fileName: "notes.txt", contentType: "text/plain")
            #expect(await env.scanAll() == 1)
            let browser = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)", session: browser)
            #expect(page.status == .ok)
            let text = page.text
            #expect(
                text.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;")
                    || text.contains("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;"),
                "the excerpt is escaped: \(text.components(separatedBy: "asset-text").dropFirst().first?.prefix(300) ?? "no excerpt")"
            )
            #expect(!text.contains("<script>alert"), "no markup from the file reaches the page")
            #expect(!text.contains("\u{FFFD}"), "the cut falls between characters")
            #expect(text.contains("é …</pre>"), "a long text is cut and marked")
        }
    }
}
