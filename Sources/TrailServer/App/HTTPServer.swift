import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

extension HTTPServerBuilder {
    /// Hummingbird's own HTTP/1.1 server: its codec, its idle time-out, its router and middleware for every request.
    /// The one addition goes in through the channel's public extension point (`additionalChannelHandlers`, after the
    /// codec): ``WriteProgressTimeout``, which Hummingbird does not have.
    static func trail(_ config: AppConfig) -> HTTPServerBuilder {
        let limits = WriteProgressTimeout.Limits(
            answer: .init(config.writeTimeout),
            file: .init(config.fileWriteTimeout),
            stopping: .init(config.stoppingWriteTimeout)
        )
        return .http1(
            configuration: .init(
                additionalChannelHandlers: [WriteProgressTimeout(limits: limits)],
                idleTimeout: .init(config.idleConnectionTimeout)
            )
        )
    }
}

/// Closes a connection whose answer has stopped moving: no write taken by the socket for the limit.
///
/// Why: Hummingbird's idle time-out only counts while no request is being answered, and its writer waits for as long
/// as the socket is full. A peer that sends requests (or asks for a download) and never reads would hold the
/// connection, its task and the answer's buffers for ever, and a graceful stop would wait for it. A slow reader is
/// not cut: every write the socket takes is progress.
///
/// What counts as progress is a write's completion (the socket took all of it). Download chunks are 128 KiB, so a
/// file answer is cut only below about 440 bytes a second sustained for the file limit.
final class WriteProgressTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable {
        /// Answers in general.
        let answer: TimeAmount
        /// Answers with `Accept-Ranges` (file bodies): a phone may stall for a while and resume.
        let file: TimeAmount
        /// Every answer once the server is stopping.
        let stopping: TimeAmount
    }

    let limits: Limits
    /// Answers whose head went out and whose end the socket has not yet taken (pipelined answers overlap).
    private var open = 0
    private var limit: TimeAmount
    private var lastProgress = NIODeadline.now()
    private var stopping = false
    private var timer: Scheduled<Void>?

    init(limits: Limits) {
        self.limits = limits
        self.limit = limits.answer
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        var ends = false
        switch part {
        case .head(let response):
            // A `100 Continue` is not an answer's start; its final answer follows.
            if response.status.kind != .informational {
                if open == 0 { lastProgress = .now() }
                open += 1
                limit = response.headerFields[.acceptRanges] != nil ? limits.file : limits.answer
                schedule(context)
            }
        case .body:
            break
        case .end:
            ends = true
        }
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            lastProgress = .now()
            if ends { open = max(0, open - 1) }
        }
        context.write(data, promise: written)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            stopping = true
            timer?.cancel()
            timer = nil
            if open > 0 { schedule(context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private var currentLimit: TimeAmount { stopping ? min(limit, limits.stopping) : limit }

    private func schedule(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastProgress + currentLimit) { [self] in
            timer = nil
            check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        guard open > 0, context.channel.isActive else { return }  // nothing being answered: the idle time-out's business
        if NIODeadline.now() >= lastProgress + currentLimit {
            context.close(promise: nil)
        } else {
            schedule(context)
        }
    }
}

/// Every request takes its turn behind the work already waiting to run.
///
/// Why: a connection's requests run one after another in one task, and while the answers fit in the socket buffers
/// nothing in that loop suspends: a client that pipelines a thousand requests and reads nothing would keep a thread
/// of the two-thread pool for all of them, and fifty such clients would keep `/healthz` and every visitor waiting
/// until their buffers are full. A yield per request makes connections take turns; its cost is one trip through the
/// executor's queue. Against fifty such clients (`scripts/bench/bench-hostile.sh`, release build) the slowest `/healthz`
/// took 0.3–1.0 s with it and 2.6–2.8 s without.
struct TakeTurnsMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        await Task.yield()
        return try await next(request, context)
    }
}
