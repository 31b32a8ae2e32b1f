import Foundation
import PackageFormat
import Testing

@testable import TrailClient

@Suite("TrailClient: alerts in the signed catalog")
struct CatalogAlertTests {
    let key = SigningKey.generate()
    let now = Manifest.parseTimestamp("2026-11-23T12:00:00Z")!

    /// Two packages of alpha, one of bravo; alerts: one on p1 (closing waypoint 7), one for all of alpha, one of
    /// bravo, one on p1 that ended yesterday (an older catalog still lists it), one that starts tomorrow, one of a
    /// severity this client does not know.
    var body: Data {
        let sha = String(repeating: "ab", count: 32)
        func package(_ id: String, _ site: String) -> String {
            #"{"id":"\#(id)","site":"\#(site)","name":"\#(id)","version":1,"size":1,"sha256":"\#(sha)","url":"http://x/\#(id)"}"#
        }
        func alert(
            _ id: Int,
            _ site: String,
            _ package: String?,
            closed: [Int] = [],
            severity: String = "closure",
            starts: String,
            ends: String
        )
            -> String
        {
            let packageField = package.map { #""packageId":"\#($0)","# } ?? ""
            return
                #"{"id":\#(id),"site":"\#(site)",\#(packageField)"closedWaypoints":\#(closed),"severity":"\#(severity)","title":"T\#(id)","message":"<b>M</b>","startsAt":"\#(starts)","endsAt":"\#(ends)"}"#
        }
        let alerts = [
            alert(1, "alpha", "p1", closed: [7], starts: "2026-11-23T08:00:00Z", ends: "2026-11-24T08:00:00Z"),
            alert(2, "alpha", nil, severity: "info", starts: "2026-11-23T08:00:00Z", ends: "2026-11-24T08:00:00Z"),
            alert(3, "bravo", nil, starts: "2026-11-23T08:00:00Z", ends: "2026-11-24T08:00:00Z"),
            alert(4, "alpha", "p1", closed: [8], starts: "2026-11-21T08:00:00Z", ends: "2026-11-22T08:00:00Z"),
            alert(5, "alpha", "p1", closed: [9], starts: "2026-11-24T08:00:00Z", ends: "2026-11-25T08:00:00Z"),
            alert(6, "alpha", "p2", severity: "evacuation", starts: "2026-11-23T08:00:00Z", ends: "2026-11-24T08:00:00Z"),
        ]
        return Data(
            (#"{"catalogVersion":9,"generatedAt":"2026-11-23T10:00:00Z","expiresAt":"2030-01-01T00:00:00Z","packages":["#
                + [package("p1", "alpha"), package("p2", "alpha"), package("p3", "bravo")].joined(separator: ",")
                + #"],"alerts":["# + alerts.joined(separator: ",") + "]}").utf8
        )
    }

    @Test func alertsThatApplyToAPackageNow() throws {
        let data = body
        let verified = try TrailClient.verifyCatalog(
            body: data,
            signature: try key.sign(data).base64EncodedString(),
            pinnedPublicKey: key.publicKeyBase64,
            lastSeenVersion: nil,
            now: now
        )
        let catalog = verified.catalog
        #expect(catalog.alerts.count == 6)
        let first = try #require(catalog.alerts.first)
        #expect(first.packageId == "p1" && first.site == "alpha" && first.closedWaypoints == [7] && first.severity == .closure)
        #expect(first.message == "<b>M</b>", "kept as the plain text it is")
        // p1: its own current alert and alpha's site-wide one; not the ended, the scheduled or another site's.
        #expect(catalog.alerts(forPackage: "p1", at: now).map(\.id) == [1, 2])
        #expect(catalog.closedWaypoints(forPackage: "p1", at: now) == [7])
        // The scheduled one applies once it starts; the first two have ended by then.
        let tomorrow = now.addingTimeInterval(86_400)
        #expect(catalog.alerts(forPackage: "p1", at: tomorrow).map(\.id) == [5])
        #expect(catalog.closedWaypoints(forPackage: "p1", at: tomorrow) == [9])
        // p2 gets the site-wide one and its own, whose unknown severity reads as a warning.
        let p2 = catalog.alerts(forPackage: "p2", at: now)
        #expect(p2.map(\.id) == [2, 6])
        #expect(p2.last?.severity == .warning)
        #expect(catalog.alerts(forPackage: "p3", at: now).map(\.id) == [3])
        #expect(catalog.alerts(forPackage: "unknown", at: now).isEmpty)
    }

    @Test func aCatalogWithoutAlertsStillReads() throws {
        let data = Data(
            #"{"catalogVersion":1,"generatedAt":"2026-11-22T10:00:00Z","expiresAt":"2030-01-01T00:00:00Z","packages":[]}"#.utf8
        )
        let verified = try TrailClient.verifyCatalog(
            body: data,
            signature: try key.sign(data).base64EncodedString(),
            pinnedPublicKey: key.publicKeyBase64,
            lastSeenVersion: nil,
            now: now
        )
        #expect(verified.catalog.alerts.isEmpty)
    }

    @Test func encodesAndDecodesTheSameAlerts() throws {
        let catalog = try TrailClient.verifyCatalog(
            body: body,
            signature: try key.sign(body).base64EncodedString(),
            pinnedPublicKey: key.publicKeyBase64,
            lastSeenVersion: nil,
            now: now
        ).catalog
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let again = try decoder.decode(Catalog.self, from: try encoder.encode(catalog))
        #expect(again.alerts.map(\.id) == catalog.alerts.map(\.id))
        #expect(again.alerts.first?.closedWaypoints == [7])
    }
}
