import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Sends the body of a file response with `sendfile(2)` (NIO's `FileRegion`) instead of reading it into buffers and
/// copying them through the handler's task, the event loop and the socket.
///
/// Why: a download through Hummingbird's response writer copies every byte twice in user space and hops between the
/// handler's task and the event loop per chunk, so it falls well behind nginx, which sends files with `sendfile`.
/// The route still decides everything (who may download, which version, `Range`, `If-Range`, `ETag`, 304, 416, the
/// headers): only the bytes take the short way, the way nginx's `X-Accel-Redirect` works.
///
/// How: this handler sits below Hummingbird's HTTP/1 codec, where a body part may be a `FileRegion`.
/// - Every request head it passes up carries ``availableHeader`` (any copy the client sent is removed first), so a
///   route knows this connection can take the short way; in tests without a server it is absent and files stream.
/// - ``FileResponder`` then answers with the head and no body, naming the file and the range in ``fileHeader``.
/// - Here, that header is taken off the head, the file is opened, and when the response's end comes down, the range
///   goes out as one `FileRegion` before it.
///
/// A close asked for while a region is still being written (Hummingbird's idle timer, or a shutdown, saw the response's
/// end go by and believes the connection idle) waits until the region is written: a slow phone's download is not cut.
final class ZeroCopyFileHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Request header: this connection sends file bodies with `sendfile`.
    static let availableHeader = "Trail-Zero-Copy"
    /// Response header from ``FileResponder``: `<first byte> <last byte> <counter or -> <absolute path>`.
    static let fileHeader = "Trail-Send-File"

    /// What a response asks to be sent.
    struct FileRange: Equatable {
        let first: Int64
        let last: Int64
        let counter: AppMetrics.DownloadRoute?
        let path: String

        var headerValue: String { "\(first) \(last) \(counter?.rawValue ?? "-") \(path)" }

        /// A path a header carries unchanged: no control characters, no space at either end (HTTP field values are
        /// cleaned of both, which would name another file).
        static func canCarry(_ path: String) -> Bool {
            path.hasPrefix("/") && !path.hasSuffix(" ") && path.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
        }

        init(first: Int64, last: Int64, counter: AppMetrics.DownloadRoute?, path: String) {
            self.first = first
            self.last = last
            self.counter = counter
            self.path = path
        }

        init?(headerValue: String) {
            let parts = headerValue.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 4, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, last >= first,
                  last < Int64(Int.max), parts[3].hasPrefix("/") else { return nil }
            self.init(first: first, last: last, counter: AppMetrics.DownloadRoute(rawValue: String(parts[2])), path: String(parts[3]))
        }
    }

    let metrics: AppMetrics
    let logger: Logger
    /// The file of the response now going down, opened when its head went by.
    private var pending: (region: FileRegion, counter: AppMetrics.DownloadRoute?)?
    /// A close asked for while a region is still being written waits for it.
    private var heldClose = HeldClose()
    /// An answer could not be sent: the connection is closing.
    private var failed = false

    init(metrics: AppMetrics, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        head.headers.remove(name: Self.availableHeader)
        head.headers.add(name: Self.availableHeader, value: "1")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // After a failure every later part is refused too, so no later answer goes out in the place of the lost one.
        if failed { promise?.fail(ChannelError.ioOnClosedChannel); return }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            guard let value = head.headers.first(name: Self.fileHeader) else { return context.write(data, promise: promise) }
            head.headers.remove(name: Self.fileHeader)
            guard let file = FileRange(headerValue: value) else {
                logger.error("unreadable \(Self.fileHeader) header: \(value)")
                return fail(context, promise, ChannelError.inappropriateOperationForState)
            }
            do {
                // Opened here, on the event loop: one open(2) and one fstat(2) of a file the route has just found, like
                // nginx does; the bytes themselves never pass through this thread.
                let handle = try NIOFileHandle(_deprecatedPath: file.path)
                let size = try handle.withUnsafeFileDescriptor { descriptor -> Int64 in
                    var status = stat()
                    guard fstat(descriptor, &status) == 0 else { throw IOError(errnoCode: errno, reason: "fstat") }
                    return Int64(status.st_size)
                }
                // A file shorter than the range would leave sendfile(2) with nothing to send and NIO waiting for ever.
                guard size > file.last else {
                    try? handle.close()
                    throw FileResponder.FileShrank()
                }
                pending = (FileRegion(fileHandle: handle, readerIndex: Int(file.first), endIndex: Int(file.last + 1)), file.counter)
            } catch {
                // The route found the file a moment ago; it is gone or shorter. The head is not sent: the client sees
                // the connection close and retries, rather than a body shorter than its Content-Length.
                logger.error("cannot send \(file.path): \(error)")
                return fail(context, promise, error)
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            if let (region, counter) = pending {
                pending = nil
                heldClose.started()
                let written = context.eventLoop.makePromise(of: Void.self)
                let bytes = region.readableBytes
                written.futureResult.assumeIsolated().whenComplete { [self] result in
                    try? region.fileHandle.close()
                    if case .success = result {
                        metrics.zeroCopyResponses.increment()
                        if let counter { metrics.countSent(counter, bytes: bytes) }
                    }
                    if let close = heldClose.completed() { HeldClose.perform(close, context: context) }
                }
                context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
            }
            context.write(data, promise: promise)
        }
    }

    /// An answer that cannot be sent: this part and every later one are refused, and the connection is closed at
    /// once (not held: nothing of ours is worth waiting for).
    private func fail(_ context: ChannelHandlerContext, _ promise: EventLoopPromise<Void>?, _ error: any Error) {
        failed = true
        promise?.fail(error)
        context.channel.close(mode: .all, promise: nil)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if !heldClose.hold(mode: mode, promise: promise, channelIsActive: context.channel.isActive) { context.close(mode: mode, promise: promise) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let (region, _) = pending { try? region.fileHandle.close() }
        pending = nil
    }
}
