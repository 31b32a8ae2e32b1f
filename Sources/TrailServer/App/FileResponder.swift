import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import _NIOFileSystem

/// Single byte range of a file, inclusive bounds.
struct ByteRange: Equatable, Sendable {
    let first: Int64
    let last: Int64
    var length: Int64 { last - first + 1 }
}

/// RFC 9110 §14 range handling, written out because the stock file middleware gets suffix and
/// out-of-range requests wrong.
enum RangeRequest: Equatable {
    /// Serve the whole representation (no Range, an invalid one, several ranges, or a stale If-Range).
    case whole
    case partial(ByteRange)
    /// 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    static func parse(_ header: String?, size: Int64) -> RangeRequest {
        guard let header = header?.trimmingCharacters(in: .whitespaces) else { return .whole }
        let lower = header.lowercased()
        guard lower.hasPrefix("bytes=") else { return .whole }  // a unit we do not know: ignore (§14.2)
        let specs = header.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        // Several ranges: answer with the whole file rather than multipart/byteranges.
        guard specs.count == 1 else { return .whole }
        let spec = specs[0].trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = spec[..<dash]
        let lastText = spec[spec.index(after: dash)...]
        guard firstText.allSatisfy(\.isASCIIDigitCharacter), lastText.allSatisfy(\.isASCIIDigitCharacter),
            !(firstText.isEmpty && lastText.isEmpty)
        else { return .whole }
        if firstText.isEmpty {
            // Suffix range: the last N bytes. N larger than the size means the whole file, as a 206.
            guard let suffix = Int64(lastText) ?? (lastText.isEmpty ? nil : Int64.max), suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(ByteRange(first: max(0, size - suffix), last: size - 1))
        }
        // A first position too large for Int64 is certainly past the end.
        let first = Int64(firstText) ?? Int64.max
        let last = lastText.isEmpty ? nil : (Int64(lastText) ?? Int64.max)
        if let last, last < first { return .whole }  // invalid range-spec: ignore the header (§14.1.1)
        guard first < size else { return .unsatisfiable }
        return .partial(ByteRange(first: first, last: min(last ?? size - 1, size - 1)))
    }
}

extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

/// A download byte counter (``AppMetrics/countSent(_:bytes:)``) for a file response.
struct CountedDownload: Sendable {
    let metrics: AppMetrics
    let route: AppMetrics.DownloadRoute

    @Sendable func add(_ bytes: Int) { metrics.countSent(route, bytes: bytes) }
}

/// nginx's `X-Accel-Redirect` (`--accel-redirect`): the route decides, nginx sends the file's bytes from its internal
/// location, which maps to the data folder (`deploy/nginx.conf`).
struct AccelRedirect: Sendable {
    /// The internal location, `/…/`.
    let prefix: String
    let dataFolder: URL

    /// `prefix` + the path below the data folder; nil for a file outside it, or a path nginx would read otherwise
    /// (anything but the server-made names: letters, digits, `-`, `_`, `.` and `/`).
    func location(of file: URL) -> String? {
        let root = dataFolder.standardizedFileURL.path + "/"
        let path = file.standardizedFileURL.path
        guard path.hasPrefix(root) else { return nil }
        let relative = path.dropFirst(root.count)
        guard !relative.isEmpty, !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
            relative.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x2F
            })
        else { return nil }
        return prefix + relative
    }
}

extension HTTPField.Name {
    static let xAccelRedirect = Self("X-Accel-Redirect")!
}

struct FileResponder: Sendable {
    /// Streams a file (or one range of it) with `Accept-Ranges`, `ETag`, `If-None-Match`, `If-Range`.
    /// - Parameters:
    ///   - etag: a strong validator, already quoted.
    ///   - limitTo: never send more than this many bytes, even if the file has grown.
    ///   - eventLoop: the connection's event loop (``AppRequestContext/eventLoop``): with it, each chunk waits until the
    ///     loop has handed the previous one to the socket, which bounds memory per response to about two chunks.
    ///   - counted: the download byte counter told of the body's bytes as they are handed to the connection.
    ///   - accel: with nginx in front (`--accel-redirect`), a `GET` answered with the whole file, or with the one range
    ///     nginx reads from the same `Range` header, names the file in `X-Accel-Redirect` and nginx sends the bytes. The
    ///     cases where nginx would decide otherwise than this function (an `If-Range` for another version, an invalid
    ///     or multiple range) are streamed here. The byte counter is told the length at once.
    static func respond(
        fileAt url: URL,
        contentType: String,
        etag: String?,
        request: Request,
        headers extra: HTTPFields = [:],
        chunkSize: Int = 256 * 1024,
        eventLoop: (any EventLoop)? = nil,
        counted: CountedDownload? = nil,
        accel: AccelRedirect? = nil
    ) async throws -> Response {
        let path = FilePath(url.path)
        guard let info = try await FileSystem.shared.info(forFileAt: path, infoAboutSymbolicLink: false), info.type == .regular else {
            throw NotFound()
        }
        let size = info.size
        var headers = extra
        headers[.contentType] = contentType
        headers[.acceptRanges] = "bytes"
        if let etag { headers[.eTag] = etag }

        if let etag, HTTPCaching.isNotModified(request, etag: etag) {
            return Response(status: .notModified, headers: headers)
        }

        var range = RangeRequest.parse(request.headers[.range], size: size)
        if let ifRange = request.headers[.ifRange], ifRange != etag {
            range = .whole  // the client's copy is of another version: send it all again, never splice
        }
        let isHead = request.method == .head
        // nginx applies the request's own Range header to the file: only when it means what `range` says.
        let rangeHeader = request.headers[.range] != nil
        func accelerated(length: Int64) -> Response? {
            guard let accel, !isHead, let location = accel.location(of: url) else { return nil }
            switch range {
            case .whole where rangeHeader, .unsatisfiable: return nil
            default: break
            }
            var accelHeaders = headers
            accelHeaders[.xAccelRedirect] = location
            accelHeaders[.contentLength] = nil
            accelHeaders[.contentRange] = nil
            counted?.add(Int(length))
            return Response(status: .ok, headers: accelHeaders)
        }
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentType] = "application/json; charset=utf-8"
            let body = #"{"error":{"code":"range_not_satisfiable","message":"The requested range is outside the file (\#(size) bytes)."}}"#
            headers[.contentLength] = "\(body.utf8.count)"
            return Response(status: .rangeNotSatisfiable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        case .whole:
            headers[.contentLength] = "\(size)"
            if let answer = accelerated(length: size) { return answer }
            return Response(
                status: .ok,
                headers: headers,
                body: isHead
                    ? .init()
                    : body(
                        path: path,
                        range: 0..<size,
                        chunkSize: chunkSize,
                        eventLoop: eventLoop,
                        sent: counted?.add
                    )
            )
        case .partial(let r):
            headers[.contentLength] = "\(r.length)"
            headers[.contentRange] = "bytes \(r.first)-\(r.last)/\(size)"
            if let answer = accelerated(length: r.length) { return answer }
            return Response(
                status: .partialContent,
                headers: headers,
                body: isHead
                    ? .init()
                    : body(
                        path: path,
                        range: r.first..<(r.last + 1),
                        chunkSize: chunkSize,
                        eventLoop: eventLoop,
                        sent: counted?.add
                    )
            )
        }
    }

    /// Streams `range` of the file with about two chunks in memory per response: the one being written and the next
    /// one, read meanwhile.
    ///
    /// Why not `readChunks` and `writer.write` alone: `readChunks` reads up to eight chunks ahead, and `writer.write`
    /// returns as soon as the chunk is queued for the event loop; the writer only learns that the socket is full once
    /// the loop has run those writes, so a busy loop lets a fast disk queue hundreds of megabytes per connection.
    /// Waiting for a no-op task on the connection's loop after each write (the loop runs tasks in order) means the
    /// previous write has reached the channel, and the next `write` suspends while the channel is not writable.
    static func body(
        path: FilePath,
        range: Range<Int64>,
        chunkSize: Int,
        eventLoop: (any EventLoop)?,
        sent: (@Sendable (Int) -> Void)? = nil
    ) -> ResponseBody {
        ResponseBody(contentLength: Int(range.count)) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: path) { handle in
                guard !range.isEmpty else { return }
                var chunk = try await readChunk(handle, at: range.lowerBound, upTo: range.upperBound, chunkSize: chunkSize)
                var offset = range.lowerBound + Int64(chunk.readableBytes)
                while offset < range.upperBound {
                    let at = offset
                    async let next = readChunk(handle, at: at, upTo: range.upperBound, chunkSize: chunkSize)
                    try await writer.write(chunk)
                    sent?(chunk.readableBytes)
                    if let eventLoop { try await eventLoop.submit {}.get() }
                    chunk = try await next
                    offset += Int64(chunk.readableBytes)
                }
                try await writer.write(chunk)
                sent?(chunk.readableBytes)
            }
            try await writer.finish(nil)
        }
    }

    static func readChunk(_ handle: ReadFileHandle, at offset: Int64, upTo end: Int64, chunkSize: Int) async throws -> ByteBuffer {
        let chunk = try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(min(Int64(chunkSize), end - offset)))
        guard chunk.readableBytes > 0 else { throw FileShrank() }
        return chunk
    }

    /// The file got shorter while it was being sent (the connection is closed: the client sees a short body).
    struct FileShrank: Error {}
}
