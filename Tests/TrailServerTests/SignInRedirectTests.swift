import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The page a sign-in returns to (`next`) can only be a path of this site, however it is written.
@Suite struct SignInRedirectTests {
    /// Each of these leaves the site in some browser or proxy; each must become `/`.
    static let hostile = [
        "/\t/evil.example", "/\n/evil.example", "/\r\n/evil.example", "/ /evil.example", "/\\evil.example", "/\\/evil.example",
        "\\\\evil.example", "//evil.example", "/%2F/evil.example", "/%2F%2Fevil.example", "%2F%2Fevil.example", "/%09/evil.example",
        "/%5Cevil.example", "/%252F%252Fevil.example", "https:evil.example", "https://evil.example", "evil.example", "",
        "/\u{00A0}/evil.example", "/\u{2028}/evil.example", "/%00/evil.example", "/login?next=//evil.example",
    ]
    static let local = ["/", "/sites/alpha", "/tours/12?tab=map", "/review/3#decision", "/sites/a%2Db"]

    @Test("tab, newline, backslash, /\\evil, %2F%2Fevil, https:evil and friends all become /; local paths stay")
    func safeNextKeepsOnlyLocalPaths() {
        for next in Self.hostile {
            #expect(SignInResponder.safeNext(next) == "/", "\(next.debugDescription)")
        }
        for next in Self.local {
            #expect(SignInResponder.safeNext(next) == next, "\(next.debugDescription)")
        }
        #expect(SignInResponder.safeNext(nil) == "/")
        #expect(SignInResponder.safeNext("/" + String(repeating: "a", count: 5000)) == "/")
    }

    @Test("through HTTP: /login?next=/%09/evil.example signs in to /, never to another host")
    func signInDoesNotRedirectAway() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            for next in ["/%09/evil.example", "/%0A/evil.example", "/%5Cevil.example", "/%2F%2Fevil.example", "https:evil.example"] {
                var browser = BrowserSession()
                let page = try await client.execute(uri: "/login?next=\(next)", method: .get)
                browser.absorb(page)
                #expect(page.text.contains("name=\"next\" value=\"/\""), "\(next): the form carries / only")
                // The form field itself is attacker-controlled too: post the hostile value directly.
                let decoded = next.removingPercentEncoding ?? next
                let response = try await client.post(
                    "/login",
                    form: ["email": "author@test.org", "password": TestApp.password, "next": decoded],
                    session: browser
                )
                #expect(response.status == .seeOther, "\(next): \(response.status)")
                #expect(response.location == "/", "\(next): Location \(response.location.debugDescription)")
            }
            var browser = BrowserSession()
            browser.absorb(try await client.execute(uri: "/login?next=/sites/alpha", method: .get))
            let local = try await client.post(
                "/login",
                form: ["email": "author@test.org", "password": TestApp.password, "next": "/sites/alpha"],
                session: browser
            )
            #expect(local.location == "/sites/alpha")
        }
    }
}
