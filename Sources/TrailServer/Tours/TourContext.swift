import Hummingbird
import NIOCore

/// What a tour's routes ask of the user: to see the tour, or to change it (an author or manager of its site, or an
/// admin). Someone who may not see the tour gets 404 either way, so ids cannot be probed; someone who may see it but
/// not change it gets 403 and who may.
enum TourAccessNeed: Sendable {
    case view, edit

    func check(_ access: SiteAccess) throws {
        switch self {
        case .view: try access.require(.view, to: "see it")
        case .edit: try access.require(.author, to: "change its tours")
        }
    }
}

/// How a tour route answers an id in its path that is not a number: each family of routes keeps its own answer, which
/// its clients may rely on.
enum MalformedID: Sendable {
    /// 400, Hummingbird's answer to `parameters.require`: the panel's pages. A `{wid}` is read after the tour's check.
    case badRequest
    /// 404, a forged id being simply not found: the management API. A `{wid}` is read after the tour's check.
    case notFound
    /// 404 before anything is read, for `{wid}` too: the file uploads.
    case notFoundUnread

    func id(_ name: String, in parameters: Parameters) throws -> Int64 {
        switch self {
        case .badRequest:
            return try parameters.require(name, as: Int64.self)
        case .notFound, .notFoundUnread:
            guard let id = parameters.get(name, as: Int64.self) else { throw NotFound() }
            return id
        }
    }
}

/// A request of one tour's routes (`/tours/{id}/…`). `TourMiddleware` reads the tour, its site and the user's access
/// in one read and checks the group's `TourAccessNeed` before the handler runs, so a handler starts from
/// `context.tour` and checks only what its action needs beyond that (`try context.access.require(.review, to: …)`).
struct TourContext: MiddlewareMadeContext, AppChildContext {
    var coreContext: CoreRequestContextStorage
    let user: AuthenticatedUser
    let tour: Tour
    let site: Site
    let access: SiteAccess
    let app: AppRequestContext
}

/// A request of one waypoint's routes (`/tours/{id}/waypoints/{wid}/…`): the tour's context and the waypoint, which
/// `WaypointMiddleware` reads in the same read. A waypoint of another tour is not found.
struct WaypointContext: MiddlewareMadeContext, AppChildContext {
    var coreContext: CoreRequestContextStorage
    let user: AuthenticatedUser
    let tour: Tour
    let site: Site
    let access: SiteAccess
    let waypoint: Waypoint
    let app: AppRequestContext
}

/// Makes a `TourContext` for the tour named by the route's `{id}`, or answers 404 (or 403, for a tour the user may
/// see but the group's routes change).
struct TourMiddleware: ContextMiddleware {
    let authorization: Authorization
    let need: TourAccessNeed
    let malformedID: MalformedID

    func context(for request: Request, from parent: SignedInContext) async throws -> TourContext {
        let id = try malformedID.id("id", in: parent.parameters)
        let (tour, site, access) = try await authorization.tour(id: id, user: parent.user, need: need)
        return TourContext(coreContext: parent.coreContext, user: parent.user, tour: tour, site: site, access: access, app: parent.app)
    }
}

/// Makes a `WaypointContext` for the route's `{id}` and `{wid}`. The tour is checked first, as a tour's routes do:
/// a malformed or unknown `{wid}` is answered only to someone who passed that check.
struct WaypointMiddleware: ContextMiddleware {
    let authorization: Authorization
    let need: TourAccessNeed
    let malformedID: MalformedID

    func context(for request: Request, from parent: SignedInContext) async throws -> WaypointContext {
        let id = try malformedID.id("id", in: parent.parameters)
        if malformedID == .notFoundUnread { _ = try malformedID.id("wid", in: parent.parameters) }
        let (tour, site, access, waypoint) = try await authorization.waypoint(
            tourId: id,
            waypointId: parent.parameters.get("wid", as: Int64.self),
            user: parent.user,
            need: need
        )
        // A malformed `{wid}` read no waypoint; it gets the answer the group gives a malformed id.
        guard let waypoint else {
            _ = try malformedID.id("wid", in: parent.parameters)
            throw NotFound()
        }
        return WaypointContext(
            coreContext: parent.coreContext,
            user: parent.user,
            tour: tour,
            site: site,
            access: access,
            waypoint: waypoint,
            app: parent.app
        )
    }
}

extension RouterMethods<SignedInContext> {
    /// The routes below `/tours/{id}` that need `need` of the user, each handed a `TourContext`.
    func tourGroup(
        _ authorization: Authorization,
        _ need: TourAccessNeed,
        malformedID: MalformedID = .badRequest
    ) -> RouterGroup<TourContext> {
        group("tours/{id}", context: TourMiddleware(authorization: authorization, need: need, malformedID: malformedID))
    }

    /// The routes below `/tours/{id}/waypoints/{wid}` that need `need` of the user, each handed a `WaypointContext`.
    func waypointGroup(
        _ authorization: Authorization,
        _ need: TourAccessNeed,
        malformedID: MalformedID = .badRequest
    ) -> RouterGroup<WaypointContext> {
        group("tours/{id}/waypoints/{wid}", context: WaypointMiddleware(authorization: authorization, need: need, malformedID: malformedID))
    }
}
