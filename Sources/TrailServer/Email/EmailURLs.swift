/// The email feature's panel addresses (beside the rest in `App/URLs.swift`).
extension PanelURL {
    static func invitation(_ token: String) -> String { "/invite/\(token)" }
    static func siteInvitations(_ slug: String) -> String { "\(site(slug))/invitations" }
    static func revokeInvitation(_ slug: String, id: Int64) -> String { "\(siteInvitations(slug))/\(id)/revoke" }
    static let notificationSettings = "/account/notifications"
    static let adminEmail = "/admin/email"
}

extension APIURL {
    static func manageSiteInvitations(_ slug: String) -> String { "/api/v1/manage/sites/\(slug)/invitations" }
}
