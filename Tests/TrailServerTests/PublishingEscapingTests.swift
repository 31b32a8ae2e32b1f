import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The publishing pages show texts typed by rangers and reviewers (tour and waypoint texts, file names, the manifest,
/// comments): every one comes back escaped.
@Suite(.scratch) struct PublishingEscapingTests {
    @Test func reviewQueueRequestPackageAndTourPagesEscapeEveryText() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let payload = Payload.raw
        let token = try await env.token("author@test.org")
        _ = try await env.database.updateTour(
            id: env.seed.tourId,
            TourInput(name: payload, description: payload, mapName: "ridge-walk"),
            actor: .system
        )
        _ = try await env.database.updateWaypoint(
            tourId: env.seed.tourId,
            waypointId: env.seed.waypointId,
            WaypointInput(name: payload, description: payload, latitude: 44.40, longitude: -122.0),
            actor: .system
        )
        try await env.app.test { client in
            // A text file whose name is the payload (quotes left out: they cannot appear in a multipart file name).
            let fileName = payload.replacingOccurrences(of: "\"", with: "") + ".txt"
            _ = try await client.publishUpload(
                env,
                token: token,
                data: Data("Notes about the lake.\n".utf8),
                fileName: fileName,
                contentType: "text/plain"
            )
            #expect(await env.scanAll() == 1)
            let rid = try await client.publishSubmit(env, token: token)
            #expect(await env.buildAll() == 1)

            let reviewer = try await client.signIn("reviewer@test.org")
            for path in ["/reviews", "/requests/\(rid)", "/requests/\(rid)/preview"] {
                let page = try await client.get(path, session: reviewer)
                #expect(page.status == .ok, "\(path)")
                Payload.expectEscaped(page.text, path)
            }
            // A denial whose comment is the payload: shown on the request and on the tour page.
            let denied = try await client.post("/requests/\(rid)/deny", form: ["comment": payload], session: reviewer)
            #expect(denied.status == .seeOther)
            let author = try await client.signIn("author@test.org")
            for path in ["/requests/\(rid)", "/tours/\(env.seed.tourId)"] {
                let page = try await client.get(path, session: author)
                #expect(page.status == .ok, "\(path)")
                #expect(page.text.contains(Payload.escaped), "\(path) shows the comment")
                Payload.expectEscaped(page.text, path)
            }

            // Submitted again, approved with the payload as comment, released: the package page.
            let second = try await client.publishSubmit(env, token: token)
            #expect(await env.buildAll() == 1)
            #expect(try await client.post("/requests/\(second)/approve", form: ["comment": payload], session: reviewer).status == .seeOther)
            #expect(try await client.publishAction(second, "push", token: token).status == .ok)
            let packageId = try await env.request(second).packageId
            for path in ["/requests/\(second)", "/packages/\(packageId)", "/packages/\(packageId)/versions/1/preview"] {
                let page = try await client.get(path, session: author)
                #expect(page.status == .ok, "\(path)")
                Payload.expectEscaped(page.text, path)
            }
        }
    }
}
