import Foundation
import Hummingbird

/// The home page (my sites), a site's tour list, and its members.
struct SitesController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let authorization: Authorization

    struct SiteCard: Sendable {
        let slug: String
        let name: String
        let description: String
        let role: String
        let tourCount: Int
    }

    struct HomePage: Sendable {
        let sites: [SiteCard]
        let isEmpty: Bool
    }

    struct TourRow: Sendable {
        let id: Int64
        let name: String
        let mapName: String
        let stateLabel: String
        let stateBadge: String
        let waypointCount: Int
        let updated: String
        let hasFrame: Bool
    }

    struct SitePage: Sendable {
        let slug: String
        let name: String
        let description: String
        let requiredApprovals: Int
        let tours: [TourRow]
        let canAuthor: Bool
        let canManage: Bool
        let isAdmin: Bool
        let siteId: Int64
    }

    struct MemberRow: Sendable {
        let userId: Int64
        let email: String
        let displayName: String
        let roleLabel: String
        let isDisabled: Bool
    }

    struct RoleOption: Sendable {
        let value: String
        let selected: Bool
    }

    struct MembersPage: Sendable {
        let slug: String
        let name: String
        let members: [MemberRow]
        let roles: [RoleOption]
        var email = ""
        var errors: [String: String] = [:]
    }

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/") { _, _ in Response.redirect(to: "/sites") }
        router.get("/sites") { request, context in try await listSites(request, context) }
        router.get("/sites/{slug}") { request, context in try await showSite(request, context) }
        router.get("/sites/{slug}/members") { request, context in try await listMembers(request, context) }
        router.post("/sites/{slug}/members") { request, context in try await saveMember(request, context) }
        router.post("/sites/{slug}/members/{userId}/remove") { request, context in try await removeMember(request, context) }
    }

    /// The home page: the sites the user belongs to (every site for an admin), with their roles and tour counts.
    func listSites(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let tourCounts = try await database.tourCounts()
        let cards = try await database.visibleSites(for: user).map { site, role in
            SiteCard(
                slug: site.slug,
                name: site.name,
                description: site.description,
                role: role?.rawValue ?? (user.isAdmin ? "admin" : ""),
                tourCount: tourCounts[site.id!] ?? 0
            )
        }
        return await pages.render(
            "home",
            title: "Your sites",
            page: HomePage(sites: cards, isEmpty: cards.isEmpty),
            request: request,
            context: context
        )
    }

    /// A site's page: its tours, and what the user may do there.
    func showSite(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (site, access) = try await authorization.site(slug: context.parameters.require("slug"), user: context.requireUser())
        let counts = try await database.waypointCounts(siteId: site.id!)
        let tours = try await database.tours(siteId: site.id!).map {
            TourRow(
                id: $0.id!,
                name: $0.name,
                mapName: $0.mapName,
                stateLabel: $0.state.label,
                stateBadge: $0.state.badge,
                waypointCount: counts[$0.id!] ?? 0,
                updated: DisplayFormat.date($0.updatedAt),
                hasFrame: $0.frame != nil
            )
        }
        let page = SitePage(
            slug: site.slug,
            name: site.name,
            description: site.description,
            requiredApprovals: site.requiredApprovals,
            tours: tours,
            canAuthor: access.canAuthor,
            canManage: access.canManage,
            isAdmin: access.isAdmin,
            siteId: site.id!
        )
        return await pages.render("site", title: site.name, page: page, request: request, context: context)
    }

    /// A site's members and the form to add one (managers only).
    func listMembers(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (site, access) = try await authorization.site(slug: context.parameters.require("slug"), user: context.requireUser())
        try access.require(.manage, to: "manage its members")
        return await pages.render(
            "members",
            title: "Members of \(site.name)",
            page: try await membersPage(site),
            request: request,
            context: context
        )
    }

    /// Adds a member by email, or changes their role (managers only).
    func saveMember(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (site, access) = try await authorization.site(slug: context.parameters.require("slug"), user: context.requireUser())
        try access.require(.manage, to: "manage its members")
        var request = request
        let form = try await request.form(context: context)
        guard let role = SiteRole(rawValue: form.string("role")) else {
            throw ValidationErrors(["role": "Choose author, reviewer or manager."])
        }
        do {
            try await database.setMembership(siteId: site.id!, email: form.string("email"), role: role, actor: context.actor)
            return pages.redirect(to: PanelURL.siteMembers(site.slug), notice: "\(form.string("email").trimmed) is now \(role.rawValue).")
        } catch let errors as ValidationErrors {
            var page = try await membersPage(site)
            page.email = form.string("email")
            page.errors = errors.fields
            return await pages.render(
                "members",
                title: "Members of \(site.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Removes a member from the site (managers only).
    func removeMember(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (site, access) = try await authorization.site(slug: context.parameters.require("slug"), user: context.requireUser())
        try access.require(.manage, to: "manage its members")
        try await database.removeMembership(siteId: site.id!, userId: context.parameters.require("userId", as: Int64.self), actor: context.actor)
        return pages.redirect(to: PanelURL.siteMembers(site.slug), notice: "Member removed.")
    }

    func membersPage(_ site: Site) async throws -> MembersPage {
        MembersPage(
            slug: site.slug,
            name: site.name,
            members: try await database.members(siteId: site.id!).map {
                MemberRow(userId: $0.userId, email: $0.email, displayName: $0.displayName, roleLabel: $0.role.rawValue, isDisabled: $0.isDisabled)
            },
            roles: SiteRole.allCases.map { RoleOption(value: $0.rawValue, selected: $0 == .author) }
        )
    }
}
