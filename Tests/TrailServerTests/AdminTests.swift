import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// Admin pages (users, sites) and the members page of a site, along their main paths.
@Suite struct AdminTests {
    @Test func adminCreatesUsersWithOneTimeOrChosenPasswords() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            var admin = try await client.signIn("admin@test.org")
            let created = try await client.post(
                "/admin/users",
                form: ["email": " ranger@park.org ", "displayName": " Pat Ranger ", "password": ""],
                session: admin
            )
            #expect(created.location == "/admin/users")
            let page = try await client.follow(created, session: &admin)
            #expect(page.text.contains("Created ranger@park.org. One-time password: "))
            #expect(page.text.contains("<td>Pat Ranger</td>"))
            #expect(page.text.contains("<td>ranger@park.org</td>"))
            let user = try #require(try await app.database.user(email: "ranger@park.org"))
            #expect(user.displayName == "Pat Ranger" && !user.isAdmin && !user.isDisabled && user.mustChangePassword)
            #expect(!user.passwordHash.isEmpty && !page.text.contains(user.passwordHash))

            let chosen = try await client.post(
                "/admin/users",
                form: [
                    "email": "boss@park.org", "displayName": "Boss", "password": "chosen by the admin",
                    "isAdmin": "on",
                ],
                session: admin
            )
            #expect(chosen.status == .seeOther)
            let boss = try #require(try await app.database.user(email: "boss@park.org"))
            #expect(boss.isAdmin && boss.mustChangePassword)
            let browser = try await client.anonymousBrowser()
            let signIn = try await client.post("/login", form: ["email": "boss@park.org", "password": "chosen by the admin"], session: browser)
            #expect(signIn.location == "/account/password", "they choose their own at first sign-in")
        }
    }

    @Test func adminCannotDisableThemselves() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let admin = try await client.signIn("admin@test.org")
            let adminId = try #require(try await app.database.user(email: "admin@test.org")?.id)
            let page = try await client.get("/admin/users", session: admin)
            #expect(!page.text.contains("/admin/users/\(adminId)/disable"), "no button for oneself")
            #expect(page.text.contains("/admin/users/2/disable"))
            let before = try await app.database.snapshot()
            let response = try await client.post("/admin/users/\(adminId)/disable", form: [:], session: admin)
            #expect(response.status == .conflict)
            #expect(response.text.contains("You cannot disable your own account."))
            try await app.database.expectUnchanged(since: before)
            #expect(try await client.post("/admin/users/999/disable", form: [:], session: admin).status == .notFound)
        }
    }

    @Test func adminCreatesAndEditsSites() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var admin = try await client.signIn("admin@test.org")
            let list = try await client.get("/admin/sites", session: admin)
            #expect(list.text.contains(#"<a href="/sites/alpha">Alpha District</a>"#))
            #expect(HTML.value(list.text, field: "requiredApprovals") == "1", "a new site needs one approval by default")

            let created = try await client.post(
                "/admin/sites",
                form: [
                    "slug": "sweet-home", "name": "Sweet Home Ranger District",
                    "description": "Willamette National Forest", "requiredApprovals": "2",
                ],
                session: admin
            )
            #expect(created.location == "/sites/sweet-home")
            var page = try await client.follow(created, session: &admin)
            #expect(page.text.contains("Site “Sweet Home Ranger District” created."))
            #expect(page.text.contains("Willamette National Forest"))
            #expect(page.text.contains("Publishing needs 2 approvals."))
            let site = try #require(try await app.database.site(slug: "sweet-home"))
            #expect(site.name == "Sweet Home Ranger District" && site.requiredApprovals == 2)

            // The sites page's quick form: a name alone (one approval, alt text required), back on the new site's page.
            let sites = try await client.get("/sites", session: admin)
            #expect(sites.text.contains("data-quick-site"))
            let quick = try await client.post(
                "/admin/sites",
                form: ["name": "Canyon Lands District", "description": "", "requiredApprovals": "1", "mediaAccessibility": "required"],
                session: admin
            )
            #expect(quick.location == "/sites/canyon-lands-district")
            let canyon = try #require(try await app.database.site(slug: "canyon-lands-district"))
            #expect(canyon.requiredApprovals == 1 && canyon.mediaAccessibility == .required)
            // Its page's quick member form adds an account and comes back to the site page.
            let member = try await client.post(
                "/sites/canyon-lands-district/members",
                form: ["email": "spare@test.org", "role": "reviewer", "back": "site"],
                session: admin
            )
            #expect(member.location == "/sites/canyon-lands-district")
            let canyonPage = try await client.get("/sites/canyon-lands-district", session: admin)
            #expect(canyonPage.text.contains("data-quick-member") && canyonPage.text.contains("data-quick-tour"))

            // No slug typed: it is made from the name.
            let named = try await client.post(
                "/admin/sites",
                form: ["slug": "", "name": "Santiam Wagon Road", "description": "", "requiredApprovals": "1"],
                session: admin
            )
            #expect(named.location == "/sites/santiam-wagon-road")

            let edit = try await client.get("/admin/sites/\(site.id)", session: admin)
            #expect(HTML.value(edit.text, field: "slug") == "sweet-home")
            #expect(HTML.value(edit.text, field: "requiredApprovals") == "2")
            #expect(edit.text.contains(#"action="/admin/sites/\#(site.id)""#))
            let saved = try await client.post(
                "/admin/sites/\(site.id)",
                form: [
                    "slug": "sweet-home-rd", "name": "Sweet Home RD", "description": "",
                    "requiredApprovals": "3",
                ],
                session: admin
            )
            #expect(saved.location == "/sites/sweet-home-rd")
            page = try await client.follow(saved, session: &admin)
            #expect(page.text.contains("Site saved."))
            let updated = try #require(try await app.database.site(id: site.id))
            #expect(updated.slug == "sweet-home-rd" && updated.name == "Sweet Home RD" && updated.description == "" && updated.requiredApprovals == 3)
            #expect(try await client.get("/sites/sweet-home", session: admin).status == .notFound)
            #expect(try await client.get("/admin/sites/999", session: admin).status == .notFound)
            #expect(try await app.database.site(id: seed.alphaId)?.slug == "alpha")
        }
    }

    @Test func managerAddsChangesAndRemovesMembers() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            var manager = try await client.signIn("manager@test.org")
            let page = try await client.get("/sites/alpha/members", session: manager)
            #expect(page.text.contains("<td>author@test.org</td>"))
            #expect(!page.text.contains("outsider@test.org"))

            let added = try await client.post("/sites/alpha/members", form: ["email": "spare@test.org", "role": "reviewer"], session: manager)
            #expect(added.location == "/sites/alpha/members")
            var after = try await client.follow(added, session: &manager)
            #expect(after.text.contains("spare@test.org is now reviewer."))
            #expect(after.text.contains("<td>spare@test.org</td>"))
            let spareUser = AuthenticatedUser(try #require(try await app.database.user(email: "spare@test.org")))
            #expect(try await app.database.siteAccess(id: seed.alphaId, user: spareUser)?.access.role == .reviewer)
            // The new member sees the site now.
            let spare = try await client.signIn("spare@test.org")
            #expect(try await client.get("/sites/alpha", session: spare).status == .ok)
            #expect(try await client.get("/tours/\(seed.tourId)/edit", session: spare).status == .forbidden)

            // Changing the role: the same form.
            _ = try await client.post("/sites/alpha/members", form: ["email": "spare@test.org", "role": "author"], session: manager)
            #expect(try await client.get("/tours/\(seed.tourId)/edit", session: spare).status == .ok)
            let count: Int? = try await app.database.scalar("SELECT COUNT(*) FROM membership WHERE userId = ?", [seed.spareId])
            #expect(count == 1)

            let removed = try await client.post("/sites/alpha/members/\(seed.spareId)/remove", form: [:], session: manager)
            #expect(removed.location == "/sites/alpha/members")
            after = try await client.follow(removed, session: &manager)
            #expect(after.text.contains("Member removed."))
            #expect(!after.text.contains("<td>spare@test.org</td>"))
            #expect(try await client.get("/sites/alpha", session: spare).status == .notFound)
            #expect(try await client.post("/sites/alpha/members/\(seed.spareId)/remove", form: [:], session: manager).status == .notFound)

            // Removing someone from alpha cannot touch their other memberships.
            let outsiderId = try #require(try await app.database.user(email: "outsider@test.org")?.id)
            #expect(try await client.post("/sites/alpha/members/\(outsiderId)/remove", form: [:], session: manager).status == .notFound)
            let outsiderMemberships: Int? = try await app.database.scalar("SELECT COUNT(*) FROM membership WHERE userId = ?", [outsiderId])
            #expect(outsiderMemberships == 1)
        }
    }

    @Test func navigationShowsAdminLinksOnlyToAdmins() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let admin = try await client.get("/sites", session: try await client.signIn("admin@test.org"))
            let author = try await client.get("/sites", session: try await client.signIn("author@test.org"))
            for link in ["/admin/users", "/admin/sites", "/admin/audit"] {
                #expect(admin.text.contains("href=\"\(link)\""), "\(link)")
                #expect(!author.text.contains("href=\"\(link)\""), "\(link)")
            }
            #expect(author.text.contains(#"<a class="nav-link" href="/account/password">author</a>"#), "the signed-in name")
        }
    }
}
