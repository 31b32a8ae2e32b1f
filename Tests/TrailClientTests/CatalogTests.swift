import Foundation
import PackageFormat
import Testing

@testable import TrailClient

@Suite("TrailClient: catalog signature, version and expiry checks")
struct CatalogTests {
    let key = SigningKey.generate()

    func body(version: Int, expiresAt: String = "2030-01-01T00:00:00Z") -> Data {
        Data(
            #"{"catalogVersion":\#(version),"generatedAt":"2026-11-22T10:00:00Z","expiresAt":"\#(expiresAt)","packages":[{"id":"p1","site":"alpha","name":"Ridge Walk","version":2,"size":1234,"sha256":"\#(String(repeating: "ab", count: 32))","url":"http://x/api/v1/packages/p1/versions/2/download"}]}"#
                .utf8
        )
    }

    func sign(_ data: Data, with key: SigningKey? = nil) throws -> String { try (key ?? self.key).sign(data).base64EncodedString() }

    let now = Manifest.parseTimestamp("2026-11-23T00:00:00Z")!

    @Test func validCatalogIsAccepted() throws {
        let data = body(version: 5)
        let verified = try TrailClient.verifyCatalog(
            body: data,
            signature: try sign(data),
            pinnedPublicKey: key.publicKeyBase64,
            lastSeenVersion: 4,
            now: now
        )
        #expect(verified.catalog.catalogVersion == 5)
        #expect(verified.catalog.packages.map(\.id) == ["p1"])
        #expect(verified.catalog.packages.first?.version == 2)
        #expect(verified.body == data)
        // The same version again (a re-signed catalog) is fine; no last seen version is fine.
        #expect(
            try TrailClient.verifyCatalog(
                body: data,
                signature: try sign(data),
                pinnedPublicKey: key.publicKeyBase64,
                lastSeenVersion: 5,
                now: now
            ).catalog.catalogVersion == 5
        )
        #expect(
            try TrailClient.verifyCatalog(
                body: data,
                signature: try sign(data),
                pinnedPublicKey: key.publicKeyBase64,
                lastSeenVersion: nil,
                now: now
            ).catalog.catalogVersion == 5
        )
    }

    @Test func signatureIsCheckedOverTheExactBytes() throws {
        let data = body(version: 5)
        let signature = try sign(data)
        // One byte changed (a different version number of the same length) — the JSON is still valid.
        var changed = data
        let index = try #require(changed.firstIndex(of: UInt8(ascii: "5")))
        changed[index] = UInt8(ascii: "9")
        #expect(throws: CatalogError.invalidSignature) {
            try TrailClient.verifyCatalog(body: changed, signature: signature, pinnedPublicKey: key.publicKeyBase64, lastSeenVersion: nil, now: now)
        }
        // Whitespace added: same JSON, other bytes.
        #expect(throws: CatalogError.invalidSignature) {
            try TrailClient.verifyCatalog(
                body: data + Data(" ".utf8),
                signature: signature,
                pinnedPublicKey: key.publicKeyBase64,
                lastSeenVersion: nil,
                now: now
            )
        }
        // Signed by another key.
        #expect(throws: CatalogError.invalidSignature) {
            try TrailClient.verifyCatalog(
                body: data,
                signature: try sign(data, with: .generate()),
                pinnedPublicKey: key.publicKeyBase64,
                lastSeenVersion: nil,
                now: now
            )
        }
        #expect(throws: CatalogError.missingSignature) {
            try TrailClient.verifyCatalog(body: data, signature: nil, pinnedPublicKey: key.publicKeyBase64, lastSeenVersion: nil, now: now)
        }
        #expect(throws: CatalogError.invalidSignature) {
            try TrailClient.verifyCatalog(body: data, signature: "not base64!", pinnedPublicKey: key.publicKeyBase64, lastSeenVersion: nil, now: now)
        }
        #expect(throws: CatalogError.invalidPinnedKey) {
            try TrailClient.verifyCatalog(body: data, signature: signature, pinnedPublicKey: "c2hvcnQ=", lastSeenVersion: nil, now: now)
        }
    }

    @Test func olderCatalogIsRefused() throws {
        let data = body(version: 3)
        #expect(throws: CatalogError.olderThanLastSeen(received: 3, lastSeen: 4)) {
            try TrailClient.verifyCatalog(body: data, signature: try sign(data), pinnedPublicKey: key.publicKeyBase64, lastSeenVersion: 4, now: now)
        }
    }

    @Test func expiredCatalogIsRefused() throws {
        let data = body(version: 3, expiresAt: "2026-11-22T23:59:59Z")
        #expect(throws: CatalogError.expired(expiresAt: "2026-11-22T23:59:59Z", now: "2026-11-23T00:00:00Z")) {
            try TrailClient.verifyCatalog(body: data, signature: try sign(data), pinnedPublicKey: key.publicKeyBase64, lastSeenVersion: nil, now: now)
        }
        // One second before expiry it is still good.
        let earlier = now.addingTimeInterval(-2)
        #expect(
            try TrailClient.verifyCatalog(
                body: data,
                signature: try sign(data),
                pinnedPublicKey: key.publicKeyBase64,
                lastSeenVersion: nil,
                now: earlier
            ).catalog.catalogVersion == 3
        )
    }

    @Test func signedGarbageIsMalformed() throws {
        for data in [Data("[]".utf8), Data(#"{"catalogVersion":1,"generatedAt":"x","expiresAt":"soon","packages":[]}"#.utf8)] {
            #expect {
                try TrailClient.verifyCatalog(
                    body: data,
                    signature: try sign(data),
                    pinnedPublicKey: key.publicKeyBase64,
                    lastSeenVersion: nil,
                    now: now
                )
            } throws: { error in
                if case .malformed = error as? CatalogError { return true }
                return false
            }
        }
    }
}

@Suite("TrailClient: download helpers")
struct DownloadHelperTests {
    @Test func contentRangeParsing() {
        #expect(Transfer.parseContentRange("bytes 5-99/100")! == (5, 99, 100))
        #expect(Transfer.parseContentRange("bytes 0-0/1")! == (0, 0, 1))
        #expect(Transfer.parseContentRange("bytes */100") == nil)
        #expect(Transfer.parseContentRange("items 0-1/2") == nil)
        #expect(Transfer.parseContentRange("bytes 1-/2") == nil)
    }

    @Test func etagToSHA256() {
        let sha = String(repeating: "0f", count: 32)
        #expect(Transfer.sha256(fromETag: "\"\(sha)\"") == sha)
        #expect(Transfer.sha256(fromETag: "W/\"\(sha)\"") == nil)
        #expect(Transfer.sha256(fromETag: "\"abc\"") == nil)
        #expect(Transfer.sha256(fromETag: nil) == nil)
    }

    @Test func baseURLNormalisation() {
        #expect(TrailClient(baseURL: URL(string: "http://h:1/api/v1/")!).apiURL("sites").absoluteString == "http://h:1/api/v1/sites")
        #expect(TrailClient(baseURL: URL(string: "http://h:1")!).apiURL("/catalog").absoluteString == "http://h:1/api/v1/catalog")
        #expect(TrailClient(baseURL: URL(string: "https://h/tours/")!).apiURL("sites").absoluteString == "https://h/tours/api/v1/sites")
    }
}
