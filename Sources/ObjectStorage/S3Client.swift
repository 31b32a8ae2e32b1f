import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import _NIOFileSystem

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `s3://BUCKET/PREFIX`: where in which bucket the objects go.
package struct StorageLocation: Sendable, Equatable, CustomStringConvertible {
    package let bucket: String
    /// No leading or trailing slash; empty for the bucket's root.
    package let prefix: String

    package init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix.split(separator: "/").joined(separator: "/")
    }

    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses `s3://BUCKET` or `s3://BUCKET/PREFIX`; the bucket name must follow S3's rules (3–63 of `a-z 0-9 . -`).
    package static func parse(_ text: String) throws -> StorageLocation {
        guard text.hasPrefix("s3://") else { throw Invalid(description: "--storage must look like s3://BUCKET/PREFIX (got \(text))") }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(bucket.count), bucket.allSatisfy({ allowed.contains($0) }), bucket.first != "-", bucket.first != "." else {
            throw Invalid(description: "\"\(bucket)\" is not a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens")
        }
        let prefix = String(rest.dropFirst(bucket.count))
        guard !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw Invalid(description: "the prefix of --storage may not contain . or .. segments")
        }
        return StorageLocation(bucket: bucket, prefix: prefix)
    }

    /// The object key of a path under the prefix (`catalog.json`, `files/<sha256>`).
    package func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }

    package var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }
}

/// What an S3 request answered when it was not a success, or why it got no answer, in words an operator can act on.
package struct S3Error: Error, CustomStringConvertible, Sendable {
    package enum Kind: Sendable, Equatable {
        /// No HTTP answer at all: DNS, refused connection, TLS, time-out.
        case unreachable
        /// 401/403: the keys are wrong or lack a permission.
        case accessDenied
        case noSuchBucket
        case noSuchKey
        case noSuchUpload
        /// The bytes that arrived are not the bytes sent (checksum or size).
        case mismatch
        case other
    }

    package let kind: Kind
    package let operation: String
    package let status: Int?
    package let code: String?
    package let message: String

    package init(kind: Kind, operation: String, status: Int?, code: String?, message: String) {
        self.kind = kind
        self.operation = operation
        self.status = status
        self.code = code
        self.message = message
    }

    package var description: String {
        let what =
            switch kind {
            case .unreachable: "the storage endpoint does not answer"
            case .accessDenied: "access denied (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's permissions)"
            case .noSuchBucket: "the bucket does not exist"
            case .noSuchKey: "no such object"
            case .noSuchUpload: "the multipart upload is gone"
            case .mismatch: "the stored object does not match what was sent"
            case .other: "the storage refused the request"
            }
        let detail = [status.map { "HTTP \($0)" }, code, message.isEmpty ? nil : message].compactMap { $0 }.joined(separator: ", ")
        return "\(operation): \(what)\(detail.isEmpty ? "" : " (\(detail))")"
    }
}

/// An object as `HEAD` reports it.
package struct S3ObjectInfo: Sendable, Equatable {
    package let size: Int64
    /// Without quotes.
    package let etag: String
    /// `x-amz-meta-sha256`, which every upload of ours carries.
    package let sha256: String?
    package let contentType: String?
    package let cacheControl: String?
    /// `Last-Modified` (whole seconds, as HTTP dates are).
    package let lastModified: Date?

    /// The RFC 7231 form every S3 implementation sends, e.g. `Sun, 29 Nov 2026 10:17:02 GMT`.
    static func httpDate(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}

/// The few S3 operations the server's distribution mirror needs, over async-http-client, each request signed with
/// `SigV4Signer`. Bodies are streamed from disk in 256 KiB chunks (never a whole file in memory); the MD5 of what was
/// sent is compared with the ETag the store computed over what it received.
package final class S3Client: Sendable {
    package let location: StorageLocation
    package let endpoint: URL
    package let signer: SigV4Signer
    /// Path-style (`endpoint/bucket/key`) for a custom endpoint, virtual-hosted (`bucket.endpoint/key`) for AWS.
    package let pathStyle: Bool
    let http: HTTPClient
    static let chunkSize = 256 * 1024

    /// `endpoint` nil: AWS (`https://s3.<region>.amazonaws.com`).
    package init(
        location: StorageLocation,
        endpoint: URL?,
        region: String,
        credentials: S3Credentials,
        connectTimeout: TimeAmount = .seconds(10),
        readTimeout: TimeAmount = .seconds(120)
    ) {
        self.location = location
        self.signer = SigV4Signer(credentials: credentials, region: region)
        if let endpoint {
            self.endpoint = endpoint
            self.pathStyle = true
        } else {
            self.endpoint = URL(string: "https://s3.\(region).amazonaws.com")!
            // A bucket name with dots does not match the wildcard certificate as a sub-domain.
            self.pathStyle = location.bucket.contains(".")
        }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: connectTimeout, read: readTimeout)
        )
        configuration.httpVersion = .http1Only
        self.http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    package func shutdown() async {
        try? await http.shutdown()
    }

    deinit {
        // A client nobody shut down (a test that failed early) must not trap: shut it down in the background.
        let http = self.http
        Task { try? await http.shutdown() }
    }

    // MARK: Operations

    /// `HEAD` on the bucket: fails with `.noSuchBucket`, `.accessDenied` or `.unreachable`.
    package func headBucket() async throws {
        _ = try await send("check the bucket \(location.bucket)", method: .HEAD, key: nil)
    }

    package func headObject(_ key: String) async throws -> S3ObjectInfo? {
        do {
            let response = try await send("HEAD \(key)", method: .HEAD, key: key)
            return S3ObjectInfo(
                size: Int64(response.headers.first(name: "content-length") ?? "") ?? -1,
                etag: Self.unquote(response.headers.first(name: "etag") ?? ""),
                sha256: response.headers.first(name: "x-amz-meta-sha256"),
                contentType: response.headers.first(name: "content-type"),
                cacheControl: response.headers.first(name: "cache-control"),
                lastModified: S3ObjectInfo.httpDate(response.headers.first(name: "last-modified"))
            )
        } catch let error as S3Error where error.kind == .noSuchKey || (error.status == 404 && error.kind != .noSuchBucket) {
            return nil
        }
    }

    /// A small object whole (at most `limit` bytes).
    package func getObject(_ key: String, limit: Int = 16 * 1024 * 1024) async throws -> Data {
        let response = try await send("GET \(key)", method: .GET, key: key, responseLimit: limit)
        return Data(buffer: response.body)
    }

    package func deleteObject(_ key: String) async throws {
        _ = try await send("DELETE \(key)", method: .DELETE, key: key)
    }

    /// Uploads bytes held in memory (catalog, manifests, signatures: small). Returns the ETag.
    @discardableResult
    package func putObject(
        _ key: String,
        data: Data,
        contentType: String,
        cacheControl: String,
        metadata: [String: String] = [:]
    ) async throws -> String {
        let sha256 = SHA256.hash(data: data).hexString
        let headers =
            Self.objectHeaders(contentType: contentType, cacheControl: cacheControl, sha256: sha256, metadata: metadata)
            + [("content-length", "\(data.count)")]
        let response = try await send(
            "PUT \(key)",
            method: .PUT,
            key: key,
            headers: headers,
            payloadHash: sha256,
            body: .bytes(ByteBuffer(bytes: data))
        )
        let etag = Self.unquote(response.headers.first(name: "etag") ?? "")
        try Self.checkETag(etag, md5: Insecure.MD5.hash(data: data).hexString, operation: "PUT \(key)")
        return etag
    }

    /// Uploads a file in one request, streamed from disk. `sha256` is the file's known hash: it signs the body (AWS
    /// refuses bytes that do not match it) and the bytes sent are hashed on the way; when they do not match it (the
    /// file changed on disk, or is not the one meant) the object is deleted again and the upload fails, also on stores
    /// that do not check the signed hash (SeaweedFS and moto do not). Returns the ETag.
    @discardableResult
    package func putObject(_ key: String, file: URL, size: Int64, sha256: String, contentType: String, cacheControl: String) async throws -> String {
        let headers =
            Self.objectHeaders(contentType: contentType, cacheControl: cacheControl, sha256: sha256, metadata: [:])
            + [("content-length", "\(size)")]
        let (response, sent) = try await sendFile(
            "PUT \(key)",
            method: .PUT,
            key: key,
            query: [],
            headers: headers,
            payloadHash: sha256,
            file: file,
            range: 0..<size
        )
        guard sent.sha256 == sha256, sent.count == size else {
            try? await deleteObject(key)
            throw S3Error(
                kind: .mismatch,
                operation: "PUT \(key)",
                status: nil,
                code: nil,
                message: "\(file.path) has \(sent.count) bytes with SHA-256 \(sent.sha256), not the \(size) bytes with \(sha256) expected"
            )
        }
        let etag = Self.unquote(response.headers.first(name: "etag") ?? "")
        try Self.checkETag(etag, md5: sent.md5, operation: "PUT \(key)")
        return etag
    }

    // MARK: Multipart

    package struct Part: Sendable, Equatable {
        package let number: Int
        package let etag: String
        package let size: Int64
    }

    package func createMultipartUpload(_ key: String, contentType: String, cacheControl: String, sha256: String) async throws -> String {
        let headers = Self.objectHeaders(contentType: contentType, cacheControl: cacheControl, sha256: sha256, metadata: [:])
        let response = try await send(
            "start the multipart upload of \(key)",
            method: .POST,
            key: key,
            query: [("uploads", "")],
            headers: headers,
            responseLimit: 64 * 1024
        )
        guard let id = XMLValues.first("UploadId", in: response.body) else {
            throw S3Error(
                kind: .other,
                operation: "start the multipart upload of \(key)",
                status: 200,
                code: nil,
                message: "no UploadId in the answer"
            )
        }
        return id
    }

    /// One part, streamed from `range` of `file`; the body is not signed (`UNSIGNED-PAYLOAD`: hashing it first would
    /// read it twice), the store's ETag (the MD5 of what it received) is checked against the MD5 of what was sent.
    package func uploadPart(_ key: String, uploadId: String, number: Int, file: URL, range: Range<Int64>) async throws -> Part {
        let operation = "upload part \(number) of \(key)"
        let (response, sent) = try await sendFile(
            operation,
            method: .PUT,
            key: key,
            query: [("partNumber", "\(number)"), ("uploadId", uploadId)],
            headers: [("content-length", "\(range.count)")],
            payloadHash: SigV4Signer.unsignedPayload,
            file: file,
            range: range,
            hashSHA256: false
        )
        let etag = Self.unquote(response.headers.first(name: "etag") ?? "")
        try Self.checkETag(etag, md5: sent.md5, operation: operation)
        return Part(number: number, etag: etag, size: Int64(range.count))
    }

    /// The parts the store holds for an upload begun earlier (by a server since stopped); nil when the upload is gone.
    package func listParts(_ key: String, uploadId: String) async throws -> [Part]? {
        var parts: [Part] = []
        var marker: String? = nil
        while true {
            var query: [(name: String, value: String)] = [("uploadId", uploadId), ("max-parts", "1000")]
            if let marker { query.append(("part-number-marker", marker)) }
            let response: HTTPClientResponseParts
            do {
                response = try await send("list the parts of \(key)", method: .GET, key: key, query: query, responseLimit: 4 * 1024 * 1024)
            } catch let error as S3Error where error.kind == .noSuchUpload || error.status == 404 {
                return nil
            }
            for element in XMLValues.elements("Part", in: response.body) {
                guard let number = element["PartNumber"].flatMap(Int.init), let etag = element["ETag"],
                    let size = element["Size"].flatMap(Int64.init)
                else { continue }
                parts.append(Part(number: number, etag: Self.unquote(etag), size: size))
            }
            guard XMLValues.first("IsTruncated", in: response.body) == "true",
                let next = XMLValues.first("NextPartNumberMarker", in: response.body)
            else { break }
            marker = next
        }
        return parts.sorted { $0.number < $1.number }
    }

    /// Joins the parts; the store's ETag for the whole must be the MD5 of the parts' MD5s, `-<count>`.
    @discardableResult
    package func completeMultipartUpload(_ key: String, uploadId: String, parts: [Part]) async throws -> String {
        let operation = "complete the multipart upload of \(key)"
        let xml =
            "<CompleteMultipartUpload>" + parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\"\($0.etag)\"</ETag></Part>" }.joined()
            + "</CompleteMultipartUpload>"
        let data = Data(xml.utf8)
        let response = try await send(
            operation,
            method: .POST,
            key: key,
            query: [("uploadId", uploadId)],
            headers: [("content-length", "\(data.count)"), ("content-type", "application/xml")],
            payloadHash: SHA256.hash(data: data).hexString,
            body: .bytes(ByteBuffer(bytes: data)),
            responseLimit: 64 * 1024
        )
        // S3 may answer 200 with an error document when the join fails late.
        if let code = XMLValues.first("Code", in: response.body) {
            throw S3Error(kind: .other, operation: operation, status: 200, code: code, message: XMLValues.first("Message", in: response.body) ?? "")
        }
        let etag = Self.unquote(XMLValues.first("ETag", in: response.body) ?? "")
        try Self.checkETag(etag, md5: Self.multipartETag(parts.map(\.etag)), operation: operation)
        return etag
    }

    /// Keys and sizes under a prefix (ListObjectsV2, every page).
    package func listObjects(prefix: String) async throws -> [(key: String, size: Int64)] {
        var objects: [(key: String, size: Int64)] = []
        var token: String? = nil
        repeat {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let response = try await send("list \(prefix)", method: .GET, key: nil, query: query, responseLimit: 16 * 1024 * 1024)
            for element in XMLValues.elements("Contents", in: response.body) {
                if let key = element["Key"], let size = element["Size"].flatMap(Int64.init) { objects.append((key, size)) }
            }
            token = XMLValues.first("IsTruncated", in: response.body) == "true" ? XMLValues.first("NextContinuationToken", in: response.body) : nil
        } while token != nil
        return objects
    }

    // MARK: Requests

    struct HTTPClientResponseParts: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: ByteBuffer
    }

    static func objectHeaders(
        contentType: String,
        cacheControl: String,
        sha256: String,
        metadata: [String: String]
    ) -> [(name: String, value: String)] {
        [("content-type", contentType), ("cache-control", cacheControl), ("x-amz-meta-sha256", sha256)]
            + metadata.sorted { $0.key < $1.key }.map { ("x-amz-meta-\($0.key)", $0.value) }
    }

    func target(method: String, key: String?, query: [(name: String, value: String)]) -> S3RequestTarget {
        let port = endpoint.port.map { ":\($0)" } ?? ""
        let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let objectPath = key.map { "/\($0)" } ?? "/"
        if pathStyle {
            return S3RequestTarget(
                method: method,
                host: "\(endpoint.host ?? "")\(port)",
                path: "\(basePath)/\(location.bucket)\(key.map { "/\($0)" } ?? "")",
                query: query
            )
        }
        return S3RequestTarget(
            method: method,
            host: "\(location.bucket).\(endpoint.host ?? "")\(port)",
            path: "\(basePath)\(objectPath)",
            query: query
        )
    }

    func request(
        _ method: HTTPMethod,
        key: String?,
        query: [(name: String, value: String)],
        headers: [(name: String, value: String)],
        payloadHash: String
    ) -> HTTPClientRequest {
        let target = target(method: method.rawValue, key: key, query: query)
        var request = HTTPClientRequest(url: "\(endpoint.scheme ?? "https")://\(target.host)\(target.pathAndQuery)")
        request.method = method
        // Only the headers that were signed go out (plus Host, which async-http-client writes from the URL as signed).
        let signed = headers.filter { $0.name != "content-length" }
        for (name, value) in signed + signer.sign(target, headers: signed, payloadHash: payloadHash) { request.headers.add(name: name, value: value) }
        return request
    }

    func send(
        _ operation: String,
        method: HTTPMethod,
        key: String?,
        query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [],
        payloadHash: String = SigV4Signer.emptyPayloadHash,
        body: HTTPClientRequest.Body? = nil,
        responseLimit: Int = 64 * 1024
    ) async throws -> HTTPClientResponseParts {
        var request = request(method, key: key, query: query, headers: headers, payloadHash: payloadHash)
        request.body = body
        return try await execute(request, operation: operation, isBucket: key == nil, responseLimit: responseLimit)
    }

    /// What went out in a streamed body.
    struct SentDigests {
        var md5 = Insecure.MD5()
        var sha256: SHA256? = nil
        var count: Int64 = 0
    }

    /// Sends `range` of `file` as the body and returns the answer with the MD5 (and, when `hashSHA256`, the SHA-256)
    /// and the count of the bytes sent.
    func sendFile(
        _ operation: String,
        method: HTTPMethod,
        key: String,
        query: [(name: String, value: String)],
        headers: [(name: String, value: String)],
        payloadHash: String,
        file: URL,
        range: Range<Int64>,
        hashSHA256: Bool = true
    ) async throws -> (HTTPClientResponseParts, (md5: String, sha256: String, count: Int64)) {
        var request = request(method, key: key, query: query, headers: headers, payloadHash: payloadHash)
        let digests = NIOLockedValueBox(SentDigests(sha256: hashSHA256 ? SHA256() : nil))
        let response: HTTPClientResponseParts
        do {
            response = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.path)) { handle in
                let chunks = handle.readChunks(in: range, chunkLength: .bytes(Int64(Self.chunkSize))).map { chunk -> ByteBuffer in
                    chunk.withUnsafeReadableBytes { bytes in
                        digests.withLockedValue {
                            $0.md5.update(bufferPointer: bytes)
                            $0.sha256?.update(bufferPointer: bytes)
                            $0.count += Int64(bytes.count)
                        }
                    }
                    return chunk
                }
                request.body = .stream(chunks, length: .known(Int64(range.count)))
                return try await execute(request, operation: operation, isBucket: false, responseLimit: 64 * 1024)
            }
        } catch let error as FileSystemError {
            throw S3Error(kind: .other, operation: operation, status: nil, code: nil, message: "cannot read \(file.path): \(error.code)")
        }
        let sent = digests.withLockedValue { ($0.md5.finalize().hexString, $0.sha256?.finalize().hexString ?? "", $0.count) }
        return (response, sent)
    }

    func execute(_ request: HTTPClientRequest, operation: String, isBucket: Bool, responseLimit: Int) async throws -> HTTPClientResponseParts {
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .hours(1))
        } catch {
            throw S3Error(
                kind: .unreachable,
                operation: operation,
                status: nil,
                code: nil,
                message: "\(endpoint.absoluteString): \(Self.describe(error))"
            )
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: responseLimit)
        } catch {
            throw S3Error(
                kind: .unreachable,
                operation: operation,
                status: Int(response.status.code),
                code: nil,
                message: "the answer was cut or too long: \(Self.describe(error))"
            )
        }
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let code = XMLValues.first("Code", in: body)
            let message = XMLValues.first("Message", in: body) ?? ""
            let kind: S3Error.Kind =
                switch (status, code) {
                case (_, "NoSuchBucket"): .noSuchBucket
                case (_, "NoSuchKey"): .noSuchKey
                case (_, "NoSuchUpload"): .noSuchUpload
                case (_, "XAmzContentSHA256Mismatch"), (_, "BadDigest"), (_, "IncompleteBody"): .mismatch
                case (401, _), (403, _): .accessDenied
                case (404, nil) where isBucket: .noSuchBucket
                default: .other
                }
            throw S3Error(kind: kind, operation: operation, status: status, code: code, message: message)
        }
        return HTTPClientResponseParts(status: status, headers: response.headers, body: body)
    }

    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }

    static func unquote(_ etag: String) -> String {
        var text = etag.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("W/") { text.removeFirst(2) }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }

    /// The ETag S3 gives a multipart object: MD5 of the concatenated binary MD5s of the parts, `-` and the count.
    static func multipartETag(_ partETags: [String]) -> String {
        var joined = Data()
        for etag in partETags { joined.append(Data(hex: etag) ?? Data()) }
        return "\(Insecure.MD5.hash(data: joined).hexString)-\(partETags.count)"
    }

    /// The store's ETag must be the MD5 we computed when it has the MD5 form (32 hex digits, optionally `-N`); a store
    /// that uses another ETag scheme (encryption with KMS, some gateways) is not checked this way.
    static func checkETag(_ etag: String, md5: String, operation: String) throws {
        let base = etag.split(separator: "-").first.map(String.init) ?? etag
        guard base.count == 32, base.allSatisfy(\.isHexDigit) else { return }
        guard etag.lowercased() == md5 else {
            throw S3Error(
                kind: .mismatch,
                operation: operation,
                status: nil,
                code: "ETag",
                message: "the store computed MD5 \(etag), the bytes sent have \(md5)"
            )
        }
    }
}

/// The values S3's small XML answers carry (error codes, upload ids, list entries), read with Foundation's XMLParser.
enum XMLValues {
    /// The text of the first element named `name`.
    static func first(_ name: String, in body: ByteBuffer) -> String? {
        Collector(body: body, record: nil).run().first { $0.name == name }?.text
    }

    /// Each `record` element's children as name → text.
    static func elements(_ record: String, in body: ByteBuffer) -> [[String: String]] {
        Collector(body: body, record: record).run().compactMap(\.children)
    }

    final class Collector: NSObject, XMLParserDelegate {
        struct Found {
            let name: String
            let text: String
            var children: [String: String]?
        }
        let data: Data
        let record: String?
        var found: [Found] = []
        var text = ""
        var current: [String: String]? = nil

        init(body: ByteBuffer, record: String?) {
            self.data = Data(buffer: body)
            self.record = record
        }

        func run() -> [Found] {
            guard !data.isEmpty else { return [] }
            let parser = XMLParser(data: data)
            parser.delegate = self
            parser.shouldResolveExternalEntities = false
            _ = parser.parse()
            return found
        }

        func parser(
            _ parser: XMLParser,
            didStartElement name: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            text = ""
            if name == record { current = [:] }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == record, let children = current {
                found.append(Found(name: name, text: "", children: children))
                current = nil
            } else if current != nil {
                current?[name] = text
            } else {
                found.append(Found(name: name, text: text, children: nil))
            }
            text = ""
        }
    }
}
