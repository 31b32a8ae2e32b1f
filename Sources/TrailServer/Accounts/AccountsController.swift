import Foundation
import Hummingbird
import HummingbirdBcrypt
import NIOPosix

/// Sign in, sign out, password change and personal API tokens.
struct AccountsController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let unknownUserPasswordHash: String
    /// The agency's provider, with `--oidc-issuer`: its button on the sign-in page, its end-session at sign-out.
    var oidc: OIDCProvider? = nil

    struct LoginPage: Sendable {
        var email = ""
        var next = "/"
        var error: String?
        /// The single sign-on button's label and address (nil without `--oidc-issuer`).
        var oidcLabel: String?
        var oidcStart = ""
    }

    /// The sign-in page, with the single sign-on button when there is a provider.
    func loginPage(
        _ request: Request,
        _ context: AppRequestContext,
        next: String,
        email: String = "",
        error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async -> Response {
        var page = LoginPage(email: email, next: next, error: error)
        if let settings = config.oidc {
            page.oidcLabel = settings.label
            page.oidcStart =
                "/auth/oidc/start?next="
                + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? "/")
        }
        return await pages.render("login", title: "Sign in", page: page, request: request, context: context, status: status)
    }

    struct PasswordPage: Sendable {
        var forced: Bool
        var errors: [String: String] = [:]
    }

    struct TokenRow: Sendable {
        let id: Int64
        let name: String
        let created: String
        let lastUsed: String
        let revoked: Bool
    }

    struct TokensPage: Sendable {
        var tokens: [TokenRow]
        var newToken: String?
        var errors: [String: String] = [:]
    }

    func addRoutes(public router: some RouterMethods<AppRequestContext>, signedIn: some RouterMethods<AppRequestContext>) {
        router.get("/login") { request, context in try await showLogin(request, context) }
        router.post("/login") { request, context in try await login(request, context) }
        router.post("/logout") { request, context in try await logout(request, context) }

        signedIn.get("/account/password") { request, context in try await showPasswordForm(request, context) }
        signedIn.post("/account/password") { request, context in try await changePassword(request, context) }

        signedIn.get("/account/tokens") { request, context in try await listTokens(request, context) }
        signedIn.post("/account/tokens") { request, context in try await createToken(request, context) }
        signedIn.post("/account/tokens/{id}/revoke") { request, context in try await revokeToken(request, context) }
    }

    // MARK: Sign in and out

    /// The sign-in form; someone already signed in goes to the home page.
    func showLogin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        if context.user != nil { return Response.redirect(to: "/") }
        return await loginPage(request, context, next: Self.safeNext(request.uri.queryParameters["next"].map(String.init)))
    }

    /// Checks the email and password (throttled), then starts a session and sets its cookie.
    func login(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        var request = request
        let form = try await request.form(context: context)
        let email = form.string("email").trimmed
        let next = Self.safeNext(form["next"])
        func fail(_ message: String, status: HTTPResponse.Status) async -> Response {
            await loginPage(request, context, next: next, email: email, error: message, status: status)
        }
        let attempt: Int64
        switch try await beginAttempt(email: email, context: context) {
        case let .allowed(id): attempt = id
        case let .locked(message, retryAfter):
            var response = await fail(message, status: .tooManyRequests)
            response.headers[.retryAfter] = "\(Int(retryAfter.rounded(.up)))"
            return response
        }
        let user = try await database.user(email: email)
        // Verify against a dummy hash when the user is unknown, so timing does not reveal which emails exist.
        let valid = try await Self.verify(form.string("password"), hash: user?.passwordHash ?? unknownUserPasswordHash)
        guard let user, valid, !user.isDisabled else {
            try await database.recordLoginFailure(email: email, ipAddress: context.remoteAddress)
            return await fail("The email or password is not right.", status: .unauthorized)
        }
        try await database.endLoginAttempt(attempt)
        // A site that signs in through the agency's provider only: said after the password checked out, so only the
        // account's owner learns which site it is.
        if config.oidc != nil, let site = try await database.sitesWithoutPasswordSignIn(for: user).first {
            return await fail(
                "\(site.name) signs in with your agency account only: use \u{201C}\(config.oidc!.label)\u{201D} below.",
                status: .forbidden
            )
        }
        // An enrolled account gives its code next, and one that must enrol does so now: either way only a half-signed-in
        // browser (its own cookie, no page of the panel) until that is done.
        let status = try await database.twoStepStatus(userId: user.id!)
        let required = try await database.twoStepRequired(for: user, requirement: config.twoStepRequirement)
        if status.enrolled || required {
            return try await startPendingSignIn(user: user, stage: status.enrolled ? .code : .enrol, next: next, context: context)
        }
        return try await finishSignIn(user: user, next: next, detail: "password", context: context)
    }

    /// What `beginAttempt` decided.
    enum AttemptDecision {
        case allowed(Int64)
        case locked(String, retryAfter: TimeInterval)
    }

    /// Counts a sign-in attempt (a password or a second-step code) against the lockout per email and address, before it
    /// is checked, in one transaction with the check of the limit: fifty guesses sent at once cannot all pass it while
    /// bcrypt runs. Waits the growing delay of an email guessed at from many addresses (slower and slower, never refused).
    func beginAttempt(email: String, context: AppRequestContext) async throws -> AttemptDecision {
        switch try await database.beginLoginAttempt(
            email: email,
            ipAddress: context.remoteAddress,
            window: config.loginThrottleWindow,
            limit: config.loginFailureLimit,
            maxDelay: config.loginMaxDelay
        ) {
        case let .allowed(id, delay):
            if delay > 0 { try await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
            return .allowed(id)
        case let .lockedForEmail(retryAfter):
            return .locked(
                "Too many failed sign-ins for this email from your address. Try again in \(Self.minutes(retryAfter)), or sign in from "
                    + "another network. If you forgot your password or lost your phone, an administrator can reset it.",
                retryAfter: retryAfter
            )
        case let .lockedForAddress(retryAfter):
            return .locked("Too many failed sign-ins from your address. Try again in \(Self.minutes(retryAfter)).", retryAfter: retryAfter)
        }
    }

    /// The password was right and a second step is due: a half-signed-in browser with its own new cookie.
    func startPendingSignIn(user: User, stage: PendingStage, next: String, context: AppRequestContext) async throws -> Response {
        // A fresh id at every step: a token planted before sign-in is worthless, and so is one seen between the steps.
        if let old = context.sessionToken { try await database.endSession(token: old, actor: context.actor) }
        let token = try await database.startPendingSignIn(
            userId: user.id!,
            passwordHash: user.passwordHash,
            stage: stage,
            next: next,
            ipAddress: context.remoteAddress
        )
        if stage == .enrol {
            // A new key for this attempt alone, never the one an earlier sign-in showed (see `beginTwoStepEnrolment`).
            _ = try await database.beginTwoStepEnrolment(
                userId: user.id!,
                holder: SecretToken.hash(token),
                actor: AuditActor(userId: user.id, ipAddress: context.remoteAddress)
            )
        }
        var response = Response.redirect(to: stage == .code ? "/login/code" : "/login/enrol")
        response.setCookie(
            Cookie(
                name: CookieName.pending,
                value: token,
                maxAge: Int(config.pendingSignInLifetime),
                path: "/",
                secure: config.usesTLS,
                httpOnly: true,
                sameSite: .lax
            )
        )
        return response
    }

    /// Every step done: a fresh session (a new id), its cookie, and the half-signed-in cookie cleared. An account with a
    /// one-time password goes to the password page first; one whose second step an administrator reset is told so.
    func finishSignIn(user: User, next: String, detail: String, context: AppRequestContext, notice: String? = nil) async throws -> Response {
        if let old = context.sessionToken { try await database.endSession(token: old, actor: context.actor) }
        let (token, _) = try await database.startSession(userId: user.id!, ipAddress: context.remoteAddress, detail: detail)
        if user.mustChangePassword { Bootstrap.firstAdminSignedIn(user, dataFolder: config.dataFolder) }
        let wasReset = try await database.takeTwoStepResetNotice(userId: user.id!)
        let location = user.mustChangePassword ? "/account/password" : next
        let resetNotice = wasReset ? "An administrator reset your two-step sign-in. You can set it up again under Two-step sign-in." : nil
        var response =
            [notice, resetNotice].compactMap({ $0 }).isEmpty
            ? Response.redirect(to: location)
            : pages.redirect(to: location, notice: [notice, resetNotice].compactMap({ $0 }).joined(separator: " "))
        response.setCookie(Cookie(name: CookieName.session, value: token, path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax))
        response.setCookie(Cookie(name: CookieName.pending, value: "", maxAge: 0, path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax))
        return response
    }

    /// Ends the session and clears its cookie.
    func logout(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        if let token = context.sessionToken { try await database.endSession(token: token, actor: context.actor) }
        var response = pages.redirect(to: "/login", notice: "You are signed out.")
        // Signed in through the agency's provider: sign out there too, when it offers an end-session endpoint (OpenID
        // Connect RP-Initiated Logout), and come back to the sign-in page.
        if request.cookies[OIDCController.ssoCookie] != nil, let oidc, let end = try? await oidc.discover().end_session_endpoint,
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
        response.setCookie(
            Cookie(name: OIDCController.ssoCookie, value: "", maxAge: 0, path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax)
        )
        response.setCookie(Cookie(name: CookieName.session, value: "", maxAge: 0, path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax))
        // A half-finished sign-in on this browser ends too (it is worthless alone, but nothing should outlive sign-out).
        if let pending = request.cookies[CookieName.pending]?.value, !pending.isEmpty {
            try await database.endPendingSignIn(tokenHash: SecretToken.hash(pending))
            response.setCookie(
                Cookie(name: CookieName.pending, value: "", maxAge: 0, path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax)
            )
        }
        return response
    }

    // MARK: Password

    /// The password form (marked as forced when the account must change its password first).
    func showPasswordForm(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        await pages.render(
            "password",
            title: "Change password",
            page: PasswordPage(forced: context.user?.mustChangePassword == true),
            request: request,
            context: context
        )
    }

    /// Changes the signed-in user's password; the other sessions end, this one stays.
    func changePassword(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        var request = request
        let form = try await request.form(context: context)
        let user = try context.requireUser()
        guard let record = try await database.user(id: user.id) else { throw NotFound() }
        var errors: [String: String] = [:]
        let current = form.string("currentPassword")
        let new = form.string("newPassword")
        if !(try await Self.verify(current, hash: record.passwordHash)) { errors["currentPassword"] = "This is not your current password." }
        if new != form.string("confirmPassword") { errors["confirmPassword"] = "The two new passwords differ." }
        if new == current { errors["newPassword"] = "Choose a password different from the current one." }
        if let problem = AppDatabase.passwordProblem(new) { errors["newPassword"] = problem }
        if !errors.isEmpty {
            return await pages.render(
                "password",
                title: "Change password",
                page: PasswordPage(forced: user.mustChangePassword, errors: errors),
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
        try await database.changePassword(
            userId: user.id,
            newPassword: new,
            bcryptCost: config.bcryptCost,
            actor: context.actor,
            keepingSession: context.sessionToken
        )
        return pages.redirect(to: "/", notice: "Your password has been changed.")
    }

    // MARK: API tokens

    /// The signed-in user's API tokens.
    func listTokens(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        await pages.render(
            "tokens",
            title: "API tokens",
            page: try await tokensPage(context.requireUser()),
            request: request,
            context: context
        )
    }

    /// Creates an API token and shows it once (201), or the list again with the form's errors (422).
    func createToken(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        var request = request
        let form = try await request.form(context: context)
        let user = try context.requireUser()
        do {
            let (token, _) = try await database.createAPIToken(userId: user.id, name: form.string("name"), actor: context.actor)
            var page = try await tokensPage(user)
            page.newToken = token
            return await pages.render("tokens", title: "API tokens", page: page, request: request, context: context, status: .created)
        } catch let errors as ValidationErrors {
            var page = try await tokensPage(user)
            page.errors = errors.fields
            return await pages.render("tokens", title: "API tokens", page: page, request: request, context: context, status: .unprocessableContent)
        }
    }

    /// Revokes one of the signed-in user's tokens.
    func revokeToken(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        try await database.revokeAPIToken(id: id, userId: try context.requireUser().id, actor: context.actor)
        return pages.redirect(to: "/account/tokens", notice: "Token revoked.")
    }

    func tokensPage(_ user: AuthenticatedUser) async throws -> TokensPage {
        TokensPage(
            tokens: try await database.apiTokens(userId: user.id).map {
                TokenRow(
                    id: $0.id!,
                    name: $0.name,
                    created: DisplayFormat.date($0.createdAt),
                    lastUsed: $0.lastUsedAt.map(DisplayFormat.date) ?? "never",
                    revoked: $0.revokedAt != nil
                )
            }
        )
    }

    /// "1 minute", "14 minutes": a wait rounded up to whole minutes.
    static func minutes(_ seconds: TimeInterval) -> String {
        let minutes = max(1, Int((seconds / 60).rounded(.up)))
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    /// bcrypt is slow on purpose: keep it off the event loop.
    static func verify(_ password: String, hash: String) async throws -> Bool {
        try await BlockingWork.short { Bcrypt.verify(password, hash: hash) }
    }

    /// Only local paths, so a crafted link cannot bounce a fresh sign-in to another site. Browsers drop tabs and
    /// newlines from a `Location` and read `\\` as `/`, so `/\t/evil.example` or `/\\evil.example` would leave the site:
    /// the path must start with a single `/` and hold no control character, whitespace or backslash, and so must
    /// every percent-decoding of it (`/%2F%2Fevil.example` is `//evil.example` to some servers and proxies).
    static func safeNext(_ next: String?) -> String {
        guard let next, next.utf8.count <= 2048 else { return "/" }
        var form = next
        for _ in 0..<4 {
            guard isLocalPath(form) else { return "/" }
            guard let decoded = form.removingPercentEncoding, decoded != form else { return next }
            form = decoded
        }
        return "/"
    }

    static func isLocalPath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.hasPrefix("/login") else { return false }
        return !path.unicodeScalars.contains { $0 == "\\" || $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }
}
