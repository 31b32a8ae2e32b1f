import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import Testing

@testable import TrailServer

/// The whole publish workflow with two approvals required: clean uploads, submit, build, two reviews, release,
/// a second version, unpublish, publish again and roll back. Once through the management API, once through the pages.
@Suite("Publishing: the whole workflow (two approvals required)", .scratch)
struct PublishingFlowTests {
    @Test("Through the management API: upload, scan, submit, build, two approvals, push; version 2; unpublish, publish, roll back")
    func throughTheAPI() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let author = try await env.token("author@test.org")
        let reviewer = try await env.token("reviewer@test.org")
        let reviewer2 = try await env.token("reviewer2@test.org")
        let manager = try await env.token("manager@test.org")
        let tourURI = "/api/v1/manage/tours/\(env.seed.tourId)"
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: author)
            let catalogAtStart = try await env.database.catalogVersion()

            // Submit: 202, the request is building and the tour is locked.
            let rid = try await client.publishSubmit(env, token: author)
            var state = try await client.publishState(rid, token: author)
            #expect(state["state"] as? String == "building")
            #expect(state["requiredApprovals"] as? Int == 2)
            #expect(state["approvals"] as? Int == 0)
            await #expect(try env.tour().state == .inReview)
            let locked = try await client.api(.patch, tourURI, token: author, json: #"{"description":"changed while in review"}"#)
            #expect(locked.status == .conflict, "\(locked.text)")

            // Build.
            #expect(await env.buildAll() == 1)
            state = try await client.publishState(rid, token: author)
            #expect(state["state"] as? String == "pending", "\(state)")
            let sha = try #require(state["sha256"] as? String)
            #expect(sha.count == 64)
            #expect((state["size"] as? Int ?? 0) > 160_000)
            let progress = state["progress"] as? [String: Any]
            #expect(
                progress?["filesDone"] as? Int == 4 && progress?["filesTotal"] as? Int == 4,
                "three files and the video's captions: \(String(describing: progress))"
            )
            #expect(try MediaFixtures.sha256(fileAt: env.stagedZip(rid)) == sha)
            try await expectPackageMatchesManifest(env.stagedZip(rid))

            // First approval: still pending; a push now is refused.
            var response = try await client.publishAction(rid, "approve", token: reviewer, json: #"{"comment":"The video plays."}"#)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.jsonObject["state"] as? String == "pending")
            #expect(response.jsonObject["approvals"] as? Int == 1)
            response = try await client.publishAction(rid, "push", token: author)
            #expect(response.status == .conflict, "\(response.text)")

            // Second approval: ready.
            response = try await client.publishAction(rid, "approve", token: reviewer2)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.jsonObject["state"] as? String == "ready")
            #expect(response.jsonObject["approvals"] as? Int == 2)
            await #expect(try env.auditCount("publish.approve.ready", objectId: rid) == 1)

            // The author pushes: version 1.
            response = try await client.publishAction(rid, "push", token: author)
            #expect(response.status == .ok, "\(response.text)")
            let packageId = try #require(response.jsonObject["packageId"] as? String)
            #expect(response.jsonObject["version"] as? Int == 1)
            #expect(response.jsonObject["sha256"] as? String == sha)
            let zip1 = env.packageZip(packageId, version: 1)
            #expect(env.exists(zip1), "data/packages/\(packageId)/1.zip is missing")
            #expect(try MediaFixtures.sha256(fileAt: zip1) == sha)
            #expect(!env.exists(env.stagingFolder(rid)), "the staging folder outlived the release")
            let catalogAfterV1 = try await env.database.catalogVersion()
            #expect(catalogAfterV1 > catalogAtStart)
            await #expect(try env.tour().state == .published)
            await #expect(try env.request(rid).state == .published)
            var package = try await env.package(packageId)
            #expect(package.isVisible && package.currentVersion == 1)
            #expect(try await env.database.packageVersion(packageId: packageId, version: 1)?.sha256 == sha)
            let report = PackageVerifier.verify(zipAt: zip1, publicKeyBase64: env.publicKey)
            #expect(report.isValid, "\(report.problems)")
            #expect(report.manifest?.version == 1 && report.manifest?.packageId == packageId)
            // The mobile API serves it now.
            var mobile = try await client.api(.get, "/api/v1/packages/\(packageId)/hash", token: nil)
            #expect(mobile.status == .ok && mobile.jsonObject["sha256"] as? String == sha, "\(mobile.status) \(mobile.text)")
            for action in ["publish.start", "publish.built", "publish.approve", "publish.approve.ready", "publish.push"] {
                await #expect(try env.auditCount(action) >= 1, "no audit event \(action)")
            }

            // Version 2: edit the released tour, add a waypoint, submit, build, two approvals, push.
            response = try await client.api(.patch, tourURI, token: author, json: #"{"description":"Now with the prairie."}"#)
            #expect(response.status == .ok, "\(response.text)")
            response = try await client.api(
                .post,
                "\(tourURI)/waypoints",
                token: author,
                json: #"{"name":"Lost Prairie","latitude":44.4036,"longitude":-122.0623,"description":"A meadow camp."}"#
            )
            #expect(response.status == .created, "\(response.text)")
            let rid2 = try await client.publishSubmit(env, token: author)
            #expect(rid2 != rid)
            #expect(await env.buildAll() == 1)
            await #expect(try env.request(rid2).version == 2)
            #expect(try await client.publishAction(rid2, "approve", token: reviewer2).status == .ok)
            #expect(try await client.publishAction(rid2, "approve", token: reviewer).status == .ok)
            response = try await client.publishAction(rid2, "push", token: author)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.jsonObject["version"] as? Int == 2)
            #expect(response.jsonObject["packageId"] as? String == packageId, "a second version must belong to the same package")
            let zip2 = env.packageZip(packageId, version: 2)
            #expect(env.exists(zip2) && env.exists(zip1))
            let report2 = PackageVerifier.verify(zipAt: zip2, publicKeyBase64: env.publicKey)
            #expect(report2.isValid, "\(report2.problems)")
            #expect(report2.manifest?.version == 2)
            #expect(report2.manifest?.waypoints.map(\.name) == ["Fish Lake", "Lost Prairie"])
            #expect(report2.manifest?.description == "Now with the prairie.")
            package = try await env.package(packageId)
            #expect(package.currentVersion == 2 && package.isVisible)
            let catalogAfterV2 = try await env.database.catalogVersion()
            #expect(catalogAfterV2 > catalogAfterV1)

            // Unpublish: only a manager; the package is hidden.
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/unpublish", token: author)
            #expect(response.status == .forbidden, "an author unpublished: \(response.status)")
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/unpublish", token: manager)
            #expect(response.status == .ok, "\(response.text)")
            await #expect(try env.package(packageId).isVisible == false)
            mobile = try await client.api(.get, "/api/v1/packages/\(packageId)/hash", token: nil)
            #expect(mobile.status == .notFound || mobile.status == .gone, "an unpublished package is still served: \(mobile.status)")
            let catalogAfterUnpublish = try await env.database.catalogVersion()
            #expect(catalogAfterUnpublish > catalogAfterV2)
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/unpublish", token: manager)
            #expect(response.status == .conflict, "unpublishing twice: \(response.status)")

            // Publish again.
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/publish", token: manager)
            #expect(response.status == .ok, "\(response.text)")
            await #expect(try env.package(packageId).isVisible)
            mobile = try await client.api(.get, "/api/v1/packages/\(packageId)/hash", token: nil)
            #expect(mobile.status == .ok && publishInt(mobile.jsonObject["version"]) == 2)

            // Roll back to version 1.
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/rollback", token: manager, json: #"{"version":1}"#)
            #expect(response.status == .ok, "\(response.text)")
            package = try await env.package(packageId)
            #expect(package.currentVersion == 1 && package.isVisible)
            #expect(try await env.database.catalogVersion() > catalogAfterUnpublish)
            mobile = try await client.api(.get, "/api/v1/packages/\(packageId)/download", token: nil)
            #expect(mobile.status == .ok)
            #expect(MediaFixtures.sha256(Data(buffer: mobile.body)) == sha, "after the rollback the download is not version 1")
            response = try await client.api(.post, "/api/v1/manage/packages/\(packageId)/rollback", token: manager, json: #"{"version":7}"#)
            #expect(response.status == .unprocessableContent, "rollback to a version that does not exist: \(response.status)")
            await #expect(try env.package(packageId).currentVersion == 1)
            #expect(try await env.database.packageVersions(packageId: packageId).map(\.version) == [2, 1])
            for action in ["package.unpublish", "package.publish", "package.rollback"] {
                await #expect(try env.auditCount(action, objectId: packageId) == 1, "audit events \(action)")
            }
        }
    }

    @Test("Through the pages: form posts with CSRF tokens, the review queue and request page, release, unpublish, publish, roll back")
    func throughThePages() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let tourId = env.seed.tourId
        try await env.app.test { client in
            var author = try await client.signIn("author@test.org")

            // Upload through the panel's form (multipart, the CSRF token its first field), then scan.
            for (data, name, type) in [
                (MediaFixtures.png(size: 30_000, seed: 5), "view.png", "image/png"),
                (MediaFixtures.text("Stop one."), "stop.txt", "text/plain"),
            ] {
                let boundary = "----WebKitFormBoundary\(UUID().uuidString.prefix(16))"
                let response = try await client.execute(
                    uri: "/tours/\(tourId)/waypoints/\(env.seed.waypointId)/assets",
                    method: .post,
                    headers: [.cookie: author.cookieHeader, .contentType: "multipart/form-data; boundary=\(boundary)"],
                    body: PublishFixtures.multipart(data, fileName: name, contentType: type, boundary: boundary, csrf: author.csrf)
                )
                #expect(response.status == .seeOther, "panel upload of \(name): \(response.status) \(response.text)")
            }
            #expect(await env.scanAll() == 2)
            // The image's alt text through the waypoint page's form (the site requires it before submitting).
            let image = try #require(try await env.database.assets(waypointId: env.seed.waypointId).first { $0.kind == .image })
            let described = try await client.post(
                "/assets/\(image.id)/describe",
                form: ["title": "View", "altText": "The view from stop one."],
                session: author
            )
            #expect(described.status == .seeOther)

            // The tour page offers submission; a form post without the CSRF token is refused and changes nothing.
            var page = try await client.get("/tours/\(tourId)", session: author)
            author.absorb(page)
            #expect(page.text.contains("action=\"/tours/\(tourId)/publish\""), "no submit form on a ready tour")
            let forged = try await client.post("/tours/\(tourId)/publish", form: [:], session: author, csrf: "not-the-token")
            #expect(forged.status == .forbidden)
            #expect(try await env.database.openRequest(tourId: tourId) == nil)

            var response = try await client.post("/tours/\(tourId)/publish", form: [:], session: author)
            #expect(response.status == .seeOther, "\(response.status) \(response.text)")
            let location = try #require(response.location)
            #expect(location.hasPrefix("/requests/"))
            let rid = String(location.dropFirst("/requests/".count))
            page = try await client.get("/tours/\(tourId)", session: author)
            #expect(page.text.contains("id=\"locked-banner\""), "no read-only banner while the request is open")
            page = try await client.get(location, session: author)
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"build-progress\""))

            #expect(await env.buildAll() == 1)
            await #expect(try env.request(rid).state == .pending)

            // Both reviewers: the queue lists the request, the request page has the approve form.
            for (index, email) in ["reviewer@test.org", "reviewer2@test.org"].enumerated() {
                var session = try await client.signIn(email)
                let queue = try await client.get("/reviews", session: session)
                #expect(queue.text.contains("/requests/\(rid)"), "\(email)'s queue does not list the request")
                page = try await client.get(location, session: session)
                session.absorb(page)
                #expect(page.text.contains("id=\"approve-form\""), "\(email) sees no approve form")
                #expect(page.text.contains("id=\"package-sha\""))
                response = try await client.post("\(location)/approve", form: ["comment": "Checked by \(email)."], session: session)
                #expect(response.status == .seeOther, "\(email) approve: \(response.status) \(response.text)")
                page = try await client.get(location, session: session)
                #expect(page.text.contains("\(index + 1) of 2"), "approval count after \(email)")
            }
            await #expect(try env.request(rid).state == .ready)

            // The author releases.
            page = try await client.get(location, session: author)
            author.absorb(page)
            #expect(page.text.contains("id=\"push-button\""))
            response = try await client.post("\(location)/push", form: [:], session: author)
            #expect(response.status == .seeOther, "\(response.status) \(response.text)")
            // From the request page too, the release lands on the tour's publishing card (link and QR code).
            #expect(response.location == "/tours/\(env.seed.tourId)#publish")
            let packageId = try await env.request(rid).packageId
            let packagePath = "/packages/\(packageId)"
            let landing = try await client.get("/tours/\(env.seed.tourId)", session: author)
            #expect(landing.text.contains("data-visitor-link") && landing.text.contains("data-qr"))
            let packagePage = try await client.get("/packages/\(packageId)", session: author)
            #expect(packagePage.text.contains("/visit/\(packageId)") && packagePage.text.contains("data-qr"), "the package page has them too")
            #expect(env.exists(env.packageZip(packageId, version: 1)))
            await #expect(try env.tour().state == .published)
            await #expect(try env.package(packageId).currentVersion == 1)
            let catalogAfterV1 = try await env.database.catalogVersion()
            #expect(catalogAfterV1 > 0)
            page = try await client.get(packagePath, session: author)
            #expect(page.status == .ok)

            // Version 2 through the edit form.
            page = try await client.get("/tours/\(tourId)/edit", session: author)
            author.absorb(page)
            response = try await client.post(
                "/tours/\(tourId)/edit",
                form: ["name": "Ridge Walk", "description": "Second edition.", "mapName": ""],
                session: author
            )
            #expect(response.status == .seeOther, "\(response.status) \(response.text)")
            response = try await client.post("/tours/\(tourId)/publish", form: [:], session: author)
            let location2 = try #require(response.location)
            let rid2 = String(location2.dropFirst("/requests/".count))
            #expect(await env.buildAll() == 1)
            for email in ["reviewer2@test.org", "reviewer@test.org"] {
                var session = try await client.signIn(email)
                session.absorb(try await client.get(location2, session: session))
                #expect(try await client.post("\(location2)/approve", form: [:], session: session).status == .seeOther)
            }
            response = try await client.post("\(location2)/push", form: [:], session: author)
            #expect(
                response.status == .seeOther && response.location == "/tours/\(env.seed.tourId)#publish",
                "\(response.status) \(String(describing: response.location))"
            )
            await #expect(try env.request(rid2).state == .published)
            #expect(env.exists(env.packageZip(packageId, version: 2)))
            await #expect(try env.package(packageId).currentVersion == 2)
            #expect(try await env.database.catalogVersion() > catalogAfterV1)

            // The manager: unpublish, publish again, serve version 1.
            var manager = try await client.signIn("manager@test.org")
            page = try await client.get(packagePath, session: manager)
            manager.absorb(page)
            #expect(page.text.contains("\(packagePath)/unpublish"))
            response = try await client.post("\(packagePath)/unpublish", form: [:], session: manager)
            #expect(response.status == .seeOther)
            await #expect(try env.package(packageId).isVisible == false)
            response = try await client.post("\(packagePath)/publish", form: [:], session: manager)
            #expect(response.status == .seeOther)
            await #expect(try env.package(packageId).isVisible)
            response = try await client.post("\(packagePath)/versions/1/serve", form: [:], session: manager)
            #expect(response.status == .seeOther)
            await #expect(try env.package(packageId).currentVersion == 1)

            // An author cannot do the manager's part.
            response = try await client.post("\(packagePath)/unpublish", form: [:], session: author)
            #expect(response.status == .forbidden)
            await #expect(try env.package(packageId).isVisible)
        }
    }
}
