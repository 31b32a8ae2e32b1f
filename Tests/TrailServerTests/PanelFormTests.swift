import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The panel's forms as the contexts' `requestDecoder` reads them (Hummingbird's `URLEncodedFormDecoder`): what a
/// person types reaches the validating step as text, a body that does not parse is a 400 that changes nothing, and a
/// JSON route still takes JSON only.
@Suite struct PanelFormTests {
    /// The form decoder on its own: escapes, empty and missing fields, a checkbox group.
    @Test func decodesAsAPageSendsIt() throws {
        let decoder = URLEncodedFormDecoder()
        let waypoint = try decoder.decode(WaypointForm.self, from: "name=Lava+Beds%2B&latitude=+44%2C39+&description=&_csrf=x")
        #expect(waypoint.name == "Lava Beds+", "+ is a space, %2B a plus")
        #expect(waypoint.latitude == " 44,39 ", "typed text reaches the form type as typed")
        #expect(waypoint.description == "" && waypoint.longitude == "", "an empty field and a missing one both read as empty")
        #expect(waypoint.input.latitude == 44.39 && waypoint.input.longitude == nil)
        #expect(try decoder.decode(TourLanguagesForm.self, from: "defaultLanguage=en").language == [], "no box ticked")
        #expect(try decoder.decode(TourLanguagesForm.self, from: "defaultLanguage=en&language[]=es&language[]=fr").chosen == ["en", "es", "fr"])
        #expect(try decoder.decode(SignInForm.self, from: "email=a").next == nil)
        #expect(throws: URLEncodedFormError.self) { try decoder.decode(WaypointForm.self, from: "name=a&name=b") }
        #expect(throws: URLEncodedFormError.self) { try decoder.decode(WaypointForm.self, from: "name=%zz") }
    }

    @Test func typedNumbersTakeADecimalCommaAndSpaces() {
        #expect(TypedNumber.double(" 44,5 ") == 44.5)
        #expect(TypedNumber.double("-122.10") == -122.10)
        #expect(TypedNumber.double("") == nil && TypedNumber.double("north") == nil && TypedNumber.double("inf") == nil)
        #expect(TypedNumber.int(" 12 ") == 12 && TypedNumber.int("1.5") == nil)
    }

    /// What passes the rules comes back as a value with nothing left to unwrap; what does not, as the fields' messages.
    @Test func validationReturnsTheValidatedValue() throws {
        let frame = Frame(north: 44.5, south: 44.3, east: -122.0, west: -122.3)
        let typed = try URLEncodedFormDecoder().decode(
            WaypointForm.self,
            from: "name=+Midway+&latitude=44%2C4&longitude=-122.1&triggerRadiusMeters=40"
        )
        let valid = try TourValidation.validate(typed.input, frame: frame).get()
        #expect(valid.name == "Midway" && valid.latitude == 44.4 && valid.longitude == -122.1 && valid.triggerRadiusMeters == 40)
        let noLatitude = WaypointInput(name: "Midway", description: "", latitude: nil, longitude: -122.1)
        #expect(TourValidation.validate(noLatitude, frame: frame).errors.fields == ["latitude": "Enter a latitude in degrees, e.g. 44.40."])
        let outside = WaypointInput(name: "Midway", description: "", latitude: 45, longitude: -122.1)
        #expect(TourValidation.validate(outside, frame: frame).errors["latitude"]?.contains("outside the tour's frame") == true)

        func form<T: PanelForm>(_ type: T.Type, _ body: String) throws -> T { try URLEncodedFormDecoder().decode(type, from: body) }
        let framed = try TourValidation.validate(
            try form(FrameForm.self, "north=44%2C5&south=44.3&east=-122&west=-122.3&minZoom=12&maxZoom=16").input,
            maxAreaKm2: 10_000
        ).get()
        #expect(framed.frame == frame && framed.minZoom == 12 && framed.maxZoom == 16)
        let noZoom = try form(FrameForm.self, "north=44.5&south=44.3&east=-122&west=-122.3&minZoom=12").input
        #expect(TourValidation.validate(noZoom, maxAreaKm2: 10_000).errors.fields == ["maxZoom": "Enter a zoom level from 0 to 20."])

        let tour = try TourValidation.validate(try form(TourForm.self, "name=+Lost+Lake+&paceKmh=3%2C5").input).get()
        #expect(tour.name == "Lost Lake" && tour.mapName == "lost-lake" && tour.paceKmh == 3.5)
        let fast = try form(TourForm.self, "name=Lost+Lake&paceKmh=fast").input
        #expect(TourValidation.validate(fast).errors.fields == ["paceKmh": "Enter a walking pace between 0.5 and 20 km/h."])
    }

    @Test("a waypoint typed with decimal commas and spaces is placed where the person meant")
    func decimalComma() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let added = try await client.post(
                "/tours/\(seed.tourId)/waypoints",
                form: ["name": "Midway", "latitude": " 44,39 ", "longitude": "-122,10", "description": ""],
                session: browser
            )
            #expect(added.status == .seeOther, "\(added.text)")
            let midway = try #require(try await app.database.waypoints(tourId: seed.tourId).last)
            #expect(midway.name == "Midway" && midway.latitude == 44.39 && midway.longitude == -122.10)
        }
    }

    @Test("a waypoint without a latitude gets the field's message, the form as typed, and nothing stored")
    func noLatitude() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let path = "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)"
            for (uri, status) in [("/tours/\(seed.tourId)/waypoints", "new"), (path, "edit")] {
                let page = try await client.post(uri, form: ["name": "Midway", "latitude": "", "longitude": "-122,10"], session: browser)
                #expect(page.status == .unprocessableContent, "\(status)")
                #expect(page.text.contains("Enter a latitude in degrees, e.g. 44.40."), "\(status)")
                #expect(HTML.value(page.text, field: "longitude") == "-122,10", "\(status): the field as typed")
            }
            let moved = try await client.script("\(path)/move", [("latitude", "north"), ("longitude", "-122.1")], session: browser)
            #expect(moved.status == .unprocessableContent && moved.errorFields["latitude"] == "Enter a latitude in degrees, e.g. 44.40.")
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test("a form body that does not parse answers 400 and changes nothing")
    func malformedBody() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let path = "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)"
            for (body, says) in [
                ("name=Moved&latitude=%zz&longitude=-122.1", "percent-encoded"),
                ("name=Moved&name=Again&latitude=44.39&longitude=-122.1", "“name” is sent twice"),
                ("name=Moved&latitude=44.39&longitude=-122.1&triggerRadiusMeters[]=30", "“triggerRadiusMeters”"),
            ] {
                // As the page's script sends a form: the token in the header, so the handler's decoder reads the body.
                let headers: HTTPFields = [
                    .cookie: browser.cookieHeader, .contentType: "application/x-www-form-urlencoded",
                    HTTPField.Name("X-CSRF-Token")!: browser.csrf, .accept: "application/json",
                ]
                let response = try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body): \(response.status)")
                #expect(response.errorMessage?.contains(says) == true, "\(body): \(response.errorMessage ?? "")")
            }
            let order = try await client.script(
                "/tours/\(seed.tourId)/waypoints/order",
                [("ids", "\(seed.secondWaypointId)"), ("ids", "\(seed.waypointId)")],
                session: browser
            )
            #expect(order.status == .badRequest, "a repeated name without [] is refused, not half read")
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test("the CSRF check refuses a form it cannot read as it refuses one without a token (403)")
    func unreadableFormIsACSRFRefusal() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let headers: HTTPFields = [.cookie: browser.cookieHeader, .contentType: "application/x-www-form-urlencoded"]
            for body in ["name=Moved&latitude=%zz&_csrf=\(browser.csrf)", "name=a&name=b&_csrf=\(browser.csrf)"] {
                let response = try await client.execute(
                    uri: "/tours/\(seed.tourId)/waypoints/\(seed.waypointId)",
                    method: .post,
                    headers: headers,
                    body: ByteBuffer(string: body)
                )
                #expect(response.status == .forbidden, "\(body): \(response.status)")
                #expect(response.text.contains("This form has expired or did not come from this site."))
            }
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test("a JSON route still refuses a form body with the message it always gave (415)")
    func jsonRouteRefusesAForm() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let token = try await app.token(for: "author@test.org")
            let response = try await client.execute(
                uri: "/api/v1/manage/tours/\(seed.tourId)/waypoints",
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "name=Midway&latitude=44.39&longitude=-122.1")
            )
            #expect(response.status == .unsupportedMediaType)
            #expect(response.errorMessage == "Send the body as application/json.")
        }
    }
}
