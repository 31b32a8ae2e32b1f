import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// The project folder (Templates/, Public/, migrations/), found from this file's path.
let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// One app per test: a real in-memory SQLite database with the real migrations, real templates, real middleware.
struct TestApp {
    let dependencies: AppDependencies
    var database: AppDatabase { dependencies.database }
    var config: AppConfig { dependencies.config }

    /// Users every test can sign in as, on site "alpha"; "bravo" is another site with its own manager.
    static let password = "correct horse battery"

    /// - Parameter scanner: the malware scanner behind the app's scan service; nil means the configured one
    ///   (`makeScanner(config)`: libclamav on `config.clamavDatabaseFolders`, or clamd with `config.clamdAddress`).
    static func make(
        database: AppDatabase? = nil,
        scanner: (any MalwareScanner)? = nil,
        configure: (inout AppConfig) -> Void = { _ in }
    ) async throws -> TestApp {
        var config = AppConfig()
        config.root = projectRoot
        config.dataFolder = TestScratch.folder("trail-test")
        config.bcryptCost = 4
        // Off unless a test turns it on: most tests upload made-up bytes that no converter could read.
        config.mediaOptimization.enabled = false
        // The suites sign in as the admin with a password alone; TwoStepTests turns the requirement on where it tests it.
        config.twoStepRequirement = .none
        configure(&config)
        let database = try database ?? AppDatabase.inMemory(migrationsFolder: config.migrationsFolder)
        let views = try await ViewRenderer(templatesFolder: config.templatesFolder)
        let scans = scanner.map { ScanService(database: database, paths: config.dataPaths, scanner: $0) }
        return await TestApp(dependencies: try AppDependencies(config: config, database: database, views: views, scans: scans))
    }

    /// The router on the server `serve` runs (``HTTPServerBuilder/trail(_:)``), for `.live` tests.
    var application: some ApplicationProtocol {
        Application(router: buildRouter(dependencies), server: .trail(dependencies.config))
    }

    func test(_ setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        if setup.isLive {
            try await application.testLive(body)
        } else {
            try await application.test(setup, body)
        }
    }

    /// A counter's value in the app's Prometheus registry, as `/metrics` would show it (0 when it has no line yet).
    func metric(_ line: String) -> Double {
        var text = [UInt8]()
        dependencies.metrics.registry.emit(into: &text)
        return String(decoding: text, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix(line + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Fixture: admin, and per site an author, a reviewer and a manager; returns the ids.
    @discardableResult
    func seed() async throws -> Seed {
        let system = AuditActor.system
        func user(_ email: String, admin: Bool = false) async throws -> Int64 {
            try await database.createUser(
                email: email,
                displayName: email.components(separatedBy: "@")[0],
                password: Self.password,
                isAdmin: admin,
                bcryptCost: 4,
                actor: system
            ).id
        }
        let alpha = try await database.createSite(
            SiteInput(slug: "alpha", name: "Alpha District", description: "", requiredApprovals: 1),
            actor: system
        )
        let bravo = try await database.createSite(
            SiteInput(slug: "bravo", name: "Bravo District", description: "", requiredApprovals: 1),
            actor: system
        )
        _ = try await user("admin@test.org", admin: true)
        for (email, role) in [("author@test.org", SiteRole.author), ("reviewer@test.org", .reviewer), ("manager@test.org", .manager)] {
            _ = try await user(email)
            try await database.setMembership(siteId: alpha.id, email: email, role: role, actor: system)
        }
        _ = try await user("outsider@test.org")
        try await database.setMembership(siteId: bravo.id, email: "outsider@test.org", role: .manager, actor: system)
        let tour = try await database.createTour(siteId: alpha.id, TourInput(name: "Ridge Walk", description: "A walk."), actor: system)
        _ = try await database.setFrame(
            tourId: tour.id,
            FrameInput(north: 44.43, south: 44.36, east: -121.97, west: -122.28, minZoom: 11, maxZoom: 15),
            maxAreaKm2: 2500,
            actor: system
        )
        let waypoint = try await database.createWaypoint(
            tourId: tour.id,
            WaypointInput(name: "Fish Lake", description: "", latitude: 44.40, longitude: -122.0),
            actor: system
        )
        return Seed(alphaId: alpha.id, bravoId: bravo.id, tourId: tour.id, waypointId: waypoint.id)
    }

    struct Seed {
        let alphaId: Int64
        let bravoId: Int64
        let tourId: Int64
        let waypointId: Int64
    }
}

/// A browser's cookies and the page's CSRF token.
struct BrowserSession: Sendable {
    var cookies: [String: String] = [:]
    var csrf = ""

    var cookieHeader: String { cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }

    mutating func absorb(_ response: TestResponse) {
        for field in response.headers where field.name == .setCookie {
            let pair = field.value.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { continue }
            if pair[1].isEmpty { cookies[String(pair[0])] = nil } else { cookies[String(pair[0])] = String(pair[1]) }
        }
        let body = String(buffer: response.body)
        if let range = body.range(of: #"data-csrf="([^"]+)""#, options: .regularExpression) {
            csrf = String(body[range].dropFirst("data-csrf=\"".count).dropLast())
        }
    }
}

extension TestClientProtocol {
    /// Signs in through the real form (GET for the CSRF cookie, POST the form) and returns the browser state.
    func signIn(_ email: String, password: String = TestApp.password) async throws -> BrowserSession {
        var session = BrowserSession()
        let page = try await execute(uri: "/login", method: .get)
        session.absorb(page)
        let response = try await post("/login", form: ["email": email, "password": password], session: session)
        #expect(response.status == .seeOther, "sign-in of \(email) failed with \(response.status)")
        session.absorb(response)
        let home = try await get("/sites", session: session)
        session.absorb(home)
        return session
    }

    func get(_ uri: String, session: BrowserSession?, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        if let session, !session.cookies.isEmpty { headers[.cookie] = session.cookieHeader }
        return try await execute(uri: uri, method: .get, headers: headers)
    }

    /// A form POST; the session's CSRF token is added unless `csrf` says otherwise.
    func post(
        _ uri: String,
        form: [String: String],
        session: BrowserSession?,
        csrf: String? = nil,
        extra: [(String, String)] = [],
        headers more: HTTPFields = [:]
    ) async throws -> TestResponse {
        var fields = form.map { ($0.key, $0.value) } + extra
        if let token = csrf ?? session.map({ $0.csrf.isEmpty ? $0.cookies["tc_csrf"] ?? "" : $0.csrf }), !token.isEmpty {
            fields.append(("_csrf", token))
        }
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let session, !session.cookies.isEmpty { headers[.cookie] = session.cookieHeader }
        headers.append(contentsOf: more)
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// A JSON call with a bearer token.
    func api(_ method: HTTPRequest.Method, _ uri: String, token: String?, json: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(buffer: body)) }
    var location: String? { headers[.location] }
}
