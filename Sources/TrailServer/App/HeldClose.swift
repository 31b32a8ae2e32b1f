import NIOCore

/// A close that waits for a handler's own writes (``ZeroCopyFileHandler``'s files, ``StoredAnswerHandler``'s answers).
///
/// Why: a close can be asked for while such a write is still going out. Hummingbird's connection-state handler closes
/// when it saw the response's end go by and believes the connection idle, or at a graceful shutdown; a close with
/// writes still pending would drop them, cutting a slow phone's download. Held, the close is done once the last write
/// completes (or fails: a client gone), with every promise given meanwhile; the widest mode asked for wins.
struct HeldClose {
    struct Held {
        let mode: CloseMode
        let promises: [EventLoopPromise<Void>]
    }

    private var inFlight = 0
    private var held: Held?

    /// One of the handler's own writes starts.
    mutating func started() { inFlight += 1 }

    /// One write completed; the close to do now, if one waits and nothing else is in flight. Done by the caller
    /// (``perform(_:context:)``) after this returns: closing fails pending writes, whose callbacks come back here.
    mutating func completed() -> Held? {
        inFlight -= 1
        guard inFlight == 0, let waiting = held else { return nil }
        held = nil
        return waiting
    }

    /// True when the close is held (the handler must not pass it on); false when it may go on now. Only a full close
    /// is held: NIO itself shuts the output only after the queued writes, and a half-close held could be lost.
    mutating func hold(mode: CloseMode, promise: EventLoopPromise<Void>?, channelIsActive: Bool) -> Bool {
        guard mode == .all, inFlight > 0, channelIsActive else { return false }
        let promises = (held?.promises ?? []) + (promise.map { [$0] } ?? [])
        held = Held(mode: .all, promises: promises)
        return true
    }

    static func perform(_ close: Held, context: ChannelHandlerContext) {
        let closed = context.eventLoop.makePromise(of: Void.self)
        for promise in close.promises { closed.futureResult.cascade(to: promise) }
        context.close(mode: close.mode, promise: closed)
    }
}
