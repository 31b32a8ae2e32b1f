import Foundation
import Hummingbird

enum CookieName {
    static let session = "tc_session"
    static let csrf = "tc_csrf"
    static let flash = "tc_flash"
    /// A half-signed-in browser: the password was right, the second step is still to come (opens no page).
    static let pending = "tc_pending"
    /// What a single sign-on's callback must check (state, nonce, PKCE verifier, where to go), bound to this browser.
    static let oidc = "tc_oidc"
    /// Marks a session that came through the provider, so that signing out also signs out there.
    static let singleSignOn = "tc_sso"
}

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
            response.setCookie(
                Cookie(
                    name: CookieName.csrf,
                    value: context.csrfToken,
                    path: "/",
                    secure: config.usesTLS,
                    httpOnly: true,
                    sameSite: .lax
                )
            )
        }
        return response
    }

    /// `/visit` and everything below it: the visitors' side, which has no form and sets no cookie.
    static func isVisitorPath(_ path: String) -> Bool { path == "/visit" || path.hasPrefix("/visit/") }
}

/// Every state-changing request made with a cookie carries the CSRF token: in the `X-CSRF-Token` header
/// (scripts), the `_csrf` form field, or the first field of a multipart form (``MultipartCSRF``). Never in the
/// address: a token there lands in the history and in every log on the way, so a `?_csrf=` counts for nothing.
struct CSRFMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // An API call without a session carries no ambient credential, so there is nothing to forge: it goes on to
        // answer 401 (or, on the public mobile API, simply works). The panel's anonymous forms keep the double-submit check.
        let ambientCredential = context.sessionToken != nil || !request.uri.path.hasPrefix("/api/")
        guard [.post, .put, .patch, .delete].contains(request.method), !context.viaAPIToken, ambientCredential else {
            return try await next(request, context)
        }
        var request = request
        var sent = request.headers[.xCSRFToken]
        if sent == nil, request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            sent = FormFields(String(buffer: body))["_csrf"]
        } else if sent == nil, let boundary = MultipartCSRF.boundary(contentType: request.headers[.contentType]) {
            (sent, request.body) = try await MultipartCSRF.token(of: request.body, boundary: boundary)
        }
        guard let sent, !context.csrfToken.isEmpty, SecretToken.constantTimeEquals(sent, context.csrfToken) else {
            throw HTTPError(.forbidden, message: "This form has expired or did not come from this site. Reload the page and try again.")
        }
        return try await next(request, context)
    }
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
