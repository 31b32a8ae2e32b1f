import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 channel with larger socket reads, and two handlers of ours in its pipeline:
///
///     socket → HTTP/1 decoder/encoder → StoredAnswerHandler → ZeroCopyFileHandler → HTTP1ToHTTPServerCodec
///            → HTTPConnectionStateHandler → async channel → router
///
/// - ``StoredAnswerHandler`` answers the mobile read routes from ``StoredAnswers`` before any conversion, and keeps the
///   idle time-out (it is the one handler that sees every request and answer; Hummingbird's is off);
/// - ``ZeroCopyFileHandler`` below the codec, where a body may be a `FileRegion` (`sendfile`).
///
/// The socket reads: NIO reads at most 64 KiB per `read()` by default, so a large upload reaches the handler as
/// thousands of small buffers, each one a hop between the event loop and the handler's task. The adaptive allocator
/// here starts at NIO's usual size (small requests keep small buffers) and grows to `maximumRead` only while reads keep
/// filling the buffer, as they do during a big upload; the channel's back-pressure still bounds how many are queued.
struct TrailHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    static let maximumRead = 256 << 10  // larger reads are no faster; queued reads cost memory per upload

    let base: HTTP1Channel
    /// Nil: no stored answers (a server without the mobile API's dependencies).
    let storedAnswers: StoredAnswers?
    let metrics: AppMetrics
    /// Kept by ``StoredAnswerHandler``; the base channel's own idle time-out must be off.
    let idleTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.maximumRead)
        return channel.setOption(ChannelOptions.recvAllocator, value: allocator).flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
            let zeroCopy = ZeroCopyFileHandler(metrics: metrics, logger: logger)
            try pipeline.addHandler(zeroCopy, position: .before(codec))
            try pipeline.addHandler(StoredAnswerHandler(store: storedAnswers, idleTimeout: idleTimeout), position: .before(zeroCopy))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with ``TrailHTTP1Channel``'s socket reads, zero-copy files and stored answers.
    static func trailHTTP1(_ dependencies: AppDependencies) -> HTTPServerBuilder {
        // Hummingbird's idle time-out would not see the requests StoredAnswerHandler answers: that handler keeps it.
        let configuration = HTTP1Channel.Configuration(idleTimeout: nil)
        let idle = dependencies.config.idleConnectionTimeout
        return .init { responder in
            TrailHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration),
                              storedAnswers: dependencies.storedAnswers, metrics: dependencies.metrics,
                              idleTimeout: .nanoseconds(Int64(idle.nanoseconds)))
        }
    }
}
