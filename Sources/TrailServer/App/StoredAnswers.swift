import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Prometheus

/// The mobile API's read routes whose whole answers may be kept and sent again (``StoredAnswers``): the routes every
/// app start and update check asks, whose answer is the same bytes for everyone until a release, an unpublish, a
/// rollback or a site edit. Their patterns live here once; ``MobileAPI`` registers them from here.
enum ReadRoute: CaseIterable, Sendable {
    case sites, sitePackages, package, signingKey, catalog

    /// Below `/api/v1`, in the router's syntax.
    var pattern: String {
        switch self {
        case .sites: "/sites"
        case .sitePackages: "/sites/{slug}/packages"
        case .package: "/packages/{id}"
        case .signingKey: "/signing-key"
        case .catalog: "/catalog"
        }
    }

    /// How long a kept answer may be sent again, at most, besides "until the data changes". The catalog is signed with
    /// an expiry and signed again before it runs out; a second-old copy is always within its lifetime.
    var maxAge: Duration? { self == .catalog ? .seconds(1) : nil }

    static let prefix: [Substring] = ["api", "v1"]
    private var segments: [Substring] { pattern.split(separator: "/") }

    /// The route a request path (without its query) asks for, when every parameter is plain text: a percent-encoded
    /// or empty segment, a trailing slash or a dot segment is left to the router.
    static func matching(path: Substring) -> ReadRoute? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == prefix[0], parts[2] == prefix[1] else { return nil }
        let rest = parts.dropFirst(3)
        for route in allCases {
            let segments = route.segments
            guard segments.count == rest.count else { continue }
            let matches = zip(segments, rest).allSatisfy { pattern, part in
                pattern.hasPrefix("{") ? isPlain(part) : pattern == part
            }
            if matches { return route }
        }
        return nil
    }

    private static func isPlain(_ segment: Substring) -> Bool {
        !segment.isEmpty && segment != "." && segment != ".." && segment.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
    }
}

/// Whole answers of the ``ReadRoute``s, as the full server made them, sent again by ``StoredAnswerHandler`` without
/// going through the router.
///
/// Why: ``ReadAPICache`` already keeps the encoded bodies, yet each request still crossed Hummingbird's async channel,
/// a task, nine middleware and the router, far more work than nginx does to serve the same JSON from a file. An app's
/// update check needs none of that work once the answer is known.
///
/// What keeps it right:
/// - An answer is kept only as the server sent it: a `200` with an `ETag` to a `GET` that carried no cookie and no
///   `Authorization`, with every header the middleware added (security headers, `Cache-Control`, the catalog
///   signature). Only `Date` is made again for each answer.
/// - It is kept under the stamp read *before* the request went to the router: the ``ReadAPICache`` generation (moved by
///   every committed change of sites, packages and the catalog, before the write that made it returns) and the object
///   storage generation. A kept answer is sent only while the stamp is unchanged, so after a release, an unpublish or a
///   rollback the next request goes to the router: nothing stale is ever sent, exactly as with ``ReadAPICache``.
/// - ``ReadRoute/maxAge`` bounds answers that also change with time (the catalog's signature).
public final class StoredAnswers: Sendable {
    struct Stamp: Equatable, Sendable {
        let data: Int
        let storage: Int
        /// The tile server's origin is in every answer's Content-Security-Policy, and an admin may change it.
        let tileOrigin: String?
    }

    struct Answer: Sendable {
        let stamp: Stamp
        let storedAt: NIODeadline
        let route: ReadRoute
        /// The response's headers; `Date` is set anew for each answer.
        let headers: HTTPHeaders
        /// The same for a 304: without `Content-Length`, as the router answers it.
        let notModifiedHeaders: HTTPHeaders
        let body: ByteBuffer
        let etag: String

        init(stamp: Stamp, storedAt: NIODeadline, route: ReadRoute, headers: HTTPHeaders, body: ByteBuffer, etag: String) {
            self.stamp = stamp
            self.storedAt = storedAt
            self.route = route
            self.headers = headers
            var notModified = headers
            notModified.remove(name: "content-length")
            self.notModifiedHeaders = notModified
            self.body = body
            self.etag = etag
        }
    }

    /// The most a kept body may be: the package detail of a large tour is some tens of kilobytes.
    static let maximumBody = 1 << 20

    let currentStamp: @Sendable () -> Stamp
    let metrics: AppMetrics
    private let answers = NIOLockedValueBox<[String: Answer]>([:])

    init(readCache: ReadAPICache, distribution: DistributionState?, tileOrigin: @escaping @Sendable () -> String? = { nil },
         metrics: AppMetrics) {
        self.currentStamp = { [weak readCache] in
            Stamp(data: readCache?.generation ?? -1, storage: distribution?.generation ?? 0, tileOrigin: tileOrigin())
        }
        self.metrics = metrics
        self.answered = (metrics.requestCounter(method: "GET", status: 200), metrics.requestCounter(method: "GET", status: 304),
                         metrics.requestDuration(method: "GET"))
    }

    var stamp: Stamp { currentStamp() }

    /// The kept answer for `path` if it is still current.
    func answer(path: String, now: NIODeadline = .now()) -> Answer? {
        guard let answer = answers.withLockedValue({ $0[path] }), answer.stamp == stamp else { return nil }
        if let maxAge = answer.route.maxAge, now - answer.storedAt > .nanoseconds(Int64(maxAge.nanoseconds)) { return nil }
        return answer
    }

    func keep(_ answer: Answer, path: String) {
        answers.withLockedValue { answers in
            // Answers of an older stamp are never sent again: drop them all at the first answer of a new one.
            if let any = answers.first?.value, any.stamp != answer.stamp { answers.removeAll(keepingCapacity: true) }
            answers[path] = answer
        }
    }

    var count: Int { answers.withLockedValue { $0.count } }

    /// The request counters and histogram of ``AppMetrics/recordRequest(method:status:duration:)`` for these answers,
    /// looked up once: the registry's lookup by name and labels cost more than the rest of an answer's work.
    private let answered: (ok: Counter, notModified: Counter, duration: DurationHistogram)

    func record(notModified: Bool, duration: Duration) {
        (notModified ? answered.notModified : answered.ok).increment()
        answered.duration.recordNanoseconds(duration.nanoseconds)
        metrics.storedAnswers.increment()
    }
}

/// Answers requests for ``ReadRoute``s from ``StoredAnswers`` and keeps the router's answers to them. It sits right
/// after the HTTP/1 decoder, before Hummingbird's codec: an answer from the store costs no conversion to and from
/// HTTP types, no connection-state bookkeeping and no task, which matters most for the small 304 an app gets for an
/// unchanged list.
///
/// Because Hummingbird's connection-state handler never sees the requests answered here, this handler keeps the
/// connection's idle time-out itself (Hummingbird's is off): it sees every request and every answer. The rule is
/// Hummingbird's: a connection with a request at the router, whose body has been read, is never idle; otherwise it
/// is closed once nothing was read or written for the time-out. The close starts at the pipeline's tail, so
/// ``ZeroCopyFileHandler`` holds it while a file is still being sent.
///
/// Order on a keep-alive connection: a request is answered here only while no earlier request is with the router;
/// otherwise it goes to the router too, so answers always leave in the order the requests came.
final class StoredAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let store: StoredAnswers?
    let idleTimeout: TimeAmount?
    /// Requests handed to the router whose answer has not ended.
    private var withRouter = 0
    /// Between a request's head and its end.
    private var readingRequest = false
    /// Whether the server asked the socket for more (a `read()` went by since the last read completed). False while
    /// the router's back-pressure holds reading: the bytes not read then are not the client's idleness.
    private var readRequested = true
    private var lastActivity = NIODeadline.now()
    private var idleTimer: Scheduled<Void>?
    /// The request answered here: its body parts (if any) are dropped until its end.
    private var swallowing = false
    /// Answers (the router's and ours) whose end has not been written yet: a connection sending one is not idle.
    private var answersBeingWritten = 0
    /// The one request with the router whose answer may be kept, and its answer as it goes by.
    private var keeping: (route: ReadRoute, path: String, stamp: StoredAnswers.Stamp)?
    private var kept: (headers: HTTPHeaders, body: ByteBuffer)?
    /// A close asked for while an answer written here is still going out waits for it.
    private var heldClose = HeldClose()

    /// - Parameter store: nil answers nothing from a store and only keeps the idle time-out.
    init(store: StoredAnswers?, idleTimeout: TimeAmount?) {
        self.store = store
        self.idleTimeout = idleTimeout
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head(let request):
            readingRequest = true
            // Only while the socket takes more: a client that sends requests without reading the answers is left to
            // the router, whose back-pressure stops reading from it, instead of queueing answers here without end.
            if withRouter == 0, context.channel.isWritable, let store, let path = Self.storablePath(request) {
                // Only a ReadRoute's answers are ever kept, so a kept answer needs no route matching.
                if let answer = store.answer(path: path) {
                    let notModified = request.headers.first(name: "if-none-match").map { ReadAPICache.matches($0, etag: answer.etag) } ?? false
                    // Answered at once (a body or an `Expect: 100-continue` waits for nothing); the rest of this
                    // request is dropped until its end.
                    // Counted before it is written: whoever reads the answer then finds it in the metrics.
                    store.record(notModified: notModified, duration: .zero)
                    send(answer, notModified: notModified, context: context)
                    swallowing = true
                    return
                }
                if let route = ReadRoute.matching(path: Substring(path)) {
                    // Read the stamp before the router reads the database (see StoredAnswers).
                    keeping = (route, path, store.stamp)
                }
            }
            withRouter += 1
            context.fireChannelRead(data)
        case .body:
            if !swallowing { context.fireChannelRead(data) }
        case .end:
            readingRequest = false
            if swallowing { swallowing = false } else { context.fireChannelRead(data) }
        }
    }

    /// The path (without the query) of a request whose answer may be stored or sent from the store: a keep-alive
    /// `GET` below `/api/v1/` with no cookie and no credentials (`Connection: close`, or HTTP/1.0 without keep-alive,
    /// is left to the router and to Hummingbird's handling of it). The query is not part of the key: no read route
    /// reads it (a route that does must not be a ``ReadRoute``).
    static func storablePath(_ request: HTTPRequestHead) -> String? {
        guard request.method == .GET, request.uri.utf8.starts(with: "/api/v1/".utf8), request.isKeepAlive,
              !request.headers.contains(name: "cookie"), !request.headers.contains(name: "authorization") else { return nil }
        guard let query = request.uri.utf8.firstIndex(of: UInt8(ascii: "?")) else { return request.uri }
        return String(request.uri[..<query])
    }

    // MARK: Answers

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        lastActivity = .now()
        switch unwrapOutboundIn(data) {
        case .head(let response):
            if response.status.code >= 200 {
                if keeping != nil, response.status == .ok, response.headers.contains(name: "etag"), !response.headers.contains(name: "set-cookie") {
                    kept = (response.headers, ByteBuffer())
                } else {
                    keeping = nil
                }
            }
        case .body(let body):
            if kept != nil {
                if case .byteBuffer(let buffer) = body, kept!.body.readableBytes + buffer.readableBytes <= StoredAnswers.maximumBody {
                    kept!.body.writeImmutableBuffer(buffer)
                } else {
                    kept = nil
                    keeping = nil
                }
            }
        case .end:
            if let (route, path, stamp) = keeping, let (headers, body) = kept, let etag = headers.first(name: "etag") {
                store?.keep(.init(stamp: stamp, storedAt: .now(), route: route, headers: headers, body: body, etag: etag), path: path)
            }
            keeping = nil
            kept = nil
            // (Hummingbird's 400 for a request it could not parse has no head that went by here.)
            withRouter = max(0, withRouter - 1)
            return context.write(data, promise: trackingAnswer(context, promise))
        }
        context.write(data, promise: promise)
    }

    /// The promise of an answer's end, wrapped so the idle check knows the answer (a file region before it
    /// included) is still being written.
    private func trackingAnswer(_ context: ChannelHandlerContext, _ promise: EventLoopPromise<Void>?) -> EventLoopPromise<Void> {
        answersBeingWritten += 1
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [self] result in
            answersBeingWritten -= 1
            lastActivity = .now()
            promise?.completeWith(result)
        }
        return written
    }

    private func send(_ answer: StoredAnswers.Answer, notModified: Bool, context: ChannelHandlerContext) {
        var headers = notModified ? answer.notModifiedHeaders : answer.headers
        headers.replaceOrAdd(name: "date", value: HTTPDate.now)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: notModified ? .notModified : .ok, headers: headers))),
                      promise: nil)
        if !notModified { context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil) }
        heldClose.started()
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            if let close = heldClose.completed() { HeldClose.perform(close, context: context) }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: trackingAnswer(context, written))
    }

    /// A close while an answer of ours is still being written waits for it (as ``ZeroCopyFileHandler`` does for files).
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if !heldClose.hold(mode: mode, promise: promise, channelIsActive: context.channel.isActive) { context.close(mode: mode, promise: promise) }
    }

    // MARK: The idle time-out

    func read(context: ChannelHandlerContext) {
        readRequested = true
        context.read()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readRequested = false
        context.fireChannelReadComplete()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { scheduleIdleCheck(context, at: .now() + (idleTimeout ?? .zero)) }
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        scheduleIdleCheck(context, at: .now() + (idleTimeout ?? .zero))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
    }

    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        guard idleTimeout != nil, idleTimer == nil else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            checkIdle(context)
        }
    }

    private func checkIdle(_ context: ChannelHandlerContext) {
        guard let idleTimeout, context.channel.isActive else { return }
        let now = NIODeadline.now()
        if (withRouter > 0 && (!readingRequest || !readRequested)) || answersBeingWritten > 0 {
            // The router is answering (a long build) or not taking the body yet (its back-pressure stopped reading),
            // or an answer is still going out (a download, a slow phone): the server's pace, not the client's idleness.
            scheduleIdleCheck(context, at: now + idleTimeout)
        } else if now >= lastActivity + idleTimeout {
            // From the pipeline's tail, so that a file still being sent below holds the close until it is sent.
            context.channel.close(promise: nil)
        } else {
            scheduleIdleCheck(context, at: lastActivity + idleTimeout)
        }
    }
}

/// The `Date` header's text (RFC 9110 §5.6.7), made once a second.
enum HTTPDate {
    private static let cache = NIOLockedValueBox<(second: Int, text: String)>((-1, ""))

    static var now: String {
        let second = Int(Date().timeIntervalSince1970)
        if let text = cache.withLockedValue({ $0.second == second ? $0.text : nil }) { return text }
        let text = DisplayFormat.httpDate(Date(timeIntervalSince1970: Double(second)))
        cache.withLockedValue { $0 = (second, text) }
        return text
    }
}
