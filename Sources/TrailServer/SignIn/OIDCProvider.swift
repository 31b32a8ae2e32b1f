import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1

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
    /// The failure of an earlier attempt, answered again without asking the provider: it was already logged and audited.
    var remembered = false
    var status: HTTPResponse.Status { .serviceUnavailable }
    var message: String { "Your agency's sign-in is not answering right now. Try again later, or sign in with your password." }
}

/// The agency's provider: its discovery document (fetched once, again after a failure), its keys and its token endpoint.
actor OIDCProvider {
    let settings: OIDCSettings
    private var metadata: OIDCMetadata?
    private var metadataFetchedAt = Date.distantPast
    /// The last failed discovery: answered again for `failureMemory` without asking, so a provider that is down is not
    /// asked (and the failure not audited) once per anonymous visitor.
    private var lastFailure: (at: Date, error: OIDCUnavailable)?
    /// A provider may move its endpoints: the discovery document is fetched again after this long (the last one stays
    /// in use while a new fetch fails).
    static let discoveryLifetime: TimeInterval = 24 * 3600
    static let failureMemory: TimeInterval = 60
    private var verifierStorage: OIDCTokenVerifier?

    init(settings: OIDCSettings) { self.settings = settings }

    static func get(_ url: String) async throws -> Data { try await getCached(url).data }

    /// An answer of the provider: its status, its `Cache-Control`, and its body (at most 1 MiB).
    struct Answer: Sendable {
        let status: HTTPResponseStatus
        let cacheControl: String?
        let data: Data
    }

    /// Every call to the provider goes through here: JSON asked for, ten seconds at most, the body read whole. A
    /// provider that cannot be reached is `OIDCUnavailable` naming `what` (the sign-in page says so); what the answer
    /// means is the caller's to judge.
    static func fetch(_ request: HTTPClientRequest, what: String) async throws -> Answer {
        var request = request
        request.headers.replaceOrAdd(name: "Accept", value: "application/json")
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let data = Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
            let cacheControl = response.headers["Cache-Control"].joined(separator: ",")
            return Answer(status: response.status, cacheControl: cacheControl.isEmpty ? nil : cacheControl, data: data)
        } catch {
            throw OIDCUnavailable(detail: "\(what): \(error)")
        }
    }

    /// The document and how long its answer lets it be kept (`Cache-Control: max-age`).
    static func getCached(_ url: String) async throws -> OIDCKeySet.Fetched {
        let answer = try await fetch(HTTPClientRequest(url: url), what: url)
        guard answer.status == .ok else { throw OIDCUnavailable(detail: "\(url) answered \(answer.status.code)") }
        return OIDCKeySet.Fetched(data: answer.data, maxAge: OIDCKeySet.maxAge(cacheControl: answer.cacheControl))
    }

    func discover(now: Date = Date()) async throws -> OIDCMetadata {
        if let metadata, now.timeIntervalSince(metadataFetchedAt) < Self.discoveryLifetime { return metadata }
        if let lastFailure, now.timeIntervalSince(lastFailure.at) < Self.failureMemory {
            if let metadata { return metadata }
            var again = lastFailure.error
            again.remembered = true
            throw again
        }
        do {
            let found = try await fetchDiscovery()
            metadata = found
            metadataFetchedAt = now
            lastFailure = nil
            return found
        } catch let error as OIDCUnavailable {
            lastFailure = (now, error)
            if let metadata { return metadata }
            throw error
        }
    }

    private func fetchDiscovery() async throws -> OIDCMetadata {
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
        let body = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", codeVerifier),
            ("client_id", settings.clientId),
        ].map { "\($0.0)=\(formEncode($0.1))" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        let answer = try await Self.fetch(request, what: "token endpoint")
        let data = answer.data
        guard answer.status == .ok else { throw OIDCTokenError("The provider refused the authorization code (\(answer.status.code)).") }
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
        let answer = try await Self.fetch(request, what: "userinfo endpoint")
        let data = answer.data
        guard answer.status == .ok else {
            throw OIDCTokenError("The provider's UserInfo endpoint refused the access token (\(answer.status.code)).")
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
