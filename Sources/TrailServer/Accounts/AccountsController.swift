import Foundation
import Hummingbird
import HummingbirdBcrypt
import NIOPosix

/// The account's own settings: password change and personal API tokens. (Signing in and out is `SignIn/`'s.)
struct AccountsController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig

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

    func addRoutes(signedIn: some RouterMethods<SignedInContext>) {
        signedIn.get("/account/password", use: showPasswordForm)
        signedIn.post("/account/password", use: changePassword)

        signedIn.get("/account/tokens", use: listTokens)
        signedIn.post("/account/tokens", use: createToken)
        signedIn.post("/account/tokens/{id}/revoke", use: revokeToken)
    }

    // MARK: Password

    /// The password form (marked as forced when the account must change its password first).
    func showPasswordForm(_ request: Request, _ context: SignedInContext) async throws -> Response {
        await pages.render(
            "password",
            title: "Change password",
            page: PasswordPage(forced: context.user.mustChangePassword),
            request: request,
            context: context
        )
    }

    /// Changes the signed-in user's password; the other sessions end, this one stays.
    func changePassword(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: PasswordChangeForm.self, context: context)
        let user = context.user
        guard let record = try await database.user(id: user.id) else { throw NotFound() }
        var errors: [String: String] = [:]
        let current = form.currentPassword
        let new = form.newPassword
        if !(try await SignInService.verify(current, hash: record.passwordHash)) { errors["currentPassword"] = "This is not your current password." }
        if new != form.confirmPassword { errors["confirmPassword"] = "The two new passwords differ." }
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
    func listTokens(_ request: Request, _ context: SignedInContext) async throws -> Response {
        await pages.render(
            "tokens",
            title: "API tokens",
            page: try await tokensPage(context.user),
            request: request,
            context: context
        )
    }

    /// Creates an API token and shows it once (201), or the list again with the form's errors (422).
    func createToken(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await request.decode(as: TokenForm.self, context: context)
        let user = context.user
        do {
            let (token, _) = try await database.createAPIToken(userId: user.id, name: form.name, actor: context.actor)
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
    func revokeToken(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int64.self)
        try await database.revokeAPIToken(id: id, userId: context.user.id, actor: context.actor)
        return pages.redirect(to: "/account/tokens", notice: "Token revoked.")
    }

    func tokensPage(_ user: AuthenticatedUser) async throws -> TokensPage {
        TokensPage(
            tokens: try await database.apiTokens(userId: user.id).map {
                TokenRow(
                    id: $0.id,
                    name: $0.name,
                    created: DisplayFormat.date($0.createdAt),
                    lastUsed: $0.lastUsedAt.map(DisplayFormat.date) ?? "never",
                    revoked: $0.revokedAt != nil
                )
            }
        )
    }
}

/// The password change form.
struct PasswordChangeForm: PanelForm {
    @Field var currentPassword: String
    @Field var newPassword: String
    @Field var confirmPassword: String
}

/// A new API token's name.
struct TokenForm: PanelForm {
    @Field var name: String
}
