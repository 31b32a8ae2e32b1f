import Foundation
import HTTPTypes
import HummingbirdTesting
import ObjectStorage
import Testing

@testable import TrailServer

/// Headers on every kind of answer (pages, redirects, errors, API, static files); cookie flags; pages that need no inline script
/// and, with no tile server configured, no outside host.
@Suite struct SecurityHeadersTests {
    static func expectSecurityHeaders(_ response: TestResponse, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let csp = response.headers[.contentSecurityPolicy] ?? ""
        let directives = Dictionary(
            csp.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.map {
                (String($0.prefix { $0 != " " }), String($0.drop { $0 != " " }).trimmingCharacters(in: .whitespaces))
            },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(
            directives["script-src"] == "'self'",
            "\(what): script-src is \(directives["script-src"] ?? "missing")",
            sourceLocation: sourceLocation
        )
        #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "\(what): \(csp)", sourceLocation: sourceLocation)
        #expect(directives["frame-ancestors"] == "'none'", "\(what)", sourceLocation: sourceLocation)
        #expect(directives["object-src"] == "'none'", "\(what)", sourceLocation: sourceLocation)
        #expect(directives["default-src"] == "'self'", "\(what)", sourceLocation: sourceLocation)
        #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(what)", sourceLocation: sourceLocation)
        #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin", "\(what)", sourceLocation: sourceLocation)
        #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY", "\(what)", sourceLocation: sourceLocation)
    }

    @Test func everyKindOfAnswerCarriesTheHeaders() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let token = try await app.token(for: "author@test.org")
            let answers: [(String, TestResponse, Int)] = [
                ("sign-in page", try await client.get("/login", session: nil), 200),
                ("tour page", try await client.get("/tours/\(seed.tourId)", session: browser), 200),
                ("redirect to sign in", try await client.get("/sites", session: nil), 303),
                ("forbidden page", try await client.get("/admin/users", session: browser), 403),
                ("unknown page", try await client.get("/no/such/page", session: browser), 404),
                ("validation page", try await client.post("/tours/\(seed.tourId)/frame", form: ["north": "x"], session: browser), 422),
                ("CSRF refusal", try await client.post("/tours/\(seed.tourId)/delete", form: [:], session: browser, csrf: "forged"), 403),
                ("API answer", try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: token), 200),
                ("API 401", try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: nil), 401),
                ("API 404", try await client.api(.get, "/api/v1/manage/tours/999", token: token), 404),
                ("API 204", try await client.api(.delete, "/api/v1/manage/tours/\(seed.tourId)/waypoints/\(seed.waypointId)", token: token), 204),
                ("static file", try await client.get("/static/css/app.css", session: nil), 200),
                ("health", try await client.get("/healthz", session: nil), 200),
            ]
            for (what, response, status) in answers {
                #expect(response.status.code == status, "\(what): \(response.status)")
                Self.expectSecurityHeaders(response, what)
            }
        }
    }

    /// The router's own list, not a list kept by hand: a route added tomorrow is asked too. Each is asked on a live
    /// server (the one `serve` runs), by nobody and, for a read, by the admin too; a read is asked twice, as a phone
    /// polling it does. Path parameters take the
    /// seed's ids, so many answers are real pages; refusals and 404s must carry the headers just the same.
    @Test("every route of the router answers with the same security headers: anonymous and as the admin, asked twice, on the live server")
    func everyRouteCarriesTheHeaders() async throws {
        let (app, seed) = try await TestApp.seeded()
        let routes = buildRouter(app.dependencies).routes.map { (method: $0.method, path: $0.path.description) }
        #expect(routes.count >= 150, "the router lists only \(routes.count) routes")
        let values = [
            "id": "\(seed.tourId)", "tid": "\(seed.tourId)", "wid": "\(seed.waypointId)", "slug": "alpha", "site": "alpha",
            "z": "12", "x": "654", "y": "1477",
        ]
        @Sendable func concrete(_ path: String) -> String {
            path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
                guard segment.hasPrefix("{") || segment.hasPrefix(":") else { return String(segment) }
                let name = segment.trimmingCharacters(in: CharacterSet(charactersIn: "{}:"))
                return values[name] ?? "1"
            }.joined(separator: "/")
        }
        let token = try await app.token(for: "admin@test.org")
        try await app.test(.live) { client in
            let admin = try await client.signIn("admin@test.org")
            var asked = 0
            var pages = 0
            for route in routes {
                let uri = concrete(route.path)
                // Without credentials, as a phone asks.
                for round in 1...(route.method == .get ? 2 : 1) {
                    let anonymous = try await client.execute(uri: uri, method: route.method)
                    Self.expectSecurityHeaders(anonymous, "\(route.method) \(uri), anonymous, round \(round) (\(anonymous.status.code))")
                    asked += 1
                }
                guard route.method == .get else { continue }
                for round in 1...2 {
                    let response =
                        uri.hasPrefix("/api/")
                        ? try await client.api(.get, uri, token: token)
                        : try await client.get(uri, session: admin)
                    Self.expectSecurityHeaders(response, "GET \(uri), admin, round \(round) (\(response.status.code))")
                    asked += 1
                    if response.status == .ok { pages += 1 }
                }
            }
            #expect(asked > routes.count)
            // Real answers among the refusals: the seed's ids reach the pages and documents of many read routes.
            #expect(pages >= 50, "only \(pages) answers were 200 of \(asked) for \(routes.count) routes")
        }
    }

    @Test func tileServerIsTheOnlyOutsideOriginAllowed() async throws {
        // Without the panel maps' default basemap (EditorBasemapTests covers it).
        let (plain, seed) = try await TestApp.seeded { $0.editorTileURL = "none" }
        try await plain.test { client in
            let page = try await client.get("/tours/\(seed.tourId)", session: try await client.signIn("author@test.org"))
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(!csp.contains("http"), "no outside host without a tile server: \(csp)")
            #expect(page.text.contains("&quot;tileURL&quot;:null") || !page.text.contains("tileURL&quot;:&quot;"))
            for attribute in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"] {
                #expect(!page.text.contains(attribute), "the page refers to an outside host: \(attribute)")
            }
        }
        let (tiled, _) = try await TestApp.seeded { $0.tileURLTemplate = "https://{s}.tile.example.org/{z}/{x}/{y}.png" }
        try await tiled.test { client in
            let page = try await client.get("/tours/\(seed.tourId)", session: try await client.signIn("author@test.org"))
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(csp.contains("img-src 'self' data: blob: https://*.tile.example.org;"), "\(csp)")
            #expect(page.text.contains("https://{s}.tile.example.org/{z}/{x}/{y}.png"))
            Self.expectSecurityHeaders(page, "tiled tour page")
        }
    }

    @Test func thePublicDownloadOriginIsTheOnlyOutsidePlaceToConnectTo() async throws {
        #expect(SecurityHeadersMiddleware.origin(of: "https://cdn.example.org/prod") == "https://cdn.example.org")
        #expect(SecurityHeadersMiddleware.origin(of: "http://127.0.0.1:8333/park-tours/prod") == "http://127.0.0.1:8333")
        #expect(SecurityHeadersMiddleware.origin(of: "not a url") == nil)
        let (app, _) = try await TestApp.seeded {
            // A bucket nobody answers at: only the header is looked at here.
            $0.storage = StorageSettings(
                location: StorageLocation(bucket: "park-tours", prefix: "prod"),
                endpoint: URL(string: "http://127.0.0.1:9"),
                credentials: S3Credentials(accessKeyId: "key", secretAccessKey: "secret"),
                publicDownloadURL: "https://cdn.example.org/prod/"
            )
        }
        try await app.test { client in
            let page = try await client.get("/visit", session: nil)
            let csp = try #require(page.headers[.contentSecurityPolicy])
            #expect(csp.contains("connect-src 'self' https://cdn.example.org;"), "\(csp)")
            #expect(csp.contains("script-src 'self';"), "\(csp)")
            #expect(csp.contains("form-action 'self';"), "\(csp)")
        }
    }

    @Test func theSignInProviderIsWhereSigningOutMayGo() async throws {
        let (app, _) = try await TestApp.seeded {
            $0.oidc = OIDCSettings(issuer: "https://login.agency.gov/realms/parks", clientId: "trail", clientSecretFile: "/nonexistent")
        }
        try await app.test { client in
            let csp = try #require(try await client.get("/login", session: nil).headers[.contentSecurityPolicy])
            #expect(csp.contains("form-action 'self' https://login.agency.gov;"), "\(csp)")
            #expect(csp.contains("connect-src 'self';"), "\(csp)")
        }
    }

    /// The CSP forbids inline script, so the pages must not need any: no `<script>` without `src`, no `on…=` handlers.
    @Test func pagesHaveNoInlineScript() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let admin = try await client.signIn("admin@test.org")
            let paths = [
                "/login", "/sites", "/sites/alpha", "/sites/alpha/members", "/sites/alpha/tours/new", "/tours/\(seed.tourId)",
                "/tours/\(seed.tourId)/edit", "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)", "/account/password", "/account/tokens",
                "/admin/users", "/admin/sites", "/admin/sites/\(seed.alphaId)", "/admin/audit", "/no/such/page",
            ]
            for path in paths {
                let html = try await client.get(path, session: path == "/login" ? nil : admin).text
                #expect(html.contains("<html"), "\(path) is a page")
                let inline = html.range(of: #"<script(?![^>]*\bsrc=)[^>]*>"#, options: .regularExpression)
                #expect(inline == nil, "\(path) has an inline script")
                let handler = html.range(of: #"\son[a-z]+\s*=\s*""#, options: [.regularExpression, .caseInsensitive])
                #expect(handler == nil, "\(path) has an inline event handler")
                #expect(!html.contains("javascript:"), "\(path) has a javascript: URL")
                #expect(!html.contains("style=\""), "\(path) has an inline style (style-src is 'self')")
            }
        }
    }

    @Test func cookiesAreHttpOnlyAndSameSiteLax() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            var browser = BrowserSession()
            browser.absorb(page)
            let signIn = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            browser.absorb(signIn)
            let logout = try await client.post("/logout", form: [:], session: try await client.signIn("author@test.org"))
            let cookies = page.setCookies + signIn.setCookies + logout.setCookies
            for name in ["tc_csrf", "tc_session", "tc_flash"] {
                let matching = cookies.filter { $0.hasPrefix("\(name)=") }
                #expect(!matching.isEmpty, "\(name) was set")
                for cookie in matching {
                    #expect(cookie.contains("HttpOnly"), "\(cookie)")
                    #expect(cookie.contains("SameSite=Lax"), "\(cookie)")
                    #expect(cookie.contains("Path=/"), "\(cookie)")
                    #expect(!cookie.contains("Secure"), "plain http: \(cookie)")
                }
            }
        }
    }

    @Test func cookiesAreSecureWhenThePublicURLIsHTTPS() async throws {
        let (app, _) = try await TestApp.seeded { $0.publicURL = "https://trails.example.org" }
        try await app.test { client in
            let page = try await client.execute(uri: "/login", method: .get)
            var browser = BrowserSession()
            browser.absorb(page)
            let signIn = try await client.post("/login", form: ["email": "author@test.org", "password": TestApp.password], session: browser)
            browser.absorb(signIn)
            browser.absorb(try await client.get("/sites", session: browser))
            let logout = try await client.post("/logout", form: [:], session: browser)
            let cookies: [String] = page.setCookies + signIn.setCookies + logout.setCookies
            // Plain loops: the compiler (6.3.1) crashed on closures inside #expect here.
            var sessionSet = false
            for cookie in cookies where cookie.hasPrefix("tc_session=") && cookie.count > 60 { sessionSet = true }
            #expect(sessionSet)
            for name in ["tc_csrf", "tc_session", "tc_flash"] {
                var found = 0
                for cookie in cookies where cookie.hasPrefix(name + "=") {
                    found += 1
                    let secure = cookie.contains("Secure")
                    let flags = cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax")
                    #expect(secure, "\(cookie)")
                    #expect(flags, "\(cookie)")
                }
                #expect(found > 0, "\(name) was set")
            }
        }
    }

    @Test func pagesAndAPIAnswersAreNotCached() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let page = try await client.get("/tours/\(seed.tourId)", session: try await client.signIn("author@test.org"))
            #expect(page.headers[.cacheControl] == "no-store")
            let api = try await client.api(.get, "/api/v1/manage/tours/\(seed.tourId)", token: app.token(for: "author@test.org"))
            #expect(api.headers[.cacheControl] == "no-store")
        }
    }
}
