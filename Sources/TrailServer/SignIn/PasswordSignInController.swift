import Foundation
import Hummingbird

/// `/login` and `/logout`: the password form, its outcome (``SignInService/password(email:password:ipAddress:)``) as a
/// page or a redirect, and signing out (at the agency's provider too, for a session that came through it).
struct PasswordSignInController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let service: SignInService
    let responder: SignInResponder
    /// The agency's provider, with `--oidc-issuer`: its end-session endpoint at sign-out.
    var oidc: OIDCProvider? = nil

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/login", use: showLogin)
        router.post("/login", use: login)
        router.post("/logout", use: logout)
    }

    /// The sign-in form; someone already signed in goes to the home page.
    func showLogin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        if context.user != nil { return Response.redirect(to: "/") }
        return await responder.loginPage(request, context, next: SignInResponder.safeNext(request.uri.queryParameters["next"].map(String.init)))
    }

    /// Checks the email and password (throttled), then starts a session and sets its cookie, or a second step.
    func login(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let form = try await request.decode(as: SignInForm.self, context: context)
        let email = form.email.trimmed
        let next = SignInResponder.safeNext(form.next)
        switch try await service.password(email: email, password: form.password, ipAddress: context.remoteAddress) {
        case let .refused(shown, status, _, retryAfter):
            var response = await responder.loginPage(request, context, next: next, email: email, error: shown, status: status)
            if let retryAfter { response.headers[.retryAfter] = "\(Int(retryAfter.rounded(.up)))" }
            return response
        case let .secondStep(user, stage):
            return try await responder.startPendingSignIn(user: user, stage: stage, next: next, context: context)
        case let .signedIn(user, detail):
            return try await responder.finishSignIn(user: user, next: next, detail: detail, context: context)
        }
    }

    /// Ends the session and clears its cookie.
    func logout(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        if let token = context.sessionToken { try await database.endSession(token: token, actor: context.actor) }
        var response = pages.redirect(to: "/login", notice: "You are signed out.")
        // Signed in through the agency's provider: sign out there too, when it offers an end-session endpoint (OpenID
        // Connect RP-Initiated Logout), and come back to the sign-in page.
        if request.cookies[CookieName.singleSignOn] != nil, let oidc, let end = try? await oidc.discover().end_session_endpoint,
            var components = URLComponents(string: end)
        {
            let existing = components.queryItems ?? []
            components.queryItems =
                existing + [
                    URLQueryItem(name: "client_id", value: oidc.settings.clientId),
                    URLQueryItem(name: "post_logout_redirect_uri", value: config.effectivePublicURL + "/login"),
                ]
            if let location = components.url?.absoluteString { response = Response(status: .seeOther, headers: [.location: location]) }
        }
        response.setCookie(AppCookie.clearedSingleSignOn(secure: config.usesTLS))
        response.setCookie(AppCookie.clearedSession(secure: config.usesTLS))
        // A half-finished sign-in on this browser ends too (it is worthless alone, but nothing should outlive sign-out).
        if let pending = request.cookies[CookieName.pending]?.value, !pending.isEmpty {
            try await database.endPendingSignIn(tokenHash: SecretToken.hash(pending))
            response.setCookie(AppCookie.clearedPendingSignIn(secure: config.usesTLS))
        }
        return response
    }
}

/// The sign-in form; `next` is where to go after, when the page was asked for it (checked by `safeNext`).
struct SignInForm: PanelForm {
    @Field var email: String
    @Field var password: String
    var next: String?
}
