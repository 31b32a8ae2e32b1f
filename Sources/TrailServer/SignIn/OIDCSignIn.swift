import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore

/// The parts of the provider's discovery document (`/.well-known/openid-configuration`) that sign-in uses.
struct OIDCMetadata: Decodable, Sendable {
    let issuer: String
    let authorization_endpoint: String
    let token_endpoint: String
    let jwks_uri: String
    let end_session_endpoint: String?
    let userinfo_endpoint: String?
}

/// What the token endpoint answers that sign-in uses.
struct OIDCTokens: Sendable {
    let idToken: String
    let accessToken: String?
}

/// The provider cannot be reached or answers nonsense: the sign-in page says so and password sign-in goes on working.
struct OIDCUnavailable: AppError {
    let detail: String
    var status: HTTPResponse.Status { .serviceUnavailable }
    var message: String { "Your agency's sign-in is not answering right now. Try again later, or sign in with your password." }
}

/// The agency's provider: its discovery document (fetched once, again after a failure), its keys and its token endpoint.
actor OIDCProvider {
    let settings: OIDCSettings
    private var metadata: OIDCMetadata?
    private var verifierStorage: OIDCTokenVerifier?

    init(settings: OIDCSettings) { self.settings = settings }

    static func get(_ url: String) async throws -> Data { try await getCached(url).data }

    /// The document and how long its answer lets it be kept (`Cache-Control: max-age`).
    static func getCached(_ url: String) async throws -> OIDCKeySet.Fetched {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw OIDCUnavailable(detail: "\(url) answered \(response.status.code)") }
        let data = Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
        let cacheControl = response.headers["Cache-Control"].joined(separator: ",")
        return OIDCKeySet.Fetched(data: data, maxAge: OIDCKeySet.maxAge(cacheControl: cacheControl.isEmpty ? nil : cacheControl))
    }

    func discover() async throws -> OIDCMetadata {
        if let metadata { return metadata }
        let base = settings.issuer.hasSuffix("/") ? String(settings.issuer.dropLast()) : settings.issuer
        let found: OIDCMetadata
        do {
            found = try JSONDecoder().decode(OIDCMetadata.self, from: try await Self.get(base + "/.well-known/openid-configuration"))
        } catch let error as OIDCUnavailable {
            throw error
        } catch {
            throw OIDCUnavailable(detail: "discovery: \(error)")
        }
        // OpenID Connect Discovery §4.3: the document must name the very issuer it was fetched for.
        guard found.issuer == settings.issuer else { throw OIDCUnavailable(detail: "the discovery document names the issuer \(found.issuer)") }
        metadata = found
        return found
    }

    func verifier() async throws -> OIDCTokenVerifier {
        if let verifierStorage { return verifierStorage }
        let metadata = try await discover()
        let jwks = metadata.jwks_uri
        let verifier = OIDCTokenVerifier(
            issuer: settings.issuer,
            clientId: settings.clientId,
            keys: OIDCKeySet(refreshInterval: settings.keyRefreshInterval, maximumAge: settings.keyMaximumAge) {
                try await Self.getCached(jwks)
            }
        )
        verifierStorage = verifier
        return verifier
    }

    /// Trades the authorization code (with the PKCE verifier) for the tokens: client_secret_basic, or for a public
    /// client nothing but its id and the verifier.
    func exchange(code: String, codeVerifier: String, redirectURI: String) async throws -> OIDCTokens {
        let metadata = try await discover()
        var request = HTTPClientRequest(url: metadata.token_endpoint)
        request.method = .POST
        let secret = try settings.clientSecret()
        func formEncode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
        }
        if let secret {
            let credentials = Data("\(formEncode(settings.clientId)):\(formEncode(secret))".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        }
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        let body = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", codeVerifier),
            ("client_id", settings.clientId),
        ].map { "\($0.0)=\(formEncode($0.1))" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        } catch {
            throw OIDCUnavailable(detail: "token endpoint: \(error)")
        }
        let data = Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
        guard response.status == .ok else { throw OIDCTokenError("The provider refused the authorization code (\(response.status.code)).") }
        struct TokenResponse: Decodable {
            let id_token: String?
            let access_token: String?
        }
        guard let answer = try? JSONDecoder().decode(TokenResponse.self, from: data), let token = answer.id_token else {
            throw OIDCTokenError("The provider's token answer holds no ID token.")
        }
        return OIDCTokens(idToken: token, accessToken: answer.access_token)
    }

    /// The email of an ID token that carries none (Login.gov's), from the provider's UserInfo endpoint with the access
    /// token: OpenID Connect Core §5.3.2 asks that its `sub` be the ID token's, else the answer is not this person's.
    func emailFromUserInfo(_ claims: IDTokenClaims, accessToken: String?) async throws -> IDTokenClaims {
        guard claims.email == nil else { return claims }
        guard let endpoint = try await discover().userinfo_endpoint, let accessToken else {
            throw OIDCTokenError("The provider sent no email address (ask for the scope \"email\").")
        }
        var request = HTTPClientRequest(url: endpoint)
        request.headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "Accept", value: "application/json")
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        } catch {
            throw OIDCUnavailable(detail: "userinfo endpoint: \(error)")
        }
        let data = Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
        guard response.status == .ok else {
            throw OIDCTokenError("The provider's UserInfo endpoint refused the access token (\(response.status.code)).")
        }
        struct UserInfo: Decodable {
            let sub: String
            let email: String?
            let email_verified: Bool?
        }
        guard let info = try? JSONDecoder().decode(UserInfo.self, from: data) else {
            throw OIDCTokenError("The provider's UserInfo answer is not readable.")
        }
        guard info.sub == claims.sub else { throw OIDCTokenError("The provider's UserInfo answer is about another person than the ID token.") }
        var completed = claims
        completed.email = info.email
        completed.email_verified = info.email_verified
        return completed
    }
}

/// `GET /auth/oidc/start` and `/auth/oidc/callback`: the authorization code flow with PKCE (S256), state and nonce.
/// What the callback must check travels in a short-lived HttpOnly cookie bound to this browser, used once.
struct OIDCController: Sendable {
    let database: AppDatabase
    let pages: PageResponder
    let config: AppConfig
    let accounts: AccountsController
    let provider: OIDCProvider?

    static let cookie = "tc_oidc"
    /// Marks a session that came through the provider, so that signing out also signs out there.
    static let ssoCookie = "tc_sso"

    func addRoutes(to router: some RouterMethods<AppRequestContext>) {
        router.get("/auth/oidc/start") { request, context in try await start(request, context) }
        router.get("/auth/oidc/callback") { request, context in try await callback(request, context) }
    }

    var redirectURI: String { config.effectivePublicURL + "/auth/oidc/callback" }

    func start(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let provider else { throw NotFound() }
        let next = AccountsController.safeNext(request.uri.queryParameters["next"].map(String.init))
        let metadata: OIDCMetadata
        do {
            metadata = try await provider.discover()
        } catch let error as OIDCUnavailable {
            try await audit(context, "provider not answering: \(error.detail)")
            return await accounts.loginPage(request, context, next: next, error: error.message, status: .serviceUnavailable)
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
        response.setCookie(
            Cookie(
                name: Self.cookie,
                value: value,
                maxAge: 600,
                path: "/auth/oidc",
                secure: config.usesTLS,
                httpOnly: true,
                sameSite: .lax
            )
        )
        return response
    }

    func callback(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        guard let provider else { throw NotFound() }
        let query = request.uri.queryParameters
        let parts = (request.cookies[Self.cookie]?.value ?? "").split(separator: ".").map(String.init)
        func refuse(_ reason: String, _ shown: String, status: HTTPResponse.Status) async throws -> Response {
            try await audit(context, reason)
            var response = await accounts.loginPage(request, context, next: "/", error: shown, status: status)
            response.setCookie(
                Cookie(name: Self.cookie, value: "", maxAge: 0, path: "/auth/oidc", secure: config.usesTLS, httpOnly: true, sameSite: .lax)
            )
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
        let next = AccountsController.safeNext(OIDCTokenVerifier.base64URLDecode(Substring(parts[3])).map { String(decoding: $0, as: UTF8.self) })
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
        var user = try await database.user(email: email)
        if user == nil, provider.settings.createUsers {
            let name =
                (claims.name?.trimmingCharacters(in: .whitespaces)).flatMap { $0.isEmpty ? nil : String($0.prefix(100)) }
                ?? String(email.split(separator: "@")[0])
            // A password nobody knows: this account signs in through the provider (an admin may set one later).
            user = try await database.createUser(
                email: email,
                displayName: name,
                password: OneTimePassword.make() + OneTimePassword.make(),
                isAdmin: false,
                bcryptCost: config.bcryptCost,
                actor: AuditActor(userId: nil, ipAddress: context.remoteAddress)
            )
        }
        guard let user else {
            return try await refuse(
                "no account for \(email)",
                "There is no account for \(email) here. Ask a site manager to add you.",
                status: .forbidden
            )
        }
        guard !user.isDisabled else {
            return try await refuse("account disabled: \(email)", "This account is disabled. Ask an administrator.", status: .forbidden)
        }
        // The provider's own id of the person, kept at the first sign-on: the email alone does not make them the same.
        let actor = AuditActor(userId: user.id, ipAddress: context.remoteAddress)
        switch try await database.linkSingleSignOnSubject(userId: user.id!, issuer: claims.iss, subject: claims.sub, actor: actor) {
        case .linked, .same:
            break
        case .changed:
            return try await refuse(
                "subject changed for \(email): the provider's sub is not the one kept at this account's first sign-on",
                "Your agency account is not the one that first signed in here as \(email). Ask an administrator to reset your sign-in.",
                status: .forbidden
            )
        case .linkedElsewhere:
            return try await refuse(
                "subject of \(email) is already linked to another account here",
                "Your agency account already signs in to another account here. Ask an administrator.",
                status: .forbidden
            )
        }
        var signedOn = user
        if user.mustChangePassword {
            Bootstrap.firstAdminSignedIn(user, dataFolder: config.dataFolder)
            signedOn = try await database.voidOneTimePassword(userId: user.id!, bcryptCost: config.bcryptCost, actor: actor)
        }
        // An account that set up its own second step, and every admin, gives it here too, unless the provider shows it
        // asked for a second factor itself: the provider's password alone is not more than ours.
        let settings = provider.settings
        if settings.askSecondStep, !claims.showsSecondFactor(acceptedACR: settings.secondFactorACR) {
            let status = try await database.twoStepStatus(userId: signedOn.id!)
            if status.enrolled || signedOn.isAdmin {
                var response = try await accounts.startPendingSignIn(
                    user: signedOn,
                    stage: status.enrolled ? .code : .enrol,
                    next: next,
                    context: context
                )
                response.setCookie(
                    Cookie(name: Self.cookie, value: "", maxAge: 0, path: "/auth/oidc", secure: config.usesTLS, httpOnly: true, sameSite: .lax)
                )
                response.setCookie(Cookie(name: Self.ssoCookie, value: "1", path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax))
                return response
            }
        }
        var response = try await accounts.finishSignIn(user: signedOn, next: next, detail: "single sign-on (\(claims.iss))", context: context)
        response.setCookie(
            Cookie(name: Self.cookie, value: "", maxAge: 0, path: "/auth/oidc", secure: config.usesTLS, httpOnly: true, sameSite: .lax)
        )
        response.setCookie(Cookie(name: Self.ssoCookie, value: "1", path: "/", secure: config.usesTLS, httpOnly: true, sameSite: .lax))
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
