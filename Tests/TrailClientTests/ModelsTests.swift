import Foundation
import PackageFormat
import Testing
import TrailClient

/// TrailClient's own answer types (not `@testable`: what an app sees). Each decodes the API's JSON through the type
/// generated from openapi.json, keeps every field, and encodes back to the same JSON.
@Suite("TrailClient: its own answer types read and write the API's JSON")
struct ModelsTests {
    static let sha = String(repeating: "ab", count: 32)

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Decodes `json`, checks it with `check`, and expects the encoded value to be the same JSON object again.
    func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ json: String, check: (T) throws -> Void) throws {
        let value = try Self.decoder().decode(T.self, from: Data(json.utf8))
        try check(value)
        let encoded = try Self.encoder().encode(value)
        let original = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary
        let again = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
        #expect(original == again, "\(T.self) wrote \(String(decoding: encoded, as: UTF8.self))")
        #expect(try Self.decoder().decode(T.self, from: encoded) == value)
    }

    @Test func siteAndPackageSummaries() throws {
        try roundTrip(SiteSummary.self, #"{"slug":"sweet-home","name":"Sweet Home","description":"Ranger district","packageCount":3}"#) {
            #expect($0 == SiteSummary(slug: "sweet-home", name: "Sweet Home", description: "Ranger district", packageCount: 3))
        }
        try roundTrip(
            PackageSummary.self,
            #"{"id":"p1","name":"Ridge Walk","description":"","size":1234,"version":2,"sha256":"\#(Self.sha)","updatedAt":"2026-11-22T10:00:00Z"}"#
        ) {
            #expect($0.size == 1234 && $0.version == 2 && $0.sha256 == Self.sha)
            #expect($0.updatedAt == Manifest.parseTimestamp("2026-11-22T10:00:00Z"))
        }
    }

    @Test func signingKeyAndVerifyAnswer() throws {
        let key = SigningKey.generate()
        try roundTrip(SigningKeyInfo.self, #"{"algorithm":"ed25519","publicKey":"\#(key.publicKeyBase64)"}"#) {
            #expect($0.algorithm == "ed25519")
            #expect($0.publicKey.count == 32, "the raw key bytes")
            #expect($0.publicKeyBase64 == key.publicKeyBase64)
        }
        // The API knows no other algorithm: an app cannot write one it would not read back.
        #expect(throws: EncodingError.self) { try Self.encoder().encode(SigningKeyInfo(algorithm: "RSA", publicKey: Data([1]))) }
        try roundTrip(VerifyAnswer.self, #"{"valid":false,"expected":{"sha256":"\#(Self.sha)","version":4,"size":99}}"#) {
            #expect($0 == VerifyAnswer(valid: false, expected: PackageHash(sha256: Self.sha, version: 4, size: 99)))
        }
    }

    @Test func catalog() throws {
        let entry = #"{"id":"p1","site":"alpha","name":"Ridge Walk","version":2,"size":1234,"sha256":"\#(Self.sha)","url":"http://x/a.zip"}"#
        try roundTrip(
            Catalog.self,
            #"{"catalogVersion":7,"generatedAt":"2026-11-22T10:00:00Z","expiresAt":"2026-11-29T10:00:00Z","packages":[\#(entry)]}"#
        ) {
            #expect($0.catalogVersion == 7)
            let expected = Catalog.Entry(
                id: "p1",
                site: "alpha",
                name: "Ridge Walk",
                version: 2,
                size: 1234,
                sha256: Self.sha,
                url: "http://x/a.zip"
            )
            #expect($0.packages == [expected])
        }
        // A field the contract requires is missing: refused, as the generated type refuses it.
        #expect(throws: DecodingError.self) {
            try Self.decoder().decode(Catalog.self, from: Data(#"{"catalogVersion":7,"generatedAt":"2026-11-22T10:00:00Z","packages":[]}"#.utf8))
        }
    }
}
