import Foundation
import Hummingbird

/// Finds the caller: a session cookie (the panel) or a bearer token (scripts, the management API).
/// Also settles the CSRF token the request must carry.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let database: AppDatabase
    let config: AppConfig

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") {
            let token = String(authorization.dropFirst(7)).trimmed
            guard let user = try await database.userForAPIToken(token) else {
                throw HTTPError(.unauthorized, message: "The bearer token is unknown, revoked, or its user is disabled.")
            }
            context.user = AuthenticatedUser(user)
            context.viaAPIToken = true
            return try await next(request, context)
        }
        var active: (token: String, session: SessionRecord, user: User)?
        if let token = request.cookies[CookieName.session]?.value {
            switch try await database.session(token: token, idleTimeout: config.sessionIdleTimeout, lifetime: config.sessionLifetime) {
            case .unknown: break
            case .ended: try await database.removeEndedSession(token: token)
            case .active(let session, let user, let seenAgain):
                if seenAgain { try await database.sessionSeen(token: token) }
                active = (token, session, user)
            }
        }
        if let (token, session, user) = active {
            context.user = AuthenticatedUser(user)
            context.sessionToken = token
            context.csrfToken = session.csrfToken
        } else if let csrf = request.cookies[CookieName.csrf]?.value, csrf.count >= 32 {
            context.csrfToken = csrf
        } else if !request.uri.path.hasPrefix("/api/") && !Self.isVisitorPath(request.uri.path) {
            // An API call without a session needs no CSRF token (`CSRFMiddleware` lets it through: there is no ambient
            // credential to forge) and is never given the cookie. Making one anyway cost a quarter of the read API's CPU
            // (a `getrandom` and three string rewrites per request). Nor is the visitors' list of tours: it has no form
            // that posts, it is the same bytes for everyone, and nginx keeps no answer that sets a cookie. Nor is anything
            // else of the visitors' side (the player's page, its files, its worker): a random value per visitor that no
            // visitor page needs would be an identifier the statistics promise not to set.
            context.csrfToken = SecretToken.make()
            context.issueCSRFCookie = true
        }
        var response = try await next(request, context)
        if context.issueCSRFCookie {
            response.setCookie(AppCookie.csrf(token: context.csrfToken, secure: config.usesTLS))
        }
        return response
    }

    /// `/visit` and everything below it: the visitors' side, which has no form and sets no cookie.
    static func isVisitorPath(_ path: String) -> Bool { path == "/visit" || path.hasPrefix("/visit/") }
}

/// A signed-in user must change a one-time password before anything else.
struct RequireUserMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let user = context.user else { throw HTTPError(.unauthorized, message: "Sign in first.") }
        if user.mustChangePassword, !context.viaAPIToken, request.uri.path != "/account/password" {
            return .redirect(to: "/account/password")
        }
        return try await next(request, context)
    }
}

extension Request {
    /// Collects a small body once and puts it back, so later readers see it too.
    mutating func collectBody(upTo limit: Int) async throws -> ByteBuffer {
        do {
            let buffer = try await body.collect(upTo: limit)
            body = .init(buffer: buffer)
            return buffer
        } catch {
            throw HTTPError(.contentTooLarge, message: "The form is larger than \(limit / 1024) KiB.")
        }
    }
}
