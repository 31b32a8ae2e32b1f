import Crypto
import Foundation
import Hummingbird

/// `GET /auth/oidc/start` and `/auth/oidc/callback`: the authorization code flow with PKCE (S256), state and nonce.
/// What the callback must check travels in a short-lived HttpOnly cookie bound to this browser, used once.
struct OIDCController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let service: SignInService
    let responder: SignInResponder
    let provider: OIDCProvider?

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/auth/oidc/start", use: start)
        router.get("/auth/oidc/callback", use: callback)
    }

    var redirectURI: String { config.effectivePublicURL + "/auth/oidc/callback" }

    func start(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let provider else { throw NotFound() }
        let next = SignInResponder.safeNext(request.uri.queryParameters["next"].map(String.init))
        let metadata: OIDCMetadata
        do {
            metadata = try await provider.discover()
        } catch let error as OIDCUnavailable {
            // Once a minute at most while the provider is down, not once per visitor.
            if !error.remembered { try await audit(context, "provider not answering: \(error.detail)") }
            return await responder.loginPage(request, context, next: next, error: error.message, status: .serviceUnavailable)
        }
        let state = SecretToken.make()
        let nonce = SecretToken.make()
        let verifier = SecretToken.make()
        let challenge = SecretToken.base64URL(Array(SHA256.hash(data: Data(verifier.utf8))))
        var components = URLComponents(string: metadata.authorization_endpoint)
        let existing = components?.queryItems ?? []
        components?.queryItems =
            existing + [
                URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: provider.settings.clientId),
                URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "scope", value: "openid email profile"),
                URLQueryItem(name: "state", value: state), URLQueryItem(name: "nonce", value: nonce),
                URLQueryItem(name: "code_challenge", value: challenge), URLQueryItem(name: "code_challenge_method", value: "S256"),
            ] + (provider.settings.acrValues.map { [URLQueryItem(name: "acr_values", value: $0)] } ?? [])
            + (provider.settings.prompt.map { [URLQueryItem(name: "prompt", value: $0)] } ?? [])
        guard let location = components?.url?.absoluteString else { throw OIDCUnavailable(detail: "bad authorization endpoint") }
        var response = Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
        let value = [state, nonce, verifier, SecretToken.base64URL(Array(next.utf8))].joined(separator: ".")
        response.setCookie(AppCookie.singleSignOnStart(value, secure: config.usesTLS))
        return response
    }

    func callback(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let provider else { throw NotFound() }
        let query = request.uri.queryParameters
        let parts = (request.cookies[CookieName.oidc]?.value ?? "").split(separator: ".").map(String.init)
        func refuse(_ reason: String, _ shown: String, status: HTTPResponse.Status) async throws -> Response {
            try await audit(context, reason)
            var response = await responder.loginPage(request, context, next: "/", error: shown, status: status)
            response.setCookie(AppCookie.clearedSingleSignOnStart(secure: config.usesTLS))
            return response
        }
        // The state proves this browser started this sign-in here (no login CSRF); the cookie is used once.
        guard parts.count == 4, let state = query["state"].map(String.init), SecretToken.constantTimeEquals(state, parts[0]) else {
            return try await refuse(
                "state missing or wrong",
                "This sign-in was not started here, or it took too long. Try again.",
                status: .badRequest
            )
        }
        let (nonce, codeVerifier) = (parts[1], parts[2])
        let next = SignInResponder.safeNext(OIDCTokenVerifier.base64URLDecode(Substring(parts[3])).map { String(decoding: $0, as: UTF8.self) })
        if let error = query["error"] {
            return try await refuse("provider answered \(error)", "Your agency's sign-in did not sign you in (\(error)).", status: .unauthorized)
        }
        guard let code = query["code"].map(String.init), !code.isEmpty else {
            return try await refuse("no code", "Your agency's sign-in did not sign you in.", status: .badRequest)
        }
        let claims: IDTokenClaims
        let email: String
        do {
            let tokens = try await provider.exchange(code: code, codeVerifier: codeVerifier, redirectURI: redirectURI)
            claims = try await provider.emailFromUserInfo(
                try await provider.verifier().verify(tokens.idToken, nonce: nonce),
                accessToken: tokens.accessToken
            )
            email = try OIDCTokenVerifier.verifiedEmail(of: claims)
        } catch let error as OIDCUnavailable {
            return try await refuse("provider not answering: \(error.detail)", error.message, status: .serviceUnavailable)
        } catch let error as OIDCTokenError {
            return try await refuse(
                error.message,
                "Your agency's sign-in could not be checked, so you are not signed in. If this goes on, tell your IT staff.",
                status: .unauthorized
            )
        }
        var response: Response
        switch try await service.signOn(claims: claims, email: email, settings: provider.settings, ipAddress: context.remoteAddress) {
        case let .refused(shown, status, reason, _):
            return try await refuse(reason ?? shown, shown, status: status)
        case let .secondStep(user, stage):
            response = try await responder.startPendingSignIn(user: user, stage: stage, next: next, context: context)
        case let .signedIn(user, detail):
            response = try await responder.finishSignIn(user: user, next: next, detail: detail, context: context)
        }
        response.setCookie(AppCookie.clearedSingleSignOnStart(secure: config.usesTLS))
        response.setCookie(AppCookie.singleSignOn(secure: config.usesTLS))
        return response
    }

    /// A refused sign-on: one warning line in the server's log (an operator looking at a provider that stopped working
    /// looks there first) and its audit entry, both with the reason. Reasons name a claim, an email or an HTTP status,
    /// never a token, a code or a secret.
    func audit(_ context: AppRequestContext, _ reason: String) async throws {
        context.logger.warning(
            "single sign-on refused",
            metadata: ["reason": .string(reason), "client": .string(context.remoteAddress ?? "-")]
        )
        try await database.recordSingleSignOnFailure(reason: reason, ipAddress: context.remoteAddress)
    }
}
