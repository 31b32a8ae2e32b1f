import Foundation
import Hummingbird
import Testing

@testable import TrailServer

/// `PanelURL` and `APIURL` are the one place the server builds its URLs: each one it can build names a route the router
/// serves (a renamed route without the URL changed, or the reverse, fails here), and the fragments and queries are
/// the ones the pages' anchors and language tabs use.
@Suite struct URLsTests {
    /// Every URL the two namespaces build, with its method.
    static let built: [(HTTPRequest.Method, String)] = [
        (.get, PanelURL.sites), (.get, PanelURL.site("alpha")), (.get, PanelURL.siteMembers("alpha")),
        (.post, PanelURL.siteMembers("alpha")), (.post, PanelURL.siteTours("alpha")),
        (.get, PanelURL.tour(7)), (.get, PanelURL.tour(7, at: .waypoint(3))), (.get, PanelURL.tourEdit(7, language: "de")),
        (.post, PanelURL.tourEdit(7)), (.post, PanelURL.tourLanguages(7)), (.post, PanelURL.tourText(7, language: "de")),
        (.post, PanelURL.tourRoute(7)), (.get, PanelURL.tourSign(7)), (.get, PanelURL.tourBooklet(7, draft: true)),
        (.get, PanelURL.tourImport(7, importId: "abc")), (.post, PanelURL.waypoints(tourId: 7)),
        (.post, PanelURL.waypointOrder(tourId: 7)), (.post, PanelURL.waypointMoveTemplate(tourId: 7).replacingOccurrences(of: "{id}", with: "3")),
        (.get, PanelURL.waypoint(tourId: 7, 3, language: "de", at: .asset(9))), (.post, PanelURL.waypoint(tourId: 7, 3)),
        (.get, PanelURL.assetContent(9)), (.get, PanelURL.request("r1")), (.get, PanelURL.requestPreview("r1")),
        (.get, PanelURL.requestTiles("r1").replacingOccurrences(of: "{z}/{x}/{y}", with: "1/2/3")),
        (.get, PanelURL.requestCompanion("r1", asset: 0, role: "captions")), (.get, PanelURL.requestCompanion("r1", asset: 0, role: "transcript")),
        (.get, PanelURL.package("p1")), (.get, PanelURL.packageVersionTiles("p1", version: 2).replacingOccurrences(of: "{z}/{x}/{y}", with: "1/2/3")),
        (.get, PanelURL.packageVersionPreview("p1", version: 2)),
        (.get, APIURL.packageDownload("p1")), (.get, APIURL.manifest("", packageId: "p1", version: 2)), (.get, APIURL.file("", sha256: "ab")),
        (.get, APIURL.manageAsset(9)), (.patch, APIURL.manageUpload("u1")), (.get, APIURL.managePublishRequest("r1")),
        (.get, APIURL.manageTourTiles(7)),
    ]

    @Test func everyBuiltURLNamesARoute() async throws {
        let (app, _) = try await TestApp.seeded()
        let routes = buildRouter(app.dependencies).routes.map { ($0.method, $0.path.description.split(separator: "/")) }
        for (method, url) in Self.built {
            let path = url.split(separator: "#").first!.split(separator: "?").first!
            let segments = path.split(separator: "/")
            let served = routes.contains { route in
                route.0 == method && route.1.count == segments.count
                    && zip(route.1, segments).allSatisfy { pattern, segment in pattern.hasPrefix("{") || pattern.hasPrefix(":") || pattern == segment
                    }
            }
            #expect(served, "\(method) \(url) names no route")
        }
    }

    @Test func fragmentsAndQueries() {
        #expect(PanelURL.tour(7, at: .publish) == "/tours/7#publish")
        #expect(PanelURL.tour(7, at: .waypoint(3)) == "/tours/7#waypoint-3")
        #expect(PanelURL.tourEdit(7, language: "fr") == "/tours/7/edit?lang=fr")
        #expect(PanelURL.tourSign(7, draft: true) == "/tours/7/print/sign.pdf?draft=1")
        #expect(PanelURL.tourBooklet(7) == "/tours/7/print/booklet.pdf")
        #expect(PanelURL.waypoint(tourId: 7, 3, language: "fr", at: .assets) == "/tours/7/waypoints/3?lang=fr#assets")
        #expect(PanelURL.waypoint(tourId: 7, 3, at: .asset(9)) == "/tours/7/waypoints/3#asset-9")
        #expect(
            APIURL.manifest("https://parks.example", packageId: "p1", version: 2) == "https://parks.example/api/v1/packages/p1/versions/2/manifest"
        )
    }
}
