import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import Testing

@testable import TrailServer

/// RFC 9110 ranges on asset previews (`/assets/{aid}/content`), on a 10 KiB clean asset.
@Suite("Media: previews with RFC 9110 ranges", .scratch)
struct RangeTests {
    static let size = 10_240
    static let nosniff = HTTPField.Name("X-Content-Type-Options")!

    /// An app with one clean 10 KiB PNG; the body gets the client, the asset id, its bytes, its ETag and a token.
    func withCleanAsset(_ body: @Sendable (any TestClientProtocol, Int64, Data, String, String) async throws -> Void) async throws {
        let env = try await TestEnv.media()
        let token = try await env.token("author@test.org")
        let content = MediaFixtures.png(size: Self.size, seed: 11)
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(env, token: token, data: content, fileName: "range.png", contentType: "image/png")
            let id = try #require(response.mediaAssetId)
            #expect(await env.scanAll() == 1)
            await #expect(try env.asset(id).scanStatus == .clean)
            try await body(client, id, content, "\"\(MediaFixtures.sha256(content))\"", token)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let range: String
        /// 206 with this inclusive range, 200 for the whole file (nil), or 416.
        let expected: Expected
        enum Expected: Sendable {
            case partial(Int, Int)
            case whole, unsatisfiable
        }
        var testDescription: String { range }
    }

    static let cases: [Case] = [
        Case(range: "bytes=0-0", expected: .partial(0, 0)),
        Case(range: "bytes=-5", expected: .partial(10_235, 10_239)),
        Case(range: "bytes=5-", expected: .partial(5, 10_239)),
        Case(range: "bytes=20000-", expected: .unsatisfiable),
        Case(range: "bytes=10240-", expected: .unsatisfiable),
        Case(range: "bytes=10239-", expected: .partial(10_239, 10_239)),
        Case(range: "bytes=100-10", expected: .whole),
        Case(range: "bytes=0-9223372036854775807", expected: .partial(0, 10_239)),
        Case(range: "bytes=9223372036854775808-", expected: .unsatisfiable),
        Case(range: "bytes=0-99999999999999999999999", expected: .partial(0, 10_239)),
        Case(range: "bytes=-99999999999999999999999", expected: .partial(0, 10_239)),
        Case(range: "bytes=-20000", expected: .partial(0, 10_239)),
        Case(range: "bytes=-0", expected: .unsatisfiable),
        Case(range: "bytes=100-199", expected: .partial(100, 199)),
        Case(range: "bytes=10000-20000", expected: .partial(10_000, 10_239)),
        Case(range: "bytes=0-1,5-6", expected: .whole),
        Case(range: "bytes=0-1, 5-6, 9000-", expected: .whole),
        Case(range: "bytes=abc", expected: .whole),
        Case(range: "bytes=-", expected: .whole),
        Case(range: "bytes=1--2", expected: .whole),
        Case(range: "bytes=+1-2", expected: .whole),
        Case(range: "bytes=٣-٤", expected: .whole),
        Case(range: "items=0-5", expected: .whole),
        Case(range: "", expected: .whole),
    ]

    @Test("Range answers on a 10 KiB preview")
    func ranges() async throws {
        try await withCleanAsset { client, id, content, etag, token in
            for item in Self.cases {
                let response = try await client.execute(
                    uri: "/assets/\(id)/content",
                    method: .get,
                    headers: [.authorization: "Bearer \(token)", .range: item.range]
                )
                let label = item.range
                #expect(response.headers[RangeTests.nosniff] == "nosniff", "\(label)")
                switch item.expected {
                case .partial(let first, let last):
                    #expect(response.status == .partialContent, "\(label): \(response.status)")
                    #expect(response.headers[.contentRange] == "bytes \(first)-\(last)/\(Self.size)", "\(label)")
                    #expect(response.headers[.contentLength] == "\(last - first + 1)", "\(label)")
                    #expect(Data(buffer: response.body) == content[first...last], "\(label): wrong bytes")
                    #expect(response.headers[.eTag] == etag)
                    #expect(response.headers[.contentType] == "image/png")
                case .whole:
                    #expect(response.status == .ok, "\(label): \(response.status)")
                    #expect(response.headers[.contentRange] == nil, "\(label)")
                    #expect(response.headers[.contentLength] == "\(Self.size)")
                    #expect(Data(buffer: response.body) == content, "\(label): wrong bytes")
                case .unsatisfiable:
                    #expect(response.status == .rangeNotSatisfiable, "\(label): \(response.status)")
                    #expect(response.headers[.contentRange] == "bytes */\(Self.size)", "\(label)")
                    #expect(response.mediaErrorCode == "range_not_satisfiable", "\(label)")
                }
            }
        }
    }

    @Test("Validators and HEAD: stale If-Range gives the whole file, If-None-Match 304, HEAD has headers and no body")
    func validators() async throws {
        try await withCleanAsset { client, id, content, etag, token in
            let uri = "/assets/\(id)/content"
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            func get(_ extra: HTTPFields, method: HTTPRequest.Method = .get) async throws -> TestResponse {
                var headers = auth
                headers.append(contentsOf: extra)
                return try await client.execute(uri: uri, method: method, headers: headers)
            }
            let plain = try await get([:])
            #expect(plain.status == .ok)
            #expect(plain.headers[.acceptRanges] == "bytes")
            #expect(plain.headers[.eTag] == etag)
            #expect(plain.headers[RangeTests.nosniff] == "nosniff")
            #expect(plain.headers[.contentSecurityPolicy]?.contains("sandbox") == true, "\(plain.headers[.contentSecurityPolicy] ?? "no CSP")")
            #expect(plain.headers[.contentDisposition]?.hasPrefix("inline") == true)
            #expect(Data(buffer: plain.body) == content)

            // If-Range: the current ETag keeps the range, any other value (stale, weak, a date) sends the whole file.
            let fresh = try await get([.range: "bytes=0-9", .ifRange: etag])
            #expect(fresh.status == .partialContent)
            #expect(Data(buffer: fresh.body) == content[0..<10])
            for stale in ["\"0000\"", "W/\(etag)", "Sat, 21 Nov 2026 10:00:00 GMT"] {
                let response = try await get([.range: "bytes=0-9", .ifRange: stale])
                #expect(response.status == .ok, "If-Range \(stale): \(response.status)")
                #expect(Data(buffer: response.body) == content)
                #expect(response.headers[.contentRange] == nil)
            }

            // If-None-Match: 304 without a body for the current ETag (alone, in a list, weak, or *).
            for value in [etag, "\"other\", \(etag)", "W/\(etag)", "*"] {
                let response = try await get([.ifNoneMatch: value])
                #expect(response.status == .notModified, "If-None-Match \(value): \(response.status)")
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.eTag] == etag)
                #expect(response.headers[RangeTests.nosniff] == "nosniff")
            }
            let changed = try await get([.ifNoneMatch: "\"other\""])
            #expect(changed.status == .ok)
            #expect(Data(buffer: changed.body) == content)
            let both = try await get([.ifNoneMatch: etag, .range: "bytes=0-0"])
            #expect(both.status == .notModified)

            // HEAD: the same headers as GET, no body.
            let head = try await get([:], method: .head)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == "\(Self.size)")
            #expect(head.headers[.eTag] == etag)
            #expect(head.headers[RangeTests.nosniff] == "nosniff")
            #expect(head.body.readableBytes == 0)
            let headRange = try await get([.range: "bytes=-5"], method: .head)
            #expect(headRange.status == .partialContent)
            #expect(headRange.headers[.contentRange] == "bytes 10235-10239/\(Self.size)")
            #expect(headRange.body.readableBytes == 0)
            let headOut = try await get([.range: "bytes=20000-"], method: .head)
            #expect(headOut.status == .rangeNotSatisfiable)
            #expect(headOut.headers[.contentRange] == "bytes */\(Self.size)")
        }
    }

    @Test("Assets that are not clean give 403, whatever the Range; nosniff on the refusal too")
    func notClean() async throws {
        let env = try await TestEnv.media(signatures: .none)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let response = try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.png(size: Self.size), fileName: "p.png")
            let id = try #require(response.mediaAssetId)
            #expect(await env.scanAll() == 0)
            for range in [nil, "bytes=0-0", "bytes=-5"] {
                var headers: HTTPFields = [.authorization: "Bearer \(token)"]
                if let range { headers[.range] = range }
                let preview = try await client.execute(uri: "/assets/\(id)/content", method: .get, headers: headers)
                #expect(preview.status == .forbidden, "\(range ?? "no range"): \(preview.status)")
                #expect(preview.headers[RangeTests.nosniff] == "nosniff")
                #expect(!Data(buffer: preview.body).starts(with: MediaFixtures.pngSignature), "bytes of a pending file were sent")
            }
            // Infected is refused too (quarantined by a scanner that has the signature).
            try EICAR.writeTestSignatures(to: env.signatures)
            let infected = try await client.mediaAPIUpload(env, token: token, data: MediaFixtures.eicar, fileName: "e.txt")
            let infectedId = try #require(infected.mediaAssetId)
            #expect(await env.scanAll() == 2)
            await #expect(try env.asset(infectedId).scanStatus == .infected)
            let preview = try await client.execute(
                uri: "/assets/\(infectedId)/content",
                method: .get,
                headers: [.authorization: "Bearer \(token)", .range: "bytes=0-"]
            )
            #expect(preview.status == .forbidden)
            #expect(!preview.text.contains("EICAR-STANDARD"))
        }
    }

    @Test(
        "The parser on its own: suffix, open, clamped and invalid ranges",
        arguments: [
            ("bytes=0-0", 10, RangeRequest.partial(ByteRange(first: 0, last: 0))),
            ("bytes=-5", 10, .partial(ByteRange(first: 5, last: 9))),
            ("bytes=-5", 3, .partial(ByteRange(first: 0, last: 2))),
            ("bytes=0-", 0, .unsatisfiable),
            ("bytes=-1", 0, .unsatisfiable),
            ("BYTES=2-3", 10, .partial(ByteRange(first: 2, last: 3))),
            (" bytes=2-3 ", 10, .partial(ByteRange(first: 2, last: 3))),
            ("bytes= 2-3", 10, .partial(ByteRange(first: 2, last: 3))),
        ]
    )
    func parser(header: String, size: Int64, expected: RangeRequest) {
        #expect(RangeRequest.parse(header, size: size) == expected)
    }
}
