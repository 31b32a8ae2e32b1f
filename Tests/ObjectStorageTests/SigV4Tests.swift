import Crypto
import Foundation
import Testing

@testable import ObjectStorage

/// The request signer against the worked examples of the S3 documentation ("Signature Calculations for the
/// Authorization Header: Transferring Payload in a Single Chunk" and "Authenticating Requests: Using Query
/// Parameters"), with their example keys, date and bucket, byte for byte.
@Suite struct SigV4Tests {
    static let signer = SigV4Signer(
        credentials: S3Credentials(accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1"
    )
    /// 20130524T000000Z
    static let may24 = Date(timeIntervalSince1970: 1_369_353_600)
    static let host = "examplebucket.s3.amazonaws.com"
    static let credential = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"

    static func authorization(_ headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == "authorization" }?.value
    }

    @Test("GET Object with a Range header")
    func getObject() {
        let headers = Self.signer.sign(
            S3RequestTarget(method: "GET", host: Self.host, path: "/test.txt"),
            headers: [("Range", "bytes=0-9")],
            payloadHash: SigV4Signer.emptyPayloadHash,
            date: Self.may24
        )
        #expect(
            Self.authorization(headers) == Self.credential
                + ",SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
        #expect(headers.contains { $0 == ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash) })
    }

    @Test("PUT Object: a key with $ in it, a Date and a storage-class header, a signed body")
    func putObject() {
        let body = Data("Welcome to Amazon S3.".utf8)
        let hash = SHA256.hash(data: body).hexString
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let target = S3RequestTarget(method: "PUT", host: Self.host, path: "/test$file.text")
        #expect(target.encodedPath == "/test%24file.text")
        let headers = Self.signer.sign(
            target,
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payloadHash: hash,
            date: Self.may24
        )
        #expect(
            Self.authorization(headers) == Self.credential
                + ",SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
        )
    }

    @Test("GET Bucket Lifecycle: a query item without a value")
    func lifecycle() {
        let target = S3RequestTarget(method: "GET", host: Self.host, path: "/", query: [("lifecycle", "")])
        #expect(target.canonicalQuery == "lifecycle=")
        let headers = Self.signer.sign(target, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.may24)
        #expect(
            Self.authorization(headers) == Self.credential
                + ",SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"
        )
    }

    @Test("GET Bucket (List Objects): query items sorted by name")
    func listObjects() {
        let target = S3RequestTarget(method: "GET", host: Self.host, path: "/", query: [("prefix", "J"), ("max-keys", "2")])
        #expect(target.canonicalQuery == "max-keys=2&prefix=J")
        let headers = Self.signer.sign(target, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.may24)
        #expect(
            Self.authorization(headers) == Self.credential
                + ",SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        )
    }

    @Test("a session token is sent and signed; a different key, date or region gives a different signature")
    func sessionTokenAndInputs() {
        let target = S3RequestTarget(method: "GET", host: Self.host, path: "/test.txt")
        var credentials = Self.signer.credentials
        credentials.sessionToken = "token/with+odd=chars"
        let withToken = SigV4Signer(credentials: credentials, region: "us-east-1").sign(
            target,
            payloadHash: SigV4Signer.emptyPayloadHash,
            date: Self.may24
        )
        #expect(withToken.contains { $0 == ("x-amz-security-token", "token/with+odd=chars") })
        #expect(Self.authorization(withToken)?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
        let base = Self.authorization(Self.signer.sign(target, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.may24))
        let otherRegion = Self.authorization(
            SigV4Signer(credentials: Self.signer.credentials, region: "eu-west-1")
                .sign(target, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.may24)
        )
        let otherDate = Self.authorization(
            Self.signer.sign(target, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.may24.addingTimeInterval(1))
        )
        #expect(Set([base, otherRegion, otherDate, Self.authorization(withToken)]).count == 4)
    }

    @Test("keys are encoded the S3 way: unreserved bytes kept, everything else %XX upper-case, UTF-8 by byte")
    func encoding() {
        #expect(SigV4Signer.uriEncode("a b+c=d/é~_.-", keepSlash: true) == "a%20b%2Bc%3Dd/%C3%A9~_.-")
        #expect(SigV4Signer.uriEncode("a/b", keepSlash: false) == "a%2Fb")
    }
}
