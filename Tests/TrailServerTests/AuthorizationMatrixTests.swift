import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import TrailServer

/// Every route of the panel and of `/api/v1/manage`, against every role: anonymous, alpha's author, reviewer and manager,
/// the admin, and bravo's manager (the outsider). A refusal changes nothing; an allowed change writes an audit event.
@Suite struct AuthorizationMatrixTests {
    @Test("pages", arguments: RouteTable.pages)
    func page(_ route: RouteCase) async throws {
        for role in Role.allCases {
            try await check(route, as: role)
        }
    }

    @Test("management API", arguments: RouteTable.apis)
    func api(_ route: RouteCase) async throws {
        for role in Role.allCases {
            try await check(route, as: role)
        }
    }

    /// The table is the whole list: a route added to the router without a row here fails, so nobody ships a route
    /// whose rights were never stated. Mobile routes (`/api/v1` outside `/manage`) are public and tested elsewhere.
    @Test func everyPanelAndManagementRouteHasARow() async throws {
        let (app, _) = try await TestApp.seeded()
        let router = buildRouter(app.dependencies)
        let registered = router.routes.compactMap { route -> (method: String, segments: [Substring])? in
            let path = route.path.description
            if path.hasPrefix("/api/v1/") && !path.hasPrefix("/api/v1/manage/") { return nil }
            return (route.method.rawValue, path.split(separator: "/"))
        }
        #expect(registered.count >= 80, "the router lists only \(registered.count) panel and management routes")
        let rows = (RouteTable.pages + RouteTable.apis).map { row in
            // `{tile}` stands for three segments, z/x/y.
            let path = row.path.replacingOccurrences(of: "{tile}", with: "{z}/{x}/{y}")
            return (method: row.method.rawValue, segments: path.split(separator: "?").first.map { $0.split(separator: "/") } ?? [])
        }
        for route in registered {
            // A `{parameter}` segment of the router matches whatever the row put there (a placeholder or a literal id).
            let covered = rows.contains { row in
                row.method == route.method && row.segments.count == route.segments.count
                    && zip(row.segments, route.segments).allSatisfy { $1.hasPrefix("{") || $1.hasPrefix(":") || $0 == $1 }
            }
            #expect(covered, "\(route.method) /\(route.segments.joined(separator: "/")) has no row in RouteTable")
        }
    }

    /// The outsider is a manager of bravo, so the 404s above come from the object check, not from a lack of rights:
    /// on bravo's own tour the same person may do everything.
    @Test func outsiderHasFullRightsOnTheirOwnSite() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("outsider@test.org")
            #expect(try await client.get("/tours/\(seed.bravoTourId)", session: browser).status == .ok)
            #expect(try await client.get("/tours/\(seed.bravoTourId)/edit", session: browser).status == .ok)
            #expect(try await client.get("/sites/bravo/members", session: browser).status == .ok)
            let token = try await app.token(for: "outsider@test.org")
            let api = try await client.api(.patch, "/api/v1/manage/tours/\(seed.bravoTourId)", token: token, json: #"{"name":"Bravo Loop 2"}"#)
            #expect(api.status == .ok)
            #expect(try await app.database.tour(id: seed.bravoTourId)?.name == "Bravo Loop 2")
        }
    }

    /// A guessed id that does not exist and an id of another site answer the same, so ids cannot be probed.
    @Test func unknownIdsAndOtherSitesIdsLookTheSame() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("outsider@test.org")
            let token = try await app.token(for: "outsider@test.org")
            for path in [
                "/tours/\(seed.tourId)", "/tours/999999", "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)",
                "/tours/\(seed.bravoTourId)/waypoints/\(seed.waypointId)", "/sites/alpha", "/sites/nowhere",
            ] {
                let response = try await client.get(path, session: browser)
                #expect(response.status == .notFound, "\(path)")
                #expect(response.text.contains("Not found."), "\(path)")
            }
            for path in ["/tours/\(seed.tourId)", "/tours/999999", "/tours/abc"] {
                let response = try await client.api(.get, "/api/v1/manage\(path)", token: token)
                #expect(response.status == .notFound, "\(path)")
                #expect(response.errorCode == "not_found")
                #expect(response.errorMessage == "Not found.")
            }
            // Creating a tour in a site one cannot see is the same 404 as in a site that does not exist.
            for site in ["alpha", "nowhere"] {
                let response = try await client.api(.post, "/api/v1/manage/tours", token: token, json: #"{"site":"\#(site)","name":"X"}"#)
                #expect(response.status == .notFound, "\(site)")
            }
        }
    }

    /// A waypoint id of another tour is not found under this tour, even for someone who may edit both.
    @Test func waypointMustBelongToTheTourInThePath() async throws {
        let (app, seed) = try await TestApp.seeded()
        let other = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Other", description: ""), actor: .system)
        try await app.test { client in
            let browser = try await client.signIn("admin@test.org")
            let token = try await app.token(for: "admin@test.org")
            let before = try await app.database.snapshot()
            let page = try await client.post("/tours/\(other.id)/waypoints/\(seed.waypointId)/delete", form: [:], session: browser)
            #expect(page.status == .notFound)
            let api = try await client.api(.delete, "/api/v1/manage/tours/\(other.id)/waypoints/\(seed.waypointId)", token: token)
            #expect(api.status == .notFound)
            let view = try await client.get("/tours/\(other.id)/waypoints/\(seed.waypointId)", session: browser)
            #expect(view.status == .notFound)
            try await app.database.expectUnchanged(since: before)
        }
    }

    /// Every regular file below the data folder (the database's own files aside) with its size and modification time.
    static func dataFolderListing(_ folder: URL) -> [String: String] {
        var listing: [String: String] = [:]
        let root = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return listing }
        while let relative = walker.nextObject() as? String {
            guard !relative.hasPrefix("trail.sqlite"),
                let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + relative),
                attributes[.type] as? FileAttributeType == .typeRegular
            else { continue }
            listing[relative] =
                "\((attributes[.size] as? NSNumber)?.int64Value ?? -1) \((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
        return listing
    }

    func check(_ route: RouteCase, as role: Role) async throws {
        let expected = try #require(route.expected[role], "no expectation for \(role) on \(route.testDescription)")
        let (app, seed) = try await TestApp.routeSeeded()
        let path = seed.fill(route.path)
        try await app.test { client in
            let browser: BrowserSession
            var token: String?
            if route.api {
                browser = BrowserSession()
                if let email = role.email { token = try await app.token(for: email) }
            } else if let email = role.email {
                browser = try await client.signIn(email)
            } else {
                browser = try await client.anonymousBrowser()
            }
            let before = try await app.database.snapshot()
            let filesBefore = Self.dataFolderListing(app.config.dataFolder)
            let auditBefore = try await app.database.auditCount()

            let response: TestResponse
            switch route.body {
            case .form(let pairs):
                response = try await client.post(path, form: [:], session: browser, extra: pairs.map { ($0.0, seed.fill($0.1)) })
            case .json(let json):
                response = try await client.api(route.method, path, token: token, json: seed.fill(json))
            case .multipart(let fields, let file):
                let boundary = "matrix-\(UUID().uuidString)"
                var headers: HTTPFields = [.contentType: "multipart/form-data; boundary=\(boundary)"]
                var csrfField: [(String, String)] = []
                if let token { headers[.authorization] = "Bearer \(token)" }
                if !route.api {
                    if !browser.cookies.isEmpty { headers[.cookie] = browser.cookieHeader }
                    csrfField = [("_csrf", browser.csrf.isEmpty ? browser.cookies["tc_csrf"] ?? "" : browser.csrf)]
                }
                response = try await client.execute(
                    uri: path,
                    method: route.method,
                    headers: headers,
                    body: RouteFixtures.multipart(
                        fields: csrfField + fields.map { ($0.0, seed.fill($0.1)) },
                        file: file,
                        boundary: boundary
                    )
                )
            case .tus(let extra, let metadata, let data):
                var headers: HTTPFields = [.tusResumable: TusController.version]
                if let token { headers[.authorization] = "Bearer \(token)" }
                for (name, value) in extra { headers[HTTPField.Name(name)!] = seed.fill(value) }
                if !metadata.isEmpty { headers[.uploadMetadata] = RouteFixtures.tusMetadata(metadata.map { ($0.0, seed.fill($0.1)) }) }
                if data != nil { headers[.contentType] = "application/offset+octet-stream" }
                response = try await client.execute(uri: path, method: route.method, headers: headers, body: data.map { ByteBuffer(bytes: $0) })
            case .none:
                if route.api {
                    response = try await client.api(route.method, path, token: token)
                } else {
                    response = try await client.send(route.method, path, session: browser)
                }
            }

            let what = "\(role) \(route.method) \(path)"
            switch expected {
            case .status(let code):
                #expect(response.status.code == code, "\(what): \(response.status) \(response.text.prefix(300))")
            case .redirect(let target):
                let target = seed.fill(target)
                #expect(response.status == .seeOther, "\(what): \(response.status) \(response.text.prefix(300))")
                let location = response.location ?? ""
                let matches = location == target || (target.count > 1 && target.hasSuffix("/") && location.hasPrefix(target))
                #expect(matches, "\(what): redirected to \(location), expected \(target)")
            case .signIn:
                #expect(response.status == .seeOther, "\(what): \(response.status)")
                #expect(response.location?.hasPrefix("/login?next=") == true, "\(what): redirected to \(response.location ?? "nil")")
            }
            if route.api, expected.isRefusal {
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "\(what): API errors are JSON")
                #expect(response.errorCode != nil, "\(what): error body \(response.text)")
            }
            if expected.isRefusal {
                try await app.database.expectUnchanged(since: before, "\(what): a refused request changed the database")
                // Nor the data folder: a refused upload, tiles or import leaves no file behind, and changes none.
                let filesAfter = Self.dataFolderListing(app.config.dataFolder)
                #expect(
                    filesAfter == filesBefore,
                    "\(what): a refused request changed the data folder: \(Set(filesAfter.keys).symmetricDifference(filesBefore.keys))"
                )
            } else if route.isChange, route.path != "/logout" || role != .anonymous {
                #expect(try await app.database.auditCount() > auditBefore, "\(what): the change wrote no audit event")
            }
        }
    }
}
