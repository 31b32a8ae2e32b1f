import Foundation
import Hummingbird

/// Admin-only pages: users, sites, the audit log.
struct AdminController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig

    struct UserRow: Sendable {
        let id: Int64
        let email: String
        let displayName: String
        let isAdmin: Bool
        let isDisabled: Bool
        let isSelf: Bool
        /// Two-step sign-in is set up (an administrator may reset it).
        let twoStep: Bool
        /// Made from an invitation link that was shown, not mailed: nothing proved the address yet.
        let addressUnproven: Bool
        /// "manager@park.org to Alpha Park": who invited them, where.
        let invitedBy: String?
    }

    struct UsersPage: Sendable {
        var users: [UserRow]
        var form: [String: String] = [:]
        var errors: [String: String] = [:]
        /// Shown once, on the answer to "Reset password", and stored nowhere but as a bcrypt hash.
        var reset: ResetNotice?
    }

    struct ResetNotice: Sendable {
        let email: String
        let password: String
    }

    struct SiteRow: Sendable {
        let id: Int64
        let slug: String
        let name: String
        let requiredApprovals: Int
    }

    struct SitesPage: Sendable {
        var sites: [SiteRow]
        var form: [String: String] = ["requiredApprovals": "1", "mediaRequired": "checked", "mediaRecommended": ""]
        var errors: [String: String] = [:]
    }

    struct SiteEditPage: Sendable {
        var id: Int64
        var form: [String: String]
        var errors: [String: String] = [:]
        /// With single sign-on set up: the form that turns the members' password sign-in off.
        var singleSignOn: SignInChoice? = nil
    }

    struct SignInChoice: Sendable {
        var providerLabel: String
        var passwordsOff: Bool
    }

    struct AuditRow: Sendable {
        let time: String
        let user: String
        let site: String
        let object: String
        let action: String
        let detail: String
        let ipAddress: String
    }

    struct Option: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }

    struct AuditPage: Sendable {
        let events: [AuditRow]
        let users: [Option]
        let sites: [Option]
        let objectType: String
        let objectId: String
    }

    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        let admin = router.group("admin").add(middleware: RequireAdminMiddleware())

        admin.get("users", use: listUsers)
        admin.post("users", use: createUser)
        admin.post("users/{id}/disable", use: disableUser)
        admin.post("users/{id}/enable", use: enableUser)
        admin.post("users/{id}/reset-password", use: resetPassword)
        admin.post("users/{id}/reset-two-step", use: resetTwoStep)
        admin.post("users/{id}/confirm-address", use: confirmAddress)

        admin.get("sites", use: listSites)
        admin.post("sites", use: createSite)
        admin.get("sites/{id}", use: editSite)
        admin.post("sites/{id}", use: saveSite)
        admin.post("sites/{id}/sign-in", use: saveSiteSignIn)

        admin.get("audit", use: showAuditLog)
    }

    /// The user list, with the form to add one.
    func listUsers(_ request: Request, _ context: SignedInContext) async throws -> Response {
        await pages.render(
            "admin-users",
            title: "Users",
            page: try await usersPage(context),
            request: request,
            context: context
        )
    }

    /// Adds a user with a one-time password (typed, or made up and shown once); they must change it at first sign-in.
    func createUser(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: UserForm.self, context: context)
        let password = form.password.isEmpty ? OneTimePassword.make() : form.password
        do {
            let user = try await database.createUser(
                email: form.email,
                displayName: form.displayName,
                password: password,
                isAdmin: form.isAdmin == "on",
                mustChangePassword: true,
                bcryptCost: config.bcryptCost,
                actor: context.actor
            )
            return pages.redirect(
                to: "/admin/users",
                notice: "Created \(user.email). One-time password: \(password) (they must change it at first sign-in)."
            )
        } catch let errors as ValidationErrors {
            var page = try await usersPage(context)
            page.form = ["email": form.email, "displayName": form.displayName]
            page.errors = errors.fields
            return await pages.render("admin-users", title: "Users", page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Disables an account (not one's own); its sessions and tokens end.
    func disableUser(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        guard id != context.user.id else { throw Conflict("You cannot disable your own account.") }
        try await database.setUserDisabled(id: id, disabled: true, actor: context.actor)
        return pages.redirect(to: "/admin/users", notice: "User disabled; their sessions and tokens have ended.")
    }

    /// Enables a disabled account again.
    func enableUser(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        try await database.setUserDisabled(id: id, disabled: false, actor: context.actor)
        return pages.redirect(to: "/admin/users", notice: "User enabled.")
    }

    /// Gives a user a new one-time password, shown once on this answer (not in a notice that a redirect would carry);
    /// their sessions and API tokens end. Not for one's own account: that is the password page's job.
    func resetPassword(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        guard id != context.user.id else { throw Conflict("Change your own password on the Change password page.") }
        let (user, password) = try await database.resetPassword(userId: id, bcryptCost: config.bcryptCost, actor: context.actor)
        var page = try await usersPage(context)
        page.reset = ResetNotice(email: user.email, password: password)
        var response = await pages.render("admin-users", title: "Users", page: page, request: request, context: context)
        // The one-time password must not linger in a cache or the back button.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// Clears a user's two-step sign-in (a lost phone, recovery codes used up): their sessions end and the panel tells
    /// them at their next sign-in, where they enrol again if `--require-two-step` covers them. Audited.
    func resetTwoStep(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        let user = try await database.resetTwoStep(userId: id, actor: context.actor)
        return pages.redirect(
            to: "/admin/users",
            notice: "Two-step sign-in of \(user.email) reset; their sessions have ended. They are told at their next sign-in."
        )
    }

    /// The site list, with the form to add one.
    func listSites(_ request: Request, _ context: SignedInContext) async throws -> Response {
        await pages.render("admin-sites", title: "Sites", page: try await sitesPage(), request: request, context: context)
    }

    /// Creates a site and opens it.
    func createSite(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: SiteForm.self, context: context)
        let input = form.input
        do {
            let site = try await database.createSite(input, actor: context.actor)
            return pages.redirect(to: PanelURL.site(site.slug), notice: "Site “\(site.name)” created.")
        } catch let errors as ValidationErrors {
            var page = try await sitesPage()
            page.form = form.typed
            page.errors = errors.fields
            return await pages.render("admin-sites", title: "Sites", page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// The form of a site's settings (quota in MB).
    func editSite(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        guard let site = try await database.site(id: id) else { throw NotFound() }
        let page = SiteEditPage(
            id: id,
            form: [
                "slug": site.slug, "name": site.name, "description": site.description,
                "requiredApprovals": "\(site.requiredApprovals)",
                "storageQuota": site.storageQuotaBytes.map { DisplayFormat.megabytesField($0) } ?? "",
                "mediaRequired": site.mediaAccessibility == .required ? "checked" : "",
                "mediaRecommended": site.mediaAccessibility == .recommended ? "checked" : "",
                "completeLanguages": site.requireCompleteLanguages ? "checked" : "",
            ]
        )
        var shown = page
        shown.singleSignOn = config.oidc.map { SignInChoice(providerLabel: $0.label, passwordsOff: !site.passwordSignIn) }
        return await pages.render("admin-site-edit", title: "Edit \(site.name)", page: shown, request: request, context: context)
    }

    /// Turns the members' password sign-in off (single sign-on only) or on again; only with a provider set up.
    func saveSiteSignIn(_ request: Request, _ context: SignedInContext) async throws -> Response {
        guard config.oidc != nil else { throw NotFound() }
        let id = try context.parameters.require("id", as: Int64.self)
        let form = try await request.decode(as: SiteSignInForm.self, context: context)
        let off = form.passwordsOff == "on"
        try await database.setPasswordSignIn(siteId: id, allowed: !off, actor: context.actor)
        return pages.redirect(
            to: "/admin/sites/\(id)",
            notice: off
                ? "Members of this site now sign in through the agency's provider only."
                : "Members of this site may sign in with a password again."
        )
    }

    /// Saves a site's settings.
    func saveSite(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        let form = try await request.decode(as: SiteForm.self, context: context)
        do {
            let site = try await database.updateSite(id: id, form.input, actor: context.actor)
            return pages.redirect(to: PanelURL.site(site.slug), notice: "Site saved.")
        } catch let errors as ValidationErrors {
            return await pages.render(
                "admin-site-edit",
                title: "Edit site",
                page: SiteEditPage(id: id, form: form.typed, errors: errors.fields),
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// The audit log, filtered by user, site or object.
    func showAuditLog(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let query = request.uri.queryParameters
        let filter = AuditFilter(
            userId: query["user"].flatMap { Int64(String($0)) },
            siteId: query["site"].flatMap { Int64(String($0)) },
            objectType: query["objectType"].map(String.init),
            objectId: query["objectId"].map(String.init)
        )
        let users = try await database.allUsers()
        let sites = try await database.allSites()
        let userNames = Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0.email) })
        let siteNames = Dictionary(uniqueKeysWithValues: sites.map { ($0.id, $0.slug) })
        let rows = try await database.auditEvents(filter).map {
            AuditRow(
                time: DisplayFormat.date($0.occurredAt),
                user: $0.userId.flatMap { userNames[$0] } ?? "system",
                site: $0.siteId.flatMap { siteNames[$0] } ?? "",
                object: "\($0.objectType) \($0.objectId)",
                action: $0.action.text,
                detail: $0.detail,
                ipAddress: $0.ipAddress ?? ""
            )
        }
        let page = AuditPage(
            events: rows,
            users: users.map { Option(value: "\($0.id)", label: $0.email, selected: $0.id == filter.userId) },
            sites: sites.map { Option(value: "\($0.id)", label: $0.name, selected: $0.id == filter.siteId) },
            objectType: filter.objectType ?? "",
            objectId: filter.objectId ?? ""
        )
        return await pages.render("admin-audit", title: "Audit log", page: page, request: request, context: context)
    }

    /// Vouches for the address of an account made from a shown invitation link.
    func confirmAddress(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        try await database.confirmAddress(userId: id, actor: context.actor)
        return pages.redirect(to: "/admin/users", notice: "Address confirmed; their approvals count now.")
    }

    func usersPage(_ context: SignedInContext) async throws -> UsersPage {
        let enrolled = try await database.twoStepEnrolledUserIds()
        let origins = try await database.invitationOrigins()
        return UsersPage(
            users: try await database.allUsers().map {
                UserRow(
                    id: $0.id,
                    email: $0.email,
                    displayName: $0.displayName,
                    isAdmin: $0.isAdmin,
                    isDisabled: $0.isDisabled,
                    isSelf: $0.id == context.user.id,
                    twoStep: enrolled.contains($0.id),
                    addressUnproven: !$0.addressProven,
                    invitedBy: origins[$0.id]
                )
            }
        )
    }

    func sitesPage() async throws -> SitesPage {
        SitesPage(
            sites: try await database.allSites().map { SiteRow(id: $0.id, slug: $0.slug, name: $0.name, requiredApprovals: $0.requiredApprovals) }
        )
    }
}

struct RequireAdminMiddleware: RouterMiddleware {
    typealias Context = SignedInContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.user.isAdmin else { throw Forbidden("Only administrators can open this page.") }
        return try await next(request, context)
    }
}

/// A new user: a password left empty is made up and shown once.
struct UserForm: PanelForm {
    @Field var email: String
    @Field var displayName: String
    @Field var password: String
    @Field var isAdmin: String
}

/// Whether a site's members may sign in with a password ("on": single sign-on only).
struct SiteSignInForm: PanelForm {
    @Field var passwordsOff: String
}

/// A site's settings (the new-site form and the edit form).
struct SiteForm: PanelForm {
    @Field var slug: String
    @Field var name: String
    @Field var description: String
    @Field var requiredApprovals: String
    @Field var storageQuota: String
    @Field var mediaAccessibility: String
    @Field var requireCompleteLanguages: String

    /// The quota field is in MB (decimals allowed); empty means no limit, anything unreadable is refused as 0.
    var input: SiteInput {
        let quotaText = storageQuota.trimmed
        let quota: Int64? =
            quotaText.isEmpty ? nil : Double(quotaText).flatMap { $0.isFinite && $0 < 1e12 ? Int64(($0 * 1_048_576).rounded()) : nil } ?? 0
        // An empty slug is made from the name ("Sweet Home Ranger District" → sweet-home-ranger-district).
        let slug = slug.trimmed
        return SiteInput(
            slug: slug.isEmpty && !name.trimmed.isEmpty ? Slug.make(from: name) : slug,
            name: name,
            description: description,
            requiredApprovals: TypedNumber.int(requiredApprovals) ?? 0,
            storageQuotaBytes: quota,
            mediaAccessibility: MediaAccessibility(rawValue: mediaAccessibility) ?? .required,
            requireCompleteLanguages: requireCompleteLanguages == "on"
        )
    }

    /// The fields as typed, for the form shown again with its messages.
    var typed: [String: String] {
        [
            "slug": slug, "name": name, "description": description, "requiredApprovals": requiredApprovals, "storageQuota": storageQuota,
            "mediaRequired": mediaAccessibility == "recommended" ? "" : "checked",
            "mediaRecommended": mediaAccessibility == "recommended" ? "checked" : "",
            "completeLanguages": requireCompleteLanguages == "on" ? "checked" : "",
        ]
    }
}
