import Foundation
import PackageFormat
import TestSupport
import Testing

@Suite("Signing")
struct SigningTests {
    static func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func keyFileIsCreatedWithMode0600AndReloads() throws {
        let folder = try TemporaryFolder("key")
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("data/keys/signing.ed25519")
        let created = try SigningKey.loadOrCreate(at: url)
        #expect(try Self.mode(url) == 0o600)
        #expect(try Data(contentsOf: url).count == 32)
        let reloaded = try SigningKey.loadOrCreate(at: url)
        #expect(reloaded.publicKeyBase64 == created.publicKeyBase64)
        #expect(Data(base64Encoded: created.publicKeyBase64)?.count == 32)
        // No temporary files left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        #expect(names == ["signing.ed25519"])
    }

    @Test func loadTightensAPermissiveMode() throws {
        let folder = try TemporaryFolder("key")
        defer { folder.remove() }
        let url = folder.file("signing.ed25519")
        let key = try SigningKey.loadOrCreate(at: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect(try Self.mode(url) == 0o644)
        #expect(try SigningKey.loadOrCreate(at: url).publicKeyBase64 == key.publicKeyBase64)
        #expect(try Self.mode(url) == 0o600)
    }

    @Test func aKeyFileOfTheWrongSizeIsRefused() throws {
        let folder = try TemporaryFolder("key")
        defer { folder.remove() }
        let url = folder.file("signing.ed25519")
        try Data(repeating: 1, count: 31).write(to: url)
        #expect(throws: SigningKeyError.self) { try SigningKey.loadOrCreate(at: url) }
        try Data(repeating: 1, count: 33).write(to: url)
        #expect(throws: SigningKeyError.self) { try SigningKey.loadOrCreate(at: url) }
        // The bad file was not replaced by a new key.
        #expect(try Data(contentsOf: url).count == 33)
    }

    @Test func concurrentCreationEndsWithOneKey() async throws {
        let folder = try TemporaryFolder("key")
        defer { folder.remove() }
        let url = folder.file("keys/signing.ed25519")
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try SigningKey.loadOrCreate(at: url).publicKeyBase64 } }
            var keys = Set<String>()
            for try await key in group { keys.insert(key) }
            return keys
        }
        #expect(keys.count == 1)
        #expect(keys.first == (try SigningKey.load(at: url)).publicKeyBase64)
    }

    @Test func signaturesVerifyAndDetectAnyChange() throws {
        let key = SigningKey.generate()
        let data = Data(#"{"formatVersion":1,"packageId":"x"}"#.utf8)
        let signature = try key.sign(data)
        #expect(signature.count == 64)
        #expect(SignatureCheck.verify(signature: signature, of: data, publicKeyBase64: key.publicKeyBase64))
        for index in [0, data.count / 2, data.count - 1] {
            var changed = data
            changed[index] ^= 0x01
            #expect(!SignatureCheck.verify(signature: signature, of: changed, publicKeyBase64: key.publicKeyBase64))
        }
        var badSignature = signature
        badSignature[10] ^= 0x80
        #expect(!SignatureCheck.verify(signature: badSignature, of: data, publicKeyBase64: key.publicKeyBase64))
        #expect(!SignatureCheck.verify(signature: signature, of: data, publicKeyBase64: SigningKey.generate().publicKeyBase64))
        #expect(!SignatureCheck.verify(signature: signature, of: data, publicKeyBase64: "not base64!"))
        #expect(!SignatureCheck.verify(signature: signature, of: data, publicKeyBase64: Data(count: 31).base64EncodedString()))
        #expect(!SignatureCheck.verify(signature: signature.prefix(63), of: data, publicKeyBase64: key.publicKeyBase64))
    }

    @Test func pythonCryptographyAcceptsOurSignatures() throws {
        let key = SigningKey.generate()
        let data = Data("manifest bytes ✓".utf8)
        let signature = try key.sign(data)
        let script = #"""
            import base64, sys
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
            from cryptography.exceptions import InvalidSignature
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(sys.argv[1]))
            data, signature = base64.b64decode(sys.argv[2]), base64.b64decode(sys.argv[3])
            key.verify(signature, data)
            try:
                key.verify(signature, data + b"x")
                print("tampered accepted")
            except InvalidSignature:
                print("ok")
            """#
        let output = try python(script, [key.publicKeyBase64, data.base64EncodedString(), signature.base64EncodedString()])
        #expect(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
