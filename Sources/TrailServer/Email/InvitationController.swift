import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import TrailAPI

/// Invitations: a manager (or an admin) invites an email address with a role, from the panel or the management API;
/// the invitee opens `/invite/{token}`, sets a password (or signs in, with single sign-on where configured), joins the
/// site and is signed in. Without SMTP the panel shows the link to pass on.
struct InvitationController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let mailer: Mailer
    let responder: SignInResponder

    struct InvitationRow: Sendable {
        let id: Int64
        let email: String
        let role: String
        let invited: String
        let expires: String
        let expired: Bool
    }

    struct RoleOption: Sendable {
        let value: String
        let selected: Bool
    }

    struct InvitationsPage: Sendable {
        let slug: String
        let name: String
        let invitations: [InvitationRow]
        /// Stored, not computed: templates see stored properties only.
        let hasInvitations: Bool
        let roles: [RoleOption]
        let emailEnabled: Bool
        var email = ""
        var errors: [String: String] = [:]
        /// Without SMTP: the link just made, shown once to pass on.
        var newLink: String?
        var newEmail: String?
    }

    func addRoutes(public router: some RouterMethods<AppRequestContext>, site: some RouterMethods<SiteMemberContext>) {
        router.get("/invite/{token}", use: showInvitation)
        router.post("/invite/{token}", use: acceptInvitation)
        // /sites/{slug}/…
        site.get("invitations", use: listInvitations)
        site.post("invitations", use: invite)
        site.post("invitations/{id}/revoke", use: revoke)
    }

    /// - Parameter site: `/api/v1/manage/sites/{slug}/…`.
    func addAPIRoutes(site: some RouterMethods<SiteMemberContext>) {
        site.post("invitations", use: createInvitation)
    }

    // MARK: Managers

    /// A site's open invitations and the form to invite someone (managers and admins).
    func listInvitations(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "invite members")
        return await pages.render("invitations", title: "Invitations to \(site.name)", page: try await page(site), request: request, context: context)
    }

    /// Invites an email with a role: the message is queued (with SMTP) or the link shown once (without).
    func invite(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "invite members")
        let form = try await request.decode(as: InvitationForm.self, context: context)
        do {
            let (invitation, token) = try await create(site: site, email: form.email, role: form.role, context: context)
            if mailer.isEnabled {
                return pages.redirect(to: PanelURL.siteInvitations(site.slug), notice: "Invitation sent to \(invitation.email).")
            }
            var page = try await page(site)
            page.newLink = mailer.invitationLink(token)
            page.newEmail = invitation.email
            return await pages.render(
                "invitations",
                title: "Invitations to \(site.name)",
                page: page,
                request: request,
                context: context,
                status: .created
            )
        } catch let errors as ValidationErrors {
            var page = try await page(site)
            page.email = form.email
            page.errors = errors.fields
            return await pages.render(
                "invitations",
                title: "Invitations to \(site.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Withdraws an unused invitation.
    func revoke(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "invite members")
        try await database.revokeInvitation(id: context.parameters.require("id", as: Int64.self), siteId: site.id, actor: context.actor)
        return pages.redirect(to: PanelURL.siteInvitations(site.slug), notice: "Invitation withdrawn; its link no longer works.")
    }

    /// The body of `POST /api/v1/manage/sites/{slug}/invitations`.
    struct CreateInvitation: Decodable {
        let email: String?
        let role: String?
    }

    /// `createSiteInvitation`: the management API's invitation (201), 422 naming the bad field.
    func createInvitation(_ request: Request, _ context: SiteMemberContext) async throws -> EditedResponse<Components.Schemas.Invitation> {
        let site = context.site
        try context.access.require(.manage, to: "invite members")
        let body = try await request.decode(as: CreateInvitation.self, context: context)
        let (invitation, token) = try await create(site: site, email: body.email ?? "", role: body.role ?? "", context: context)
        // The link only when no email carries it: otherwise it is the invitee's secret alone.
        return EditedResponse(
            status: .created,
            response: Components.Schemas.Invitation(
                id: invitation.id,
                site: site.slug,
                email: invitation.email,
                role: try WireEnum.value(invitation.role),
                expiresAt: invitation.expiresAt,
                emailed: mailer.isEnabled,
                link: mailer.isEnabled ? nil : mailer.invitationLink(token)
            )
        )
    }

    /// Both routes' checks and the write (with its queued email), then the outbox is woken.
    private func create(site: Site, email: String, role: String, context: SiteMemberContext) async throws -> (Invitation, String) {
        var errors = ValidationErrors()
        if !MailMessage.isAddress(email.trimmed) { errors["email"] = "Enter an email address like name@example.org." }
        let siteRole = SiteRole(rawValue: role.trimmed)
        if siteRole == nil { errors["role"] = "Choose author, reviewer or manager." }
        guard errors.isEmpty, let siteRole else { throw errors }
        let user = context.user
        let result = try await database.createInvitation(
            siteId: site.id,
            email: email,
            role: siteRole,
            inviter: user,
            actor: context.actor,
            mail: mailer.invitationMessage(inviter: user.displayName, role: siteRole)
        )
        mailer.outbox?.wake()
        return result
    }

    private func page(_ site: Site) async throws -> InvitationsPage {
        let now = Date()
        let rows = try await database.openInvitations(siteId: site.id).map {
            InvitationRow(
                id: $0.id,
                email: $0.email,
                role: $0.role.rawValue,
                invited: DisplayFormat.date($0.createdAt),
                expires: DisplayFormat.date($0.expiresAt),
                expired: $0.expiresAt <= now
            )
        }
        return InvitationsPage(
            slug: site.slug,
            name: site.name,
            invitations: rows,
            hasInvitations: !rows.isEmpty,
            roles: SiteRole.allCases.map { RoleOption(value: $0.rawValue, selected: $0 == .author) },
            emailEnabled: mailer.isEnabled
        )
    }

    // MARK: The invitee

    struct AcceptPage: Sendable {
        let token: String
        let siteName: String
        let role: String
        let email: String
        /// Signed in as the invited email: one button joins.
        let signedInAsInvitee: Bool
        /// Signed in as someone else.
        let signedInAs: String?
        /// The email has an account: sign in to accept.
        let hasAccount: Bool
        /// No account yet and passwords allowed on the site: the form that makes one.
        let offersPassword: Bool
        let signInURL: String
        let oidcLabel: String?
        let oidcStart: String
        var displayName = ""
        var errors: [String: String] = [:]
    }

    /// The invitation's page: join (signed in as its email), sign in first (an account exists), or make an account.
    /// A used, expired or unknown link gets a page that says which (410).
    func showInvitation(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let token = try context.parameters.require("token")
        let (invitation, site, account) = try await database.usableInvitation(token: token)
        return await pages.render(
            "invitation",
            title: "Join \(site.name)",
            page: acceptPage(token: token, invitation: invitation, site: site, account: account, context: context),
            request: request,
            context: context
        )
    }

    /// Uses the link: the signed-in invitee joins, or a new account is made from the form, joins, and is signed in.
    func acceptInvitation(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let token = try context.parameters.require("token")
        let (invitation, site, account) = try await database.usableInvitation(token: token)
        let form = try await request.decode(as: JoinForm.self, context: context)
        if let user = context.user {
            let (_, site) = try await database.acceptInvitation(token: token, as: .existing(userId: user.id), actor: context.actor)
            return pages.redirect(to: PanelURL.site(site.slug), notice: "Welcome to \(site.name).")
        }
        let page = acceptPage(token: token, invitation: invitation, site: site, account: account, context: context)
        guard page.offersPassword else {
            throw Forbidden("Sign in first, then open the invitation link again to join \(site.name).")
        }
        let name = form.displayName.trimmed
        let password = form.password
        var errors: [String: String] = [:]
        if let problem = AppDatabase.displayNameProblem(name) { errors["displayName"] = problem }
        if let problem = AppDatabase.passwordProblem(password) { errors["password"] = problem }
        if password != form.confirmPassword { errors["confirmPassword"] = "The two passwords differ." }
        if !errors.isEmpty {
            var again = page
            again.displayName = name
            again.errors = errors
            return await pages.render(
                "invitation",
                title: "Join \(site.name)",
                page: again,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
        let cost = config.bcryptCost
        let hash = try await BlockingWork.short { Bcrypt.hash(password, cost: cost) }
        let (user, joined) = try await database.acceptInvitation(
            token: token,
            as: .newAccount(displayName: name, passwordHash: hash),
            actor: context.actor
        )
        // Signed in as at a password sign-in: where two-step sign-in is required, the new account enrols first.
        if try await database.twoStepRequired(for: user, requirement: config.twoStepRequirement) {
            return try await responder.startPendingSignIn(user: user, stage: .enrol, next: PanelURL.site(joined.slug), context: context)
        }
        return try await responder.finishSignIn(
            user: user,
            next: PanelURL.site(joined.slug),
            detail: "invitation",
            context: context,
            notice: "Welcome to \(joined.name)."
        )
    }

    /// A link that was shown to its inviter proves nothing about the address, so where the agency's provider can make
    /// the account at its first sign-on, that is the only way in: the provider vouches for the address. Without such a
    /// provider the password form stays, and the account it makes is marked as not proven.
    static func signOnOnly(_ invitation: Invitation, oidc: OIDCSettings?) -> Bool {
        invitation.linkShown && (oidc?.createUsers ?? false)
    }

    private func acceptPage(token: String, invitation: Invitation, site: Site, account: User?, context: AppRequestContext) -> AcceptPage {
        let here = PanelURL.invitation(token)
        let encoded = here.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? "/"
        let signedIn = context.user
        return AcceptPage(
            token: token,
            siteName: site.name,
            role: invitation.role.rawValue,
            email: invitation.email,
            signedInAsInvitee: signedIn.map { $0.email.lowercased() == invitation.email.lowercased() } ?? false,
            signedInAs: signedIn.flatMap { $0.email.lowercased() == invitation.email.lowercased() ? nil : $0.email },
            hasAccount: account != nil,
            offersPassword: signedIn == nil && account == nil && (site.passwordSignIn || config.oidc == nil)
                && !Self.signOnOnly(invitation, oidc: config.oidc),
            signInURL: "/login?next=\(encoded)",
            oidcLabel: signedIn == nil ? config.oidc?.label : nil,
            oidcStart: "/auth/oidc/start?next=\(encoded)"
        )
    }
}

/// A manager's invitation: the address and the role it offers.
struct InvitationForm: PanelForm {
    @Field var email: String
    @Field var role: String
}

/// The account an invited person makes to join.
struct JoinForm: PanelForm {
    @Field var displayName: String
    @Field var password: String
    @Field var confirmPassword: String
}
