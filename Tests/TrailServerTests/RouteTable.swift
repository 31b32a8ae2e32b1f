import Foundation
import HTTPTypes
import PackageFormat
import Testing

/// What one role should get from one route.
enum Outcome: Sendable, Equatable, CustomStringConvertible {
    /// This status code, with no further condition.
    case status(Int)
    /// 303 to a location starting with this prefix (the route did its job).
    case redirect(String)
    /// 303 to the sign-in page (a page asked for by nobody).
    case signIn

    static let ok = Outcome.status(200)
    static let created = Outcome.status(201)
    static let noContent = Outcome.status(204)
    static let unauthorized = Outcome.status(401)
    static let forbidden = Outcome.status(403)
    static let notFound = Outcome.status(404)

    /// Refusals must leave the database exactly as it was.
    var isRefusal: Bool {
        switch self {
        case .signIn: true
        case .status(let code): code >= 400
        case .redirect: false
        }
    }

    var description: String {
        switch self {
        case .status(let code): "\(code)"
        case .redirect(let prefix): "303 → \(prefix)"
        case .signIn: "303 → /login"
        }
    }
}

/// One route of the panel or the management API, with the outcome expected for each role.
struct RouteCase: Sendable, CustomTestStringConvertible {
    enum Body: Sendable {
        case none
        /// A urlencoded form (CSRF token added by the client); pairs so a name may repeat.
        case form([(String, String)])
        case json(String)
        /// multipart/form-data: text fields, then a part named `file` (the panel's token goes in a first `_csrf` field, as its upload forms send it).
        case multipart([(String, String)], FilePart?)
        /// A tus request: `Tus-Resumable` plus these headers; `Upload-Metadata` from the pairs (filled, then base64);
        /// with data, sent as `application/offset+octet-stream`.
        case tus(headers: [(String, String)], metadata: [(String, String)], data: Data?)
    }

    struct FilePart: Sendable {
        let fileName: String
        let contentType: String
        let data: Data
    }

    let method: HTTPRequest.Method
    /// With placeholders filled by `RichSeed.fill`.
    let path: String
    let body: Body
    /// Through the API with a bearer token (else through pages with a browser session).
    let api: Bool
    let expected: [Role: Outcome]
    /// False for the few requests that change no recorded state when allowed (tus bookkeeping, an import preview,
    /// a dry run), so they need no audit event; their refusals are still checked to change nothing.
    var writesAudit = true
    /// Told apart from another row on the same method and path.
    var note = ""

    var testDescription: String { "\(method) \(path)" + (note.isEmpty ? "" : " (\(note))") }
    /// A change that must write at least one audit event when allowed.
    var isChange: Bool { method != .get && method != .head && method != .options && writesAudit }
}

/// Every route of the panel (pages) and of `/api/v1/manage`, and who may use it.
enum RouteTable {
    // Role groups (pages: anonymous → sign-in page; API: anonymous → 401).

    /// Everyone, signed in or not (public pages).
    static func everybody(_ outcome: Outcome) -> [Role: Outcome] {
        Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, outcome) })
    }

    /// Any signed-in user.
    static func anyone(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, success) })
        map[.anonymous] = api ? .unauthorized : .signIn
        return map
    }

    /// Members of alpha and the admin; the outsider must not learn the object exists.
    static func viewers(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = anyone(success, api: api)
        map[.outsider] = .notFound
        return map
    }

    /// Authors, managers and admin; reviewers may look but not change.
    static func authors(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = viewers(success, api: api)
        map[.reviewer] = .forbidden
        return map
    }

    /// Managers of alpha and the admin.
    static func managers(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = authors(success, api: api)
        map[.author] = .forbidden
        return map
    }

    /// Reviewers and managers of alpha and the admin; never the request's author (alpha's author submitted every request).
    static func reviewers(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = viewers(success, api: api)
        map[.author] = .forbidden
        return map
    }

    /// The request's author (alpha's author), managers of alpha and the admin; a reviewer may only review.
    static func submitter(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        var map = viewers(success, api: api)
        map[.reviewer] = .forbidden
        return map
    }

    /// Only the user who started a tus upload (alpha's author) sees it; to everyone else, the admin too, it does not exist.
    static func uploader(_ success: Outcome) -> [Role: Outcome] {
        var map = anyone(.notFound, api: true)
        map[.author] = success
        return map
    }

    /// Admin only; signed-in others get 403.
    static func admins(_ success: Outcome) -> [Role: Outcome] {
        var map = anyone(.forbidden)
        map[.admin] = success
        return map
    }

    static func page(_ method: HTTPRequest.Method, _ path: String, _ form: [(String, String)] = [], _ expected: [Role: Outcome]) -> RouteCase {
        RouteCase(method: method, path: path, body: method == .get || method == .head ? .none : .form(form), api: false, expected: expected)
    }

    static func api(_ method: HTTPRequest.Method, _ path: String, _ json: String? = nil, _ expected: [Role: Outcome]) -> RouteCase {
        RouteCase(method: method, path: "/api/v1/manage" + path, body: json.map { .json($0) } ?? .none, api: true, expected: expected)
    }

    /// A multipart upload through the panel (`api` false) or the API.
    static func upload(
        _ path: String,
        api: Bool,
        fields: [(String, String)] = [],
        _ file: RouteCase.FilePart,
        writesAudit: Bool = true,
        note: String = "",
        _ expected: [Role: Outcome]
    ) -> RouteCase {
        RouteCase(
            method: .post,
            path: (api ? "/api/v1/manage" : "") + path,
            body: .multipart(fields, file),
            api: api,
            expected: expected,
            writesAudit: writesAudit,
            note: note
        )
    }

    static func tus(
        _ method: HTTPRequest.Method,
        _ path: String,
        headers: [(String, String)] = [],
        metadata: [(String, String)] = [],
        data: Data? = nil,
        writesAudit: Bool = false,
        _ expected: [Role: Outcome]
    ) -> RouteCase {
        RouteCase(
            method: method,
            path: "/api/v1/manage" + path,
            body: .tus(headers: headers, metadata: metadata, data: data),
            api: true,
            expected: expected,
            writesAudit: writesAudit
        )
    }

    static let png = RouteCase.FilePart(fileName: "view.png", contentType: "image/png", data: RouteFixtures.png)
    static let captions = RouteCase.FilePart(fileName: "lake.vtt", contentType: "text/vtt", data: RouteFixtures.captions)
    static let transcript = RouteCase.FilePart(fileName: "lake.txt", contentType: "text/plain", data: Data("Wind over Fish Lake.\n".utf8))
    static let mbtiles = RouteCase.FilePart(fileName: "topo.mbtiles", contentType: "application/octet-stream", data: RouteFixtures.mbtiles)
    static let geoJSON = RouteCase.FilePart(fileName: "stops.geojson", contentType: "application/geo+json", data: RouteFixtures.geoJSON)

    /// The panel's rescan: the admin only, and (as everywhere) the outsider is told the asset does not exist.
    static let rescan: [Role: Outcome] = {
        var map = admins(.redirect("/tours/{tour}/waypoints/{wp}#assets"))
        map[.outsider] = .notFound
        return map
    }()

    static let frame: [(String, String)] = [
        ("north", "44.45"), ("south", "44.35"), ("east", "-121.95"), ("west", "-122.30"),
        ("minZoom", "10"), ("maxZoom", "16"),
    ]

    static let pages: [RouteCase] = [
        page(.get, "/healthz", [], Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, .ok) })),
        // The same answer for everyone (no signatures are loaded in the matrix's app: not ready); ReadinessTests covers the rest.
        page(.get, "/readyz", [], Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, .status(503)) })),
        page(
            .get,
            "/login",
            [],
            {
                var m = anyone(.redirect("/"))
                m[.anonymous] = .ok
                return m
            }()
        ),
        // Signing in needs no rights: anyone (signed in already or not) may sign in as another account with its password.
        page(
            .post,
            "/login",
            [("email", "spare@test.org"), ("password", "correct horse battery")],
            Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, .redirect("/")) })
        ),
        // The second step of a sign-in needs the half-signed-in cookie of a right password (TwoStepTests); without it,
        // everybody is sent back to the sign-in page and nothing is written.
        page(.get, "/login/code", [], everybody(.redirect("/login"))),
        RouteCase(
            method: .post,
            path: "/login/code",
            body: .form([("code", "123456")]),
            api: false,
            expected: everybody(.redirect("/login")),
            writesAudit: false
        ),
        page(.get, "/login/enrol", [], everybody(.redirect("/login"))),
        RouteCase(
            method: .post,
            path: "/login/enrol",
            body: .form([("code", "123456")]),
            api: false,
            expected: everybody(.redirect("/login")),
            writesAudit: false
        ),
        // Single sign-on is off in the matrix's app (OIDCSignInTests runs it against a provider).
        page(.get, "/auth/oidc/start", [], everybody(.notFound)),
        page(.get, "/auth/oidc/callback", [], everybody(.notFound)),
        page(.get, "/", [], anyone(.redirect("/sites"))),
        page(.get, "/sites", [], anyone(.ok)),
        page(.get, "/sites/alpha", [], viewers(.ok)),
        page(.get, "/sites/alpha/members", [], managers(.ok)),
        page(.post, "/sites/alpha/members", [("email", "spare@test.org"), ("role", "reviewer")], managers(.redirect("/sites/alpha/members"))),
        page(.post, "/sites/alpha/members/{author}/remove", [], managers(.redirect("/sites/alpha/members"))),
        // Invitations (no SMTP in the matrix's app: the panel answers 201 with the link to pass on).
        page(.get, "/sites/alpha/invitations", [], managers(.ok)),
        page(.get, "/sites/alpha/settings", [], managers(.ok)),
        page(
            .post,
            "/sites/alpha/settings",
            [("north", "44.5"), ("south", "44.3"), ("east", "-122.0"), ("west", "-122.3"), ("timeZone", "America/Los_Angeles")],
            managers(.redirect("/sites/alpha/settings"))
        ),
        page(.post, "/sites/alpha/invitations", [("email", "friend@test.org"), ("role", "author")], managers(.created)),
        page(.post, "/sites/alpha/invitations/999/revoke", [], managers(.notFound)),
        // Alerts: the site's managers and admins; someone outside the site gets 404, as on every site route.
        page(.get, "/sites/alpha/alerts", [], alertManagers(.ok)),
        page(
            .post,
            "/sites/alpha/alerts",
            [
                ("title", "Bridge out"), ("message", "Use the ford."), ("severity", "closure"), ("tourId", "{tour}"),
                ("closedWaypointIds[]", "{wp}"), ("endsAt", alertFormEnd),
            ],
            alertManagers(.redirect("/sites/alpha/alerts"))
        ),
        page(.post, "/alerts/999999/end", [], anyone(.notFound)),
        // Visitor statistics: managers and admins (every tour), authors (the tours they created); reviewers may not.
        page(.get, "/sites/alpha/stats", [], authors(.ok)),
        page(.get, "/invite/no-such-invitation-token", [], everybody(.status(410))),
        page(.post, "/invite/no-such-invitation-token", [("displayName", "X"), ("password", "a long password")], everybody(.status(410))),
        page(.get, "/account/notifications", [], anyone(.ok)),
        page(.post, "/account/notifications", [("on[]", "approved")], anyone(.redirect("/account/notifications"))),
        page(.get, "/admin/email", [], admins(.ok)),
        page(.get, "/sites/alpha/tours/new", [], authors(.ok)),
        page(.post, "/sites/alpha/tours", [("name", "New Tour"), ("description", "Fresh"), ("mapName", "")], authors(.redirect("/tours/"))),
        page(.get, "/tours/{tour}", [], viewers(.ok)),
        page(.get, "/tours/{tour}/status", [], viewers(.ok)),
        page(.get, "/tours/{tour}/edit", [], authors(.ok)),
        page(
            .post,
            "/tours/{tour}/languages",
            [("defaultLanguage", "en"), ("language[]", "es"), ("language[]", "fr")],
            authors(.redirect("/tours/{tour}/edit"))
        ),
        page(
            .post,
            "/tours/{tour}/text/es",
            [("name", "Paseo de la cresta"), ("description", "Un paseo.")],
            authors(.redirect("/tours/{tour}/edit?lang=es"))
        ),
        page(.post, "/tours/{tour}/waypoints/{wp}/text/es", [("name", "Lago Fish")], authors(.redirect("/tours/{tour}/waypoints/{wp}?lang=es"))),
        page(
            .post,
            "/tours/{tour}/edit",
            [("name", "Renamed Walk"), ("description", "New text"), ("mapName", "renamed-walk")],
            authors(.redirect("/tours/{tour}"))
        ),
        page(.post, "/tours/{tour}/frame", frame, authors(.redirect("/tours/{tour}"))),
        page(
            .post,
            "/tours/{tour}/accessibility",
            [("surface", "compacted"), ("minWidthCm", "120"), ("stepFree", "yes"), ("notes", "One bench at the viewpoint.")],
            authors(.redirect("/tours/{tour}#trail-facts"))
        ),
        page(.post, "/tours/{tour}/delete", [], authors(.redirect("/sites/alpha"))),
        page(
            .post,
            "/tours/{tour}/waypoints",
            [("name", "Midway"), ("latitude", "44.39"), ("longitude", "-122.10"), ("description", "")],
            authors(.redirect("/tours/{tour}#waypoints"))
        ),
        page(.post, "/tours/{tour}/waypoints/order", [("ids[]", "{wp2}"), ("ids[]", "{wp}")], authors(.redirect("/tours/{tour}#waypoints"))),
        page(.get, "/tours/{tour}/waypoints/{wp}", [], viewers(.ok)),
        page(
            .post,
            "/tours/{tour}/waypoints/{wp}",
            [("name", "Fish Lake East"), ("latitude", "44.40"), ("longitude", "-122.01"), ("description", "x")],
            authors(.redirect("/tours/{tour}/waypoints/{wp}"))
        ),
        page(
            .post,
            "/tours/{tour}/waypoints/{wp}/move",
            [("latitude", "44.38"), ("longitude", "-122.05")],
            authors(.redirect("/tours/{tour}#waypoints"))
        ),
        page(.post, "/tours/{tour}/waypoints/{wp}/down", [], authors(.redirect("/tours/{tour}#waypoint-{wp}"))),
        page(.post, "/tours/{tour}/waypoints/{wp2}/up", [], authors(.redirect("/tours/{tour}#waypoint-{wp2}"))),
        page(.post, "/tours/{tour}/waypoints/{wp}/delete", [], authors(.redirect("/tours/{tour}#waypoints"))),
        page(.get, "/account/password", [], anyone(.ok)),
        page(
            .post,
            "/account/password",
            [
                ("currentPassword", "correct horse battery"), ("newPassword", "a brand new passphrase"),
                ("confirmPassword", "a brand new passphrase"),
            ],
            anyone(.redirect("/"))
        ),
        page(.get, "/account/tokens", [], anyone(.ok)),
        page(.post, "/account/tokens", [("name", "import script")], anyone(.created)),
        // Another user's token: only its owner (the admin) may revoke it; everyone else is told it does not exist.
        page(
            .post,
            "/account/tokens/{adminToken}/revoke",
            [],
            {
                var m = anyone(.notFound)
                m[.admin] = .redirect("/account/tokens")
                return m
            }()
        ),
        page(.get, "/account/two-step", [], anyone(.ok)),
        page(.post, "/account/two-step/start", [], anyone(.redirect("/account/two-step"))),
        // Confirming needs a set-up in progress (a fresh app has none: 409, nothing written); TwoStepTests confirms for real.
        page(.post, "/account/two-step", [("code", "123456")], anyone(.status(409))),
        page(.get, "/admin/users", [], admins(.ok)),
        page(.post, "/admin/users", [("email", "new@test.org"), ("displayName", "New Ranger"), ("password", "")], admins(.redirect("/admin/users"))),
        page(.post, "/admin/users/{spare}/disable", [], admins(.redirect("/admin/users"))),
        page(.post, "/admin/users/{spare}/enable", [], admins(.redirect("/admin/users"))),
        page(.post, "/admin/users/{spare}/reset-password", [], admins(.ok)),
        page(.post, "/admin/users/{spare}/reset-two-step", [], admins(.redirect("/admin/users"))),
        page(.post, "/admin/users/{spare}/confirm-address", [], admins(.redirect("/admin/users"))),
        page(.get, "/admin/sites", [], admins(.ok)),
        page(
            .post,
            "/admin/sites",
            [("slug", "charlie"), ("name", "Charlie Park"), ("description", ""), ("requiredApprovals", "1")],
            admins(.redirect("/sites/charlie"))
        ),
        page(.get, "/admin/sites/{alpha}", [], admins(.ok)),
        page(
            .post,
            "/admin/sites/{alpha}",
            [("slug", "alpha"), ("name", "Alpha Renamed"), ("description", "d"), ("requiredApprovals", "2")],
            admins(.redirect("/sites/alpha"))
        ),
        // Without single sign-on set up there is nothing to turn off (OIDCSignInTests covers it with a provider).
        page(.post, "/admin/sites/{alpha}/sign-in", [("passwordsOff", "on")], admins(.notFound)),
        page(.get, "/admin/audit", [], admins(.ok)),
        page(.get, "/admin/tiles", [], admins(.ok)),
        page(.get, "/metrics", [], admins(.ok)),
        page(.get, "/reviews", [], anyone(.ok)),
        page(.get, "/tours/{tour}/export.geojson", [], viewers(.ok)),
        page(.get, "/tours/{tour}/export.gpx", [], viewers(.ok)),
        page(.post, "/tours/{tour}/route", [("route", "[[-122.2,44.37],[-122.1,44.41]]")], authors(.redirect("/tours/{tour}"))),
        page(.post, "/logout", [], Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, .redirect("/login")) })),

        // Media
        upload("/tours/{tour}/waypoints/{wp}/assets", api: false, png, authors(.redirect("/tours/{tour}/waypoints/{wp}#assets"))),
        upload(
            "/tours/{tour}/waypoints/{wp}/assets",
            api: false,
            fields: [("replaces", "{asset}")],
            png,
            note: "replace",
            authors(.redirect("/tours/{tour}/waypoints/{wp}#assets"))
        ),
        page(.get, "/assets/{asset}/content", [], viewers(.ok)),
        page(.head, "/assets/{asset}/content", [], viewers(.ok)),
        page(.post, "/assets/{asset}/delete", [], authors(.redirect("/tours/{tour}/waypoints/{wp}#assets"))),
        page(.post, "/assets/{asset}/down", [], authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{asset}"))),
        page(.post, "/assets/{asset2}/up", [], authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{asset2}"))),
        page(.post, "/assets/{asset}/rescan", [], rescan),
        page(.post, "/assets/{asset}/describe", [("title", "The lake")], authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{asset}"))),
        page(.post, "/assets/{asset}/original", [("useOriginal", "1")], authors(.redirect("/tours/{tour}/waypoints/{wp}#assets"))),
        upload("/assets/{video}/captions", api: false, captions, authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{video}"))),
        upload("/assets/{video}/transcript", api: false, transcript, note: "file", authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{video}"))),
        page(
            .post,
            "/assets/{video}/transcript",
            [("text", "Wind over Fish Lake.")],
            authors(.redirect("/tours/{tour}/waypoints/{wp}#asset-{video}"))
        ),

        // Map tiles
        upload("/tours/{tour}/tiles", api: false, mbtiles, authors(.redirect("/tours/{tour}#tiles"))),
        page(.post, "/tours/{tour}/tiles/delete", [], authors(.redirect("/tours/{tour}#tiles"))),
        page(.post, "/admin/tiles", [("urlTemplate", ""), ("attribution", ""), ("tileCap", "50000")], admins(.redirect("/admin/tiles"))),

        // Import (the upload only stores the file for its preview; applying it is the change)
        upload("/tours/{tour}/import", api: false, geoJSON, writesAudit: false, authors(.redirect("/tours/{tour}/import/"))),
        page(.get, "/tours/{tour}/import/{import}", [], authors(.ok)),
        page(.post, "/tours/{tour}/import/{import}/apply", [], authors(.redirect("/tours/{tour}"))),

        // Publishing
        page(.post, "/tours/{tour}/publish", [], authors(.redirect("/requests/"))),
        page(.get, "/requests/{pending}", [], viewers(.ok)),
        page(.get, "/requests/{pending}/assets/0", [], viewers(.ok)),
        page(.get, "/requests/{pending}/assets/1/captions", [], viewers(.ok)),
        page(.get, "/requests/{pending}/preview", [], viewers(.ok)),
        page(.get, "/requests/{pending}/tiles/{tile}", [], viewers(.ok)),
        // The matrix's packages carry no drawn map: 404 for those who may see them, as for everyone else.
        page(.get, "/requests/{pending}/basemap.geojson", [], viewers(.notFound)),
        page(.post, "/requests/{pending}/approve", [("comment", "Looks right.")], reviewers(.redirect("/requests/{pending}"))),
        page(.post, "/requests/{pending}/deny", [("comment", "Move the lake stop.")], reviewers(.redirect("/requests/{pending}"))),
        page(.post, "/requests/{pending}/withdraw", [], submitter(.redirect("/tours/{pubTour}"))),
        page(.post, "/requests/{ready}/push", [], submitter(.redirect("/tours/{readyTour}#publish"))),
        page(.get, "/packages/{pkg}", [], viewers(.ok)),
        page(.post, "/packages/{pkg}/unpublish", [], managers(.redirect("/packages/{pkg}"))),
        page(.post, "/packages/{hiddenPkg}/publish", [], managers(.redirect("/packages/{hiddenPkg}"))),
        page(.post, "/packages/{pkg}/versions/1/serve", [], managers(.redirect("/packages/{pkg}"))),
        page(.get, "/packages/{pkg}/versions/2/preview", [], viewers(.ok)),
        page(.get, "/packages/{pkg}/versions/2/tiles/{tile}", [], viewers(.ok)),
        page(.get, "/packages/{pkg}/versions/2/basemap.geojson", [], viewers(.notFound)),
        // The rangers' guide: public, so the sign-in page can link to it; a name that is no screenshot is not found.
        page(.get, "/help", [], everybody(.ok)),
        page(.get, "/help/screenshots/tour-editor.png", [], everybody(.ok)),
        page(.get, "/help/screenshots/no-such-picture.png", [], everybody(.notFound)),
        // The visitor web player: public, published packages only; the QR code of a released tour's player for its viewers.
        page(.get, "/visit", [], everybody(.ok)),
        page(.get, "/visit/sw.js", [], everybody(.ok)),
        page(.get, "/visit/assets/0000/visit.css", [], everybody(.notFound)),
        page(.get, "/visit/{pkg}", [], everybody(.ok)),
        page(.get, "/visit/{hiddenPkg}", [], everybody(.status(410))),
        page(.get, "/visit/{pkg}/app.webmanifest", [], everybody(.ok)),
        page(.get, "/manage/tours/{pubTour}/qr.svg", [], viewers(.ok)),
        page(.get, "/manage/tours/{pubTour}/qr.png", [], viewers(.ok)),
        page(.get, "/manage/tours/{tour}/qr.png", [], viewers(.status(409))),
        // The print kit: the published version only; the matrix's public address is loopback, so only a proof prints.
        // The drawn map: the matrix's server has no extract and no terrain model, so there is nothing to draw (404 with the
        // reason) for those who may see the tour; the place search answers anyone signed in, with nothing found.
        page(.get, "/tours/{tour}/basemap.geojson", [], viewers(.status(404))),
        page(.get, "/places?q=ridge", [], anyone(.ok)),
        page(.get, "/tours/{pubTour}/print/sign.pdf?draft=1", [], viewers(.ok)),
        page(.get, "/tours/{pubTour}/print/booklet.pdf?draft=1", [], viewers(.ok)),
        page(.get, "/tours/{pubTour}/print/sign.pdf", [], viewers(.status(409))),
        page(.get, "/tours/{tour}/print/booklet.pdf?draft=1", [], viewers(.status(409))),
    ]

    static let apis: [RouteCase] = [
        api(.post, "/sites/alpha/invitations", #"{"email":"friend@test.org","role":"reviewer"}"#, managers(.created, api: true)),
        api(
            .patch,
            "/sites/alpha",
            #"{"timeZone":"Europe/Paris","home":{"north":44.5,"south":44.3,"east":-122.0,"west":-122.3}}"#,
            managers(.ok, api: true)
        ),
        api(.post, "/tours", #"{"site":"alpha","name":"API Tour","description":"by script"}"#, authors(.created, api: true)),
        api(.get, "/tours?site=alpha", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{tour}", nil, viewers(.ok, api: true)),
        api(
            .patch,
            "/tours/{tour}",
            #"{"name":"Patched","frame":{"north":44.45,"south":44.35,"east":-121.95,"west":-122.3},"minZoom":10,"maxZoom":15}"#,
            authors(.ok, api: true)
        ),
        api(.delete, "/tours/{tour}", nil, authors(.noContent, api: true)),
        api(.post, "/tours/{tour}/waypoints", #"{"name":"Midway","latitude":44.39,"longitude":-122.1,"order":1}"#, authors(.created, api: true)),
        api(.patch, "/tours/{tour}/waypoints/{wp}", #"{"name":"Fish Lake East","order":2}"#, authors(.ok, api: true)),
        api(.delete, "/tours/{tour}/waypoints/{wp}", nil, authors(.noContent, api: true)),
        api(.get, "/tours/{tour}/export.geojson", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{tour}/export.gpx", nil, viewers(.ok, api: true)),

        // Media
        upload("/tours/{tour}/waypoints/{wp}/assets", api: true, png, authors(.created, api: true)),
        upload(
            "/tours/{tour}/waypoints/{wp}/assets",
            api: true,
            fields: [("replaces", "{asset}")],
            png,
            note: "replace",
            authors(.created, api: true)
        ),
        api(.get, "/assets/{asset}", nil, viewers(.ok, api: true)),
        api(.patch, "/assets/{asset}", #"{"title":"The lake"}"#, authors(.ok, api: true)),
        upload("/assets/{video}/captions", api: true, captions, authors(.created, api: true)),
        upload("/assets/{video}/transcript", api: true, transcript, note: "file", authors(.created, api: true)),
        api(.post, "/assets/{video}/transcript", #"{"text":"Wind over Fish Lake."}"#, authors(.created, api: true)),

        // tus: discovery needs no sign-in; creating is for those who may change the tour; an upload is its creator's alone.
        // Only the last PATCH makes a change worth recording (the asset); the upload rows are bookkeeping.
        RouteCase(
            method: .options,
            path: "/api/v1/manage/uploads",
            body: .none,
            api: true,
            expected: Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, .noContent) }),
            writesAudit: false
        ),
        tus(
            .post,
            "/uploads",
            headers: [("Upload-Length", "\(RouteFixtures.png.count)")],
            metadata: [("tour", "{tour}"), ("waypoint", "{wp}"), ("filename", "view.png")],
            authors(.created, api: true)
        ),
        tus(.head, "/uploads/{upload}", uploader(.ok)),
        tus(.patch, "/uploads/{upload}", headers: [("Upload-Offset", "0")], data: RouteFixtures.tusPNG, writesAudit: true, uploader(.noContent)),
        tus(.delete, "/uploads/{upload}", uploader(.noContent)),

        // Map tiles
        upload("/tours/{tour}/tiles", api: true, mbtiles, authors(.created, api: true)),
        api(.get, "/tours/{tour}/tiles", nil, viewers(.ok, api: true)),
        api(.delete, "/tours/{tour}/tiles", nil, authors(.noContent, api: true)),

        // Import
        upload("/tours/{tour}/import", api: true, geoJSON, authors(.ok, api: true)),
        upload("/tours/{tour}/import?dryRun=true", api: true, geoJSON, writesAudit: false, authors(.ok, api: true)),

        // Publishing
        api(.post, "/tours/{tour}/publish", nil, authors(.status(202), api: true)),
        api(.get, "/publish-requests/{pending}", nil, viewers(.ok, api: true)),
        api(.post, "/publish-requests/{pending}/approve", nil, reviewers(.ok, api: true)),
        api(.post, "/publish-requests/{pending}/deny", #"{"comment":"Move the lake stop."}"#, reviewers(.ok, api: true)),
        api(.post, "/publish-requests/{pending}/withdraw", nil, submitter(.ok, api: true)),
        api(.post, "/publish-requests/{ready}/push", nil, submitter(.ok, api: true)),
        api(.get, "/tours/{pubTour}/qr.svg", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{pubTour}/qr.png", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{tour}/basemap.geojson", nil, viewers(.status(404), api: true)),
        api(.get, "/places?q=ridge", nil, anyone(.ok, api: true)),
        api(.get, "/places?q=r", nil, anyone(.status(422), api: true)),
        api(.get, "/tours/{pubTour}/print/sign.pdf?size=a2&draft=1", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{pubTour}/print/booklet.pdf?paper=a4&draft=1", nil, viewers(.ok, api: true)),
        api(.get, "/tours/{pubTour}/print/sign.pdf?size=a0&draft=1", nil, viewers(.status(422), api: true)),
        api(.get, "/tours/{tour}/print/sign.pdf?draft=1", nil, viewers(.status(409), api: true)),
        api(.post, "/packages/{pkg}/unpublish", nil, managers(.ok, api: true)),
        api(.post, "/packages/{hiddenPkg}/publish", nil, managers(.ok, api: true)),
        api(.post, "/packages/{pkg}/rollback", #"{"version":1}"#, managers(.ok, api: true)),
        // Alerts: a site's managers and admins; someone outside the site gets 404, as on every site route.
        api(.post, "/sites/alpha/alerts", alertJSON, alertManagers(.created, api: true)),
        api(.get, "/sites/alpha/alerts", nil, alertManagers(.ok, api: true)),
        api(.delete, "/alerts/999999", nil, anyone(.notFound, api: true)),
        // Visitor statistics, as the page: reading them writes nothing.
        api(.get, "/sites/alpha/stats", nil, authors(.ok, api: true)),
        api(.get, "/sites/alpha/stats.csv", nil, authors(.ok, api: true)),
    ]

    /// A valid alert on the matrix's tour, closing Fish Lake, ending a day after the table is first read.
    static let alertJSON =
        #"{"title":"Bridge out","message":"The footbridge is closed.","severity":"closure","tourId":{tour},"closedWaypointIds":[{wp}],"endsAt":""#
        + Manifest.timestamp(Date().addingTimeInterval(86_400)) + #""}"#

    /// The panel form's end (`datetime-local`, UTC): a day after the table is first read.
    static let alertFormEnd = String(Manifest.timestamp(Date().addingTimeInterval(86_400)).prefix(16))

    /// Alerts answer as every site route: `managers` (the outsider, who is no member of alpha, gets 404).
    static func alertManagers(_ success: Outcome, api: Bool = false) -> [Role: Outcome] {
        managers(success, api: api)
    }

    /// Every state-changing route of the panel (for the CSRF table).
    static var panelPosts: [RouteCase] { pages.filter { $0.method == .post } }
}
