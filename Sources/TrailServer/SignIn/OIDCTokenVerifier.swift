import Foundation
import HTTPTypes
import JWTKit

/// Why an ID token was refused. The message is for the operator's log and the audit log; the person signing in is
/// told only that the agency's sign-in could not be checked.
struct OIDCTokenError: AppError, Equatable {
    let message: String
    var status: HTTPResponse.Status { .unauthorized }
    init(_ message: String) { self.message = message }
}

/// The claims of an OpenID Connect ID token that sign-in uses.
struct IDTokenClaims: JWTPayload, Equatable {
    var iss: String
    var sub: String
    var aud: AudienceClaim
    var azp: String?
    var exp: Double
    var iat: Double
    var nonce: String?
    var email: String?
    var email_verified: Bool?
    /// Microsoft Entra ID sends no `email_verified`; its optional claim `xms_edov` ("email domain owner verified") says
    /// that the tenant owns the email's domain, which is what `email_verified` stands for here.
    var xms_edov: Bool?
    var name: String?
    /// How the provider signed the person in (RFC 8176 values such as `pwd`, `otp`, `mfa`), when it says.
    var amr: [String]?
    /// The authentication context class the provider met, when it says.
    var acr: String?

    /// The checks are `OIDCTokenVerifier`'s (with the clock it is given), not jwt-kit's.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, email, email_verified, xms_edov, name, amr, acr
    }

    init(from decoder: any Decoder) throws {
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
        // Some providers send a lone method as a string; an unreadable claim counts as absent (no second factor shown).
        amr =
            (try? container.decodeIfPresent([String].self, forKey: .amr))
            ?? (try? container.decodeIfPresent(String.self, forKey: .amr)).flatMap { $0.map { [$0] } }
        acr = try? container.decodeIfPresent(String.self, forKey: .acr)
    }

    /// The `amr` values (RFC 8176) that mean the provider asked for more than a password: several factors, a one-time
    /// code, a hardware or software key, or proof of possession of a key.
    static let secondFactorMethods: Set<String> = ["mfa", "otp", "hwk", "swk", "pop"]

    /// Whether the token shows that the provider asked for a second factor: an `amr` value of
    /// `secondFactorMethods`, or an `acr` the operator named as one (`--oidc-acr`).
    func showsSecondFactor(acceptedACR: Set<String>) -> Bool {
        if let amr, amr.contains(where: Self.secondFactorMethods.contains) { return true }
        if let acr, acceptedACR.contains(acr) { return true }
        return false
    }

    /// A boolean claim that some providers send as a string ("true").
    static func flag(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> Bool? {
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: key) { return flag }
        return (try? container.decodeIfPresent(String.self, forKey: key)).flatMap { $0 }.map { $0 == "true" }
    }
}

/// The provider's signing keys (its JWKS). Fetched when first needed, then again on a schedule (the answer's
/// `Cache-Control: max-age`, at most `maximumAge`, an hour by default: a key the provider withdrew stops working), and
/// once more when a token names a key id the set does not hold or its signature fails against the cached key (the
/// provider rotated its keys, or replaced one under the same id), at most once per `refreshInterval` so forged tokens
/// cannot make the server hammer the provider.
actor OIDCKeySet {
    /// A fetched key set and how long its answer says it may be kept (`Cache-Control: max-age`), if it says.
    struct Fetched: Sendable {
        var data: Data
        var maxAge: TimeInterval?
        init(data: Data, maxAge: TimeInterval? = nil) {
            self.data = data
            self.maxAge = maxAge
        }
    }

    /// What a token's key id found.
    enum Lookup {
        case found(JWK, JWTKeyCollection)
        /// No key of that id (or, for a token naming none, no key at all).
        case unknown
        /// The token names no key and the set holds several: which one signed it is not for us to guess.
        case ambiguous
    }

    /// One key, alone in its collection: a token is only ever checked against the key it was matched with.
    struct Entry {
        let kid: String?
        let jwk: JWK
        let collection: JWTKeyCollection
    }

    private let fetch: @Sendable () async throws -> Fetched
    private let refreshInterval: TimeInterval
    private let maximumAge: TimeInterval
    private let clock: @Sendable () -> Date
    private var entries: [Entry] = []
    private var fetchedAt: Date?
    private var expiresAt: Date?

    init(
        refreshInterval: TimeInterval = 60,
        maximumAge: TimeInterval = 3600,
        clock: @escaping @Sendable () -> Date = { Date() },
        fetchingCached fetch: @escaping @Sendable () async throws -> Fetched
    ) {
        self.fetch = fetch
        self.refreshInterval = refreshInterval
        self.maximumAge = maximumAge
        self.clock = clock
    }

    init(
        refreshInterval: TimeInterval = 60,
        maximumAge: TimeInterval = 3600,
        clock: @escaping @Sendable () -> Date = { Date() },
        fetch: @escaping @Sendable () async throws -> Data
    ) {
        self.init(refreshInterval: refreshInterval, maximumAge: maximumAge, clock: clock) { Fetched(data: try await fetch()) }
    }

    /// The key a token names (`kid`), or, when it names none, the one key of a single-key set (OpenID Connect Core
    /// §10.1 asks for a `kid` only when the set holds several). Fetches the set first when it is due, and once more,
    /// rate-limited, when the key is not found.
    func key(_ kid: String?) async throws -> Lookup {
        try await refreshIfDue()
        let lookup = find(kid)
        if case .found = lookup { return lookup }
        guard try await refreshAfterFailure() else { return lookup }
        return find(kid)
    }

    /// A signature failed against the cached key: fetch the set again (rate-limited). True when it was fetched.
    func refreshAfterFailure() async throws -> Bool {
        if let fetchedAt, clock().timeIntervalSince(fetchedAt) < refreshInterval { return false }
        try await refresh()
        return true
    }

    private func find(_ kid: String?) -> Lookup {
        let entry: Entry?
        if let kid {
            entry = entries.first { $0.kid == kid }
        } else {
            if entries.count > 1 { return .ambiguous }
            entry = entries.first
        }
        return entry.map { .found($0.jwk, $0.collection) } ?? .unknown
    }

    private func refreshIfDue() async throws {
        if let expiresAt, clock() < expiresAt { return }
        do {
            try await refresh()
        } catch  where !entries.isEmpty {
            // The provider is down: keep the keys it last published, and ask again after the rate limit.
            expiresAt = clock().addingTimeInterval(refreshInterval)
        }
    }

    private func refresh() async throws {
        let now = clock()
        fetchedAt = now
        let fetched = try await fetch()
        let set = try JSONDecoder().decode(JWKS.self, from: fetched.data)
        // Only signature keys of the two accepted kinds: nothing else can ever verify a token.
        let usable = set.keys.filter { $0.keyType == .rsa || $0.keyType == .ecdsa }
        var entries: [Entry] = []
        for key in usable {
            let kid = key.keyIdentifier?.string.isEmpty == false ? key.keyIdentifier?.string : nil
            // jwt-kit files keys by id: a key published without one gets a name of ours, never matched by a token.
            var named = key
            if kid == nil { named.keyIdentifier = JWKIdentifier(string: "(no kid)") }
            guard let collection = try? await JWTKeyCollection().add(jwk: named, isDefault: true) else { continue }
            entries.append(Entry(kid: kid, jwk: key, collection: collection))
        }
        self.entries = entries
        // Kept as long as the answer says, never past `maximumAge`, and refetched no more often than the rate limit.
        let age = min(maximumAge, max(refreshInterval, fetched.maxAge ?? maximumAge))
        expiresAt = now.addingTimeInterval(age)
    }

    /// `max-age` of a `Cache-Control` header; 0 for `no-cache` and `no-store`; nil when it says nothing of it.
    static func maxAge(cacheControl: String?) -> TimeInterval? {
        guard let cacheControl else { return nil }
        var found: TimeInterval?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts[0] == "no-cache" || parts[0] == "no-store" { return 0 }
            if parts[0] == "max-age", parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))),
                seconds >= 0
            {
                found = TimeInterval(seconds)
            }
        }
        return found
    }
}

/// Checks an ID token as OpenID Connect Core 1.0 §3.1.3.7 asks: an RS256 or ES256 signature by one of the provider's
/// keys (any other `alg`, `none` and HS256 among them, is refused before a key is looked at, so a public key can never
/// be used as an HMAC secret), the issuer, the audience (and `azp` when there are several audiences or it is present),
/// expiry and issue time with a small skew, and the nonce of this sign-in.
struct OIDCTokenVerifier: Sendable {
    let issuer: String
    let clientId: String
    let keys: OIDCKeySet
    /// Clock difference tolerated between the provider and this server.
    var skew: TimeInterval = 120

    init(issuer: String, clientId: String, keys: OIDCKeySet) {
        self.issuer = issuer
        self.clientId = clientId
        self.keys = keys
    }

    static let accepted: [String: JWK.KeyType] = ["RS256": .rsa, "ES256": .ecdsa]

    func verify(_ token: String, nonce: String, now: Date = Date()) async throws -> IDTokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any]
        else {
            throw OIDCTokenError("The ID token is not a signed JWT.")
        }
        guard let alg = header["alg"] as? String, let keyType = Self.accepted[alg] else {
            throw OIDCTokenError("The ID token's algorithm \(header["alg"].map { "\($0)" } ?? "(none)") is not accepted (RS256 and ES256 are).")
        }
        let kid = (header["kid"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        // A signature that fails against the cached key is checked once more after the set was fetched anew (the
        // provider may have replaced the key under the same id).
        var claims = try await signedClaims(token, kid: kid, alg: alg, keyType: keyType)
        if claims == nil, try await keys.refreshAfterFailure() {
            claims = try await signedClaims(token, kid: kid, alg: alg, keyType: keyType)
        }
        guard let claims else { throw OIDCTokenError("The ID token's signature is not valid.") }
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

    /// The claims of a token whose signature the key it names (or the set's one key) accepts; nil when it does not.
    func signedClaims(_ token: String, kid: String?, alg: String, keyType: JWK.KeyType) async throws -> IDTokenClaims? {
        let key: JWK
        let collection: JWTKeyCollection
        switch try await keys.key(kid) {
        case let .found(found, keyCollection): (key, collection) = (found, keyCollection)
        case .ambiguous: throw OIDCTokenError("The ID token names no key (kid), and the provider publishes several.")
        case .unknown: throw OIDCTokenError("The ID token is signed with a key the provider does not publish (kid \(kid ?? "none")).")
        }
        guard key.keyType == keyType else { throw OIDCTokenError("The ID token's algorithm \(alg) does not fit key \(kid ?? "(no kid)").") }
        return try? await collection.verify(token, as: IDTokenClaims.self)
    }

    /// The email to match an account by: present, and verified by the provider (an unverified address could be anyone's).
    static func verifiedEmail(of claims: IDTokenClaims) throws -> String {
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
