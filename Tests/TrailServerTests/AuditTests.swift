import Foundation
import GRDB
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Every change writes an audit event saying who did what to which object; admins read them filtered by user, site and object.
@Suite struct AuditTests {
    /// The actions are one list (`AuditAction`), named `<object>.<what happened>`, each once; the audit page and anyone
    /// reading the table can rely on the spelling.
    @Test func actionsAreOneListOfObjectDotWhat() {
        let names = AuditAction.allCases.map(\.rawValue)
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(name.wholeMatch(of: /[a-z][a-zA-Z]*(\.[a-zA-Z]+)+/) != nil, "\(name)")
        }
        #expect(AuditAction.scan(.infected) == .assetScanInfected)
        #expect(AuditAction.tilesScan(.clean).rawValue == "tiles.scan.clean")
        #expect(AuditAction.optimize(.failed).rawValue == "asset.optimize.failed")
        #expect(AuditAction.companion(.captions).rawValue == "asset.captions")
    }

    /// The object type comes from the action's prefix, under the names the log has always used: a filter by type and id
    /// finds an object's whole history, older rows included.
    @Test func objectTypeIsTheActionsPrefixUnderTheLogsNames() {
        #expect(AuditAction.alertPost.objectType == "alert" && AuditAction.userCreate.objectType == "user")
        #expect(AuditAction.assetScanClean.objectType == "asset" && AuditAction.mediaOptimizeQueue.objectType == "media")
        #expect(AuditAction.tokenCreate.objectType == "apiToken" && AuditAction.memberSet.objectType == "membership")
        #expect(AuditAction.publishStart.objectType == "publishRequest" && AuditAction.publishPush.objectType == "package")
        #expect(AuditAction.tilesUpload.objectType == "tour" && AuditAction.tilesScanClean.objectType == "tour")
        #expect(AuditAction.tilesSettings.objectType == "tileSettings")
        #expect(AuditAction.waypointReorder.objectType == "tour" && AuditAction.waypointCreate.objectType == "waypoint")
        #expect(AuditAction.twoStepEnrol.objectType == "user" && AuditAction.twoStepFailed.objectType == "session")
        #expect(AuditAction.notificationsSet.objectType == "user")
        let types: Set = [
            "alert", "apiToken", "asset", "invitation", "media", "membership", "package", "publishRequest", "session", "site",
            "tileSettings", "tour", "user", "waypoint",
        ]
        for action in AuditAction.allCases { #expect(types.contains(action.objectType), "\(action.rawValue): \(action.objectType)") }
    }

    /// A row whose action this server does not write (an older server's) is read back as its stored text, and the audit
    /// page shows it as written.
    @Test func anUnknownStoredActionIsShownAsWritten() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO auditEvent (occurredAt, userId, siteId, objectType, objectId, action, detail, ipAddress)
                    VALUES (?, NULL, NULL, 'tour', '1', 'tour.retired', 'from an older server', 'cli')
                    """,
                arguments: [Date().dbTime]
            )
        }
        let events = try await app.database.auditEvents(AuditFilter(objectType: "tour", objectId: "1"))
        #expect(events.first?.action == .unknown("tour.retired") && events.first?.action.known == nil)
        try await app.test { client in
            let admin = try await client.signIn("admin@test.org")
            let page = try await client.get("/admin/audit", session: admin)
            #expect(page.status == .ok)
            #expect(Self.rows(page.text).contains { $0[4] == "tour.retired" && $0[5] == "from an older server" })
        }
    }

    /// A person is a user (or nobody yet, signing in) from an address; a part of the server is named where the address
    /// goes, with no user, as the audit page has always shown them.
    @Test func actorsArePeopleOrNamedPartsOfTheServer() {
        let person = AuditActor(userId: 7, ipAddress: "192.0.2.1")
        #expect(person == .person(userId: 7, ipAddress: "192.0.2.1") && person.userId == 7 && person.ipAddress == "192.0.2.1")
        #expect(AuditActor.system == .server(.cli))
        for part in AuditActor.ServerPart.allCases {
            let actor = AuditActor.server(part)
            #expect(actor.userId == nil && actor.ipAddress == part.rawValue)
        }
        #expect(AuditActor.ServerPart.allCases.map(\.rawValue) == ["cli", "builder", "scanner", "recovery", "optimizer", "demo"])
    }

    @Test func changesWriteEventsWithWhoWhatAndWhere() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let manager = try await client.signIn("manager@test.org")
            let managerId = try #require(try await app.database.user(email: "manager@test.org")?.id)
            let start = try await app.database.lastAuditId()

            let created = try await client.post("/sites/alpha/tours", form: ["name": "Audit Trail", "description": ""], session: manager)
            let tourId = try #require(created.location.flatMap { Int64($0.replacingOccurrences(of: "/tours/", with: "")) })
            _ = try await client.post(
                "/tours/\(tourId)/frame",
                form: [
                    "north": "44.43", "south": "44.36", "east": "-121.97", "west": "-122.28",
                    "minZoom": "11", "maxZoom": "15",
                ],
                session: manager
            )
            _ = try await client.post(
                "/tours/\(tourId)/waypoints",
                form: ["name": "One", "latitude": "44.4", "longitude": "-122.1"],
                session: manager
            )
            _ = try await client.post(
                "/tours/\(tourId)/waypoints",
                form: ["name": "Two", "latitude": "44.41", "longitude": "-122.1"],
                session: manager
            )
            let ids = try await app.database.waypoints(tourId: tourId).map(\.id)
            _ = try await client.post(
                "/tours/\(tourId)/waypoints/order",
                form: [:],
                session: manager,
                extra: ids.reversed().map { ("ids[]", "\($0)") }
            )
            _ = try await client.post("/sites/alpha/members", form: ["email": "spare@test.org", "role": "reviewer"], session: manager)
            let admin = try await client.signIn("admin@test.org")
            let adminId = try #require(try await app.database.user(email: "admin@test.org")?.id)
            _ = try await client.post("/admin/users/\(seed.spareId)/disable", form: [:], session: admin)

            let events = try await app.database.read { db in
                try AuditEvent.filter(Column("id") > start && Column("action") != "session.start").order(Column("id")).fetchAll(db)
            }
            #expect(
                events.map(\.action.known) == [.tourCreate, .tourFrame, .waypointCreate, .waypointCreate, .waypointReorder, .memberSet, .userDisable]
            )
            func event(_ action: AuditAction) throws -> AuditEvent { try #require(events.first { $0.action == .known(action) }) }
            let create = try event(.tourCreate)
            #expect(create.userId == managerId && create.siteId == seed.alphaId)
            #expect(create.objectType == "tour" && create.objectId == "\(tourId)" && create.detail == "Audit Trail")
            let frame = try event(.tourFrame)
            #expect(frame.objectId == "\(tourId)" && frame.detail == "N 44.43000, S 44.36000, E -121.97000, W -122.28000, zoom 11–15")
            let waypoint = try event(.waypointCreate)
            #expect(waypoint.objectType == "waypoint" && waypoint.objectId == "\(ids[0])" && waypoint.detail == "One in tour \(tourId)")
            #expect(waypoint.siteId == seed.alphaId)
            let reorder = try event(.waypointReorder)
            #expect(
                reorder.objectType == "tour" && reorder.objectId == "\(tourId)"
                    && reorder.detail == ids.reversed().map(String.init).joined(separator: ",")
            )
            let member = try event(.memberSet)
            #expect(member.userId == managerId && member.siteId == seed.alphaId && member.objectType == "membership")
            #expect(member.objectId == "\(seed.alphaId):\(seed.spareId)" && member.detail == "spare@test.org as reviewer")
            let disable = try event(.userDisable)
            #expect(
                disable.userId == adminId && disable.objectType == "user" && disable.objectId == "\(seed.spareId)"
                    && disable.detail == "spare@test.org"
            )
            #expect(events.allSatisfy { $0.occurredAt > Date().addingTimeInterval(-60) })
        }
    }

    /// Changes made with a token are recorded as the token's owner; the CLI and first start as "system".
    @Test func apiChangesAreRecordedAsTheTokenOwner() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let start = try await app.database.lastAuditId()
            let token = try await app.token(for: "author@test.org")
            _ = try await client.api(
                .patch,
                "/api/v1/manage/tours/\(seed.tourId)/waypoints/\(seed.waypointId)",
                token: token,
                json: #"{"name":"Lake"}"#
            )
            let events = try await app.database.auditEvents(AuditFilter(objectType: "waypoint", objectId: "\(seed.waypointId)"))
            let update = try #require(events.first)
            #expect(update.id > start && update.action == .known(.waypointUpdate) && update.userId == seed.authorId && update.detail == "Lake")
            let tokenEvent = try await #require(try app.database.auditEvents(AuditFilter(objectType: "apiToken")).first)
            #expect(tokenEvent.userId == nil && tokenEvent.ipAddress == "cli")
        }
    }

    @Test func adminFiltersTheLogByUserSiteAndObject() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let manager = try await client.signIn("manager@test.org")
            let managerId = try #require(try await app.database.user(email: "manager@test.org")?.id)
            _ = try await client.post(
                "/tours/\(seed.tourId)/edit",
                form: ["name": "Ridge Walk II", "description": "", "mapName": ""],
                session: manager
            )
            let outsider = try await client.signIn("outsider@test.org")
            _ = try await client.post(
                "/tours/\(seed.bravoTourId)/edit",
                form: ["name": "Bravo Loop II", "description": "", "mapName": ""],
                session: outsider
            )
            let admin = try await client.signIn("admin@test.org")

            func rows(_ query: String) async throws -> [[String]] {
                let page = try await client.get("/admin/audit\(query)", session: admin)
                #expect(page.status == .ok)
                return Self.rows(page.text)
            }
            let all = try await rows("")
            #expect(all.count == (try await app.database.auditCount()), "newest first, all of them (fewer than 200)")
            #expect(all.first?[4] == "session.start", "newest first")

            let byUser = try await rows("?user=\(managerId)")
            #expect(!byUser.isEmpty && byUser.allSatisfy { $0[1] == "manager@test.org" })
            #expect(byUser.contains { $0[4] == "tour.update" && $0[5] == "Ridge Walk II" })
            let userPage = try await client.get("/admin/audit?user=\(managerId)", session: admin)
            #expect(userPage.text.contains(#"<option value="\#(managerId)" selected>manager@test.org</option>"#))

            let bySite = try await rows("?site=\(seed.bravoId)")
            #expect(!bySite.isEmpty && bySite.allSatisfy { $0[2] == "bravo" })
            #expect(bySite.contains { $0[5] == "Bravo Loop II" })
            #expect(!bySite.contains { $0[5] == "Ridge Walk II" })

            let byObject = try await rows("?objectType=tour&objectId=\(seed.tourId)")
            #expect(!byObject.isEmpty && byObject.allSatisfy { $0[3] == "tour \(seed.tourId)" })
            #expect(Set(byObject.map { $0[4] }) == ["tour.create", "tour.frame", "tour.update"])

            let combined = try await rows("?user=\(managerId)&site=\(seed.alphaId)&objectType=tour")
            #expect(combined.map { $0[4] } == ["tour.update"])
            let none = try await client.get("/admin/audit?user=\(managerId)&site=\(seed.bravoId)", session: admin)
            #expect(none.text.contains("No events match."))
            #expect(Self.rows(none.text).isEmpty)
        }
    }

    /// The cells of the audit table: when, who, site, object, action, detail, from.
    static func rows(_ html: String) -> [[String]] {
        html.components(separatedBy: "<tr><td class=\"text-nowrap\">").dropFirst().map { row in
            let cells = row.components(separatedBy: "</tr>")[0].components(separatedBy: "</td><td>")
            return cells.map { cell in
                cell.replacingOccurrences(of: "<code>", with: "").replacingOccurrences(of: "</code>", with: "").replacingOccurrences(
                    of: "</td>",
                    with: ""
                )
            }
        }
    }
}
