import Foundation
import GRDB
import HummingbirdTesting
import PackageFormat
import Testing

@testable import TrailServer

/// A tour in several languages: which ones (the default first), the tour's and each waypoint's texts per
/// language, files for one language or all, the checklist's gaps, the package, the review page, GeoJSON.
@Suite(.scratch) struct LanguagesTests {
    /// The tour's GeoJSON export, as `GET /manage/tours/{id}/export.geojson` answers it.
    static func export(_ env: TestEnv) async throws -> Data {
        let tour = try #require(try await env.database.tour(id: env.seed.tourId))
        let site = try #require(try await env.database.site(id: tour.siteId))
        return try await env.database.exportGeoJSON(tour: tour, site: site)
    }

    @Test("tags: any case and _ are read as the list spells them; a malformed tag and one not on the list get their own message")
    func tags() {
        #expect(LanguageTag.canonical("ES") == "es" && LanguageTag.canonical("fr_ca") == "fr-CA" && LanguageTag.canonical("zh-hant") == "zh-Hant")
        #expect(LanguageTag.canonical("sp") == nil && LanguageTag.canonical("en-US!") == nil)
        #expect(LanguageTag.refusal("sp").contains("is not a language this server offers"))
        #expect(LanguageTag.refusal("en US!").contains("is not a language tag"))
        #expect(LanguageChoice.parse(["en", "es", "ES"], confirmRemoval: false).1 == "Spanish is listed twice.")
        #expect(LanguageChoice.parse([" "], confirmRemoval: false).1 == "Choose the tour's language.")
        #expect(LanguageChoice.parse(["EN", "es"], confirmRemoval: false).0?.tags == ["en", "es"])
        #expect(
            Manifest.isLanguageTag("fr-CA") && Manifest.isLanguageTag("zh-Hant") && !Manifest.isLanguageTag("e") && !Manifest.isLanguageTag("en--x")
        )
    }

    @Test("API: languages and per-language texts on the tour and a waypoint; an unknown tag, a text in a language the tour lacks: 422, nothing saved")
    func apiTexts() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            for (body, message) in [
                (#"{"languages":["en","xx"]}"#, "“xx” is not a language this server offers"),
                (#"{"languages":["en","e s"]}"#, "“e s” is not a language tag"),
                (#"{"languages":[]}"#, "Choose the tour's language."),
            ] {
                let refused = try await client.api(.patch, tour, token: token, json: body)
                #expect(refused.status == .unprocessableContent && refused.errorFields["languages"]?.contains(message) == true, "\(refused.text)")
            }
            let notYet = try await client.api(.patch, tour, token: token, json: #"{"localized":{"es":{"name":"Lago"}}}"#)
            #expect(notYet.status == .unprocessableContent && notYet.errorFields["language"]?.contains("is not published in Spanish") == true)
            #expect(try await env.database.tour(id: env.seed.tourId)?.languages == ["en"], "nothing saved")

            let saved = try await client.api(
                .patch,
                tour,
                token: token,
                json: #"{"languages":["en","ES"],"localized":{"es":{"name":"Ruta del lago","description":"Un paseo."}}}"#
            )
            #expect(saved.status == .ok, "\(saved.text)")
            #expect(saved.jsonObject["languages"] as? [String] == ["en", "es"])
            #expect((saved.jsonObject["localized"] as? [String: [String: String]])?["es"] == ["name": "Ruta del lago", "description": "Un paseo."])
            let waypoint = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"Lago Fish"}}}"#
            )
            #expect(waypoint.status == .ok && (waypoint.jsonObject["localized"] as? [String: [String: String]])?["es"]?["name"] == "Lago Fish")
            let added = try await client.api(
                .post,
                "\(tour)/waypoints",
                token: token,
                json: #"{"name":"Summit View","latitude":44.4,"longitude":-122.05,"localized":{"es":{"name":"Mirador","description":"Arriba."}}}"#
            )
            #expect(
                added.status == .created && (added.jsonObject["localized"] as? [String: [String: String]])?["es"]?["name"] == "Mirador",
                "\(added.text)"
            )
            let tooLong = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"\#(String(repeating: "n", count: 121))"}}}"#
            )
            #expect(tooLong.status == .unprocessableContent && tooLong.errorFields["name"] != nil)
            #expect(
                try await env.database.waypoints(tourId: env.seed.tourId).first?.localized["es"]?.name == "Lago Fish",
                "the refused text was not saved"
            )
            let read = try await client.api(.get, tour, token: token)
            #expect(
                (read.jsonObject["waypoints"] as? [[String: Any]])?.first?["localized"] as? [String: [String: String]] == [
                    "es": ["name": "Lago Fish", "description": ""]
                ]
            )
        }
    }

    @Test("removing a language whose texts remain is refused naming them, and done when confirmed; a new default swaps the texts")
    func removeAndSwap() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            _ = try await client.api(.patch, tour, token: token, json: #"{"languages":["en","es","fr"],"localized":{"es":{"name":"Ruta del lago"}}}"#)
            // The default becomes Spanish only when the tour and every waypoint have a Spanish name.
            let early = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en","fr"]}"#)
            #expect(
                early.status == .unprocessableContent && early.errorFields["languages"]?.contains("Write Spanish names for “Fish Lake”") == true,
                "\(early.text)"
            )
            _ = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"Lago Fish"}}}"#
            )
            let swapped = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en","fr"]}"#)
            #expect(swapped.status == .ok, "\(swapped.text)")
            let stored = try #require(try await env.database.tour(id: env.seed.tourId))
            #expect(stored.name == "Ruta del lago" && stored.localized["en"]?.name == "Ridge Walk", "\(stored.name) \(stored.localized)")
            #expect(
                try await env.database.waypoints(tourId: env.seed.tourId).first.map { ($0.name, $0.localized["en"]?.name) }! == (
                    "Lago Fish", "Fish Lake"
                )
            )

            // A PATCH that swaps the default and changes another field keeps the swapped texts (it starts from them).
            let both = try await client.api(.patch, tour, token: token, json: #"{"languages":["en","es","fr"],"paceKmh":5}"#)
            #expect(both.status == .ok && both.jsonObject["name"] as? String == "Ridge Walk", "\(both.text)")
            #expect(
                try await env.database.tour(id: env.seed.tourId)?.localized["es"]?.name == "Ruta del lago",
                "the Spanish name survived the swap back"
            )
            _ = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en","fr"]}"#)

            // French has no texts: removed at once. English has: refused, then confirmed.
            let french = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en"]}"#)
            #expect(french.status == .ok)
            let refused = try await client.api(.patch, tour, token: token, json: #"{"languages":["es"]}"#)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.errorFields["languages"]?.contains("English still has texts of the tour, “Lago Fish”") == true, "\(refused.text)")
            #expect(try await env.database.tour(id: env.seed.tourId)?.languages == ["es", "en"], "nothing changed")
            let confirmed = try await client.api(.patch, tour, token: token, json: #"{"languages":["es"],"confirmLanguageRemoval":true}"#)
            #expect(confirmed.status == .ok)
            #expect(try await env.database.tour(id: env.seed.tourId)?.localized.isEmpty == true)
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).allSatisfy { $0.localized.isEmpty })
        }
    }

    @Test("a new default language: two stops with one name in it are refused by name; names that trade places swap cleanly")
    func swapNames() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            let added = try await client.api(
                .post,
                "\(tour)/waypoints",
                token: token,
                json: #"{"name":"Summit","latitude":44.4,"longitude":-122.05}"#
            )
            let (first, second) = (env.seed.waypointId, Int64(try #require(publishInt(added.jsonObject["id"]), "\(added.text)")))
            let names = try await env.database.waypoints(tourId: env.seed.tourId).map(\.name)
            _ = try await client.api(.patch, tour, token: token, json: #"{"languages":["en","es"],"localized":{"es":{"name":"Ruta"}}}"#)
            for id in [first, second] {
                _ = try await client.api(.patch, "\(tour)/waypoints/\(id)", token: token, json: #"{"localized":{"es":{"name":"Mirador"}}}"#)
            }
            let clash = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en"]}"#)
            #expect(
                clash.status == .unprocessableContent
                    && clash.errorFields["languages"]?.contains("Two waypoints would both be called “Mirador” in Spanish") == true,
                "\(clash.text)"
            )
            #expect(try await env.database.tour(id: env.seed.tourId)?.languages == ["en", "es"])
            // Each stop's Spanish name is the other's English one: the swap goes through the unique index cleanly.
            _ = try await client.api(.patch, "\(tour)/waypoints/\(first)", token: token, json: #"{"localized":{"es":{"name":"\#(names[1])"}}}"#)
            _ = try await client.api(.patch, "\(tour)/waypoints/\(second)", token: token, json: #"{"localized":{"es":{"name":"\#(names[0])"}}}"#)
            let swapped = try await client.api(.patch, tour, token: token, json: #"{"languages":["es","en"]}"#)
            #expect(swapped.status == .ok, "\(swapped.text)")
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).map(\.name) == [names[1], names[0]])
        }
    }

    @Test("a file for one language: set, refused for a language the tour lacks, cleared with null; removing its language makes it every language's")
    func assetLanguage() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let ids = try await env.addCleanMedia(client, token: token)
            let image = "/api/v1/manage/assets/\(ids[0])"
            let outside = try await client.api(.patch, image, token: token, json: #"{"title":"Shore","language":"es"}"#)
            #expect(outside.status == .unprocessableContent && outside.errorFields["language"]?.contains("not published in Spanish") == true)
            #expect(try await env.database.asset(id: ids[0])?.title == "", "refused in part, the title was not saved either")
            _ = try await client.api(.patch, "/api/v1/manage/tours/\(env.seed.tourId)", token: token, json: #"{"languages":["en","es"]}"#)
            let set = try await client.api(.patch, image, token: token, json: #"{"language":"ES"}"#)
            #expect(set.status == .ok && set.jsonObject["language"] as? String == "es", "\(set.text)")
            let title = try await client.api(.patch, image, token: token, json: #"{"title":"Lake"}"#)
            #expect(title.jsonObject["language"] as? String == "es", "a PATCH without the key keeps the language")
            let refusedRemoval = try await client.api(.patch, "/api/v1/manage/tours/\(env.seed.tourId)", token: token, json: #"{"languages":["en"]}"#)
            #expect(refusedRemoval.errorFields["languages"]?.contains("Spanish still has 1 file(s)") == true, "\(refusedRemoval.text)")
            let cleared = try await client.api(.patch, image, token: token, json: #"{"language":null}"#)
            #expect(cleared.status == .ok && cleared.jsonObject["language"] as? String == nil, "every language: the key is left out")
            _ = try await client.api(.patch, image, token: token, json: #"{"language":"es"}"#)
            _ = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(env.seed.tourId)",
                token: token,
                json: #"{"languages":["en"],"confirmLanguageRemoval":true}"#
            )
            #expect(try await env.database.asset(id: ids[0])?.language == nil)
        }
    }

    @Test("checklist: missing texts are warnings, or refusals when the site requires complete languages; the package carries every language key")
    func checklistAndPackage() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let ids = try await env.addCleanMedia(client, token: token)
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            _ = try await client.api(.patch, tour, token: token, json: #"{"languages":["en","es"],"description":"A walk around the lake."}"#)
            var readiness = try await env.database.publishReadiness(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            #expect(readiness.problems.isEmpty)
            #expect(readiness.warnings.contains("Spanish: the tour lacks its name and description."), "\(readiness.warnings)")
            #expect(readiness.warnings.contains { $0.hasPrefix("Spanish: waypoint “Fish Lake” lacks its name") }, "\(readiness.warnings)")
            try await env.sql("UPDATE site SET requireCompleteLanguages = 1 WHERE id = ?", [env.seed.alphaId])
            let refused = try await client.api(.post, "\(tour)/publish", token: token)
            #expect(
                refused.status == .unprocessableContent && refused.errorFields.values.contains("Spanish: the tour lacks its name and description.")
            )

            _ = try await client.api(
                .patch,
                tour,
                token: token,
                json: #"{"localized":{"es":{"name":"Ruta del lago","description":"Un paseo alrededor del lago."}}}"#
            )
            _ = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"Lago Fish","description":"Agua fría."}}}"#
            )
            _ = try await client.api(.patch, "/api/v1/manage/assets/\(ids[1])", token: token, json: #"{"language":"en"}"#)
            readiness = try await env.database.publishReadiness(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)
            #expect(readiness.problems.isEmpty && readiness.warnings.isEmpty, "\(readiness)")

            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            let manifest = try Manifest.decode(Data(try #require(request.manifestJSON).utf8))
            #expect(manifest.languages == ["en", "es"] && manifest.validate().isEmpty)
            #expect(manifest.localized == ["es": Manifest.TourText(packageName: "Ruta del lago", description: "Un paseo alrededor del lago.")])
            #expect(manifest.waypoints[0].localized == ["es": Manifest.WaypointText(name: "Lago Fish", description: "Agua fría.")])
            #expect(manifest.waypoints[0].assets.map(\.language) == [nil, "en", nil])
            #expect(manifest.waypoints[0].assets[1].captions?.language == "en", "the video's captions are in its language")
            let check = try await TestScripts.python("package_v1_check.py", [env.stagedZip(request.id).path, env.publicKey])
            #expect(check.stdout.contains(#""valid": true"#), "a v1 reader still verifies: \(check.stdout) \(check.stderr)")
            // waypoints.geojson carries the texts as name:es / description:es.
            let geoJSON = try await #require(try JSONSerialization.jsonObject(with: Self.export(env)) as? [String: Any])
            let properties = ((geoJSON["features"] as? [[String: Any]])?.first?["properties"] as? [String: Any]) ?? [:]
            #expect(properties["name:es"] as? String == "Lago Fish" && properties["description:es"] as? String == "Agua fría.")

            // The review page and the phone preview switch language.
            let session = try await client.signIn("reviewer@test.org")
            let spanish = try await client.get("/requests/\(request.id)?lang=es", session: session)
            #expect(spanish.text.contains(#"href="/requests/\#(request.id)?lang=es" hreflang="es" aria-current="page">Spanish (Español)</a>"#))
            #expect(spanish.text.contains("1. Lago Fish"))
            #expect(try await client.get("/requests/\(request.id)", session: session).text.contains("1. Fish Lake"))
            #expect(spanish.text.contains("Only in English"), "the reviewer sees the file's language")
            let preview = try await client.get("/requests/\(request.id)/preview?lang=es", session: session)
            #expect(preview.text.contains(#"<div class="phone-screen" lang="es">"#) && preview.text.contains("Lago Fish"))
        }
    }

    @Test("GeoJSON import reads name:es and description:es back for the tour's languages; an unknown language in a key refuses the file")
    func geoJSONRoundTrip() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            _ = try await client.api(.patch, tour, token: token, json: #"{"languages":["en","es"]}"#)
            _ = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"Lago Fish","description":"Agua fría."}}}"#
            )
            let exported = try await Self.export(env)
            // Wipe the Spanish text, then import the export: it comes back.
            _ = try await client.api(
                .patch,
                "\(tour)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"localized":{"es":{"name":"","description":""}}}"#
            )
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).first?.localized.isEmpty == true)
            let imported = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: exported,
                name: "lake.geojson",
                dryRun: false
            )
            #expect(imported.status == .ok, "\(imported.text)")
            #expect(
                try await env.database.waypoints(tourId: env.seed.tourId).first?.localized["es"]
                    == LocalizedText(name: "Lago Fish", description: "Agua fría.")
            )
            let text = String(decoding: exported, as: UTF8.self).replacingOccurrences(of: "\"name:es\"", with: "\"name:qq\"")
            let refused = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: Data(text.utf8),
                name: "bad.geojson",
                dryRun: false
            )
            #expect(refused.status == .unprocessableContent && refused.text.contains("name:qq"), "\(refused.text)")
        }
    }

    @Test("panel: the language tabs, a Spanish version of a waypoint saved from its tab, the languages form asks before deleting texts")
    func panel() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let session = try await client.signIn("author@test.org")
            let saved = try await client.post(
                "/tours/\(env.seed.tourId)/languages",
                form: ["defaultLanguage": "en", "language[]": "es"],
                session: session
            )
            #expect(saved.status == .seeOther, "\(saved.text)")
            let waypointURL = "/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)"
            let tab = try await client.get("\(waypointURL)?lang=es", session: session)
            #expect(
                tab.text.contains(
                    #"<a class="nav-link active" href="\#(waypointURL)?lang=es" hreflang="es" aria-current="page">Spanish (Español)</a>"#
                )
            )
            #expect(tab.text.contains(#"<label for="tr-name" class="form-label">Name in Spanish (Español)</label>"#))
            #expect(!tab.text.contains(#"id="waypoint-edit-form""#), "the default language's form is on its own tab")
            let text = try await client.post("\(waypointURL)/text/es", form: ["name": "Lago Fish", "description": "Agua fría."], session: session)
            #expect(text.status == .seeOther && text.location == "\(waypointURL)?lang=es")
            #expect(
                try await env.database.waypoints(tourId: env.seed.tourId).first?.localized["es"]
                    == LocalizedText(name: "Lago Fish", description: "Agua fría.")
            )
            let wrong = try await client.post("\(waypointURL)/text/fr", form: ["name": "Lac"], session: session)
            #expect(wrong.status == .unprocessableContent && wrong.text.contains("is not published in French"), "\(wrong.text)")

            // The tour's own texts have tabs on its edit page too.
            let tourTab = try await client.get("/tours/\(env.seed.tourId)/edit?lang=es", session: session)
            #expect(tourTab.text.contains(#"action="/tours/\#(env.seed.tourId)/text/es""#) && tourTab.text.contains("English: Ridge Walk"))
            let tourText = try await client.post(
                "/tours/\(env.seed.tourId)/text/es",
                form: ["name": "Paseo de la cresta", "description": "Un paseo."],
                session: session
            )
            #expect(tourText.status == .seeOther && tourText.location == "/tours/\(env.seed.tourId)/edit?lang=es")
            #expect(
                try await env.database.tour(id: env.seed.tourId)?.localized["es"]
                    == LocalizedText(name: "Paseo de la cresta", description: "Un paseo.")
            )
            let defaultText = try await client.post("/tours/\(env.seed.tourId)/text/en", form: ["name": "x"], session: session)
            #expect(defaultText.status == .unprocessableContent && defaultText.text.contains("the tour&#39;s own form"), "\(defaultText.text)")

            let removal = try await client.post("/tours/\(env.seed.tourId)/languages", form: ["defaultLanguage": "en"], session: session)
            #expect(removal.status == .unprocessableContent)
            #expect(
                removal.text.contains("Spanish still has texts of the tour, “Fish Lake”") && removal.text.contains(#"id="confirm-removal""#),
                "\(removal.text.prefix(0))"
            )
            let confirmed = try await client.post(
                "/tours/\(env.seed.tourId)/languages",
                form: ["defaultLanguage": "en", "confirmRemoval": "on"],
                session: session
            )
            #expect(confirmed.status == .seeOther)
            #expect(try await env.database.tour(id: env.seed.tourId)?.languages == ["en"])
        }
    }
}
