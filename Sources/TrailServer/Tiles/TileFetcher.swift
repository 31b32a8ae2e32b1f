import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A tile build that cannot go on, with a message for the request page.
struct TileBuildFailure: Error, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Fetches tiles from a tile server for a package build: cache first (`tile-cache/<template>/<z>/<x>/<y>.<ext>`, shared
/// by every build), then the server with a bounded number of requests in flight, a clear User-Agent, time-outs,
/// and retries with exponential back-off and jitter. One tile that still fails after its retries ends the fetch
/// (the remaining requests are cancelled), so a server that stops answering fails the build instead of leaving holes.
///
/// Every connection goes to the address ``TileHostGuard`` checked (see ``PinnedClients``), so a tile URL cannot reach
/// the server's own network, not even through a DNS answer that changes after the check.
final class TileFetcher: Sendable {
    let template: String
    let cacheFolder: URL
    let options: TileFetchOptions
    let userAgent: String
    let resolve: TileHostGuard.Resolver
    let isAllowedAddress: @Sendable (String) -> Bool
    let logger: Logger

    /// The most bytes one tile's answer may have (a larger body is not read on).
    static let maxTileBytes = MBTilesReader.maxTileBytes
    /// Redirects followed for one tile before giving up.
    static let maxRedirects = 5

    /// Formats a cached tile may have, by file extension.
    static let extensions = ["png", "jpg", "webp"]

    /// `resolve` looks host names up (the system's resolver; tests give their own to play a changing DNS answer).
    init(
        template: String,
        cacheRoot: URL,
        options: TileFetchOptions,
        userAgent: String,
        resolve: @escaping TileHostGuard.Resolver = TileHostGuard.addresses(of:),
        isAllowedAddress: @escaping @Sendable (String) -> Bool = TileHostGuard.isPublic,
        logger: Logger = Logger(label: "trail.tiles")
    ) {
        self.template = template
        self.options = options
        self.userAgent = userAgent
        self.resolve = resolve
        self.isAllowedAddress = isAllowedAddress
        self.logger = logger
        let key = Array(SHA256.hash(data: Data(template.utf8)).prefix(8)).hexString
        cacheFolder = cacheRoot.appendingPathComponent(key)
    }

    /// The User-Agent of every request: who we are and where to reach the server's operator.
    static func userAgent(publicURL: String) -> String { "TrailCompanion/1.0 (+\(publicURL))" }

    /// What came of one tile.
    enum Outcome: Sendable, Equatable {
        /// The tile's bytes are in this file (in the cache) with this format.
        case file(URL, format: String)
        /// The server has no such tile (404, 410 or 204): the map has a hole there, as it has online.
        case absent
    }

    struct Summary: Sendable {
        var outcomes: [TileID: Outcome]
        var fromCache: Int
        var fetched: Int
        var retries: Int
    }

    /// Fetches every tile; throws ``TileBuildFailure`` when one cannot be had, `CancellationError` when cancelled.
    func fetch(_ tiles: [TileID], progress: (@Sendable (Int) -> Void)? = nil) async throws -> Summary {
        let clients = PinnedClients(options: options, resolve: resolve, isAllowed: isAllowedAddress)
        do {
            let summary = try await fetch(tiles, clients: clients, progress: progress)
            await clients.shutdown()
            return summary
        } catch {
            await clients.shutdown()
            throw error
        }
    }

    func fetch(_ tiles: [TileID], clients: PinnedClients, progress: (@Sendable (Int) -> Void)?) async throws -> Summary {
        // Every host the template can name ({s} picks a, b or c), checked before the first request.
        let hosts = Set((0..<3).compactMap { URLComponents(string: TileURLTemplate.expand(template, TileID(z: 1, x: $0, y: 0)))?.host })
        for host in hosts.sorted() {
            do { _ = try await clients.client(for: host) } catch let refusal as TileHostGuard.Refusal {
                throw TileBuildFailure("Map tiles cannot be fetched: \(refusal). No package was made.")
            } catch {
                // A name that does not resolve now may resolve at the first request; that one fails with its retries.
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
                group.addTask { try await self.fetchWithRetries(tile, clients: clients) }
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

    /// One request for one tile, without retries or waiting on a cache, through the same pinned connection and checks
    /// as a build (for `doctor`). The reason in words when it fails ("HTTP 500", "… an address of this server's own
    /// network …").
    func probe(_ tile: TileID) async -> Result<Outcome, TileBuildFailure> {
        let clients = PinnedClients(options: options, resolve: resolve, isAllowed: isAllowedAddress)
        let result: Result<Outcome, TileBuildFailure>
        do {
            result = .success(try await fetchOnce(tile, url: TileURLTemplate.expand(template, tile), clients: clients))
        } catch let error as AttemptError {
            switch error {
            case .fatal(let message), .retryable(let message, _): result = .failure(TileBuildFailure(message))
            }
        } catch {
            result = .failure(TileBuildFailure("\(error)"))
        }
        await clients.shutdown()  // before answering: `doctor` exits right after
        return result
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

    func fetchWithRetries(_ tile: TileID, clients: PinnedClients) async throws -> (TileID, Outcome, Int) {
        let url = TileURLTemplate.expand(template, tile)
        var lastProblem = ""
        for attempt in 1...max(1, options.attempts) {
            try Task.checkCancellation()
            do {
                return (tile, try await fetchOnce(tile, url: url, clients: clients), attempt - 1)
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
                + "it may be down or overloaded. No package was made; submit the tour again later."
        )
    }

    func fetchOnce(_ tile: TileID, url: String, clients: PinnedClients) async throws -> Outcome {
        var address = url
        for _ in 0...Self.maxRedirects {
            guard let components = URLComponents(string: address), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
            else {
                throw AttemptError.fatal("the URL \(Self.redact(address)) is not an http or https URL")
            }
            let client: HTTPClient
            do { client = try await clients.client(for: host) } catch let refusal as TileHostGuard.Refusal {
                throw AttemptError.fatal(address == url ? "\(refusal)" : "it redirected to \(Self.redact(address)), but \(refusal)")
            } catch {
                throw AttemptError.retryable("\(error)", retryAfter: nil)
            }
            var request = HTTPClientRequest(url: address)
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept", value: "image/png,image/jpeg,image/webp,image/*;q=0.8")
            let response: HTTPClientResponse
            let body: ByteBuffer
            do {
                response = try await client.execute(request, timeout: options.requestTimeoutAmount)
                body = try await response.body.collect(upTo: Self.maxTileBytes)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw Self.attemptError(error, timeout: options.requestTimeout)
            }
            switch response.status.code {
            case 200:
                let data = Data(buffer: body, byteTransferStrategy: .noCopy)
                guard let format = TileImageFormat.detect(data), format != "pbf" else {
                    throw AttemptError.retryable("something that is not a PNG, JPEG or WebP image", retryAfter: nil)
                }
                do { return .file(try store(data, tile: tile, format: format), format: format) } catch {
                    throw AttemptError.fatal("the tile cache cannot be written: \(error)")
                }
            case 204, 404, 410:
                return .absent
            case 301, 302, 303, 307, 308:
                guard let location = response.headers.first(name: "Location"),
                    let next = URL(string: location, relativeTo: URL(string: address))?.absoluteString
                else {
                    throw AttemptError.fatal("HTTP \(response.status.code) without a usable Location")
                }
                address = next
            case 408, 425, 429, 500...599:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }
                throw AttemptError.retryable("HTTP \(response.status.code)", retryAfter: retryAfter)
            default:
                throw AttemptError.fatal("HTTP \(response.status.code) \(response.status.reasonPhrase)")
            }
        }
        throw AttemptError.fatal("more than \(Self.maxRedirects) redirects")
    }

    /// What a failed request means for the next try, in words for the request page (never the upstream's own text).
    static func attemptError(_ error: any Error, timeout: TimeInterval) -> AttemptError {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout:
                return .retryable("no answer within \(String(format: "%g", timeout)) s", retryAfter: nil)
            case .remoteConnectionClosed:
                return .retryable("the server closed the connection", retryAfter: nil)
            default:
                return .retryable("the request failed (\(error))", retryAfter: nil)
            }
        }
        if error is NIOTooManyBytesError { return .fatal("a tile larger than \(ByteFormat.string(Int64(maxTileBytes)))") }
        if error is NIOConnectionError || error is IOError { return .retryable("the server cannot be reached", retryAfter: nil) }
        return .retryable("the request failed (\(error))", retryAfter: nil)
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

/// The HTTP clients of one fetch, one per host name, each created with async-http-client's `dnsOverride` set to the
/// address ``TileHostGuard/pin(host:allowPrivate:resolve:)`` returned: the lookup that was checked is the one that is
/// connected to (TLS still sends and verifies the host name). Resolved once per host and fetch; a failed lookup is not
/// remembered, so the tile's next try looks again.
final class PinnedClients: Sendable {
    let options: TileFetchOptions
    let resolve: TileHostGuard.Resolver
    let isAllowed: @Sendable (String) -> Bool
    private let clients = NIOLockedValueBox<[String: Task<HTTPClient, any Error>]>([:])

    init(options: TileFetchOptions, resolve: @escaping TileHostGuard.Resolver, isAllowed: @escaping @Sendable (String) -> Bool) {
        self.options = options
        self.resolve = resolve
        self.isAllowed = isAllowed
    }

    func client(for host: String) async throws -> HTTPClient {
        let options = options
        let resolve = resolve
        let isAllowed = isAllowed
        let task = clients.withLockedValue { clients in
            if let existing = clients[host] { return existing }
            let created = Task {
                let address = try await TileHostGuard.pin(
                    host: host,
                    allowPrivate: options.allowPrivateAddresses,
                    resolve: resolve,
                    isAllowed: isAllowed
                )
                return Self.makeClient(host: host, address: address, options: options)
            }
            clients[host] = created
            return created
        }
        do {
            return try await task.value
        } catch {
            clients.withLockedValue { if $0[host] == task { $0[host] = nil } }
            throw error
        }
    }

    static func makeClient(host: String, address: String, options: TileFetchOptions) -> HTTPClient {
        let timeout = options.requestTimeoutAmount
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: timeout, read: timeout))
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, options.concurrency))
        configuration.decompression = .disabled
        let name = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if name != address { configuration.dnsOverride = [name: address] }
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// Closes every client (cancelling what is still in flight).
    func shutdown() async {
        let tasks = clients.withLockedValue { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for task in tasks {
            if let client = try? await task.value { try? await client.shutdown() }
        }
    }
}

extension TileFetchOptions {
    /// ``requestTimeout`` for async-http-client.
    var requestTimeoutAmount: TimeAmount { .milliseconds(Int64(max(0.05, requestTimeout) * 1000)) }
}
