import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import TrailServer

/// ID tokens made by joserfc (Scripts/oidc_tokens.py: an independent JOSE implementation, and hand-made forgeries),
/// against the verifier single sign-on uses. Each refusal names its reason.
@Suite struct OIDCTokenVerifierTests {
    static let issuer = "https://idp.agency.test"
    static let clientId = "trail-companion"
    static let nonce = "nonce-of-this-sign-in"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    struct Fixture: Decodable {
        let jwks: AnyJSON
        let rotated: AnyJSON
        /// rsa1 alone, with and without its kid.
        let single: AnyJSON
        let single_no_kid: AnyJSON
        /// rsa1's id on a new key (the provider replaced it), ec1 beside it.
        let replaced: AnyJSON
        /// ec1 alone: rsa1 withdrawn.
        let withdrawn: AnyJSON
        let tokens: [String: String]
    }

    /// Keeps a JSON value as its bytes.
    struct AnyJSON: Decodable {
        let data: Data
        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer().decode(JSONValue.self)
            data = try JSONEncoder().encode(value)
        }
    }

    indirect enum JSONValue: Codable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case array([JSONValue])
        case object([String: JSONValue])
        case null
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSONValue].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSONValue].self))
            }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            case .null: try container.encodeNil()
            }
        }
    }

    /// Made once per test process, on a Dispatch thread: Python and key generation take a while, and a lazy static
    /// made on first use would hold a cooperative thread (one per test that touched it) until it returned.
    static let fixtureTask = Task<Fixture, any Error> {
        try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", projectRoot.appendingPathComponent("Tests/TrailServerTests/Scripts/oidc_tokens.py").path,
                issuer, clientId, nonce, "\(Int(now.timeIntervalSince1970))",
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return try JSONDecoder().decode(Fixture.self, from: data)
        }
    }

    static var fixture: Fixture {
        get async throws { try await fixtureTask.value }
    }

    /// A verifier whose provider serves the first key set, then (after a rotation) the second; counts the fetches.
    static func verifier(refreshInterval: TimeInterval = 0) async throws -> (OIDCTokenVerifier, NIOLockedValueBox<Int>) {
        let fetches = NIOLockedValueBox(0)
        let fixture = try await Self.fixture
        let keys = OIDCKeySet(refreshInterval: refreshInterval) {
            let count = fetches.withLockedValue {
                $0 += 1
                return $0
            }
            return count == 1 ? fixture.jwks.data : fixture.rotated.data
        }
        return (OIDCTokenVerifier(issuer: issuer, clientId: clientId, keys: keys), fetches)
    }

    func refusal(_ name: String, _ expected: String, verifier: OIDCTokenVerifier? = nil) async throws {
        let verifier = if let verifier { verifier } else { try await Self.verifier().0 }
        let token = try #require(try await Self.fixture.tokens[name])
        do {
            _ = try await verifier.verify(token, nonce: Self.nonce, now: Self.now)
            Issue.record("\(name) was accepted")
        } catch let error as OIDCTokenError {
            #expect(error.message.contains(expected), "\(name): \(error.message)")
        }
    }

    @Test func validTokensOfBothAlgorithmsAreAccepted() async throws {
        let (verifier, fetches) = try await Self.verifier(refreshInterval: 60)
        for name in ["valid_rs256", "valid_es256", "azp_ours"] {
            let claims = try await verifier.verify(try #require(try await Self.fixture.tokens[name]), nonce: Self.nonce, now: Self.now)
            #expect(claims.sub == "agency-user-1")
            #expect(try OIDCTokenVerifier.verifiedEmail(of: claims) == "ranger@agency.gov")
        }
        #expect(fetches.withLockedValue { $0 } == 1, "the key set is fetched once and cached")
    }

    @Test func refusals() async throws {
        try await refusal("wrong_aud", "another client")
        try await refusal("wrong_iss", "another issuer")
        try await refusal("expired", "expired")
        try await refusal("future", "future")
        try await refusal("wrong_nonce", "nonce")
        try await refusal("no_nonce", "nonce")
        try await refusal("azp_other", "azp")
        try await refusal("tampered", "signature")
        try await refusal("alg_none", "algorithm none is not accepted")
        try await refusal("hs256_public_key", "algorithm HS256 is not accepted")
    }

    @Test func anUnknownKeyIsLookedForOnceMoreThenRefused() async throws {
        let (verifier, fetches) = try await Self.verifier()
        _ = try await verifier.verify(try #require(try await Self.fixture.tokens["valid_rs256"]), nonce: Self.nonce, now: Self.now)
        try await refusal("unknown_kid", "does not publish", verifier: verifier)
        #expect(fetches.withLockedValue { $0 } == 2, "the key set was fetched again for the unknown kid")
        // A key the provider rotated in is found by that refresh.
        let (rotating, _) = try await Self.verifier()
        _ = try await rotating.verify(try #require(try await Self.fixture.tokens["valid_rs256"]), nonce: Self.nonce, now: Self.now)
        let claims = try await rotating.verify(try #require(try await Self.fixture.tokens["rotated_key"]), nonce: Self.nonce, now: Self.now)
        #expect(claims.email == "ranger@agency.gov")
        // Within the refresh interval, unknown key ids cost no fetch.
        let (calm, calmFetches) = try await Self.verifier(refreshInterval: 60)
        _ = try await calm.verify(try #require(try await Self.fixture.tokens["valid_rs256"]), nonce: Self.nonce, now: Self.now)
        try await refusal("unknown_kid", "does not publish", verifier: calm)
        try await refusal("unknown_kid", "does not publish", verifier: calm)
        #expect(calmFetches.withLockedValue { $0 } == 1)
    }

    /// A key set whose provider answers `sets` in turn (the last one for ever), on a clock the test moves; counts fetches.
    static func verifier(
        serving sets: [Data],
        maxAge: TimeInterval? = nil,
        clock: NIOLockedValueBox<Date>
    ) -> (OIDCTokenVerifier, NIOLockedValueBox<Int>) {
        let fetches = NIOLockedValueBox(0)
        let now: @Sendable () -> Date = { clock.withLockedValue { $0 } }
        let keys = OIDCKeySet(refreshInterval: 60, clock: now) {
            let count = fetches.withLockedValue {
                $0 += 1
                return $0
            }
            return OIDCKeySet.Fetched(data: sets[min(count, sets.count) - 1], maxAge: maxAge)
        }
        return (OIDCTokenVerifier(issuer: issuer, clientId: clientId, keys: keys), fetches)
    }

    func accepted(_ name: String, by verifier: OIDCTokenVerifier) async throws -> Bool {
        do {
            _ = try await verifier.verify(try #require(try await Self.fixture.tokens[name]), nonce: Self.nonce, now: Self.now)
            return true
        } catch let error as OIDCTokenError {
            Issue.record("\(name) was refused: \(error.message)")
            return false
        }
    }

    @Test("a token naming no key is checked against the one key of a single-key set, and refused when the set holds several")
    func aTokenWithoutKidNeedsASingleKeySet() async throws {
        let fixture = try await Self.fixture
        let clock = NIOLockedValueBox(Self.now)
        for set in [fixture.single.data, fixture.single_no_kid.data] {
            let (verifier, _) = Self.verifier(serving: [set], clock: clock)
            #expect(try await accepted("no_kid", by: verifier))
            try await refusal("no_kid_other_key", "signature", verifier: verifier)
        }
        let (single, _) = Self.verifier(serving: [fixture.single.data], clock: clock)
        #expect(try await accepted("valid_rs256", by: single), "a token naming the key still finds it")
        let (several, _) = Self.verifier(serving: [fixture.jwks.data], clock: clock)
        try await refusal("no_kid", "names no key (kid), and the provider publishes several", verifier: several)
    }

    @Test("a key replaced under the same id is picked up after a failed signature, at most once a minute")
    func aKeyReplacedUnderItsIdIsFetchedAgain() async throws {
        let fixture = try await Self.fixture
        let clock = NIOLockedValueBox(Self.now)
        let (verifier, fetches) = Self.verifier(serving: [fixture.jwks.data, fixture.replaced.data], clock: clock)
        #expect(try await accepted("valid_rs256", by: verifier))
        // Ten seconds on: a failed signature right after a fetch costs the provider nothing.
        clock.withLockedValue { $0 = Self.now.addingTimeInterval(10) }
        try await refusal("replaced_key", "signature", verifier: verifier)
        #expect(fetches.withLockedValue { $0 } == 1)
        // A minute on, the failed signature fetches the set again, and the new key under the old id works.
        clock.withLockedValue { $0 = Self.now.addingTimeInterval(61) }
        #expect(try await accepted("replaced_key", by: verifier))
        #expect(fetches.withLockedValue { $0 } == 2)
        try await refusal("valid_rs256", "signature", verifier: verifier)
    }

    @Test("a withdrawn key stops working once the set is due again: an hour, or the answer's shorter max-age")
    func aWithdrawnKeyStopsWorking() async throws {
        let fixture = try await Self.fixture
        for (maxAge, due) in [(nil, 3600.0), (86_400, 3600), (300, 300), (0, 60)] as [(TimeInterval?, TimeInterval)] {
            let clock = NIOLockedValueBox(Self.now)
            let (verifier, fetches) = Self.verifier(serving: [fixture.jwks.data, fixture.withdrawn.data], maxAge: maxAge, clock: clock)
            #expect(try await accepted("valid_rs256", by: verifier))
            clock.withLockedValue { $0 = Self.now.addingTimeInterval(due - 1) }
            #expect(try await accepted("valid_rs256", by: verifier), "max-age \(String(describing: maxAge))")
            #expect(fetches.withLockedValue { $0 } == 1)
            clock.withLockedValue { $0 = Self.now.addingTimeInterval(due + 1) }
            try await refusal("valid_rs256", "does not publish", verifier: verifier)
            #expect(fetches.withLockedValue { $0 } == 2, "max-age \(String(describing: maxAge))")
            #expect(try await accepted("valid_es256", by: verifier), "the key still published goes on working")
        }
    }

    @Test func cacheControlMaxAge() {
        #expect(OIDCKeySet.maxAge(cacheControl: nil) == nil)
        #expect(OIDCKeySet.maxAge(cacheControl: "public") == nil)
        #expect(OIDCKeySet.maxAge(cacheControl: "public, max-age=300, must-revalidate") == 300)
        #expect(OIDCKeySet.maxAge(cacheControl: "Max-Age=\"86400\"") == 86_400)
        #expect(OIDCKeySet.maxAge(cacheControl: "no-cache, max-age=300") == 0)
        #expect(OIDCKeySet.maxAge(cacheControl: "max-age=-5") == nil)
    }

    @Test func anUnverifiedEmailIsRefused() async throws {
        let claims = try await Self.verifier().0.verify(
            try #require(try await Self.fixture.tokens["email_unverified"]),
            nonce: Self.nonce,
            now: Self.now
        )
        #expect(throws: OIDCTokenError.self) { try OIDCTokenVerifier.verifiedEmail(of: claims) }
    }

    @Test(arguments: [
        ("entra_domain_verified", true), ("entra_domain_unverified", false), ("entra_no_claim", false),
        ("entra_contradiction", false),
    ])
    func entraDomainVerificationStandsInForEmailVerified(token: String, accepted: Bool) async throws {
        let claims = try await Self.verifier().0.verify(try #require(try await Self.fixture.tokens[token]), nonce: Self.nonce, now: Self.now)
        if accepted {
            #expect(try OIDCTokenVerifier.verifiedEmail(of: claims) == "ranger@agency.gov")
        } else {
            #expect(throws: OIDCTokenError.self) { try OIDCTokenVerifier.verifiedEmail(of: claims) }
        }
    }
}

/// What `--oidc-issuer` and `doctor` accept.
@Suite struct OIDCSettingsTests {
    @Test(
        arguments: [
            ("https://login.agency.gov", nil),
            ("https://login.microsoftonline.com/tenant/v2.0", nil),
            ("http://127.0.0.1:8080", nil),
            ("http://localhost:9000/realms/parks", nil),
            ("http://[::1]:9000", nil),
            ("http://idp.agency.gov", "must be https:// (http:// only for a provider on loopback)"),
            ("ftp://idp.agency.gov", "must be https://"),
            ("https://idp.agency.gov/?tenant=1", "must have no query or fragment"),
            ("idp.agency.gov", "is not a URL"),
        ] as [(String, String?)]
    )
    func issuerMustBeHTTPSExceptOnLoopback(issuer: String, problem: String?) {
        #expect(OIDCSettings.issuerProblem(issuer) == problem)
    }

    @Test func doctorChecksTheSecretFilesMode() throws {
        let folder = TestScratch.folder("oidc-doctor")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("client-secret")
        let doctor = Doctor(config: AppConfig())
        let settings = OIDCSettings(issuer: "https://idp.agency.gov", clientId: "trail", clientSecretFile: file.path)
        #expect(doctor.oidcSecret(settings).status == .failure, "a missing file")
        try "\n".write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        #expect(doctor.oidcSecret(settings).status == .failure, "an empty file")
        try "s3cret\n".write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let readable = doctor.oidcSecret(settings)
        #expect(readable.status == .failure && readable.message.contains("others on this machine can read"), "\(readable)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let fine = doctor.oidcSecret(settings)
        #expect(fine.status == .ok, "\(fine)")
        #expect(!fine.message.contains("s3cret"), "the secret itself is never shown")
        let publicClient = OIDCSettings(issuer: "https://idp.agency.gov", clientId: "trail", clientSecretFile: nil)
        #expect(doctor.oidcSecret(publicClient).status == .ok, "a public client has no secret to check")
    }
}
