import Foundation
import Hummingbird
import NIOCore
import NIOPosix

/// Carries who is asking (session or bearer token) and the CSRF token the page must echo back.
struct AppRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var user: AuthenticatedUser?
    /// The raw session cookie, for sign-out.
    var sessionToken: String?
    var csrfToken = ""
    /// True when the anonymous CSRF cookie was minted for this request and must be sent back.
    var issueCSRFCookie = false
    /// True when the caller authenticated with `Authorization: Bearer`: no ambient credential, so no CSRF check.
    var viaAPIToken = false
    var remoteAddress: String?
    /// The connection's event loop when it is one of the server's (not a test's embedded channel): file responses
    /// wait for it between chunks so that they never queue chunks faster than the socket takes them.
    var eventLoop: (any EventLoop)?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.eventLoop = ServerEventLoops.contains(source.channel.eventLoop) ? source.channel.eventLoop : nil
    }

    /// Forms and JSON bodies are small; file uploads stream and never go through `collect`.
    var maxUploadSize: Int { 512 * 1024 }
    var requestDecoder: WireRequestDecoder { WireRequestDecoder() }
    var responseEncoder: WireResponseEncoder { WireResponseEncoder() }

    var actor: AuditActor { AuditActor(userId: user?.id, ipAddress: remoteAddress) }
}

/// The event loops of the group the server runs on (Hummingbird's default, `MultiThreadedEventLoopGroup.singleton`).
enum ServerEventLoops {
    static let identifiers = Set(MultiThreadedEventLoopGroup.singleton.makeIterator().map { ObjectIdentifier($0) })

    static func contains(_ loop: any EventLoop) -> Bool { identifiers.contains(ObjectIdentifier(loop)) }
}

/// What the page renderer takes from a request's context: the app's own, whichever group the route is in.
protocol AppContextProviding {
    var app: AppRequestContext { get }
}

extension AppRequestContext: AppContextProviding {
    var app: AppRequestContext { self }
}

/// A context made from the app's (a signed-in group's, or the context of one site, tour, waypoint or file): the body
/// limit, the coding, the audit actor and the connection are the app context's, so each adds only what it carries.
protocol AppChildContext: RequestContext, AppContextProviding
where Decoder == WireRequestDecoder, Encoder == WireResponseEncoder {}

extension AppChildContext {
    var maxUploadSize: Int { app.maxUploadSize }
    var requestDecoder: WireRequestDecoder { WireRequestDecoder() }
    var responseEncoder: WireResponseEncoder { WireResponseEncoder() }
    var actor: AuditActor { app.actor }
    var viaAPIToken: Bool { app.viaAPIToken }
    var eventLoop: (any EventLoop)? { app.eventLoop }
}

/// A request of a signed-in route group (the panel behind sign-in, `/api/v1/manage`). The group makes it from the
/// app's context after `RequireUserMiddleware` has passed, so a handler receives its user, not an optional to check.
/// Access to a site stays with `SiteAccess` and `Authorization`.
struct SignedInContext: ChildRequestContext, AppChildContext {
    var coreContext: CoreRequestContextStorage
    let user: AuthenticatedUser
    /// The context the group made this one from (sessions, CSRF, the client's address).
    let app: AppRequestContext

    init(context: AppRequestContext) throws {
        // RequireUserMiddleware runs first and answers a visitor without a session; this is the type's own guarantee.
        guard let user = context.user else { throw HTTPError(.unauthorized, message: "Sign in first.") }
        self.coreContext = context.coreContext
        self.user = user
        self.app = context
    }

    var sessionToken: String? { app.sessionToken }
}

/// A request of one site's routes (`/sites/{slug}/…`) by a member of the site, or an admin. (The alerts keep their own
/// look-up in `AlertsService`: it answers a member who may not manage them with 403 and why.) `SiteMemberMiddleware`
/// reads the site and the user's access through `Authorization` and makes this context before the handler runs
/// (someone who may not see the site gets 404, as everywhere), so a handler starts from `context.site` and
/// `context.access` and checks only what its action needs (`try context.access.require(.manage, to: …)`).
struct SiteMemberContext: MiddlewareMadeContext, AppChildContext {
    var coreContext: CoreRequestContextStorage
    let user: AuthenticatedUser
    let site: Site
    let access: SiteAccess
    let app: AppRequestContext
}
