import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// One rule broken, the message the person should read, and where it sits.
struct RuleCase: Sendable, CustomTestStringConvertible {
    let name: String
    /// Form fields, as typed.
    let form: [String: String]
    /// The same through the API, when the API can express it (JSON numbers); nil when it is a form-only case.
    let json: String?
    /// Field → message, exactly (no other field may complain).
    let errors: [String: String]
    var testDescription: String { name }
}

/// Checks the message is next to its field in the page and in the API's `error.fields`.
enum Expect {
    static func pageErrors(
        _ response: TestResponse,
        _ errors: [String: String],
        fields: [String],
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == .unprocessableContent, "\(what): \(response.status)", sourceLocation: sourceLocation)
        let html = response.text
        for field in fields {
            let shown = field == "frame" ? HTML.element(html, id: "frame-error") : HTML.fieldError(html, field: field)
            #expect(shown == errors[field].map(Payload.html), "\(what): field \(field) shows \(shown ?? "nothing")", sourceLocation: sourceLocation)
        }
    }

    static func apiErrors(_ response: TestResponse, _ errors: [String: String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unprocessableContent, "\(what): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorCode == "validation_failed", sourceLocation: sourceLocation)
        #expect(response.errorFields == errors, "\(what): \(response.errorFields)", sourceLocation: sourceLocation)
    }
}

@Suite struct TourValidationTests {
    static let latitudeRange = "Latitude must be between -90 and 90."
    static let longitudeRange = "Longitude must be between -180 and 180."
    static let zoomRange = "Zoom must be between 0 and 20."
    static let antimeridian = "East must be greater than west (frames crossing the 180° meridian are not supported)."

    /// The seeded tour's frame is N 44.43 S 44.36 E -121.97 W -122.28; Fish Lake is at (44.40, -122.00), Summit at (44.41, -122.15).
    static func frame(
        n: String = "44.45",
        s: String = "44.35",
        e: String = "-121.95",
        w: String = "-122.30",
        min: String = "10",
        max: String = "16"
    )
        -> [String: String]
    {
        ["north": n, "south": s, "east": e, "west": w, "minZoom": min, "maxZoom": max]
    }

    static func frameJSON(n: Double = 44.45, s: Double = 44.35, e: Double = -121.95, w: Double = -122.30, min: Int = 10, max: Int = 16) -> String {
        #"{"frame":{"north":\#(n),"south":\#(s),"east":\#(e),"west":\#(w)},"minZoom":\#(min),"maxZoom":\#(max)}"#
    }

    static let frameCases: [RuleCase] = [
        RuleCase(name: "north above 90", form: frame(n: "91"), json: frameJSON(n: 91), errors: ["north": latitudeRange]),
        RuleCase(name: "south below -90", form: frame(s: "-90.5"), json: frameJSON(s: -90.5), errors: ["south": latitudeRange]),
        RuleCase(name: "east above 180", form: frame(e: "180.5"), json: frameJSON(e: 180.5), errors: ["east": longitudeRange]),
        RuleCase(name: "west below -180", form: frame(w: "-181"), json: frameJSON(w: -181), errors: ["west": longitudeRange]),
        RuleCase(
            name: "north below south",
            form: frame(n: "44.30", s: "44.36"),
            json: frameJSON(n: 44.30, s: 44.36),
            errors: ["north": "North must be greater than south."]
        ),
        RuleCase(
            name: "north equal to south",
            form: frame(n: "44.36", s: "44.36"),
            json: frameJSON(n: 44.36, s: 44.36),
            errors: ["north": "North must be greater than south."]
        ),
        RuleCase(
            name: "east below west",
            form: frame(e: "-122.30", w: "-121.95"),
            json: frameJSON(e: -122.30, w: -121.95),
            errors: ["east": antimeridian]
        ),
        RuleCase(
            name: "across the antimeridian",
            form: frame(e: "-179.9", w: "179.9"),
            json: frameJSON(e: -179.9, w: 179.9),
            errors: ["east": antimeridian]
        ),
        RuleCase(
            name: "degenerate area",
            form: frame(n: "44.4001", s: "44.40", e: "-122.0", w: "-122.0001"),
            json: frameJSON(n: 44.4001, s: 44.40, e: -122.0, w: -122.0001),
            errors: ["frame": "The frame is too small (0.00 km²); make it at least 100 m × 100 m."]
        ),
        RuleCase(
            name: "area above the maximum",
            form: frame(n: "45", s: "44", e: "-121", w: "-122"),
            json: frameJSON(n: 45, s: 44, e: -121, w: -122),
            errors: [
                "frame":
                    "The frame covers \(DisplayFormat.area(Frame(north: 45, south: 44, east: -121, west: -122).areaKm2)) km²; the largest allowed is 2,500 km²."
            ]
        ),
        RuleCase(name: "min zoom below 0", form: frame(min: "-1"), json: frameJSON(min: -1), errors: ["minZoom": zoomRange]),
        RuleCase(name: "max zoom above 20", form: frame(max: "21"), json: frameJSON(max: 21), errors: ["maxZoom": zoomRange]),
        RuleCase(
            name: "min zoom above max zoom",
            form: frame(min: "16", max: "12"),
            json: frameJSON(min: 16, max: 12),
            errors: ["maxZoom": "The largest zoom must be at least the smallest zoom (16)."]
        ),
        RuleCase(name: "north not a number", form: frame(n: "abc"), json: nil, errors: ["north": "Enter a latitude in degrees, e.g. 44.43."]),
        RuleCase(name: "south NaN", form: frame(s: "NaN"), json: nil, errors: ["south": "Enter a latitude in degrees, e.g. 44.43."]),
        RuleCase(name: "east infinite", form: frame(e: "inf"), json: nil, errors: ["east": "Enter a longitude in degrees, e.g. -122.20."]),
        RuleCase(name: "west empty", form: frame(w: ""), json: nil, errors: ["west": "Enter a longitude in degrees, e.g. -122.20."]),
        RuleCase(
            name: "zoom not a number",
            form: frame(min: "ten", max: "1.5"),
            json: nil,
            errors: ["minZoom": "Enter a zoom level from 0 to 20.", "maxZoom": "Enter a zoom level from 0 to 20."]
        ),
        RuleCase(
            name: "one waypoint left outside",
            form: frame(n: "44.405"),
            json: frameJSON(n: 44.405),
            errors: ["frame": "This frame would leave a waypoint outside: “Summit”. Move it first, or make the frame larger."]
        ),
        RuleCase(
            name: "two waypoints left outside",
            form: frame(e: "-122.2"),
            json: frameJSON(e: -122.2),
            errors: ["frame": "This frame would leave 2 waypoints outside: “Fish Lake”, “Summit”. Move them first, or make the frame larger."]
        ),
    ]

    static let frameFields = ["north", "south", "east", "west", "minZoom", "maxZoom", "frame"]

    @Test("frame rule in the page", arguments: frameCases)
    func frameRuleInPage(_ rule: RuleCase) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let response = try await client.post("/tours/\(seed.tourId)/frame", form: rule.form, session: browser)
            Expect.pageErrors(response, rule.errors, fields: Self.frameFields, rule.name)
            // What was typed stays in the form, so it can be corrected.
            for (field, value) in rule.form {
                #expect(HTML.value(response.text, field: field) == Payload.html(value), "\(rule.name): \(field) not kept")
            }
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test("frame rule in the API", arguments: frameCases.filter { $0.json != nil })
    func frameRuleInAPI(_ rule: RuleCase) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let before = try await app.database.snapshot()
            let response = try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: rule.json)
            Expect.apiErrors(response, rule.errors, rule.name)
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test func frameNumbersMustBeNumbersInTheAPI() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let response = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)",
                token: token,
                json: #"{"frame":{"north":"abc","south":44.35,"east":-121.95,"west":-122.3}}"#
            )
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "bad_request")
            #expect(response.errorMessage?.contains("frame.north") == true, "\(response.errorMessage ?? "")")
        }
    }

    @Test func validFrameIsSavedWithDecimalCommasAndTheBoundariesIncluded() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            // Summit sits exactly on the new north edge: inside.
            let response = try await client.post(
                "/tours/\(seed.tourId)/frame",
                form: Self.frame(n: " 44,41 ", s: "44.35", e: "-121.95", w: "-122.30", min: "0", max: "20"),
                session: browser
            )
            #expect(response.status == .seeOther)
            let tour = try #require(try await app.database.tour(id: seed.tourId))
            #expect(tour.frame == Frame(north: 44.41, south: 44.35, east: -121.95, west: -122.30))
            #expect(tour.minZoom == 0 && tour.maxZoom == 20)
        }
    }

    /// The largest area is a setting: with 100 km² the seeded ~190 km² frame is refused, and the page says what the limit is.
    @Test func maximumAreaIsConfigurable() async throws {
        let (app, seed) = try await TestApp.seeded { $0.maxFrameAreaKm2 = 100 }
        let area = DisplayFormat.area(Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28).areaKm2)
        let message = "The frame covers \(area) km²; the largest allowed is 100 km²."
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(seed.tourId)", session: browser)
            #expect(page.text.contains("Largest allowed: 100 km²."))
            let form = Self.frame(n: "44.43", s: "44.36", e: "-121.97", w: "-122.28")
            Expect.pageErrors(
                try await client.post("/tours/\(seed.tourId)/frame", form: form, session: browser),
                ["frame": message],
                fields: Self.frameFields,
                "page"
            )
            let token = try await app.token(for: "author@test.org")
            Expect.apiErrors(
                try await client.api(
                    .patch,
                    "/api/v1/manage/tours/\(seed.tourId)",
                    token: token,
                    json: Self.frameJSON(n: 44.43, s: 44.36, e: -121.97, w: -122.28)
                ),
                ["frame": message],
                "api"
            )
            // A smaller frame within the limit passes.
            let small = try await client.post(
                "/tours/\(seed.tourId)/frame",
                form: Self.frame(n: "44.42", s: "44.39", e: "-121.99", w: "-122.16"),
                session: browser
            )
            #expect(small.status == .seeOther)
        }
    }

    // MARK: Tours

    static let tourCases: [RuleCase] = [
        RuleCase(
            name: "empty name",
            form: ["name": "  ", "description": "", "mapName": ""],
            json: #"{"name":"  "}"#,
            errors: ["name": "Enter a name of 1 to 120 characters."]
        ),
        RuleCase(
            name: "name too long",
            form: ["name": String(repeating: "n", count: 121), "description": "", "mapName": ""],
            json: #"{"name":"\#(String(repeating: "n", count: 121))"}"#,
            errors: ["name": "Enter a name of 1 to 120 characters."]
        ),
        RuleCase(
            name: "description too long",
            form: ["name": "Ok", "description": String(repeating: "d", count: 20_001), "mapName": ""],
            json: #"{"description":"\#(String(repeating: "d", count: 20_001))"}"#,
            errors: ["description": "Keep the description under 20,000 characters."]
        ),
        RuleCase(
            name: "map name not a slug",
            form: ["name": "Ok", "description": "", "mapName": "Ridge Walk!"],
            json: #"{"mapName":"Ridge Walk!"}"#,
            errors: ["mapName": "Use 2 to 60 lowercase letters, digits and single hyphens, like santiam-wagon-road."]
        ),
        RuleCase(
            name: "map name with double hyphen",
            form: ["name": "Ok", "description": "", "mapName": "a--b"],
            json: #"{"mapName":"a--b"}"#,
            errors: ["mapName": "Use 2 to 60 lowercase letters, digits and single hyphens, like santiam-wagon-road."]
        ),
    ]

    @Test("tour rule", arguments: tourCases)
    func tourRule(_ rule: RuleCase) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let fields = ["name", "description", "mapName"]
            Expect.pageErrors(try await client.post("/sites/alpha/tours", form: rule.form, session: browser), rule.errors, fields: fields, "create")
            Expect.pageErrors(
                try await client.post("/tours/\(seed.tourId)/edit", form: rule.form, session: browser),
                rule.errors,
                fields: fields,
                "edit"
            )
            try await app.database.expectUnchanged(since: before)
            let token = try await app.token(for: "author@test.org")
            let mid = try await app.database.snapshot()
            Expect.apiErrors(try await client.api(.patch, "/api/v1/manage/tours/\(seed.tourId)", token: token, json: rule.json), rule.errors, "patch")
            var create = rule.json!.dropFirst().dropLast()
            if !create.contains("\"name\"") { create += #","name":"Ok""# }
            Expect.apiErrors(
                try await client.api(.post, "/api/v1/manage/tours", token: token, json: #"{"site":"alpha",\#(create)}"#),
                rule.errors,
                "post"
            )
            try await app.database.expectUnchanged(since: mid)
        }
    }

    @Test func mapNameIsMadeFromTheNameWhenLeftEmpty() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let response = try await client.post(
                "/sites/alpha/tours",
                form: ["name": "Santiam Wagon Road", "description": "", "mapName": ""],
                session: browser
            )
            #expect(response.status == .seeOther)
            let id = try #require(response.location.flatMap { Int64($0.replacingOccurrences(of: "/tours/", with: "")) })
            #expect(try await app.database.tour(id: id)?.mapName == "santiam-wagon-road")
        }
    }

    // MARK: Waypoints

    static let outside = "This place is outside the tour's frame (N 44.43000, S 44.36000, E -121.97000, W -122.28000)."

    static func waypoint(_ name: String = "Midway", lat: String = "44.39", lng: String = "-122.10") -> [String: String] {
        ["name": name, "latitude": lat, "longitude": lng, "description": ""]
    }

    static let waypointCases: [RuleCase] = [
        RuleCase(
            name: "name taken, other case",
            form: waypoint("fish LAKE"),
            json: #"{"name":"fish LAKE","latitude":44.39,"longitude":-122.1}"#,
            errors: ["name": "Another waypoint in this tour is already called “fish LAKE”."]
        ),
        RuleCase(
            name: "name taken, padded",
            form: waypoint("  Summit "),
            json: #"{"name":"  Summit ","latitude":44.39,"longitude":-122.1}"#,
            errors: ["name": "Another waypoint in this tour is already called “Summit”."]
        ),
        RuleCase(
            name: "empty name",
            form: waypoint(""),
            json: #"{"name":"","latitude":44.39,"longitude":-122.1}"#,
            errors: ["name": "Enter a name of 1 to 120 characters."]
        ),
        RuleCase(
            name: "outside the frame",
            form: waypoint(lat: "44.50"),
            json: #"{"name":"Midway","latitude":44.5,"longitude":-122.1}"#,
            errors: ["latitude": outside]
        ),
        RuleCase(
            name: "latitude out of range",
            form: waypoint(lat: "91"),
            json: #"{"name":"Midway","latitude":91,"longitude":-122.1}"#,
            errors: ["latitude": latitudeRange]
        ),
        RuleCase(
            name: "longitude out of range",
            form: waypoint(lng: "-200"),
            json: #"{"name":"Midway","latitude":44.39,"longitude":-200}"#,
            errors: ["longitude": longitudeRange]
        ),
        RuleCase(
            name: "coordinates not numbers",
            form: waypoint(lat: "north", lng: ""),
            json: nil,
            errors: ["latitude": "Enter a latitude in degrees, e.g. 44.40.", "longitude": "Enter a longitude in degrees, e.g. -122.00."]
        ),
    ]

    static let waypointFields = ["name", "latitude", "longitude", "description"]

    @Test("waypoint rule on create", arguments: waypointCases)
    func waypointRuleOnCreate(_ rule: RuleCase) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let page = try await client.post("/tours/\(seed.tourId)/waypoints", form: rule.form, session: browser)
            Expect.pageErrors(page, rule.errors, fields: Self.waypointFields, rule.name)
            #expect(HTML.value(page.text, field: "name") == Payload.html(rule.form["name"]!))
            try await app.database.expectUnchanged(since: before)
            if let json = rule.json {
                let token = try await app.token(for: "author@test.org")
                let mid = try await app.database.snapshot()
                Expect.apiErrors(
                    try await client.api(.post, "/api/v1/manage/tours/\(seed.tourId)/waypoints", token: token, json: json),
                    rule.errors,
                    rule.name
                )
                try await app.database.expectUnchanged(since: mid)
            }
        }
    }

    @Test func waypointRulesOnEditAndMove() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let token = try await app.token(for: "author@test.org")
            let before = try await app.database.snapshot()
            let path = "/tours/\(seed.tourId)/waypoints/\(seed.secondWaypointId)"

            let taken = try await client.post(path, form: Self.waypoint("FISH LAKE", lat: "44.41", lng: "-122.15"), session: browser)
            Expect.pageErrors(taken, ["name": "Another waypoint in this tour is already called “FISH LAKE”."], fields: Self.waypointFields, "rename")
            let outside = try await client.post(path, form: Self.waypoint("Summit", lat: "44.41", lng: "-121.5"), session: browser)
            Expect.pageErrors(outside, ["latitude": Self.outside], fields: Self.waypointFields, "move by form")

            let dragged = try await client.send(
                .post,
                "\(path)/move",
                session: browser,
                form: [("latitude", ""), ("longitude", "x")],
                accept: "application/json"
            )
            Expect.apiErrors(
                dragged,
                ["latitude": "Enter a latitude in degrees, e.g. 44.40.", "longitude": "Enter a longitude in degrees, e.g. -122.00."],
                "drag without coordinates"
            )
            var json = try await client.post("\(path)/move", form: ["latitude": "44.0", "longitude": "-122.1"], session: browser)
            #expect(json.status == .unprocessableContent, "a plain form post gets the error page")
            #expect(json.text.contains(Payload.html(Self.outside)))

            Expect.apiErrors(
                try await client.api(.patch, "/api/v1/manage\(path)", token: token, json: #"{"name":"fish lake"}"#),
                ["name": "Another waypoint in this tour is already called “fish lake”."],
                "api rename"
            )
            Expect.apiErrors(
                try await client.api(.patch, "/api/v1/manage\(path)", token: token, json: #"{"longitude":-121}"#),
                ["latitude": Self.outside],
                "api move"
            )
            Expect.apiErrors(
                try await client.api(.patch, "/api/v1/manage\(path)", token: token, json: #"{"order":3}"#),
                ["order": "Order must be between 1 and 2."],
                "api order"
            )
            try await app.database.expectUnchanged(since: before, "edit and move")

            // Renaming a waypoint to its own name in another case is not a clash.
            json = try await client.post(path, form: Self.waypoint("SUMMIT", lat: "44.41", lng: "-122.15"), session: browser)
            #expect(json.status == .seeOther)
            #expect(try await app.database.waypoints(tourId: seed.tourId).last?.name == "SUMMIT")
        }
    }

    @Test func waypointNeedsAFrameFirst() async throws {
        let (app, seed) = try await TestApp.seeded()
        let tour = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Unframed", description: ""), actor: .system)
        let message = "Set the tour's map frame before placing waypoints."
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            Expect.pageErrors(
                try await client.post("/tours/\(tour.id)/waypoints", form: Self.waypoint(), session: browser),
                ["latitude": message],
                fields: Self.waypointFields,
                "page"
            )
            Expect.apiErrors(
                try await client.api(
                    .post,
                    "/api/v1/manage/tours/\(tour.id)/waypoints",
                    token: app.token(for: "author@test.org"),
                    json: #"{"name":"A","latitude":44.4,"longitude":-122}"#
                ),
                ["latitude": message],
                "api"
            )
            #expect(try await app.database.waypoints(tourId: tour.id).isEmpty)
        }
    }

    @Test func orderOnCreateMustBeInRange() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            for order in [0, 4, -1] {
                Expect.apiErrors(
                    try await client.api(
                        .post,
                        "/api/v1/manage/tours/\(seed.tourId)/waypoints",
                        token: token,
                        json: #"{"name":"Midway","latitude":44.39,"longitude":-122.1,"order":\#(order)}"#
                    ),
                    ["order": "Order must be between 1 and 3."],
                    "order \(order)"
                )
            }
            #expect(try await app.database.waypoints(tourId: seed.tourId).count == 2)
        }
    }

    @Test func reorderMustNameEveryWaypointOnce() async throws {
        let (app, seed) = try await TestApp.seeded()
        let other = try await app.database.createTour(siteId: seed.alphaId, TourInput(name: "Other", description: ""), actor: .system)
        _ = try await app.database.setFrame(
            tourId: other.id,
            FrameInput(north: 44.43, south: 44.36, east: -121.97, west: -122.28, minZoom: 11, maxZoom: 15),
            maxAreaKm2: 2500,
            actor: .system
        )
        let foreign = try await app.database.createWaypoint(
            tourId: other.id,
            WaypointInput(name: "Elsewhere", description: "", latitude: 44.4, longitude: -122),
            actor: .system
        )
        let message = "The new order must list every waypoint of this tour exactly once."
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let (a, b) = (seed.waypointId, seed.secondWaypointId)
            for ids in [[a], [a, a], [a, b, b], [a, foreign.id], [b, a, foreign.id], []] {
                let pairs = ids.map { ("ids[]", "\($0)") }
                let page = try await client.post("/tours/\(seed.tourId)/waypoints/order", form: [:], session: browser, extra: pairs)
                #expect(page.status == .unprocessableContent, "\(ids)")
                #expect(page.text.contains(message), "\(ids)")
            }
            let json = try await client.send(
                .post,
                "/tours/\(seed.tourId)/waypoints/order",
                session: browser,
                form: [("ids[]", "\(a)")],
                accept: "application/json"
            )
            Expect.apiErrors(json, ["order": message], "json")
            try await app.database.expectUnchanged(since: before)
        }
    }
}
