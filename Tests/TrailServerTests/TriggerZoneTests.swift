import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Trigger zones. A radius per waypoint (default 30, 5–500 whole metres) through the panel and the API,
/// refused with a message next to the field when wrong (and nothing saved), overlaps warned about, carried in the
/// manifest (a v1 reader still verifies the package) and in the GeoJSON export, read back by the import.
@Suite(.scratch) struct TriggerZoneTests {
    static func radius(_ env: TestEnv, _ waypointId: Int64) async throws -> Int? {
        try await env.database.read { try Int.fetchOne($0, sql: "SELECT triggerRadiusMeters FROM waypoint WHERE id = ?", arguments: [waypointId]) }
    }

    @Test("API: default 30, set on create and by PATCH; 0, negative, 501, 30.5 and text are 422 on the field and change nothing")
    func apiRadius() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            let base = "/api/v1/manage/tours/\(env.seed.tourId)/waypoints"
            await #expect(try Self.radius(env, env.seed.waypointId) == 30, "existing waypoints get the default")
            let created = try await client.api(
                .post,
                base,
                token: token,
                json: #"{"name":"Cone Peak","latitude":44.41,"longitude":-122.03,"triggerRadiusMeters":45}"#
            )
            #expect(created.status == .created && created.jsonObject["triggerRadiusMeters"] as? Int == 45, "\(created.text)")
            let plain = try await client.api(.post, base, token: token, json: #"{"name":"Iron Mountain","latitude":44.42,"longitude":-122.1}"#)
            #expect(plain.jsonObject["triggerRadiusMeters"] as? Int == 30)
            let patched = try await client.api(.patch, "\(base)/\(env.seed.waypointId)", token: token, json: #"{"triggerRadiusMeters":120}"#)
            #expect(patched.status == .ok && patched.jsonObject["triggerRadiusMeters"] as? Int == 120)

            let count = try await env.database.waypoints(tourId: env.seed.tourId).count
            for bad in ["0", "-5", "501", "30.5", #""thirty""#, #""""#, "1e300", "-1e300", "1e20", #""1e300""#] {
                let patch = try await client.api(.patch, "\(base)/\(env.seed.waypointId)", token: token, json: #"{"triggerRadiusMeters":\#(bad)}"#)
                #expect(patch.status == .unprocessableContent, "\(bad): \(patch.status) \(patch.text)")
                let fields = (patch.jsonObject["error"] as? [String: Any])?["fields"] as? [String: String]
                #expect(fields?["triggerRadiusMeters"]?.contains("5 to 500") == true, "\(bad): \(patch.text)")
                let create = try await client.api(
                    .post,
                    base,
                    token: token,
                    json: #"{"name":"Bad \#(bad.count)","latitude":44.4,"longitude":-122.05,"triggerRadiusMeters":\#(bad)}"#
                )
                #expect(create.status == .unprocessableContent, "\(bad): \(create.text)")
            }
            await #expect(try Self.radius(env, env.seed.waypointId) == 120, "nothing refused was saved")
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).count == count)
        }
    }

    @Test("panel: the number field saves; a bad value comes back next to the field with the page's other input kept")
    func panelRadius() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let session = try await client.signIn("author@test.org")
            let uri = "/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)"
            let page = try await client.get(uri, session: session)
            #expect(page.text.contains(#"<label for="wp-radius" class="form-label">Trigger radius (metres)</label>"#))
            #expect(page.text.contains(#"name="triggerRadiusMeters" value="30""#))
            let fields = ["name": "Fish Lake", "description": "Edited", "latitude": "44.4", "longitude": "-122.0"]
            for bad in ["0", "abc", "600", "1e300"] {
                let refused = try await client.post(uri, form: fields.merging(["triggerRadiusMeters": bad]) { $1 }, session: session)
                #expect(refused.status == .unprocessableContent, "\(bad): \(refused.status)")
                #expect(
                    refused.text.contains("is-invalid\" id=\"wp-radius\"") && refused.text.contains("whole number of metres from 5 to 500"),
                    "\(bad)"
                )
                #expect(refused.text.contains(#"value="Edited""#) || refused.text.contains(">Edited</textarea>"), "the other input is kept")
            }
            await #expect(try Self.radius(env, env.seed.waypointId) == 30)
            #expect(try await env.database.waypoints(tourId: env.seed.tourId).first?.description == "", "nothing was saved")
            let saved = try await client.post(uri, form: fields.merging(["triggerRadiusMeters": "75"]) { $1 }, session: session)
            #expect(saved.status == .seeOther, "\(saved.status) \(saved.text)")
            await #expect(try Self.radius(env, env.seed.waypointId) == 75)
        }
    }

    @Test("overlapping zones are a warning on the tour page and colour both circles; the tour can still be submitted")
    func overlapsWarn() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            try await env.addCleanMedia(client, token: token)
            // 44.4003 is about 33 m north of Fish Lake (44.40): two 30 m zones overlap.
            let near = try await client.api(
                .post,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints",
                token: token,
                json: #"{"name":"Boat Ramp","latitude":44.4003,"longitude":-122.0}"#
            )
            let nearId = try #require(near.jsonObject["id"] as? Int)
            let session = try await client.signIn("author@test.org")
            var page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(page.text.contains(#"id="publish-warnings""#))
            #expect(page.text.contains("The trigger zones of “Fish Lake” (30 m) and “Boat Ramp” (30 m) overlap"))
            #expect(page.text.components(separatedBy: "zone overlaps</span>").count == 3, "both rows are marked")
            #expect(page.text.contains("&quot;overlaps&quot;:true"), "the map draws them in the warning colour")
            #expect(
                !(try await env.database.publishChecklist(tourId: env.seed.tourId, tiles: env.app.dependencies.tileSettings.current)).contains {
                    $0.contains("trigger")
                },
                "a warning, not a refusal"
            )

            _ = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(nearId)",
                token: token,
                json: #"{"triggerRadiusMeters":5}"#
            )
            _ = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(env.seed.tourId)/waypoints/\(env.seed.waypointId)",
                token: token,
                json: #"{"triggerRadiusMeters":20}"#
            )
            page = try await client.get("/tours/\(env.seed.tourId)", session: session)
            #expect(!page.text.contains("overlap: an app would start both stops at once"), "20 m + 5 m < 33 m: no overlap")
        }
    }

    @Test("the manifest carries every waypoint's radius, a v1 reader still verifies the package, the GeoJSON round trip keeps it")
    func manifestAndGeoJSON() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            let token = try await env.token("author@test.org")
            try await env.addCleanMedia(client, token: token)
            let base = "/api/v1/manage/tours/\(env.seed.tourId)/waypoints"
            _ = try await client.api(.patch, "\(base)/\(env.seed.waypointId)", token: token, json: #"{"triggerRadiusMeters":85}"#)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            let check = try await TestScripts.python("package_v1_check.py", [env.stagedZip(request.id).path, env.publicKey])
            let result = try #require(
                try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any],
                "\(check.stdout) \(check.stderr)"
            )
            #expect(result["valid"] as? Bool == true, "\(result["problems"] ?? "")")
            let waypoints = try #require((result["manifest"] as? [String: Any])?["waypoints"] as? [[String: Any]])
            #expect(waypoints.map { $0["triggerRadiusMeters"] as? Int } == [85])

            // Export, change the radius, import the export: the file's radius comes back. A bad one is refused whole.
            let export = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/export.geojson", token: token)
            #expect(export.text.contains(#""triggerRadiusMeters":85"#), "\(export.text)")
            _ = try await client.api(.post, "/api/v1/manage/publish-requests/\(request.id)/withdraw", token: token)
            _ = try await client.api(.patch, "\(base)/\(env.seed.waypointId)", token: token, json: #"{"triggerRadiusMeters":200}"#)
            let bad = Data(export.text.replacingOccurrences(of: #""triggerRadiusMeters":85"#, with: #""triggerRadiusMeters":0"#).utf8)
            let refused = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: bad,
                name: "bad.geojson",
                dryRun: false
            )
            #expect(refused.status == .unprocessableContent && refused.text.contains("triggerRadiusMeters"), "\(refused.text)")
            await #expect(try Self.radius(env, env.seed.waypointId) == 200)
            let imported = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: Data(export.text.utf8),
                name: "round.geojson",
                dryRun: false
            )
            #expect(imported.status == .ok, "\(imported.text)")
            await #expect(try Self.radius(env, env.seed.waypointId) == 85)
        }
    }
}
