import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// Who makes a request in the authorization tables: nobody, one of alpha's members, the admin, or bravo's manager.
enum Role: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case anonymous, author, reviewer, manager, admin, outsider

    var email: String? { self == .anonymous ? nil : "\(rawValue)@test.org" }
    var testDescription: String { rawValue }
}

/// The seed of `TestApp` plus what the route tables need: a second waypoint, a spare user, an admin API token.
struct RichSeed: Sendable {
    let alphaId: Int64
    let bravoId: Int64
    let tourId: Int64
    /// "Fish Lake", order 1.
    let waypointId: Int64
    /// "Summit", order 2.
    let secondWaypointId: Int64
    let authorId: Int64
    let spareId: Int64
    let adminTokenId: Int64
    /// A tour of bravo, where the outsider is manager.
    let bravoTourId: Int64

    // What `TestApp.routeSeeded()` adds (media, uploads, publishing); zero or empty in the plain seed.

    /// A clean PNG on Fish Lake, first; its file is in the data folder.
    var assetId: Int64 = 0
    /// A clean text file on Fish Lake, second.
    var secondAssetId: Int64 = 0
    /// A clean MP4 video on Fish Lake, third, with clean WebVTT captions.
    var videoAssetId: Int64 = 0
    /// A tus upload of `RouteFixtures.tusPNG` by alpha's author to Fish Lake, nothing received yet.
    var uploadId = ""
    /// A GeoJSON import waiting for its preview on the tour (`uploads/import-…`).
    var importId = ""
    /// "Lake Loop" of alpha: versions 1 and 2 released (package `packageId`, visible, serving 2) and version 3 pending review.
    var publishedTourId: Int64 = 0
    var packageId = ""
    var pendingRequestId = ""
    /// "Crater Rim" of alpha: version 1 released then unpublished (package `hiddenPackageId`), version 2 approved and ready.
    var readyTourId: Int64 = 0
    var hiddenPackageId = ""
    var readyRequestId = ""
    /// `z/x/y` of a tile inside the frame that the packages of "Lake Loop" hold.
    var tile = ""

    /// Fills `{tour}`, `{wp}`, `{wp2}`, `{author}`, `{spare}`, `{alpha}`, `{adminToken}`, `{bravoTour}` in a path or body,
    /// and `{asset}`, `{asset2}`, `{video}`, `{upload}`, `{import}`, `{pubTour}`, `{pkg}`, `{pending}`, `{readyTour}`, `{hiddenPkg}`, `{ready}`, `{tile}`.
    func fill(_ text: String) -> String {
        var text = text
        for (key, value) in [
            ("tour", tourId), ("wp2", secondWaypointId), ("wp", waypointId), ("author", authorId), ("spare", spareId),
            ("alpha", alphaId), ("adminToken", adminTokenId), ("bravoTour", bravoTourId), ("asset2", secondAssetId), ("video", videoAssetId),
            ("asset", assetId), ("pubTour", publishedTourId), ("readyTour", readyTourId),
        ] {
            text = text.replacingOccurrences(of: "{\(key)}", with: "\(value)")
        }
        for (key, value) in [
            ("upload", uploadId), ("import", importId), ("pkg", packageId), ("pending", pendingRequestId),
            ("hiddenPkg", hiddenPackageId), ("ready", readyRequestId), ("tile", tile),
        ] {
            text = text.replacingOccurrences(of: "{\(key)}", with: value)
        }
        return text
    }
}

extension TestApp {
    /// A fresh app on a copy of a database seeded once per test run (`richSeed`): the same rows and ids as seeding
    /// anew, at a fraction of the cost, for the tables that build hundreds of apps.
    static func seeded(configure: (inout AppConfig) -> Void = { _ in }) async throws -> (TestApp, RichSeed) {
        let (template, seed) = try await SeededTemplate.database.value
        return (try await copying(template, dataFolder: nil, configure: configure), seed)
    }

    /// Like `seeded()`, on a copy of `RouteTemplate`: the rich seed plus assets, a tus upload, an import, publish requests
    /// and released packages, with their files copied into the new app's data folder.
    static func routeSeeded(configure: (inout AppConfig) -> Void = { _ in }) async throws -> (TestApp, RichSeed) {
        let (template, seed, dataFolder) = try await RouteTemplate.database.value
        return (try await copying(template, dataFolder: dataFolder, configure: configure), seed)
    }

    /// An app on a copy of `template` (and of `dataFolder`'s files, if given) in a new data folder.
    private static func copying(_ template: DatabaseQueue, dataFolder: URL?, configure: (inout AppConfig) -> Void = { _ in }) async throws -> TestApp
    {
        let copy = try DatabaseAccess.opening {
            let copy = try DatabaseQueue(configuration: AppDatabase.configuration(onBlockingAccess: DatabaseAccess.debugHandler))
            try template.backup(to: copy)
            return copy
        }
        var config = AppConfig()
        config.root = projectRoot
        config.dataFolder = TestScratch.folder("trail-test")
        config.bcryptCost = 4
        // Off unless a test turns it on: most tests upload made-up bytes that no converter could read.
        config.mediaOptimization.enabled = false
        // As in `TestApp.make`: the suites sign in as the admin with a password alone.
        config.twoStepRequirement = .none
        configure(&config)
        if let dataFolder { try FileManager.default.copyItem(at: dataFolder, to: config.dataFolder) }
        let database = try AppDatabase(copy, migrationsFolder: config.migrationsFolder)
        let views = try await SeededTemplate.views.value
        return await TestApp(dependencies: try AppDependencies(config: config, database: database, views: views))
    }

    func richSeed() async throws -> RichSeed {
        let seed = try await seed()
        let system = AuditActor.system
        let second = try await database.createWaypoint(
            tourId: seed.tourId,
            WaypointInput(
                name: "Summit",
                description: "The top.",
                latitude: 44.41,
                longitude: -122.15
            ),
            actor: system
        )
        let spare = try await database.createUser(
            email: "spare@test.org",
            displayName: "Spare",
            password: TestApp.password,
            isAdmin: false,
            bcryptCost: 4,
            actor: system
        )
        let admin = try #require(try await database.user(email: "admin@test.org"))
        let (_, token) = try await database.createAPIToken(userId: admin.id, name: "admin script", actor: system)
        let bravoTour = try await database.createTour(siteId: seed.bravoId, TourInput(name: "Bravo Loop", description: ""), actor: system)
        return RichSeed(
            alphaId: seed.alphaId,
            bravoId: seed.bravoId,
            tourId: seed.tourId,
            waypointId: seed.waypointId,
            secondWaypointId: second.id,
            authorId: try #require(try await database.user(email: "author@test.org")).id,
            spareId: spare.id,
            adminTokenId: token.id,
            bravoTourId: bravoTour.id
        )
    }

    /// A fresh bearer token for a seeded user.
    func token(for email: String, name: String = "test") async throws -> String {
        let user = try #require(try await database.user(email: email))
        return try await database.createAPIToken(userId: user.id, name: name, actor: .system).token
    }
}

enum SeededTemplate {
    static let views = Task { try await ViewRenderer(templatesFolder: projectRoot.appendingPathComponent("Templates")) }
    // Detached: the template outlives the test that first asks for it, so it takes no test's scratch scope.
    static let database = Task.detached { () throws -> (DatabaseQueue, RichSeed) in
        let app = try await TestApp.make()
        let seed = try await app.richSeed()
        let queue = try #require(app.database.writer as? DatabaseQueue)
        return (queue, seed)
    }
}

extension AppDatabase {
    /// Every row the app may write, as text, to prove that a refused request changed nothing.
    /// `lastSeenAt` and `lastUsedAt` are left out: they are bookkeeping of reads, not changes.
    func snapshot() async throws -> [String] {
        try await read { db in
            var lines: [String] = []
            let tables: [(String, String)] = [
                ("user", "*"), ("site", "*"), ("membership", "*"), ("tour", "*"), ("waypoint", "*"),
                ("apiToken", "id, userId, name, tokenHash, createdAt, revokedAt"),
                ("session", "tokenHash, userId, csrfToken, createdAt"),
                ("auditEvent", "*"), ("loginFailure", "*"),
                ("asset", "*"), ("scanJob", "*"), ("upload", "*"), ("tourTileset", "*"), ("tileSettings", "*"),
                ("publishRequest", "*"), ("review", "*"), ("buildJob", "*"), ("package", "*"), ("packageVersion", "*"),
                ("catalogState", "*"), ("invitation", "*"), ("outbox", "*"), ("alert", "*"),
            ]
            for (table, columns) in tables {
                lines += try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) ORDER BY rowid").map { "\(table) \($0)" }
            }
            return lines
        }
    }

    /// Expects the database to be as `before`, naming the rows that differ when it is not.
    func expectUnchanged(since before: [String], _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let after = try await snapshot()
        let removed = before.filter { !after.contains($0) }
        let added = after.filter { !before.contains($0) }
        #expect(removed.isEmpty && added.isEmpty, "\(what) changed the database: removed \(removed), added \(added)", sourceLocation: sourceLocation)
    }

    func auditCount() async throws -> Int {
        try await read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM auditEvent") ?? 0 }
    }

    func actions(since id: Int64 = 0) async throws -> [String] {
        try await read { try String.fetchAll($0, sql: "SELECT action FROM auditEvent WHERE id > ? ORDER BY id", arguments: [id]) }
    }

    func lastAuditId() async throws -> Int64 {
        try await read { try Int64.fetchOne($0, sql: "SELECT COALESCE(MAX(id), 0) FROM auditEvent") ?? 0 }
    }

    /// Rows of a query, for assertions. `Row.fetchAll` copies each row whole, so they are plain values once fetched
    /// (GRDB does not mark `Row` Sendable, hence the box).
    func rows(_ sql: String, _ arguments: StatementArguments = []) async throws -> [Row] {
        struct Fetched: @unchecked Sendable { let rows: [Row] }
        return try await read { Fetched(rows: try Row.fetchAll($0, sql: sql, arguments: arguments)) }.rows
    }

    func execute(_ sql: String, _ arguments: StatementArguments = []) async throws {
        try await write { try $0.execute(sql: sql, arguments: arguments) }
    }

    func scalar<T: DatabaseValueConvertible & Sendable>(_ sql: String, _ arguments: StatementArguments = []) async throws -> T? {
        try await read { try T.fetchOne($0, sql: sql, arguments: arguments) }
    }
}

extension TestClientProtocol {
    /// Any method, with the session's cookies; `csrfHeader` adds `X-CSRF-Token`; a `form` gets the session's `_csrf` field added.
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        session: BrowserSession?,
        json: String? = nil,
        form: [(String, String)]? = nil,
        csrfHeader: String? = nil,
        accept: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        var body = json.map { ByteBuffer(string: $0) }
        if let session, !session.cookies.isEmpty { headers[.cookie] = session.cookieHeader }
        if json != nil { headers[.contentType] = "application/json" }
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            let fields = form + (session.map { [("_csrf", $0.csrf)] } ?? [])
            body = ByteBuffer(string: fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&"))
        }
        if let csrfHeader { headers[HTTPField.Name("X-CSRF-Token")!] = csrfHeader }
        if let accept { headers[.accept] = accept }
        return try await execute(uri: uri, method: method, headers: headers, body: body)
    }

    /// What the panel's `postForm` (Public/js/panel.js) sends: form fields, the token in `X-CSRF-Token`, and `Accept: application/json`.
    func script(_ uri: String, _ fields: [(String, String)], session: BrowserSession) async throws -> TestResponse {
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        let headers: HTTPFields = [
            .cookie: session.cookieHeader, .contentType: "application/x-www-form-urlencoded;charset=UTF-8",
            HTTPField.Name("X-CSRF-Token")!: session.csrf, .accept: "application/json",
        ]
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Follows one redirect in the same browser (picking up the flash cookie) and returns the page it leads to.
    func follow(_ response: TestResponse, session: inout BrowserSession) async throws -> TestResponse {
        session.absorb(response)
        let location = try #require(response.location, "expected a redirect, got \(response.status)")
        // A browser keeps the fragment to itself.
        let page = try await get(String(location.prefix { $0 != "#" }), session: session)
        session.absorb(page)
        return page
    }

    /// An anonymous browser that has loaded the sign-in page (so it holds the double-submit CSRF cookie).
    func anonymousBrowser() async throws -> BrowserSession {
        var session = BrowserSession()
        session.absorb(try await execute(uri: "/login", method: .get))
        return session
    }
}

/// The payload that goes into every text field.
enum Payload {
    static let raw = #"X<script>alert(1)</script>"><img src=x onerror=alert(1)>{{mustache}}'single'"#
    static let escaped = html(raw)

    /// The same escaping as swift-mustache's `{{value}}`.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    /// Asserts the page shows the payload escaped and never raw.
    static func expectEscaped(_ html: String, _ where_: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let escapedShown = html.contains(escaped)
        #expect(escapedShown, "\(where_): escaped payload missing", sourceLocation: sourceLocation)
        for raw in ["<script>alert(1)", "</script>\"", "\"><img", "<img src=x", "'single'"] {
            let rawShown = html.contains(raw)
            #expect(!rawShown, "\(where_): raw \(raw) present", sourceLocation: sourceLocation)
        }
    }
}

/// Reads the server's HTML the way a person sees a form: which message sits next to which field.
enum HTML {
    /// The message of the `invalid-feedback` element right after the input, textarea or select named `field`,
    /// provided that control is marked `is-invalid`. Nil when the field has no message.
    static func fieldError(_ html: String, field: String) -> String? {
        guard let nameRange = html.range(of: "name=\"\(field)\"") else { return nil }
        // The control's opening tag.
        let tagStart = html[..<nameRange.lowerBound].range(of: "<", options: .backwards)!.lowerBound
        let tagEnd = html[nameRange.upperBound...].range(of: ">")!.upperBound
        let tag = html[tagStart..<tagEnd]
        guard tag.contains("is-invalid") else { return nil }
        // The feedback must come before the next control.
        let rest = html[tagEnd...]
        let nextControl = rest.range(of: "name=\"")?.lowerBound ?? rest.endIndex
        guard let open = rest.range(of: "class=\"invalid-feedback"), open.lowerBound < nextControl,
            let textStart = rest[open.upperBound...].range(of: ">")?.upperBound,
            let textEnd = rest[textStart...].range(of: "</div>")?.lowerBound
        else { return nil }
        return String(rest[textStart..<textEnd])
    }

    /// The text of the element with this id.
    static func element(_ html: String, id: String) -> String? {
        guard let start = html.range(of: "id=\"\(id)\""),
            let textStart = html[start.upperBound...].range(of: ">")?.upperBound,
            let textEnd = html[textStart...].range(of: "</")?.lowerBound
        else { return nil }
        return String(html[textStart..<textEnd])
    }

    /// The `value` attribute of the input named `field`.
    static func value(_ html: String, field: String) -> String? {
        guard let nameRange = html.range(of: "name=\"\(field)\""),
            let tagEnd = html[nameRange.upperBound...].range(of: ">")
        else { return nil }
        let tagStart = html[..<nameRange.lowerBound].range(of: "<", options: .backwards)!.lowerBound
        let tag = html[tagStart..<tagEnd.lowerBound]
        guard let valueStart = tag.range(of: "value=\"")?.upperBound, let valueEnd = tag[valueStart...].range(of: "\"") else { return nil }
        return String(tag[valueStart..<valueEnd.lowerBound])
    }
}

extension TestResponse {
    /// `error.fields` of an API error body.
    var errorFields: [String: String] {
        ((json as? [String: Any])?["error"] as? [String: Any])?["fields"] as? [String: String] ?? [:]
    }

    var errorCode: String? { ((json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { ((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String }

    var jsonObject: [String: Any] { json as? [String: Any] ?? [:] }

    /// Every `Set-Cookie` header value.
    var setCookies: [String] { headers.filter { $0.name == .setCookie }.map(\.value) }
}
