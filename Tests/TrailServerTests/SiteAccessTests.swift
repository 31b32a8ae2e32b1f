import Testing

@testable import TrailServer

/// One access check. The whole rule table of roles × permissions, and the one error each refusal throws.
@Suite struct SiteAccessTests {
    @Test("roles × permissions, and NotFound for outsiders, Forbidden naming who may for members")
    func ruleTable() throws {
        let expected: [(SiteRole?, Bool, Set<SitePermission>)] = [
            (nil, false, []),
            (.author, false, [.view, .author]),
            (.reviewer, false, [.view, .review]),
            (.manager, false, [.view, .author, .review, .manage]),
            (nil, true, Set(SitePermission.allCases)),
        ]
        for (role, isAdmin, allowed) in expected {
            let access = SiteAccess(role: role, isAdmin: isAdmin, siteName: "Sweet Home")
            for permission in SitePermission.allCases {
                #expect(access.allows(permission) == allowed.contains(permission), "\(String(describing: role)) admin=\(isAdmin) \(permission)")
                if allowed.contains(permission) {
                    try access.require(permission, to: "do it")
                } else if allowed.isEmpty {
                    #expect(throws: NotFound.self) { try access.require(permission, to: "do it") }
                } else {
                    do {
                        try access.require(permission, to: "do it")
                        Issue.record("allowed")
                    } catch let refusal as Forbidden {
                        #expect(refusal.message == "Only \(permission.holders) of Sweet Home can do it.")
                    }
                }
            }
        }
    }
}
