import Crypto
import Foundation
import NIOCore
import Testing

@testable import ObjectStorage

/// What the S3 client decides before and after a request, without a store: where a bucket and key go, how an answer's
/// XML and ETags are read. The client against real stores: `S3ClientTests`.
@Suite struct S3RequestTests {
    @Test("s3://BUCKET/PREFIX: bucket names by S3's rules, a prefix without empty, . or .. segments")
    func locations() throws {
        let location = try StorageLocation.parse("s3://park-tours/prod//tours/")
        #expect(location == StorageLocation(bucket: "park-tours", prefix: "prod/tours"))
        #expect(location.key("catalog.json") == "prod/tours/catalog.json")
        #expect(location.description == "s3://park-tours/prod/tours")
        #expect(try StorageLocation.parse("s3://park-tours").key("catalog.json") == "catalog.json")
        for bad in ["park-tours", "s3://ab", "s3://Park", "s3://-park", "s3://park/../x", "s3://park/./x"] {
            #expect(throws: StorageLocation.Invalid.self, "\(bad)") { try StorageLocation.parse(bad) }
        }
    }

    @Test("a custom endpoint is addressed path-style; AWS virtual-hosted, unless the bucket has a dot")
    func addressing() async {
        let credentials = S3Credentials(accessKeyId: "id", secretAccessKey: "secret")
        let custom = S3Client(
            location: StorageLocation(bucket: "trail", prefix: ""),
            endpoint: URL(string: "http://127.0.0.1:8333/base/")!,
            region: "us-east-1",
            credentials: credentials
        )
        let aws = S3Client(location: StorageLocation(bucket: "trail", prefix: ""), endpoint: nil, region: "eu-west-1", credentials: credentials)
        let dotted = S3Client(
            location: StorageLocation(bucket: "tours.example.org", prefix: ""),
            endpoint: nil,
            region: "eu-west-1",
            credentials: credentials
        )
        #expect(
            custom.target(method: "GET", key: "a b/c", query: []) == S3RequestTarget(method: "GET", host: "127.0.0.1:8333", path: "/base/trail/a b/c")
        )
        #expect(custom.target(method: "HEAD", key: nil, query: []).path == "/base/trail")
        #expect(
            aws.target(method: "GET", key: "k", query: []) == S3RequestTarget(method: "GET", host: "trail.s3.eu-west-1.amazonaws.com", path: "/k")
        )
        #expect(aws.target(method: "HEAD", key: nil, query: []).path == "/")
        #expect(dotted.pathStyle)
        #expect(dotted.target(method: "GET", key: "k", query: []).host == "s3.eu-west-1.amazonaws.com")
        for client in [custom, aws, dotted] { await client.shutdown() }
    }

    @Test("ETags: quotes and W/ dropped; a multipart one is the MD5 of the parts' MD5s; a non-MD5 one is not checked")
    func etags() throws {
        #expect(S3Client.unquote(" W/\"abc\" ") == "abc")
        let parts = [Data("one".utf8), Data("two".utf8)].map { Insecure.MD5.hash(data: $0).hexString }
        var joined = Data()
        for part in [Data("one".utf8), Data("two".utf8)] { joined.append(contentsOf: Insecure.MD5.hash(data: part)) }
        #expect(S3Client.multipartETag(parts) == "\(Insecure.MD5.hash(data: joined).hexString)-2")
        let md5 = Insecure.MD5.hash(data: Data("body".utf8)).hexString
        try S3Client.checkETag(md5.uppercased(), md5: md5, operation: "PUT k")
        try S3Client.checkETag("kms-managed-etag", md5: md5, operation: "PUT k")
        #expect(throws: S3Error.self) { try S3Client.checkETag(String(repeating: "0", count: 32), md5: md5, operation: "PUT k") }
    }

    @Test("the values of S3's XML answers: an error's code and message, a list's records")
    func xmlAnswers() {
        let error = ByteBuffer(string: "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key does not exist.</Message></Error>")
        #expect(XMLValues.first("Code", in: error) == "NoSuchKey")
        #expect(XMLValues.first("Message", in: error) == "The key does not exist.")
        let list = ByteBuffer(
            string: "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>1</Size></Contents>"
                + "<Contents><Key>b/c</Key><Size>22</Size></Contents></ListBucketResult>"
        )
        #expect(XMLValues.elements("Contents", in: list) == [["Key": "a", "Size": "1"], ["Key": "b/c", "Size": "22"]])
        #expect(XMLValues.first("IsTruncated", in: list) == "false")
        #expect(XMLValues.first("Code", in: ByteBuffer()) == nil)
    }

    @Test("an error names the operation, what to check and the store's own words")
    func errorText() {
        let error = S3Error(kind: .accessDenied, operation: "check the bucket trail", status: 403, code: "AccessDenied", message: "Access Denied")
        #expect(error.description.hasPrefix("check the bucket trail: access denied"))
        #expect(error.description.contains("AWS_ACCESS_KEY_ID"))
        #expect(error.description.hasSuffix("(HTTP 403, AccessDenied, Access Denied)"))
    }
}
