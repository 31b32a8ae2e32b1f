import Foundation
import HummingbirdTesting
import Testing

@testable import TrailServer

/// The rules of sites, users, passwords, memberships and tokens, each message next to its field.
@Suite struct AccountValidationTests {
    static let slugRule = "Use 2 to 60 lowercase letters, digits and single hyphens, like sweet-home."
    static let approvalsRule = "Required approvals must be between 1 and 20."

    static func site(slug: String = "charlie", name: String = "Charlie", approvals: String = "1") -> [String: String] {
        ["slug": slug, "name": name, "description": "", "requiredApprovals": approvals]
    }

    static let siteCases: [RuleCase] = [
        RuleCase(name: "slug with capitals and spaces", form: site(slug: "Sweet Home"), json: nil, errors: ["slug": slugRule]),
        RuleCase(name: "slug of one letter", form: site(slug: "a"), json: nil, errors: ["slug": slugRule]),
        RuleCase(name: "slug with double hyphen", form: site(slug: "a--b"), json: nil, errors: ["slug": slugRule]),
        RuleCase(name: "slug starting with a hyphen", form: site(slug: "-ab"), json: nil, errors: ["slug": slugRule]),
        RuleCase(name: "slug too long", form: site(slug: String(repeating: "a", count: 61)), json: nil, errors: ["slug": slugRule]),
        RuleCase(name: "slug taken", form: site(slug: "bravo"), json: nil, errors: ["slug": "A site with this slug already exists."]),
        RuleCase(name: "no name", form: site(name: " "), json: nil, errors: ["name": "Enter a name of 1 to 120 characters."]),
        RuleCase(name: "zero approvals", form: site(approvals: "0"), json: nil, errors: ["requiredApprovals": approvalsRule]),
        RuleCase(name: "too many approvals", form: site(approvals: "21"), json: nil, errors: ["requiredApprovals": approvalsRule]),
        RuleCase(name: "approvals not a number", form: site(approvals: "one"), json: nil, errors: ["requiredApprovals": approvalsRule]),
    ]

    @Test("site rule on create and edit", arguments: siteCases)
    func siteRule(_ rule: RuleCase) async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("admin@test.org")
            let before = try await app.database.snapshot()
            let fields = ["slug", "name", "description", "requiredApprovals"]
            let create = try await client.post("/admin/sites", form: rule.form, session: browser)
            Expect.pageErrors(create, rule.errors, fields: fields, "create")
            #expect(HTML.value(create.text, field: "slug") == Payload.html(rule.form["slug"]!))
            // Editing alpha with the same values: "bravo" is taken there too.
            Expect.pageErrors(
                try await client.post("/admin/sites/\(seed.alphaId)", form: rule.form, session: browser),
                rule.errors,
                fields: fields,
                "edit"
            )
            try await app.database.expectUnchanged(since: before)
        }
    }

    @Test func siteKeepsItsOwnSlugAndValidValuesAreSaved() async throws {
        let (app, seed) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("admin@test.org")
            let edit = try await client.post(
                "/admin/sites/\(seed.alphaId)",
                form: Self.site(slug: "alpha", name: "Alpha", approvals: "20"),
                session: browser
            )
            #expect(edit.status == .seeOther)
            #expect(try await app.database.site(id: seed.alphaId)?.requiredApprovals == 20)
            let create = try await client.post("/admin/sites", form: Self.site(slug: "c3", name: "C3", approvals: "1"), session: browser)
            #expect(create.location == "/sites/c3")
        }
    }

    static let userCases: [RuleCase] = [
        RuleCase(
            name: "not an email",
            form: ["email": "ranger", "displayName": "R", "password": ""],
            json: nil,
            errors: ["email": "Enter an email address like name@example.org."]
        ),
        RuleCase(
            name: "email without a domain dot",
            form: ["email": "ranger@park", "displayName": "R", "password": ""],
            json: nil,
            errors: ["email": "Enter an email address like name@example.org."]
        ),
        RuleCase(
            name: "email with a space",
            form: ["email": "ran ger@park.org", "displayName": "R", "password": ""],
            json: nil,
            errors: ["email": "Enter an email address like name@example.org."]
        ),
        RuleCase(
            name: "email taken",
            form: ["email": "author@test.org", "displayName": "R", "password": ""],
            json: nil,
            errors: ["email": "A user with this email already exists."]
        ),
        RuleCase(
            name: "email taken in other case",
            form: ["email": "Author@Test.org", "displayName": "R", "password": ""],
            json: nil,
            errors: ["email": "A user with this email already exists."]
        ),
        RuleCase(
            name: "no display name",
            form: ["email": "new@test.org", "displayName": "", "password": ""],
            json: nil,
            errors: ["displayName": "Enter a name of 1 to 100 characters."]
        ),
        RuleCase(
            name: "display name too long",
            form: ["email": "new@test.org", "displayName": String(repeating: "x", count: 101), "password": ""],
            json: nil,
            errors: ["displayName": "Enter a name of 1 to 100 characters."]
        ),
        RuleCase(
            name: "password too short",
            form: ["email": "new@test.org", "displayName": "New", "password": "short"],
            json: nil,
            errors: ["password": "Use at least 10 characters."]
        ),
    ]

    @Test("user rule", arguments: userCases)
    func userRule(_ rule: RuleCase) async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("admin@test.org")
            let before = try await app.database.snapshot()
            let response = try await client.post("/admin/users", form: rule.form, session: browser)
            Expect.pageErrors(response, rule.errors, fields: ["email", "displayName", "password"], rule.name)
            #expect(HTML.value(response.text, field: "email") == Payload.html(rule.form["email"]!), "what was typed is kept")
            #expect(HTML.value(response.text, field: "password") == nil, "a password is never sent back")
            try await app.database.expectUnchanged(since: before)
        }
    }

    static let passwordCases: [RuleCase] = [
        RuleCase(
            name: "wrong current password",
            form: [
                "currentPassword": "not my password", "newPassword": "a fine new password",
                "confirmPassword": "a fine new password",
            ],
            json: nil,
            errors: ["currentPassword": "This is not your current password."]
        ),
        RuleCase(
            name: "confirmation differs",
            form: [
                "currentPassword": TestApp.password, "newPassword": "a fine new password",
                "confirmPassword": "a fine new passw0rd",
            ],
            json: nil,
            errors: ["confirmPassword": "The two new passwords differ."]
        ),
        RuleCase(
            name: "new password too short",
            form: ["currentPassword": TestApp.password, "newPassword": "short", "confirmPassword": "short"],
            json: nil,
            errors: ["newPassword": "Use at least 10 characters."]
        ),
        RuleCase(
            name: "new password too long for bcrypt",
            form: [
                "currentPassword": TestApp.password, "newPassword": String(repeating: "p", count: 73),
                "confirmPassword": String(repeating: "p", count: 73),
            ],
            json: nil,
            errors: ["newPassword": "Use at most 72 bytes (72 plain letters; accented letters and symbols take 2 to 4 each)."]
        ),
        RuleCase(
            name: "new password over 72 bytes in fewer letters",
            form: [
                "currentPassword": TestApp.password, "newPassword": String(repeating: "é", count: 40),
                "confirmPassword": String(repeating: "é", count: 40),
            ],
            json: nil,
            errors: ["newPassword": "Use at most 72 bytes (72 plain letters; accented letters and symbols take 2 to 4 each)."]
        ),
        RuleCase(
            name: "same as before",
            form: [
                "currentPassword": TestApp.password, "newPassword": TestApp.password,
                "confirmPassword": TestApp.password,
            ],
            json: nil,
            errors: ["newPassword": "Choose a password different from the current one."]
        ),
    ]

    @Test("password change rule", arguments: passwordCases)
    func passwordRule(_ rule: RuleCase) async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            let response = try await client.post("/account/password", form: rule.form, session: browser)
            Expect.pageErrors(response, rule.errors, fields: ["currentPassword", "newPassword", "confirmPassword"], rule.name)
            try await app.database.expectUnchanged(since: before)
        }
    }

    /// The members page's one form: a bad address or role is refused with its message and nothing stored; an unknown
    /// address is invited (without SMTP the link is shown) rather than refused.
    @Test func memberFormNamesBadFieldsAndInvitesNewAddresses() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("manager@test.org")
            let before = try await app.database.snapshot()
            let bad = try await client.post("/sites/alpha/members", form: ["email": "not an address", "role": "author"], session: browser)
            Expect.pageErrors(bad, ["email": "Enter an email address like name@example.org."], fields: ["email"], "bad address")
            #expect(HTML.value(bad.text, field: "email") == "not an address")
            let role = try await client.post("/sites/alpha/members", form: ["email": "spare@test.org", "role": "owner"], session: browser)
            #expect(role.status == .unprocessableContent)
            #expect(role.text.contains("Choose author, reviewer or manager."))
            try await app.database.expectUnchanged(since: before)
            let invited = try await client.post("/sites/alpha/members", form: ["email": "nobody@test.org", "role": "author"], session: browser)
            #expect(invited.status == .created)
            #expect(invited.text.contains("nobody@test.org has no account yet."))
            let open: Int? = try await app.database.scalar("SELECT COUNT(*) FROM invitation WHERE email = 'nobody@test.org' AND role = 'author'")
            #expect(open == 1)
        }
    }

    @Test func tokenNeedsAName() async throws {
        let (app, _) = try await TestApp.seeded()
        try await app.test { client in
            let browser = try await client.signIn("author@test.org")
            let before = try await app.database.snapshot()
            for name in ["", "   ", String(repeating: "t", count: 101)] {
                let response = try await client.post("/account/tokens", form: ["name": name], session: browser)
                Expect.pageErrors(response, ["name": "Enter a name of 1 to 100 characters."], fields: ["name"], "token name \(name.count)")
                #expect(!response.text.contains("Copy this token now."))
            }
            try await app.database.expectUnchanged(since: before)
        }
    }
}
