import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

@Suite struct AccountsTests {
    @Test func signInWithRightPasswordStartsSessionAndWrongOneShowsError() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        try await app.test { client in
            var browser = BrowserSession()
            browser.absorb(try await client.execute(uri: "/login", method: .get))
            let wrong = try await client.post("/login", form: ["email": "author@test.org", "password": "nope nope nope"], session: browser)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("The email or password is not right."))
            #expect(wrong.headers[.setCookie]?.contains("tc_session") != true)

            let session = try await client.signIn("author@test.org")
            #expect(session.cookies["tc_session"] != nil)
            let sites = try await client.get("/sites", session: session)
            #expect(sites.status == .ok)
            #expect(sites.text.contains("Alpha District"))
            #expect(!sites.text.contains("Bravo District"))
        }
    }

    @Test func anonymousPagesRedirectToSignInAndAPIAnswers401() async throws {
        let app = try await TestApp.make()
        try await app.seed()
        try await app.test { client in
            let page = try await client.get("/sites/alpha", session: nil)
            #expect(page.status == .seeOther)
            #expect(page.location?.hasPrefix("/login?next=/sites/alpha") == true)
            let api = try await client.api(.get, "/api/v1/manage/tours/1", token: nil)
            #expect(api.status == .unauthorized)
            let body = try #require(api.json as? [String: Any])
            #expect((body["error"] as? [String: Any])?["code"] as? String == "unauthorized")
        }
    }
}
