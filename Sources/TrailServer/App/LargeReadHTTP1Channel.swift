import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 channel with larger socket reads.
///
/// NIO reads at most 64 KiB per `read()` by default, so a large upload reaches the handler as thousands of small
/// buffers, each one a hop between the event loop and the handler's task. The adaptive allocator here starts at
/// NIO's usual size (small requests keep small buffers) and grows to `maximumRead` only while reads keep filling
/// the buffer, as they do during a big upload; the channel's back-pressure still bounds how many are queued.
struct LargeReadHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    static let maximumRead = 256 << 10  // 1 MiB measured no faster; queued reads cost memory per upload

    let base: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.maximumRead)
        return channel.setOption(ChannelOptions.recvAllocator, value: allocator).flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with ``LargeReadHTTP1Channel``'s socket reads.
    static func http1LargeReads(configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        .init { responder in LargeReadHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration)) }
    }
}
