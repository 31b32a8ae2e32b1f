import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// Every form POST of the panel needs the session's CSRF token: missing, wrong or another session's token is a 403
/// that changes nothing.
@Suite struct CSRFTests {
    enum Forgery: String, CaseIterable, Sendable {
        case missing, wrong, otherSession
        /// The right token, in the address instead of the body: it would land in the history and the logs.
        case inTheAddress
        /// The right token as a multipart field, but after the file: the file would already be streaming to disk.
        case afterTheFile
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
                    case .missing, .inTheAddress, .afterTheFile: nil
                    case .wrong: String(browser.csrf.reversed())
                    case .otherSession: other.csrf
                    }
                let uri = forgery == .inTheAddress ? path + "?_csrf=\(browser.csrf)" : path
                let response: TestResponse
                switch route.body {
                case .form(let pairs):
                    if forgery == .afterTheFile { continue }
                    response = try await Self.post(client, uri, pairs.map { ($0.0, seed.fill($0.1)) }, cookies: browser.cookieHeader, token: token)
                case .multipart(let fields, let file):
                    // Upload forms carry the token as their first field (the body streams to disk after the check).
                    let boundary = "csrf-\(UUID().uuidString)"
                    var body = RouteFixtures.multipart(
                        fields: (token.map { [("_csrf", $0)] } ?? []) + fields.map { ($0.0, seed.fill($0.1)) },
                        file: file,
                        boundary: boundary
                    )
                    if forgery == .afterTheFile {
                        body.moveWriterIndex(to: body.writerIndex - "--\(boundary)--\r\n".utf8.count)
                        body.writeString(
                            "--\(boundary)\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n\(browser.csrf)\r\n--\(boundary)--\r\n"
                        )
                    }
                    response = try await client.execute(
                        uri: uri,
                        method: .post,
                        headers: [.cookie: browser.cookieHeader, .contentType: "multipart/form-data; boundary=\(boundary)"],
                        body: body
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

    /// The same routes succeed with the token in the form field, the `X-CSRF-Token` header or a multipart form's first
    /// field, and fail with it in the address.
    @Test func tokenIsAcceptedInFieldHeaderAndMultipartButNotTheAddress() async throws {
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
                body: ByteBuffer(string: "ids[]=\(seed.waypointId)&ids[]=\(seed.secondWaypointId)")
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
            #expect(viaQuery.status == .forbidden)
            #expect(try await app.database.waypoints(tourId: seed.tourId).map(\.id) == [seed.waypointId, seed.secondWaypointId])
        }
    }

    /// No page puts a CSRF token in an address: every form carries it in a hidden field (the first, on upload forms).
    @Test func noPageHasTheTokenInAnAddress() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            for path in ["/tours/\(seed.tourId)", "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)"] {
                let page = try await client.get(path, session: author)
                #expect(page.status == .ok)
                #expect(page.text.contains(author.csrf), "\(path) has no form")
                #expect(!page.text.contains("_csrf="), "\(path) puts the token in an address")
                #expect(page.text.contains(#"enctype="multipart/form-data""#), "\(path) has an upload form")
            }
        }
    }

    /// A multipart form's first field is read off the front of the body, however the body arrives in pieces, and the
    /// handler still gets every byte; a form whose first part is anything else has no token.
    @Test(arguments: [1, 7, 64, 100_000])
    func multipartTokenIsTheFirstFieldAndTheBodyGoesOnWhole(chunkSize: Int) async throws {
        let boundary = "----WebKitFormBoundaryAbC123"
        func form(_ parts: [(String, String)]) -> [UInt8] {
            var bytes = parts.map { "--\(boundary)\r\nContent-Disposition: form-data; \($0.0)\r\n\r\n\($0.1)\r\n" }.joined()
            bytes += "--\(boundary)--\r\n"
            return Array(bytes.utf8)
        }
        let file = ("name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain", String(repeating: "trail ", count: 5_000))
        let cases: [([UInt8], String?)] = [
            (form([("name=\"_csrf\"", "tok-123_-"), file]), "tok-123_-"),
            (form([file, ("name=\"_csrf\"", "tok-123_-")]), nil),
            (form([("name=\"_csrf\"; filename=\"x\"", "tok-123_-")]), nil),
            (Array("not a form at all".utf8), nil),
        ]
        for (bytes, expected) in cases {
            let (stream, source) = AsyncStream.makeStream(of: ByteBuffer.self)
            for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                source.yield(ByteBuffer(bytes: bytes[start..<min(bytes.count, start + chunkSize)]))
            }
            source.finish()
            let (token, body) = try await CSRFMiddleware.multipartToken(of: RequestBody(asyncSequence: stream), boundary: boundary)
            #expect(token == expected, "chunks of \(chunkSize)")
            var whole = [UInt8]()
            for try await buffer in body { whole += buffer.readableBytesView }
            #expect(whole == bytes, "chunks of \(chunkSize): the handler got \(whole.count) of \(bytes.count) bytes")
        }
        #expect(CSRFMiddleware.multipartBoundary(contentType: "multipart/form-data; boundary=\"a b\"") == "a b")
        #expect(CSRFMiddleware.multipartBoundary(contentType: "application/json") == nil)
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
