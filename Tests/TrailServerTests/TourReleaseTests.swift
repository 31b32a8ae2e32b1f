import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Release and sharing from the tour page: the release button once the request has its approvals (for those the
/// request page lets release), the visitor link and QR code after it, the warning about an address phones cannot
/// reach, and no "Submit for review" while the tour is what was released.
@Suite(.scratch) struct TourReleaseTests {
    static let releaseButton = #"data-action="release""#
    static let submitButton = ">Submit for review</button>"
    static let warning = #"data-warning="public-url""#

    @Test("each state of the tour page: waiting for approvals, ready (release for author and manager only), released, edited again")
    func releaseFromTheTourPage() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 2)
        let tourId = env.seed.tourId
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            var author = try await client.signIn("author@test.org")
            var page = try await client.get("/tours/\(tourId)", session: author)
            #expect(page.text.contains(Self.submitButton), "a ready draft offers Submit for review")
            #expect(!page.text.contains(Self.releaseButton) && !page.text.contains("data-visitor-link"))

            // One approval of two: the request is open but not ready, so nothing to release yet.
            let request = try await env.database.startPublish(
                tourId: tourId,
                actor: try await env.actor("author@test.org"),
                tiles: env.app.dependencies.tileSettings.current
            )
            #expect(await env.buildAll() == 1)
            _ = try await env.database.approve(
                requestId: request.id,
                reviewer: try await env.user("reviewer@test.org"),
                comment: "",
                actor: try await env.actor("reviewer@test.org")
            )
            #expect(try await env.request(request.id).state == .pending)
            page = try await client.get("/tours/\(tourId)", session: author)
            #expect(!page.text.contains(Self.releaseButton))
            #expect(!page.text.contains(Self.submitButton))
            #expect(page.text.contains(#"Open request: <a href="/requests/\#(request.id)">"#))

            // The second approval: the author and a manager get the button, posting to the request's own route.
            _ = try await env.database.approve(
                requestId: request.id,
                reviewer: try await env.user("reviewer2@test.org"),
                comment: "",
                actor: try await env.actor("reviewer2@test.org")
            )
            #expect(try await env.request(request.id).state == .ready)
            page = try await client.get("/tours/\(tourId)", session: author)
            #expect(page.text.contains(#"<form method="post" action="/requests/\#(request.id)/push">"#))
            #expect(page.text.contains(#"data-action="release">Release version 1</button>"#))
            let manager = try await client.signIn("manager@test.org")
            #expect(try await client.get("/tours/\(tourId)", session: manager).text.contains(Self.releaseButton))
            let reviewer = try await client.signIn("reviewer@test.org")
            let reviewerPage = try await client.get("/tours/\(tourId)", session: reviewer).text
            #expect(!reviewerPage.contains(Self.releaseButton), "a reviewer may not release (the request page's rule)")
            #expect(reviewerPage.contains("author or a manager of the site can release it"))
            // …and the route agrees: the reviewer's post is refused and releases nothing.
            let refused = try await client.post("/requests/\(request.id)/push", form: ["back": "tour"], session: reviewer)
            #expect(refused.status == .forbidden)
            #expect(try await env.request(request.id).state == .ready)

            // The author releases from the tour page and lands on it again, with the link and the QR code.
            let released = try await client.post("/requests/\(request.id)/push", form: ["back": "tour"], session: author)
            #expect(released.status == .seeOther)
            #expect(released.location == "/tours/\(tourId)#publish")
            page = try await client.follow(released, session: &author)
            #expect(try await env.request(request.id).state == .published)
            let link = "\(env.config.effectivePublicURL)/visit/\(request.packageId)"
            #expect(page.text.contains("Version 1 released"))
            #expect(page.text.contains(#"<a href="\#(link)" id="player-link" data-visitor-link>"#))
            #expect(page.text.contains(#"src="/manage/tours/\#(tourId)/qr.svg""#) && page.text.contains("data-qr>"))
            #expect(page.text.contains(#"href="/manage/tours/\#(tourId)/qr.png" download="#))
            #expect(page.text.contains(#"href="/manage/tours/\#(tourId)/qr.svg" download="#))
            #expect(!page.text.contains(Self.releaseButton))
            // The tests' server answers on 127.0.0.1 with no --public-url: phones cannot reach that.
            #expect(page.text.contains(Self.warning))
            #expect(page.text.contains("--public-url"))
            // Unchanged since the release: submitting again would ship the same tour.
            #expect(!page.text.contains(Self.submitButton))
            #expect(page.text.contains(#"id="unchanged-since-release""#))

            // An edit after the release: the page offers Submit for review again.
            let saved = try await client.post(
                "/tours/\(tourId)/edit",
                form: ["name": "Ridge Walk", "description": "Now with the lake.", "mapName": "ridge-walk", "paceKmh": "4"],
                session: author
            )
            #expect(saved.status == .seeOther)
            page = try await client.get("/tours/\(tourId)", session: author)
            #expect(page.text.contains(Self.submitButton))
            #expect(!page.text.contains(#"id="unchanged-since-release""#))
            #expect(page.text.contains("data-visitor-link"), "the released version stays shared meanwhile")
        }
    }

    @Test("a release from the request page lands on the tour's publishing card too; the package page shows the link and QR code")
    func releaseFromTheRequestPage() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            var author = try await client.signIn("author@test.org")
            let released = try await client.post("/requests/\(request.id)/push", form: [:], session: author)
            #expect(released.location == "/tours/\(env.seed.tourId)#publish")
            let page = try await client.follow(released, session: &author)
            #expect(page.text.contains("data-visitor-link") && page.text.contains("data-qr"))
            #expect(page.text.contains("data-flash-notice"))
            let package = try await client.get("/packages/\(request.packageId)", session: author)
            #expect(package.text.contains("/visit/\(request.packageId)\" data-visitor-link"))
            #expect(package.text.contains(#"src="/manage/tours/\#(env.seed.tourId)/qr.svg""#))
        }
    }

    @Test("a release whose tour was deleted meanwhile lands on the package page")
    func releaseOfADeletedTour() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            try await env.sql("UPDATE publishRequest SET tourId = NULL WHERE id = ?", [request.id])
            let author = try await client.signIn("author@test.org")
            let released = try await client.post("/requests/\(request.id)/push", form: [:], session: author)
            #expect(released.location == "/packages/\(request.packageId)")
        }
    }

    @Test("no warning beside the visitor link when the public URL is a public address")
    func noWarningForAPublicAddress() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.publicURL = "https://trails.example.org" })
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            try await env.addCleanMedia(client, token: token)
            let request = try await env.readyRequest(approvers: ["reviewer@test.org"])
            let author = try await client.signIn("author@test.org")
            let released = try await client.post("/requests/\(request.id)/push", form: ["back": "tour"], session: author)
            #expect(released.status == .seeOther)
            let page = try await client.get("/tours/\(env.seed.tourId)", session: author).text
            #expect(page.contains(#"<a href="https://trails.example.org/visit/\#(request.packageId)" id="player-link" data-visitor-link>"#))
            #expect(!page.contains(Self.warning))
        }
    }

    @Test(
        "loopback, private and link-local addresses are told apart from public ones",
        arguments: [
            ("http://127.0.0.1:8080", PublicAddress.Kind?.some(.loopback)),
            ("http://127.8.9.10", .loopback),
            ("http://localhost:8080", .loopback),
            ("http://trails.localhost", .loopback),
            ("http://[::1]:8080", .loopback),
            ("http://0.0.0.0:8080", .loopback),
            ("http://10.1.2.3", .privateNetwork),
            ("http://172.16.0.1", .privateNetwork),
            ("http://172.31.255.254", .privateNetwork),
            ("http://192.168.1.20:8080", .privateNetwork),
            ("http://[fd12:3456::1]", .privateNetwork),
            ("http://[fc00::1]", .privateNetwork),
            ("http://[::ffff:192.168.0.1]", .privateNetwork),
            ("http://169.254.10.1", .linkLocal),
            ("http://[fe80::1]", .linkLocal),
            ("http://172.32.0.1", nil),
            ("http://172.15.0.1", nil),
            ("http://11.0.0.1", nil),
            ("https://trails.example.org", nil),
            ("https://[2001:db8::1]", nil),
            ("http://192.169.0.1", nil),
        ]
    )
    func addressKinds(url: String, expected: PublicAddress.Kind?) {
        let host = PublicAddress.host(of: url)
        #expect(host.flatMap(PublicAddress.kind(of:)) == expected, "\(url) → \(host ?? "no host")")
        #expect((PublicAddress.warning(for: url) != nil) == (expected != nil))
    }

    @Test("the warning says phones cannot reach the address and which setting changes it")
    func warningWords() throws {
        let warning = try #require(PublicAddress.warning(for: "http://192.168.1.20:8080"))
        #expect(warning.contains("phones cannot reach"))
        #expect(warning.contains("http://192.168.1.20:8080"))
        #expect(warning.contains("private"))
        #expect(warning.contains("--public-url") && warning.contains("TRAIL_PUBLIC_URL"))
    }
}
