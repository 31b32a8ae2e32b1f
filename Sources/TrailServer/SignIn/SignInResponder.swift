import Foundation
import Hummingbird

/// The responses every sign-in path ends with, shared by the password, second-step, single sign-on and invitation
/// controllers: the sign-in page, the half-signed-in browser of a second step, and the session of a finished sign-in.
struct SignInResponder: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig

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

    /// The password was right and a second step is due: a half-signed-in browser with its own new cookie.
    func startPendingSignIn(user: User, stage: PendingStage, next: String, context: AppRequestContext) async throws -> Response {
        // A fresh id at every step: a token planted before sign-in is worthless, and so is one seen between the steps.
        if let old = context.sessionToken { try await database.endSession(token: old, actor: context.actor) }
        let token = try await database.startPendingSignIn(
            userId: user.id,
            passwordHash: user.passwordHash,
            stage: stage,
            next: next,
            ipAddress: context.remoteAddress
        )
        if stage == .enrol {
            // A new key for this attempt alone, never the one an earlier sign-in showed (see `beginTwoStepEnrolment`).
            _ = try await database.beginTwoStepEnrolment(
                userId: user.id,
                holder: SecretToken.hash(token),
                actor: AuditActor(userId: user.id, ipAddress: context.remoteAddress)
            )
        }
        var response = Response.redirect(to: stage == .code ? "/login/code" : "/login/enrol")
        response.setCookie(AppCookie.pendingSignIn(token: token, lifetime: config.pendingSignInLifetime, secure: config.usesTLS))
        return response
    }

    /// Every step done: a fresh session (a new id), its cookie, and the half-signed-in cookie cleared. An account with a
    /// one-time password goes to the password page first; one whose second step an administrator reset is told so.
    func finishSignIn(user: User, next: String, detail: String, context: AppRequestContext, notice: String? = nil) async throws -> Response {
        if let old = context.sessionToken { try await database.endSession(token: old, actor: context.actor) }
        let (token, _) = try await database.startSession(userId: user.id, ipAddress: context.remoteAddress, detail: detail)
        if user.mustChangePassword { Bootstrap.firstAdminSignedIn(user, dataFolder: config.dataFolder) }
        let wasReset = try await database.takeTwoStepResetNotice(userId: user.id)
        let location = user.mustChangePassword ? "/account/password" : next
        let resetNotice = wasReset ? "An administrator reset your two-step sign-in. You can set it up again under Two-step sign-in." : nil
        var response =
            [notice, resetNotice].compactMap({ $0 }).isEmpty
            ? Response.redirect(to: location)
            : pages.redirect(to: location, notice: [notice, resetNotice].compactMap({ $0 }).joined(separator: " "))
        response.setCookie(AppCookie.session(token: token, secure: config.usesTLS))
        response.setCookie(AppCookie.clearedPendingSignIn(secure: config.usesTLS))
        return response
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
