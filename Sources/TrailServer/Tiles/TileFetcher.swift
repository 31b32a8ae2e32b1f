import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOConcurrencyHelpers

/// A tile build that cannot go on, with a message for the request page.
public struct TileBuildFailure: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Fetches tiles from a tile server for a package build: cache first (`tile-cache/<template>/<z>/<x>/<y>.<ext>`, shared
/// by every build), then the server with a bounded number of requests in flight, a clear User-Agent, time-outs,
/// and retries with exponential back-off and jitter. One tile that still fails after its retries ends the fetch
/// (the remaining requests are cancelled), so a server that stops answering fails the build instead of leaving holes.
public final class TileFetcher: Sendable {
    public let template: String
    public let cacheFolder: URL
    public let options: TileFetchOptions
    public let userAgent: String
    let session: URLSession
    let logger: Logger

    /// Formats a cached tile may have, by file extension.
    static let extensions = ["png", "jpg", "webp"]

    public init(template: String, cacheRoot: URL, options: TileFetchOptions, userAgent: String, logger: Logger = Logger(label: "trail.tiles")) {
        self.template = template
        self.options = options
        self.userAgent = userAgent
        self.logger = logger
        let key = SHA256.hash(data: Data(template.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        cacheFolder = cacheRoot.appendingPathComponent(key)
        let configuration = URLSessionConfiguration.ephemeral
        // FoundationNetworking on Linux counts time-outs in whole seconds (0.5 s would time out at once).
        let timeout = max(1, options.requestTimeout.rounded(.up))
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = max(timeout * 3, timeout + 10)
        configuration.httpMaximumConnectionsPerHost = max(1, options.concurrency)
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpAdditionalHeaders = ["User-Agent": userAgent, "Accept": "image/png,image/jpeg,image/webp,image/*;q=0.8"]
        session = URLSession(configuration: configuration, delegate: TileRedirectGuard(allowPrivate: options.allowPrivateAddresses),
                             delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    /// The User-Agent of every request: who we are and where to reach the server's operator.
    public static func userAgent(publicURL: String) -> String { "TrailCompanion/1.0 (+\(publicURL))" }

    /// What came of one tile.
    public enum Outcome: Sendable, Equatable {
        /// The tile's bytes are in this file (in the cache) with this format.
        case file(URL, format: String)
        /// The server has no such tile (404, 410 or 204): the map has a hole there, as it has online.
        case absent
    }

    public struct Summary: Sendable {
        public var outcomes: [TileID: Outcome]
        public var fromCache: Int
        public var fetched: Int
        public var retries: Int
    }

    /// Fetches every tile; throws ``TileBuildFailure`` when one cannot be had, `CancellationError` when cancelled.
    public func fetch(_ tiles: [TileID], progress: (@Sendable (Int) -> Void)? = nil) async throws -> Summary {
        if !options.allowPrivateAddresses {
            // Every host the template can name ({s} picks a, b or c), checked before the first request.
            let hosts = Set((0..<3).compactMap { URLComponents(string: TileURLTemplate.expand(template, TileID(z: 1, x: $0, y: 0)))?.host })
            for host in hosts.sorted() {
                do { try TileHostGuard.check(host: host) } catch let refusal as TileHostGuard.Refusal {
                    throw TileBuildFailure("Map tiles cannot be fetched: \(refusal). No package was made.")
                }
            }
        }
        var summary = Summary(outcomes: [:], fromCache: 0, fetched: 0, retries: 0)
        var pending: [TileID] = []
        for tile in tiles {
            if let cached = cachedFile(tile) {
                summary.outcomes[tile] = cached
                summary.fromCache += 1
            } else {
                pending.append(tile)
            }
        }
        var done = summary.fromCache
        progress?(done)
        try await withThrowingTaskGroup(of: (TileID, Outcome, Int).self) { group in
            var iterator = pending.makeIterator()
            func startNext() -> Bool {
                guard let tile = iterator.next() else { return false }
                group.addTask { try await self.fetchWithRetries(tile) }
                return true
            }
            for _ in 0..<max(1, options.concurrency) where !startNext() { break }
            while let (tile, outcome, retries) = try await group.next() {
                summary.outcomes[tile] = outcome
                summary.fetched += 1
                summary.retries += retries
                done += 1
                progress?(done)
                _ = startNext()
            }
        }
        return summary
    }

    // MARK: Cache

    func cacheFile(_ tile: TileID, format: String) -> URL {
        cacheFolder.appendingPathComponent("\(tile.z)/\(tile.x)/\(tile.y).\(format)")
    }

    /// A cached tile younger than `cacheMaxAge`.
    func cachedFile(_ tile: TileID) -> Outcome? {
        for format in Self.extensions {
            let url = cacheFile(tile, format: format)
            var info = stat()
            guard stat(url.path, &info) == 0, info.st_size > 0 else { continue }
            let age = Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec)
            if age <= options.cacheMaxAge { return .file(url, format: format) }
        }
        return nil
    }

    /// Writes a fetched tile into the cache (temporary name, then rename: readers never see half a tile).
    func store(_ data: Data, tile: TileID, format: String) throws -> URL {
        let url = cacheFile(tile, format: format)
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".\(tile.y).\(UUID().uuidString.prefix(8)).tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw POSIXFailure(operation: "store tile \(tile)", code: code)
        }
        for other in Self.extensions where other != format { unlink(cacheFile(tile, format: other).path) }
        return url
    }

    // MARK: Fetching

    enum AttemptError: Error {
        /// Worth another try (time-out, connection refused, 5xx, 429, not an image).
        case retryable(String, retryAfter: TimeInterval?)
        /// Trying again will not help (403, 401, 400 …).
        case fatal(String)
    }

    func fetchWithRetries(_ tile: TileID) async throws -> (TileID, Outcome, Int) {
        let url = TileURLTemplate.expand(template, tile)
        var lastProblem = ""
        for attempt in 1...max(1, options.attempts) {
            try Task.checkCancellation()
            do {
                return (tile, try await fetchOnce(tile, url: url), attempt - 1)
            } catch let error as AttemptError {
                switch error {
                case .fatal(let message):
                    throw TileBuildFailure("The tile server refused tile \(tile) (\(Self.redact(url))): \(message). No package was made.")
                case let .retryable(message, retryAfter):
                    lastProblem = message
                    guard attempt < options.attempts else { break }
                    let backoff = min(options.maxBackoff, options.initialBackoff * pow(2, Double(attempt - 1)))
                    let delay = min(options.maxBackoff, max(retryAfter ?? 0, backoff * Double.random(in: 0.75...1.25)))
                    logger.debug("tile \(tile): \(message); retry \(attempt) in \(delay) s")
                    try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                }
            }
        }
        throw TileBuildFailure(
            "The tile server \(Self.host(url)) did not deliver tile \(tile) after \(options.attempts) tries (last: \(lastProblem)); "
            + "it may be down or overloaded. No package was made; submit the tour again later.")
    }

    func fetchOnce(_ tile: TileID, url: String) async throws -> Outcome {
        guard let address = URL(string: url) else { throw AttemptError.fatal("the URL \(url) is not valid") }
        var request = URLRequest(url: address)
        request.timeoutInterval = max(1, options.requestTimeout.rounded(.up))
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        let data: Data, response: URLResponse
        do {
            (data, response) = try await Self.data(for: request, session: session)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError {
            if error.code == .cancelled, Task.isCancelled { throw CancellationError() }
            throw AttemptError.retryable(error.code == .timedOut ? "no answer within \(String(format: "%g", max(1, options.requestTimeout.rounded(.up)))) s" : error.localizedDescription,
                                         retryAfter: nil)
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw AttemptError.retryable("\(error)", retryAfter: nil)
        }
        guard let http = response as? HTTPURLResponse else { throw AttemptError.retryable("not an HTTP answer", retryAfter: nil) }
        switch http.statusCode {
        case 200:
            guard let format = TileImageFormat.detect(data), format != "pbf" else {
                throw AttemptError.retryable("the answer is not a PNG, JPEG or WebP image", retryAfter: nil)
            }
            do { return .file(try store(data, tile: tile, format: format), format: format) } catch {
                throw AttemptError.fatal("the tile cache cannot be written: \(error)")
            }
        case 204, 404, 410:
            return .absent
        case 408, 425, 429, 500...599:
            let retryAfter = http.value(forHTTPHeaderField: "Retry-After").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }
            throw AttemptError.retryable("HTTP \(http.statusCode)", retryAfter: retryAfter)
        default:
            throw AttemptError.fatal("HTTP \(http.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: http.statusCode))")
        }
    }

    /// The host of a URL, for messages.
    static func host(_ url: String) -> String { URLComponents(string: url)?.host ?? url }

    /// A URL without its query (which may hold an API key), for messages.
    static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        if components.query != nil { components.query = "…" }
        return components.string ?? url
    }
}

extension TileFetcher {
    /// A data task through its completion handler, cancelled from another queue. Not `URLSession.data(for:)`: in
    /// swift-corelibs-foundation its cancellation handler calls `URLSessionTask.cancel()`, which waits (`queue.sync`) for
    /// the session's queue while that queue, finishing the same request, waits for the Swift task's status lock that the
    /// cancellation holds. A build whose tile server stopped answering cancels its fetch group exactly then: a CI run hung
    /// there (thread stacks in session 6's note). Here the cancel is sent from a Dispatch queue, after the handler returns.
    static func data(for request: URLRequest, session: URLSession) async throws -> (Data, URLResponse) {
        let running = NIOLockedValueBox<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                running.withLockedValue { $0 = task }
                task.resume()
                if Task.isCancelled { DispatchQueue.global().async { task.cancel() } }
            }
        } onCancel: {
            let task = running.withLockedValue { $0 }
            DispatchQueue.global().async { task?.cancel() }
        }
    }
}
