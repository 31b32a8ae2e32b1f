import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// Every form POST of the panel needs the session's CSRF token: missing, wrong or another session's token is a 403
/// that changes nothing.
@Suite struct CSRFTests {
    enum Forgery: String, CaseIterable, Sendable {
        case missing, wrong, otherSession
    }

    @Test("panel POST without the right token", arguments: RouteTable.panelPosts)
    func refused(_ route: RouteCase) async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            // The admin may do everything, so a 403 here can only come from the CSRF check.
            let browser = try await client.signIn("admin@test.org")
            let other = try await client.signIn("manager@test.org")
            #expect(!browser.csrf.isEmpty && browser.csrf != other.csrf)
            let before = try await app.database.snapshot()
            let path = seed.fill(route.path)
            for forgery in Forgery.allCases {
                let token: String? =
                    switch forgery {
                    case .missing: nil
                    case .wrong: String(browser.csrf.reversed())
                    case .otherSession: other.csrf
                    }
                let response: TestResponse
                switch route.body {
                case .form(let pairs):
                    response = try await Self.post(client, path, pairs.map { ($0.0, seed.fill($0.1)) }, cookies: browser.cookieHeader, token: token)
                case .multipart(let fields, let file):
                    // Upload forms carry the token in the query (the body streams to disk after the check).
                    let boundary = "csrf-\(UUID().uuidString)"
                    let uri = path + (token.map { "?_csrf=\($0)" } ?? "")
                    response = try await client.execute(
                        uri: uri,
                        method: .post,
                        headers: [.cookie: browser.cookieHeader, .contentType: "multipart/form-data; boundary=\(boundary)"],
                        body: RouteFixtures.multipart(fields: fields.map { ($0.0, seed.fill($0.1)) }, file: file, boundary: boundary)
                    )
                default:
                    Issue.record("not a form or upload route")
                    return
                }
                #expect(response.status == .forbidden, "\(forgery) \(path): \(response.status)")
                #expect(response.text.contains("This form has expired or did not come from this site."), "\(forgery) \(path)")
                #expect(!response.setCookies.contains { $0.hasPrefix("tc_session=;") }, "\(forgery) \(path): the session was touched")
                try await app.database.expectUnchanged(since: before, "\(forgery) \(path): a forged request changed the database")
            }
        }
    }

    /// The same routes succeed with the token in the form field, the `X-CSRF-Token` header or the `_csrf` query item.
    @Test func tokenIsAcceptedInFieldHeaderAndQuery() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let viaField = try await Self.post(
                client,
                "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)/down",
                [],
                cookies: browser.cookieHeader,
                token: browser.csrf
            )
            #expect(viaField.status == .seeOther)

            var headers: HTTPFields = [
                .cookie: browser.cookieHeader, .contentType: "application/x-www-form-urlencoded",
                HTTPField.Name("X-CSRF-Token")!: browser.csrf, .accept: "application/json",
            ]
            let viaHeader = try await client.execute(
                uri: "/tours/\(seed.tourId)/waypoints/order",
                method: .post,
                headers: headers,
                body: ByteBuffer(string: "ids=\(seed.waypointId)&ids=\(seed.secondWaypointId)")
            )
            #expect(viaHeader.status == .ok)
            #expect(try await app.database.waypoints(tourId: seed.tourId).map(\.id) == [seed.waypointId, seed.secondWaypointId])

            headers[HTTPField.Name("X-CSRF-Token")!] = nil
            let viaQuery = try await client.execute(
                uri: "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)/down?_csrf=\(browser.csrf)",
                method: .post,
                headers: headers,
                body: ByteBuffer()
            )
            #expect(viaQuery.status == .seeOther)
            #expect(try await app.database.waypoints(tourId: seed.tourId).map(\.id) == [seed.secondWaypointId, seed.waypointId])
        }
    }

    /// The management API used with a session cookie (the panel's scripts) is guarded like a form; with a bearer token it needs none.
    @Test func managementAPIWithSessionCookieNeedsTheToken() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let forged = try await client.send(.patch, "/api/v1/manage/tours/\(seed.tourId)", session: browser, json: #"{"name":"Forged"}"#)
            #expect(forged.status == .forbidden)
            #expect(forged.errorCode == "forbidden")
            let forgedDelete = try await client.send(.delete, "/api/v1/manage/tours/\(seed.tourId)", session: browser, csrfHeader: "nope")
            #expect(forgedDelete.status == .forbidden)
            try await app.database.expectUnchanged(since: before)

            let real = try await client.send(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)",
                session: browser,
                json: #"{"name":"Real"}"#,
                csrfHeader: browser.csrf
            )
            #expect(real.status == .ok)
            #expect(try await app.database.tour(id: seed.tourId)?.name == "Real")

            let bearer = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)",
                token: app.token(for: "author@test.org"),
                json: #"{"name":"By Token"}"#
            )
            #expect(bearer.status == .ok)
            #expect(try await app.database.tour(id: seed.tourId)?.name == "By Token")
        }
    }

    /// The public API is never given a CSRF cookie (there is no form to protect), and a token is URL-safe base64 of 32
    /// random bytes, the same text as Foundation's base64 with `-`, `_` and no padding.
    @Test func tokensAreURLSafeAndTheAPIGetsNoCookie() async throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(SecretToken.base64URL(bytes) == expected, "\(length) bytes")
        }
        let tokens = (0..<100).map { _ in SecretToken.make() }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.utf8.count == 43 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } })

        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let api = try await client.execute(uri: "/api/v1/sites", method: .get)
            #expect(api.status == .ok)
            #expect(api.setCookies.isEmpty, "\(api.setCookies)")
            let page = try await client.execute(uri: "/login", method: .get)
            #expect(page.setCookies.contains { $0.hasPrefix("tc_csrf=") })
        }
    }

    /// The sign-in form has no session yet: its token is a double-submit cookie that must match the form field.
    @Test func signInFormNeedsTheDoubleSubmitCookie() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            let cookie = try #require(page.setCookies.first { $0.hasPrefix("tc_csrf=") })
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Lax"))
            var browser = BrowserSession()
            browser.absorb(page)
            let token = try #require(browser.cookies["tc_csrf"])
            #expect(browser.csrf == token, "the page's form carries the cookie's token")

            let form = [("email", "author@test.org"), ("password", TestApp.password)]
            let before = try await app.database.snapshot()
            let cases: [(String, String?, String?)] = [
                ("no field", browser.cookieHeader, nil),
                ("wrong field", browser.cookieHeader, String(token.reversed())),
                ("no cookie", nil, token),
                ("a cookie the attacker made up, with no matching field", "tc_csrf=\(String(repeating: "a", count: 43))", token),
            ]
            for (what, cookies, field) in cases {
                let response = try await Self.post(client, "/login", form, cookies: cookies, token: field)
                #expect(response.status == .forbidden, "\(what): \(response.status)")
                #expect(!response.setCookies.contains { $0.hasPrefix("tc_session=") }, "\(what): a session cookie was set")
            }
            try await app.database.expectUnchanged(since: before, "no session and no failure were recorded")

            let good = try await Self.post(client, "/login", form, cookies: browser.cookieHeader, token: token)
            #expect(good.status == .seeOther)
            #expect(good.setCookies.contains { $0.hasPrefix("tc_session=") })
        }
    }

    /// Signing out is a POST with the token too, so another site cannot sign a ranger out.
    @Test func signOutNeedsTheToken() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let forged = try await Self.post(client, "/logout", [], cookies: browser.cookieHeader, token: nil)
            #expect(forged.status == .forbidden)
            #expect(try await client.get("/sites", session: browser).status == .ok)
            let sessions: Int? = try await app.database.scalar("SELECT COUNT(*) FROM session")
            #expect(sessions == 1)
        }
    }

    static func post(
        _ client: some TestClientProtocol,
        _ uri: String,
        _ fields: [(String, String)],
        cookies: String?,
        token: String?
    ) async throws -> TestResponse {
        var fields = fields
        if let token { fields.append(("_csrf", token)) }
        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
        }
        let body = fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let cookies { headers[.cookie] = cookies }
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }
}
