import Foundation
import HTTPTypes
import JWTKit

/// Why an ID token was refused. The message is for the operator's log and the audit log; the person signing in is
/// told only that the agency's sign-in could not be checked.
public struct OIDCTokenError: AppError, Equatable {
    public let message: String
    public var status: HTTPResponse.Status { .unauthorized }
    public init(_ message: String) { self.message = message }
}

/// The claims of an OpenID Connect ID token that sign-in uses.
public struct IDTokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var sub: String
    public var aud: AudienceClaim
    public var azp: String?
    public var exp: Double
    public var iat: Double
    public var nonce: String?
    public var email: String?
    public var email_verified: Bool?
    /// Microsoft Entra ID sends no `email_verified`; its optional claim `xms_edov` ("email domain owner verified") says
    /// that the tenant owns the email's domain, which is what `email_verified` stands for here.
    public var xms_edov: Bool?
    public var name: String?

    /// The checks are `OIDCTokenVerifier`'s (with the clock it is given), not jwt-kit's.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, email, email_verified, xms_edov, name
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        aud = try container.decode(AudienceClaim.self, forKey: .aud)
        azp = try container.decodeIfPresent(String.self, forKey: .azp)
        exp = try container.decode(Double.self, forKey: .exp)
        iat = try container.decode(Double.self, forKey: .iat)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        email_verified = Self.flag(container, .email_verified)
        xms_edov = Self.flag(container, .xms_edov)
        name = try container.decodeIfPresent(String.self, forKey: .name)
    }

    /// A boolean claim that some providers send as a string ("true").
    static func flag(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> Bool? {
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: key) { return flag }
        return (try? container.decodeIfPresent(String.self, forKey: key)).flatMap { $0 }.map { $0 == "true" }
    }
}

/// The provider's signing keys (its JWKS), fetched when first needed and again when a token names a key id they do not
/// hold (the provider rotated its keys), at most once per `refreshInterval` so forged key ids cannot make the server
/// hammer the provider.
public actor OIDCKeySet {
    private let fetch: @Sendable () async throws -> Data
    private let refreshInterval: TimeInterval
    private var jwks: [String: JWK] = [:]
    private var collection = JWTKeyCollection()
    private var lastFetch: Date?

    public init(refreshInterval: TimeInterval = 60, fetch: @escaping @Sendable () async throws -> Data) {
        self.fetch = fetch
        self.refreshInterval = refreshInterval
    }

    /// The key with this id and the collection that holds it; nil when even a fresh JWKS does not have it.
    func key(_ kid: String) async throws -> (JWK, JWTKeyCollection)? {
        if let key = jwks[kid] { return (key, collection) }
        if let lastFetch, Date().timeIntervalSince(lastFetch) < refreshInterval { return nil }
        try await refresh()
        return jwks[kid].map { ($0, collection) }
    }

    private func refresh() async throws {
        lastFetch = Date()
        let data = try await fetch()
        let set = try JSONDecoder().decode(JWKS.self, from: data)
        // Only signature keys of the two accepted kinds, each with an id: nothing else can ever verify a token.
        let usable = set.keys.filter { key in
            guard let kid = key.keyIdentifier?.string, !kid.isEmpty else { return false }
            return key.keyType == .rsa || key.keyType == .ecdsa
        }
        let collection = JWTKeyCollection()
        for key in usable { _ = try? await collection.add(jwk: key) }
        self.collection = collection
        self.jwks = Dictionary(usable.map { ($0.keyIdentifier!.string, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Checks an ID token as OpenID Connect Core 1.0 §3.1.3.7 asks: an RS256 or ES256 signature by one of the provider's
/// keys (any other `alg`, `none` and HS256 among them, is refused before a key is looked at, so a public key can never
/// be used as an HMAC secret), the issuer, the audience (and `azp` when there are several audiences or it is present),
/// expiry and issue time with a small skew, and the nonce of this sign-in.
public struct OIDCTokenVerifier: Sendable {
    public let issuer: String
    public let clientId: String
    public let keys: OIDCKeySet
    /// Clock difference tolerated between the provider and this server.
    public var skew: TimeInterval = 120

    public init(issuer: String, clientId: String, keys: OIDCKeySet) {
        self.issuer = issuer
        self.clientId = clientId
        self.keys = keys
    }

    static let accepted: [String: JWK.KeyType] = ["RS256": .rsa, "ES256": .ecdsa]

    public func verify(_ token: String, nonce: String, now: Date = Date()) async throws -> IDTokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any]
        else {
            throw OIDCTokenError("The ID token is not a signed JWT.")
        }
        guard let alg = header["alg"] as? String, let keyType = Self.accepted[alg] else {
            throw OIDCTokenError("The ID token's algorithm \(header["alg"].map { "\($0)" } ?? "(none)") is not accepted (RS256 and ES256 are).")
        }
        guard let kid = header["kid"] as? String, !kid.isEmpty else { throw OIDCTokenError("The ID token names no key (kid).") }
        guard let (key, collection) = try await keys.key(kid) else {
            throw OIDCTokenError("The ID token is signed with a key the provider does not publish (kid \(kid)).")
        }
        guard key.keyType == keyType else { throw OIDCTokenError("The ID token's algorithm \(alg) does not fit key \(kid).") }
        let claims: IDTokenClaims
        do {
            claims = try await collection.verify(token, as: IDTokenClaims.self)
        } catch {
            throw OIDCTokenError("The ID token's signature is not valid.")
        }
        guard claims.iss == issuer else { throw OIDCTokenError("The ID token comes from another issuer (\(claims.iss)).") }
        guard claims.aud.value.contains(clientId) else { throw OIDCTokenError("The ID token is meant for another client.") }
        if claims.aud.value.count > 1 || claims.azp != nil {
            guard claims.azp == clientId else { throw OIDCTokenError("The ID token was issued to another party (azp).") }
        }
        let time = now.timeIntervalSince1970
        guard claims.exp + skew > time else { throw OIDCTokenError("The ID token has expired.") }
        guard claims.iat - skew <= time else { throw OIDCTokenError("The ID token is issued in the future.") }
        guard let sent = claims.nonce, SecretToken.constantTimeEquals(sent, nonce) else {
            throw OIDCTokenError("The ID token's nonce is not this sign-in's.")
        }
        return claims
    }

    /// The email to match an account by: present, and verified by the provider (an unverified address could be anyone's).
    public static func verifiedEmail(of claims: IDTokenClaims) throws -> String {
        guard let email = claims.email?.trimmingCharacters(in: .whitespaces), !email.isEmpty else {
            throw OIDCTokenError("The provider sent no email address (ask for the scope \"email\").")
        }
        // An explicit `email_verified: false` wins over anything else; without the claim, Entra's `xms_edov` may stand for it.
        let verified = claims.email_verified ?? claims.xms_edov ?? false
        guard verified else { throw OIDCTokenError("The provider has not verified the email address \(email).") }
        return email
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
