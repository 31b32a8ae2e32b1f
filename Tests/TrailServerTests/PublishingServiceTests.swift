import Foundation
import Testing

@testable import TrailServer

/// The publishing steps, called without any controller (as a CLI or a script would), still move and
/// clean up their files and check who may take them.
@Suite(.scratch) struct PublishingServiceTests {
    @Test("release, deny and withdraw through the service alone leave no staging behind; permissions are the service's")
    func serviceOwnsFilesAndRules() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: try env.token("author@test.org"))
        }
        let service = PublishingService(
            database: env.database,
            authorization: Authorization(database: env.database),
            builds: env.builds,
            paths: env.paths,
            tileSettings: env.app.dependencies.tileSettings
        )
        let author = try await env.user("author@test.org")
        let authorActor = try await env.actor("author@test.org")
        let reviewer = try await env.user("reviewer@test.org")
        let reviewerActor = try await env.actor("reviewer@test.org")

        // Release: the staged zip becomes the version's file, and the staging folder goes.
        let ready = try await env.readyRequest(approvers: ["reviewer@test.org"])
        #expect(env.exists(env.stagedZip(ready.id)))
        let version = try await service.release(requestId: ready.id, user: author, actor: authorActor)
        #expect(env.exists(env.packageZip(version.packageId, version: version.version)))
        #expect(!env.exists(env.stagingFolder(ready.id)))

        // Deny: the request closes and its staged package goes.
        let denied = try await service.submit(tourId: env.seed.tourId, user: author, actor: authorActor)
        #expect(await env.buildAll() == 1)
        #expect(env.exists(env.stagedZip(denied.id)))
        try await service.deny(requestId: denied.id, reviewer: reviewer, comment: "The map is missing.", actor: reviewerActor)
        await #expect(try env.request(denied.id).state == .denied)
        #expect(!env.exists(env.stagingFolder(denied.id)))

        // Withdraw: the same.
        let withdrawn = try await service.submit(tourId: env.seed.tourId, user: author, actor: authorActor)
        #expect(await env.buildAll() == 1)
        _ = try await service.withdraw(requestId: withdrawn.id, user: author, actor: authorActor)
        await #expect(try env.request(withdrawn.id).state == .withdrawn)
        #expect(!env.exists(env.stagingFolder(withdrawn.id)))

        // Rules: a reviewer cannot submit a tour or unpublish a package; the package stays listed.
        await #expect(throws: Forbidden.self) { _ = try await service.submit(tourId: env.seed.tourId, user: reviewer, actor: reviewerActor) }
        await #expect(throws: Forbidden.self) {
            try await service.setVisible(packageId: version.packageId, visible: false, user: reviewer, actor: reviewerActor)
        }
        await #expect(try env.package(version.packageId).isVisible)
    }

    @Test("the navigation badge's COUNT(*) agrees with the review queue for authors, reviewers, managers and admins")
    func badgeCountMatchesQueue() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: try env.token("author@test.org"))
        }
        let emails = ["author@test.org", "reviewer@test.org", "reviewer2@test.org", "manager@test.org", "admin@test.org"]
        func counts() async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for email in emails { counts[email] = try await env.database.reviewQueueCount(for: env.user(email)) }
            return counts
        }
        func expectedFromQueue() async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for email in emails {
                let user = try await env.user(email)
                counts[email] = try await env.database.reviewQueue(for: user).filter { !$0.reviewedByMe && $0.request.authorId != user.id }.count
            }
            return counts
        }
        _ = try await env.addMember("reviewer2@test.org", role: .reviewer)
        await #expect(try counts() == Dictionary(uniqueKeysWithValues: emails.map { ($0, 0) }))
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        #expect(await env.buildAll() == 1)
        await #expect(
            try counts() == ["author@test.org": 0, "reviewer@test.org": 1, "reviewer2@test.org": 1, "manager@test.org": 1, "admin@test.org": 1]
        )
        await #expect(try counts() == expectedFromQueue())
        _ = try await env.database.approve(requestId: request.id, reviewer: try env.user("reviewer@test.org"), comment: "", actor: .system)
        await #expect(
            try counts() == ["author@test.org": 0, "reviewer@test.org": 0, "reviewer2@test.org": 1, "manager@test.org": 1, "admin@test.org": 1]
        )
        await #expect(try counts() == expectedFromQueue())
    }

    @Test("a stored file whose bytes changed after submission (same size) fails the build, named; no package (the builder checks sizes only)")
    func changedInputFailsVerification() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: try env.token("author@test.org"))
        }
        let video = try #require(try await env.database.assets(waypointId: env.seed.waypointId).first { $0.kind == .video })
        let request = try await env.database.startPublish(
            tourId: env.seed.tourId,
            actor: try env.actor("author@test.org"),
            tiles: env.app.dependencies.tileSettings.current
        )
        // The builder checks sizes only; staging hashes each copy and the verifier every entry of the zip, so a
        // flipped byte is still caught: flip one of the stored file.
        let stored = env.paths.absolute(video.storedPath)
        var bytes = try Data(contentsOf: stored)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: stored)
        #expect(await env.buildAll() == 1)
        let failed = try await env.request(request.id)
        #expect(failed.state == .failed, "\(failed.state)")
        #expect(failed.failureReason?.contains("intro.mp4") == true, "\(failed.failureReason ?? "")")
        #expect(!env.exists(env.stagedZip(request.id)))
    }
}
