import Foundation
import ObjectStorage
import PackageFormat
import Testing

@testable import TrailServer

/// The server's configuration and keys print redacted whichever way they are printed (the S3 credentials on their own:
/// ObjectStorageTests).
@Suite struct SecretRedactionTests {
    @Test("a configuration with storage never prints the S3 secret or session token: interpolation, dump, reflection")
    func settingsRedactTheirCredentials() {
        let credentials = S3Credentials(
            accessKeyId: "AKIAIOSFODNN7EXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            sessionToken: "FQoGZXIvYXdzEXAMPLESESSION"
        )
        var settings = AppConfig()
        settings.storage = StorageSettings(location: StorageLocation(bucket: "tours", prefix: ""), credentials: credentials)
        var dumpedSettings = ""
        dump(settings, to: &dumpedSettings)
        let printed = ["\(settings.storage!)", String(reflecting: settings), dumpedSettings]
        for text in printed {
            #expect(!text.contains("wJalrXUtnFEMI") && !text.contains("EXAMPLESESSION"), "\(text)")
        }
        #expect(printed.allSatisfy { $0.contains("AKIAIOSFODNN7EXAMPLE") }, "the key id shows, to tell which key is meant")
    }

    @Test("a signing key prints its public half only")
    func signingKeyRedactsItself() throws {
        let key = SigningKey.generate()
        let secret = key.privateKey.rawRepresentation.base64EncodedString()
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.contains(secret) && text.contains(key.publicKeyBase64), "\(text)")
        }
    }
}
