import Crypto
import Foundation
import TestSupport
import Testing

@testable import ObjectStorage

/// The S3 client against two real, independent S3 servers.
@Suite(.serialized) struct S3ClientTests {
    static func randomFile(_ size: Int, in folder: URL, name: String = "blob") throws -> (URL, String) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<size { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        let data = Data(bytes)
        try data.write(to: url)
        return (url, SHA256.hash(data: data).hexString)
    }

    @Test(
        "objects from memory and from disk go in and come back with their bytes, type, cache policy and SHA-256",
        arguments: ObjectStore.Kind.allCases
    )
    func putHeadGet(kind: ObjectStore.Kind) async throws {
        try await ObjectStore.withStore(kind) { store in
            let client = store.client(prefix: "tests/a")
            defer { Task { await client.shutdown() } }
            try await client.headBucket()

            let small = Data("{\"hello\": \"world\"}".utf8)
            let before = Date()
            try await client.putObject(client.location.key("catalog.json"), data: small, contentType: "application/json", cacheControl: "no-cache")
            let info = try #require(try await client.headObject("tests/a/catalog.json"))
            #expect(info.size == Int64(small.count))
            #expect(info.sha256 == SHA256.hash(data: small).hexString)
            #expect(info.contentType == "application/json")
            #expect(info.cacheControl == "no-cache")
            // Whole seconds (truncated), so from a second before the PUT to now.
            let modified = try #require(info.lastModified)
            #expect(modified >= before.addingTimeInterval(-1) && modified <= Date(timeIntervalSinceNow: 1), "\(modified)")
            #expect(try await client.getObject("tests/a/catalog.json") == small)

            let (file, sha) = try Self.randomFile(3 * 1024 * 1024 + 17, in: store.folder.appendingPathComponent("in"))
            try await client.putObject(
                "tests/a/files/\(sha)",
                file: file,
                size: 3 * 1024 * 1024 + 17,
                sha256: sha,
                contentType: "application/octet-stream",
                cacheControl: "public, max-age=31536000, immutable"
            )
            let back = try await client.getObject("tests/a/files/\(sha)")
            #expect(SHA256.hash(data: back).hexString == sha)
            #expect(try await client.headObject("tests/a/files/\(sha)")?.cacheControl == "public, max-age=31536000, immutable")
            #expect(try await client.headObject("tests/a/missing") == nil)

            let listed = try await client.listObjects(prefix: "tests/a/")
            #expect(Set(listed.map(\.key)) == ["tests/a/catalog.json", "tests/a/files/\(sha)"])
            try await client.deleteObject("tests/a/catalog.json")
            #expect(try await client.headObject("tests/a/catalog.json") == nil)
        }
    }

    @Test("a multipart upload from disk: parts listed after a pause, joined, the whole has the right bytes", arguments: ObjectStore.Kind.allCases)
    func multipart(kind: ObjectStore.Kind) async throws {
        try await ObjectStore.withStore(kind) { store in
            let client = store.client()
            defer { Task { await client.shutdown() } }
            let partSize: Int64 = 5 * 1024 * 1024
            let size = 2 * partSize + 12345
            let (file, sha) = try Self.randomFile(Int(size), in: store.folder.appendingPathComponent("in"))
            let key = "packages/p/1.zip"
            let uploadId = try await client.createMultipartUpload(key, contentType: "application/zip", cacheControl: "immutable", sha256: sha)
            let first = try await client.uploadPart(key, uploadId: uploadId, number: 1, file: file, range: 0..<partSize)
            // What a restarted server sees: the part uploaded before.
            #expect(try await client.listParts(key, uploadId: uploadId) == [first])
            let second = try await client.uploadPart(key, uploadId: uploadId, number: 2, file: file, range: partSize..<(2 * partSize))
            let third = try await client.uploadPart(key, uploadId: uploadId, number: 3, file: file, range: (2 * partSize)..<size)
            try await client.completeMultipartUpload(key, uploadId: uploadId, parts: [first, second, third])
            let info = try #require(try await client.headObject(key))
            #expect(info.size == size)
            #expect(info.sha256 == sha)
            #expect(SHA256.hash(data: try await client.getObject(key, limit: Int(size))).hexString == sha)
            #expect(try await client.listParts(key, uploadId: uploadId) == nil)
        }
    }

    @Test("a body that does not match its signed SHA-256 is refused, and nothing is stored", arguments: ObjectStore.Kind.allCases)
    func mismatch(kind: ObjectStore.Kind) async throws {
        try await ObjectStore.withStore(kind) { store in
            let client = store.client()
            defer { Task { await client.shutdown() } }
            let (file, _) = try Self.randomFile(1000, in: store.folder.appendingPathComponent("in"))
            let wrong = String(repeating: "ab", count: 32)
            await #expect(throws: S3Error.self) {
                try await client.putObject(
                    "files/\(wrong)",
                    file: file,
                    size: 1000,
                    sha256: wrong,
                    contentType: "application/octet-stream",
                    cacheControl: "immutable"
                )
            }
            #expect(try await client.headObject("files/\(wrong)") == nil)
        }
    }

    @Test("wrong keys, a missing bucket and an endpoint that does not answer each get their own clear error")
    func failures() async throws {
        try await ObjectStore.withStore(.seaweedfs) { store in
            let wrongKeys = store.client(credentials: S3Credentials(accessKeyId: "nobody", secretAccessKey: "nothing"))
            defer { Task { await wrongKeys.shutdown() } }
            do {
                try await wrongKeys.headBucket()
                Issue.record("wrong keys were accepted")
            } catch let error as S3Error {
                #expect(error.kind == .accessDenied, "\(error)")
                #expect(error.description.contains("AWS_ACCESS_KEY_ID"))
            }
            let missing = store.client(bucket: "no-such-bucket")
            defer { Task { await missing.shutdown() } }
            do {
                try await missing.headBucket()
                Issue.record("a missing bucket was found")
            } catch let error as S3Error {
                #expect(error.kind == .noSuchBucket, "\(error)")
                #expect(error.description.contains("does not exist"))
            }
            // Port 9 (discard): nothing listens there. Not the stopped store's own port, which another suite's server
            // may take the moment it is free (a CI run saw that).
            let gone = S3Client(
                location: StorageLocation(bucket: "trail", prefix: ""),
                endpoint: URL(string: "http://127.0.0.1:9")!,
                region: "us-east-1",
                credentials: store.credentials,
                connectTimeout: .seconds(2)
            )
            defer { Task { await gone.shutdown() } }
            do {
                try await gone.headBucket()
                Issue.record("an endpoint with nothing listening answered")
            } catch let error as S3Error {
                #expect(error.kind == .unreachable, "\(error)")
                #expect(error.description.contains("http://127.0.0.1:9"))
            }
        }
    }
}
