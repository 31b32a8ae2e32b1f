import Foundation
import Hummingbird

/// The home page (my sites), a site's tour list, and its members.
struct SitesController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    /// The members page's one form invites an address that has no account.
    let mailer: Mailer

    struct SiteCard: Sendable {
        let slug: String
        let name: String
        let description: String
        let role: String
        let tourCount: Int
        /// "1 tour", "3 tours".
        let tours: String
    }

    struct HomePage: Sendable {
        let sites: [SiteCard]
        let isEmpty: Bool
    }

    struct TourRow: Sendable, TemplateFields {
        let id: Int64
        let name: String
        let mapName: String
        let stateLabel: String
        let stateBadge: String
        let waypointCount: Int
        let updated: String
        let hasFrame: Bool

        var templateFields: KeyValuePairs<String, Any?> {
            [
                "id": id, "name": name, "mapName": mapName, "stateLabel": stateLabel, "stateBadge": stateBadge,
                "waypointCount": waypointCount, "updated": updated, "hasFrame": hasFrame,
            ]
        }
    }

    struct StateOption: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }

    struct SitePage: Sendable {
        let slug: String
        let name: String
        let description: String
        let requiredApprovals: Int
        /// "1 approval", "2 approvals".
        let approvalsNeeded: String
        let tours: [TourRow]
        let canAuthor: Bool
        let canManage: Bool
        let isAdmin: Bool
        let siteId: Int64
        /// The quick add-or-invite form's roles (managers only).
        var roles: [RoleOption] = SiteRole.allCases.map { RoleOption(value: $0.rawValue, selected: $0 == .author) }
        /// The search box's text and the state filter, as the page was asked for.
        let query: String
        let states: [StateOption]
        /// A search or a state filter is on: "No tours match" instead of "No tours yet", and a link to clear it.
        let isFiltered: Bool
        /// The neighbouring pages (nil on the first or last), each keeping the search and the filter.
        let previousURL: String?
        let nextURL: String?
        let hasPages: Bool
    }

    /// Tours per page of the site page: the first page costs the same at 300 tours as at one. 25 rows, as the long
    /// lists of GitHub's issues: about two screens on a phone, and the search box and the state filter find the rest.
    /// A page's cost grows with its rows (some 30 µs each on a release build), never with the district.
    static let toursPerPage = 25

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
        let emailEnabled: Bool
        var email = ""
        var errors: [String: String] = [:]
        /// Without SMTP: the invitation link just made for a new address, shown once to pass on.
        var newLink: String?
        var newEmail: String?
    }

    func addRoutes(to router: some RouterMethods<SignedInContext>, site: some RouterMethods<SiteMemberContext>) {
        router.get("/", use: home)
        router.get("/sites", use: listSites)
        // /sites/{slug}/…
        site.get(use: showSite)
        site.get("members", use: listMembers)
        site.post("members", use: saveMember)
        site.post("members/{userId}/remove", use: removeMember)
    }

    /// The panel's front door: the sites.
    func home(_ request: Request, _ context: SignedInContext) -> Response { .redirect(to: "/sites") }

    /// The home page: the sites the user belongs to (every site for an admin), with their roles and tour counts.
    func listSites(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let user = context.user
        let tourCounts = try await database.tourCounts()
        let cards = try await database.visibleSites(for: user).map { site, role in
            SiteCard(
                slug: site.slug,
                name: site.name,
                description: site.description,
                role: role?.rawValue ?? (user.isAdmin ? "admin" : ""),
                tourCount: tourCounts[site.id] ?? 0,
                tours: DisplayFormat.count(tourCounts[site.id] ?? 0, "tour")
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

    /// A site's page: its tours, 25 at a time (`?after=` / `?before=` a position token), searched by name (`?q=`) and
    /// narrowed to a state (`?state=`), and what the user may do there.
    func showSite(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let (site, access) = (context.site, context.access)
        let form = QueryForm(request)
        var errors = ValidationErrors()
        let filter = TourListFilter.read(state: form["state"], query: form["q"], errors: &errors)
        var after: TourListPosition?
        var before: TourListPosition?
        for (name, isBefore) in [("after", false), ("before", true)] {
            guard let token = form[name], !token.isEmpty else { continue }
            guard let position = ListCursor.tourPosition(token, siteId: site.id, filter: filter) else {
                errors[name] = "This page link is out of date: open the site's first page."
                continue
            }
            if isBefore { before = position } else { after = position }
        }
        try errors.throwIfAny()
        let (rows, hasMore) = try await database.tourList(
            siteId: site.id,
            filter: filter,
            after: before == nil ? after : nil,
            before: before,
            limit: Self.toursPerPage
        )
        // Coming back with "Previous", more in that direction means an earlier page; the later one is where we came from.
        let hasPrevious = before != nil ? hasMore : after != nil
        let hasNext = before != nil ? true : hasMore
        func link(_ name: String, _ row: TourListRow?) -> String? {
            guard let row else { return nil }
            var query: [(String, String)] = []
            if !filter.query.isEmpty { query.append(("q", filter.query)) }
            if let state = filter.state { query.append(("state", state.rawValue)) }
            query.append((name, ListCursor.tour(row.position, siteId: site.id, filter: filter)))
            return QueryForm.url(PanelURL.site(site.slug), query)
        }
        let tours = rows.map {
            TourRow(
                id: $0.id,
                name: $0.name,
                mapName: $0.mapName,
                stateLabel: $0.state.label,
                stateBadge: $0.state.badge,
                waypointCount: $0.waypointCount,
                updated: DisplayFormat.date($0.updatedAt),
                hasFrame: $0.hasFrame
            )
        }
        let previousURL = hasPrevious ? link("before", rows.first) : nil
        let nextURL = hasNext ? link("after", rows.last) : nil
        let page = SitePage(
            slug: site.slug,
            name: site.name,
            description: site.description,
            requiredApprovals: site.requiredApprovals,
            approvalsNeeded: site.requiredApprovals == 1 ? "1 approval" : "\(site.requiredApprovals) approvals",
            tours: tours,
            canAuthor: access.canAuthor,
            canManage: access.canManage,
            isAdmin: access.isAdmin,
            siteId: site.id,
            query: filter.query,
            states: TourState.allCases.map { StateOption(value: $0.rawValue, label: $0.label, selected: $0 == filter.state) },
            isFiltered: filter.state != nil || !filter.query.isEmpty,
            previousURL: previousURL,
            nextURL: nextURL,
            hasPages: previousURL != nil || nextURL != nil
        )
        return await pages.render("site", title: site.name, page: page, request: request, context: context)
    }

    /// A site's members and the form to add one (managers only).
    func listMembers(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "manage its members")
        return await pages.render(
            "members",
            title: "Members of \(site.name)",
            page: try await membersPage(site),
            request: request,
            context: context
        )
    }

    /// The members page's one form (managers only): an address that has an account joins the site with the role (or
    /// a member's role changes); a new address is invited, by email or, without SMTP, with the link shown to pass on.
    func saveMember(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "manage its members")
        let form = try await request.decode(as: MemberForm.self, context: context)
        let email = form.email.trimmed
        do {
            guard let role = SiteRole(rawValue: form.role) else {
                throw ValidationErrors(["role": "Choose author, reviewer or manager."])
            }
            // The site page's quick form comes back to the site page; the members page's to the members page.
            let back = form.back == "site" ? PanelURL.site(site.slug) : PanelURL.siteMembers(site.slug)
            if try await database.user(email: email) != nil {
                try await database.setMembership(siteId: site.id, email: email, role: role, actor: context.actor)
                return pages.redirect(to: back, notice: "\(email) is now \(role.rawValue).")
            }
            guard MailMessage.isAddress(email) else { throw ValidationErrors(["email": "Enter an email address like name@example.org."]) }
            let (invitation, token) = try await database.createInvitation(
                siteId: site.id,
                email: email,
                role: role,
                inviter: context.user,
                actor: context.actor,
                mail: mailer.invitationMessage(inviter: context.user.displayName, role: role)
            )
            mailer.outbox?.wake()
            if mailer.isEnabled {
                return pages.redirect(
                    to: back,
                    notice: "\(invitation.email) has no account yet: an invitation to join as \(role.rawValue) is on its way by email."
                )
            }
            var page = try await membersPage(site)
            page.newLink = mailer.invitationLink(token)
            page.newEmail = invitation.email
            return await pages.render("members", title: "Members of \(site.name)", page: page, request: request, context: context, status: .created)
        } catch let errors as ValidationErrors {
            var page = try await membersPage(site)
            page.email = email
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
    func removeMember(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "manage its members")
        try await database.removeMembership(siteId: site.id, userId: context.parameters.require("userId", as: Int64.self), actor: context.actor)
        return pages.redirect(to: PanelURL.siteMembers(site.slug), notice: "Member removed.")
    }

    func membersPage(_ site: Site) async throws -> MembersPage {
        MembersPage(
            slug: site.slug,
            name: site.name,
            members: try await database.members(siteId: site.id).map {
                MemberRow(userId: $0.userId, email: $0.email, displayName: $0.displayName, roleLabel: $0.role.rawValue, isDisabled: $0.isDisabled)
            },
            roles: SiteRole.allCases.map { RoleOption(value: $0.rawValue, selected: $0 == .author) },
            emailEnabled: mailer.isEnabled
        )
    }
}

/// Adding a member (or inviting one): `back` "site" returns to the site page, anything else to the members page.
struct MemberForm: PanelForm {
    @Field var email: String
    @Field var role: String
    @Field var back: String
}
