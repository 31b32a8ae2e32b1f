import Foundation
import PackageFormat

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How far a download is; `receivedBytes` counts the bytes in the file (including resumed ones).
public struct DownloadProgress: Sendable, Equatable {
    public var receivedBytes: Int64
    public var totalBytes: Int64
    /// Bytes that were already in the file when this transfer began (0 unless resumed).
    public var resumedFrom: Int64

    public var fractionCompleted: Double { totalBytes > 0 ? Double(receivedBytes) / Double(totalBytes) : 0 }
}

/// A finished, size- and (when a SHA-256 was given) hash-checked download.
public struct DownloadResult: Sendable, Equatable {
    public var file: URL
    public var size: Int64
    /// Lowercase hex SHA-256 of the whole file.
    public var sha256: String
    /// The `ETag` the server sent with the bytes.
    public var etag: String?
    /// The `Package-Version` header, when the server sent one.
    public var packageVersion: Int?
    /// Bytes kept from an earlier, interrupted download (a `206` answer); 0 for a fresh download.
    public var resumedFrom: Int64
    /// A partial file was there, but the server sent the whole file again (`If-Range` did not
    /// match: a new version was released meanwhile) and the old bytes were discarded, never spliced.
    public var restarted: Bool
    /// The HTTP status of the last transfer (200 or 206), or 0 when the file was already complete.
    public var status: Int
}

extension TrailClient {
    public typealias ProgressHandler = @Sendable (DownloadProgress) -> Void

    /// Downloads a package's current version to `file`, resuming a partial download that is
    /// already there: looks up the version's size and SHA-256 (`/packages/{id}/hash`) and fetches
    /// the versioned URL.
    public func downloadPackage(id: String, to file: URL, progress: ProgressHandler? = nil) async throws -> DownloadResult {
        let hash = try await packageHash(id: id)
        return try await download(
            from: apiURL("packages/\(Self.escape(id))/versions/\(hash.version)/download"),
            to: file,
            expectedSize: hash.size,
            expectedSHA256: hash.sha256,
            progress: progress
        )
    }

    /// Downloads the latest version of a package (`/packages/{id}/download`) with the size and SHA-256 the app
    /// listed (from the catalog or `/packages/{id}`).
    public func download(
        packageId: String,
        to file: URL,
        expectedSize: Int64,
        expectedSHA256: String?,
        etag: String? = nil,
        progress: ProgressHandler? = nil
    ) async throws -> DownloadResult {
        try await download(
            from: apiURL("packages/\(Self.escape(packageId))/download"),
            to: file,
            expectedSize: expectedSize,
            expectedSHA256: expectedSHA256,
            etag: etag,
            progress: progress
        )
    }

    /// Downloads `url` to `file`, streaming to disk (memory stays bounded whatever the size).
    ///
    /// Resume: when `file` already holds part of a download, asks for the rest with
    /// `Range: bytes=<n>-` and `If-Range: <etag>`, where the ETag is the one the server sent with
    /// those bytes (kept next to the file in `<file>.resume`), or `etag` when there is no such
    /// record. A `206` is appended; a `200` means the file changed on the server (a new version):
    /// the old bytes are dropped and the download starts again from zero, never splicing two
    /// versions. A partial file with no known ETag is never resumed.
    ///
    /// Limits: the server may not send (or announce) more than `expectedSize` bytes in all; the
    /// transfer is cut off and ``DownloadError/tooManyBytes(limit:)`` thrown. When the file is
    /// complete its SHA-256 is checked against `expectedSHA256` (when given).
    ///
    /// Cancelling the calling task stops the transfer and keeps the bytes so far for a resume
    /// (``DownloadError/cancelled(received:)``).
    public func download(
        from url: URL,
        to file: URL,
        expectedSize: Int64,
        expectedSHA256: String?,
        etag: String? = nil,
        progress: ProgressHandler? = nil
    ) async throws -> DownloadResult {
        let files = DownloadFiles(file: file)
        let expectedSHA256 = expectedSHA256?.lowercased()
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw DownloadError.fileSystem("cannot create \(file.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        var restartedEarlier = false
        for attempt in 1...2 {
            var offset = files.partialSize()
            let validator = files.recordedETag() ?? etag
            if offset > 0 && (validator == nil || offset > expectedSize) {
                files.discard()  // bytes of unknown origin, or more than the whole file: start over
                offset = 0
                restartedEarlier = true
            }
            if offset > 0 && offset == expectedSize {
                // Everything arrived earlier (e.g. interrupted just before the end was recorded).
                if let complete = try files.finish(expectedSize: expectedSize, expectedSHA256: expectedSHA256, discardOnMismatch: true) {
                    return DownloadResult(
                        file: file,
                        size: complete.size,
                        sha256: complete.sha256,
                        etag: validator,
                        packageVersion: nil,
                        resumedFrom: offset,
                        restarted: false,
                        status: 0
                    )
                }
                offset = 0
                restartedEarlier = true
            }

            var request = URLRequest(url: url)
            request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            if offset > 0, let validator {
                request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
                request.setValue(validator, forHTTPHeaderField: "If-Range")
            }
            let transfer = Transfer(
                files: files,
                requestedOffset: offset,
                ifRange: offset > 0 ? validator : nil,
                limit: expectedSize,
                expectedSHA256: expectedSHA256,
                progress: progress
            )
            let outcome = try await transfer.run(request, configuration: session.configuration)
            switch outcome {
            case .rangeNotSatisfiable:
                // Our partial file does not fit the server's: start over once.
                files.discard()
                restartedEarlier = true
                if attempt == 2 { throw DownloadError.http(status: 416, code: "range_not_satisfiable", message: nil) }
            case let .complete(status, responseETag, packageVersion, resumedFrom, restarted):
                guard let complete = try files.finish(expectedSize: expectedSize, expectedSHA256: expectedSHA256, discardOnMismatch: true) else {
                    throw DownloadError.incomplete(received: files.partialSize(), expected: expectedSize)
                }
                return DownloadResult(
                    file: file,
                    size: complete.size,
                    sha256: complete.sha256,
                    etag: responseETag,
                    packageVersion: packageVersion,
                    resumedFrom: resumedFrom,
                    restarted: restarted || restartedEarlier,
                    status: status
                )
            }
        }
        throw DownloadError.incomplete(received: files.partialSize(), expected: expectedSize)
    }
}

/// The download's file and its `<file>.resume` record (the ETag of the bytes in the file).
struct DownloadFiles: Sendable {
    let file: URL
    var record: URL { URL(fileURLWithPath: file.path + ".resume") }

    struct Record: Codable {
        var etag: String
    }

    func partialSize() -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            (attributes[.type] as? FileAttributeType) == .typeRegular,
            let size = attributes[.size] as? NSNumber
        else { return 0 }
        return size.int64Value
    }

    func recordedETag() -> String? {
        guard let data = try? Data(contentsOf: record), let value = try? JSONDecoder().decode(Record.self, from: data) else { return nil }
        return value.etag
    }

    func writeRecord(etag: String?) {
        guard let etag else {
            try? FileManager.default.removeItem(at: record)
            return
        }
        try? JSONEncoder().encode(Record(etag: etag)).write(to: record, options: .atomic)
    }

    func discard() {
        try? FileManager.default.removeItem(at: file)
        try? FileManager.default.removeItem(at: record)
    }

    /// When the file has `expectedSize` bytes: hashes it, checks the SHA-256 and removes the resume record.
    /// `nil` when it is not complete yet.
    func finish(expectedSize: Int64, expectedSHA256: String?, discardOnMismatch: Bool) throws -> (size: Int64, sha256: String)? {
        guard partialSize() == expectedSize else { return nil }
        let hashed: (sha256: String, size: Int64)
        do {
            hashed = try PackageHashing.sha256(ofFileAt: file)
        } catch {
            throw DownloadError.fileSystem("cannot read \(file.path): \(error)")
        }
        if let expectedSHA256, hashed.sha256 != expectedSHA256 {
            if discardOnMismatch { discard() }
            throw DownloadError.checksumMismatch(expected: expectedSHA256, actual: hashed.sha256)
        }
        try? FileManager.default.removeItem(at: record)
        return (hashed.size, hashed.sha256)
    }
}

/// One HTTP transfer into the file, through a `URLSessionDataDelegate` that writes each chunk as it
/// arrives (swift-corelibs-foundation has no `URLSession.bytes(for:)` and ignores per-task delegates,
/// so each transfer gets its own session).
final class Transfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Outcome {
        case complete(status: Int, etag: String?, packageVersion: Int?, resumedFrom: Int64, restarted: Bool)
        case rangeNotSatisfiable
    }

    let files: DownloadFiles
    let requestedOffset: Int64
    let ifRange: String?
    let limit: Int64
    let expectedSHA256: String?
    let progress: TrailClient.ProgressHandler?

    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelledByCaller = false
    private var continuation: CheckedContinuation<Outcome, any Error>?

    // Touched only on the session's serial delegate queue.
    private var handle: FileHandle?
    private var status = 0
    private var written: Int64 = 0
    private var resumedFrom: Int64 = 0
    private var restarted = false
    private var responseETag: String?
    private var packageVersion: Int?
    private var failure: DownloadError?
    private var errorBody: Data?
    private var unsatisfiable = false

    init(
        files: DownloadFiles,
        requestedOffset: Int64,
        ifRange: String?,
        limit: Int64,
        expectedSHA256: String?,
        progress: TrailClient.ProgressHandler?
    ) {
        self.files = files
        self.requestedOffset = requestedOffset
        self.ifRange = ifRange
        self.limit = limit
        self.expectedSHA256 = expectedSHA256
        self.progress = progress
    }

    func run(_ request: URLRequest, configuration: URLSessionConfiguration) async throws -> Outcome {
        let configuration = configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
                let task = session.dataTask(with: request)
                let cancelled = lock.withLock {
                    self.continuation = continuation
                    self.task = task
                    return cancelledByCaller
                }
                if cancelled {
                    lock.withLock { self.continuation = nil }
                    continuation.resume(throwing: DownloadError.cancelled(received: requestedOffset))
                    return
                }
                task.resume()
            }
        } onCancel: {
            let task = lock.withLock {
                cancelledByCaller = true
                return self.task
            }
            // Not here: this handler runs holding the Swift task's status lock, and `cancel()` waits for the
            // session's queue (`queue.sync`), which may itself be waiting for that lock to resume a continuation.
            if let task { DispatchQueue.global().async { task.cancel() } }
        }
    }

    private func fail(_ error: DownloadError, _ dataTask: URLSessionTask) {
        if failure == nil { failure = error }
        dataTask.cancel()
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            failure = .transport("not an HTTP response")
            completionHandler(.cancel)
            return
        }
        status = http.statusCode
        responseETag = http.value(forHTTPHeaderField: "ETag")
        packageVersion = http.value(forHTTPHeaderField: "Package-Version").flatMap { Int($0) }
        let announced = http.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        do {
            switch status {
            case 200:
                if let expectedSHA256, let sha = Self.sha256(fromETag: responseETag), sha != expectedSHA256 {
                    // Another version than the one listed: no point downloading it (the partial file stays as it is).
                    throw DownloadError.checksumMismatch(expected: expectedSHA256, actual: sha)
                }
                if let announced, announced > limit { throw DownloadError.tooManyBytes(limit: limit) }
                try openFile(truncatingTo: 0)
                restarted = requestedOffset > 0
                written = 0
                files.writeRecord(etag: responseETag)
            case 206:
                guard requestedOffset > 0 else { throw DownloadError.unexpectedPartialResponse("206 to a request without Range") }
                guard let contentRange = http.value(forHTTPHeaderField: "Content-Range"),
                    let range = Self.parseContentRange(contentRange)
                else {
                    throw DownloadError.unexpectedPartialResponse("Content-Range \(http.value(forHTTPHeaderField: "Content-Range") ?? "missing")")
                }
                guard range.first == requestedOffset, range.total == limit, range.last >= range.first, range.last < range.total else {
                    throw DownloadError.unexpectedPartialResponse("asked for bytes \(requestedOffset)- of \(limit), got \(contentRange)")
                }
                if let responseETag, let ifRange, responseETag != ifRange {
                    throw DownloadError.unexpectedPartialResponse("the bytes are of version \(responseETag), the file holds \(ifRange)")
                }
                if let announced, announced != range.last - range.first + 1 {
                    throw DownloadError.unexpectedPartialResponse("Content-Length \(announced) does not match \(contentRange)")
                }
                try openFile(truncatingTo: requestedOffset)
                written = requestedOffset
                resumedFrom = requestedOffset
            case 416:
                unsatisfiable = true
                completionHandler(.cancel)
                return
            default:
                errorBody = Data()  // keep the start of the error body for its message
            }
        } catch let error as DownloadError {
            failure = error
            completionHandler(.cancel)
            return
        } catch {
            failure = .fileSystem("\(error)")
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    private func openFile(truncatingTo offset: Int64) throws {
        let path = files.file.path
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw DownloadError.fileSystem("cannot create \(path)")
            }
        }
        do {
            let handle = try FileHandle(forWritingTo: files.file)
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seek(toOffset: UInt64(offset))
            self.handle = handle
        } catch {
            throw DownloadError.fileSystem("cannot open \(path): \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Nothing more after a failure or once the caller cancelled: the file keeps exactly what was reported.
        guard failure == nil, !lock.withLock({ cancelledByCaller }) else { return }
        if var body = errorBody {
            if body.count < 65_536 { body.append(data.prefix(65_536 - body.count)) }
            errorBody = body
            return
        }
        guard let handle else { return }
        guard written + Int64(data.count) <= limit else {
            // More than the listed size: stop here, write nothing past it.
            fail(.tooManyBytes(limit: limit), dataTask)
            return
        }
        do {
            try handle.write(contentsOf: data)
        } catch {
            fail(.fileSystem("write \(files.file.path): \(error.localizedDescription)"), dataTask)
            return
        }
        written += Int64(data.count)
        progress?(DownloadProgress(receivedBytes: written, totalBytes: limit, resumedFrom: resumedFrom))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let handle {
            try? handle.synchronize()
            try? handle.close()
            self.handle = nil
        }
        let result: Result<Outcome, any Error>
        let cancelledByCaller = lock.withLock { self.cancelledByCaller }
        if let failure {
            switch failure {
            case .tooManyBytes, .unexpectedPartialResponse:
                files.discard()  // these bytes cannot be trusted for a resume
            default:
                break
            }
            result = .failure(failure)
        } else if unsatisfiable {
            result = .success(.rangeNotSatisfiable)
        } else if let body = errorBody {
            let detail = TrailClient.apiError(body)
            result = .failure(DownloadError.http(status: status, code: detail?.code, message: detail?.message))
        } else if cancelledByCaller {
            result = .failure(DownloadError.cancelled(received: written))
        } else if let error {
            result = .failure(DownloadError.transport(error.localizedDescription))
        } else if written != limit {
            result = .failure(DownloadError.incomplete(received: written, expected: limit))
        } else {
            result = .success(
                .complete(
                    status: status,
                    etag: responseETag,
                    packageVersion: packageVersion,
                    resumedFrom: resumedFrom,
                    restarted: restarted
                )
            )
        }
        let continuation = lock.withLock {
            let continuation = self.continuation
            self.continuation = nil
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// `bytes first-last/total`.
    static func parseContentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64)? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let total = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]) else { return nil }
        return (first, last, total)
    }

    /// The SHA-256 in a strong ETag of the form `"<64 hex digits>"` (the server's convention), else nil.
    static func sha256(fromETag etag: String?) -> String? {
        guard let etag, etag.hasPrefix("\""), etag.hasSuffix("\""), etag.count == 66 else { return nil }
        let inner = etag.dropFirst().dropLast().lowercased()
        return inner.allSatisfy { $0.isHexDigit } ? String(inner) : nil
    }
}
