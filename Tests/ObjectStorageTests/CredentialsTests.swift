import Foundation
import ObjectStorage
import TestSupport
import Testing

/// Credentials print redacted whichever way they are printed, alone or inside a collection.
@Suite struct CredentialRedactionTests {
    @Test("S3 credentials never print their secret or session token: interpolation, description, debugDescription, dump, nested")
    func credentialsRedactThemselves() {
        let credentials = S3Credentials(
            accessKeyId: "AKIAIOSFODNN7EXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            sessionToken: "FQoGZXIvYXdzEXAMPLESESSION"
        )
        var dumped = ""
        dump(credentials, to: &dumped)
        let printed = [
            "\(credentials)", String(describing: credentials), String(reflecting: credentials), credentials.description,
            credentials.debugDescription, dumped, "\([credentials])", String(reflecting: ["store": credentials]),
        ]
        for text in printed {
            #expect(!text.contains("wJalrXUtnFEMI") && !text.contains("EXAMPLESESSION"), "\(text)")
        }
        #expect(printed.allSatisfy { $0.contains("AKIAIOSFODNN7EXAMPLE") }, "the key id shows, to tell which key is meant")
        #expect("\(credentials)".contains("<redacted>"))
        // Signing still uses the real secret.
        #expect(credentials.secretAccessKey == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    }
}

/// Under systemd, the keys can come from `LoadCredential=` files instead of the environment.
@Suite struct CredentialSourceTests {
    @Test("keys from $CREDENTIALS_DIRECTORY when the environment has none; the environment wins when it has them")
    func credentialsDirectory() throws {
        let folder = try TemporaryFolder("credentials")
        defer { folder.remove() }
        try "AKIDFROMFILE\n".write(to: folder.file("aws-access-key-id"), atomically: true, encoding: .utf8)
        try "secret-from-file\n".write(to: folder.file("aws-secret-access-key"), atomically: true, encoding: .utf8)
        let loaded = try #require(S3Credentials.fromEnvironment(["CREDENTIALS_DIRECTORY": folder.path]))
        #expect(loaded == S3Credentials(accessKeyId: "AKIDFROMFILE", secretAccessKey: "secret-from-file"))
        let fromEnvironment = S3Credentials.fromEnvironment([
            "CREDENTIALS_DIRECTORY": folder.path, "AWS_ACCESS_KEY_ID": "AKIDENV",
            "AWS_SECRET_ACCESS_KEY": "secret-env",
        ])
        #expect(fromEnvironment?.accessKeyId == "AKIDENV")
        #expect(S3Credentials.fromEnvironment([:]) == nil)
    }
}
