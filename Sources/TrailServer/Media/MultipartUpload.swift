import Foundation
import Hummingbird
import MultipartKit
import NIOCore

/// Streams a `multipart/form-data` body chunk by chunk through multipart-kit's `MultipartParser`:
/// each `file` part goes straight to `data/uploads/<uuid>` (hashed as it arrives), other fields are small.
/// Memory stays bounded by one network chunk plus the writer's buffer.
struct MultipartUpload {
    struct Result: Sendable {
        var files: [AssetIntake.Received] = []
        var fields: [String: String] = [:]
    }

    static let maxParts = 32
    static let maxHeaderBytes = 16 * 1024
    static let maxFieldBytes = 4 * 1024

    /// The boundary of a multipart/form-data Content-Type (RFC 2046: 1 to 70 characters).
    static func boundary(contentType: String?) throws -> String {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw HTTPError(.unsupportedMediaType, message: "Send the file as multipart/form-data with a field named “file”.")
        }
        guard let range = contentType.range(of: "boundary=", options: .caseInsensitive) else {
            throw HTTPError(.badRequest, message: "The multipart Content-Type has no boundary.")
        }
        var boundary = String(contentType[range.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 { boundary = String(boundary.dropFirst().dropLast()) }
        guard (1...70).contains(boundary.utf8.count) else {
            throw HTTPError(.badRequest, message: "The multipart boundary must be 1 to 70 characters long.")
        }
        return boundary
    }

    private enum Event {
        case begin([(String, String)])
        case body(ByteBuffer)
        case end
    }

    /// Collects parser callbacks; the async work (file writes) happens after each chunk is parsed.
    private final class Collector {
        var headers: [(String, String)] = []
        var inPart = false
        var events: [Event] = []
        var bytesSinceBody = 0

        func header(_ name: String, _ value: String) {
            headers.append((name, value))
        }
        func body(_ buffer: ByteBuffer) {
            if !inPart { events.append(.begin(headers)); headers = []; inPart = true }
            events.append(.body(buffer))
        }
        func complete() {
            if !inPart { events.append(.begin(headers)); headers = [] }
            events.append(.end)
            inPart = false
        }
    }

    static func receive(_ request: Request, paths: DataPaths, maxFileSize: Int64) async throws -> Result {
        let boundary = try boundary(contentType: request.headers[.contentType])
        let parser = MultipartParser(boundary: boundary)
        let collector = Collector()
        parser.onHeader = { collector.header($0, $1) }
        parser.onBody = { collector.body($0) }
        parser.onPartComplete = { collector.complete() }

        var result = Result()
        var parts = 0
        var current: (name: String, fileName: String?, writer: HashingFileWriter?, uploadId: String?, field: String)?
        do {
            for try await chunk in request.body {
                do { try parser.execute(chunk) } catch {
                    throw HTTPError(.badRequest, message: "The multipart body is malformed.")
                }
                // Bytes fed without a single part event are preamble or headers: bound them, so a 1 MB header line fails fast.
                if collector.events.isEmpty && !collector.inPart {
                    collector.bytesSinceBody += chunk.readableBytes
                } else {
                    collector.bytesSinceBody = 0
                }
                if collector.bytesSinceBody > maxHeaderBytes {
                    throw HTTPError(.badRequest, message: "A multipart part header is longer than \(maxHeaderBytes / 1024) KiB.")
                }
                let events = collector.events
                collector.events.removeAll(keepingCapacity: true)
                for event in events {
                    switch event {
                    case .begin(let headers):
                        parts += 1
                        guard parts <= maxParts else { throw HTTPError(.badRequest, message: "Too many parts in the multipart body (at most \(maxParts)).") }
                        let (name, fileName) = try disposition(headers)
                        if name == "file", let fileName, !fileName.isEmpty {
                            let id = UUID().uuidString.lowercased()
                            current = (name, fileName, try await HashingFileWriter.create(at: paths.upload(id), limit: maxFileSize), id, "")
                        } else {
                            current = (name, fileName, nil, nil, "")
                        }
                    case .body(let buffer):
                        guard var part = current else { continue }
                        if let writer = part.writer {
                            try await writer.write(buffer)
                        } else if part.fileName == nil {
                            part.field += String(buffer: buffer)
                            guard part.field.utf8.count <= maxFieldBytes else {
                                throw HTTPError(.contentTooLarge, message: "The form field “\(part.name)” is too long.")
                            }
                            current = part
                        }
                    case .end:
                        guard let part = current else { continue }
                        if let writer = part.writer, let id = part.uploadId {
                            let (size, sha) = try await writer.finish()
                            result.files.append(.init(uploadId: id, size: size, sha256: sha, header: writer.header, originalName: part.fileName ?? ""))
                        } else if part.fileName == nil {
                            result.fields[part.name] = part.field
                        }
                        current = nil
                    }
                }
            }
        } catch {
            // Nothing half-written stays behind: the part in progress and every file already received.
            if let writer = current?.writer { await writer.discard() }
            for file in result.files { try? FileManager.default.removeItem(at: paths.upload(file.uploadId)) }
            if let tooLarge = error as? UploadTooLarge {
                throw HTTPError(.contentTooLarge, message: "The file is larger than the limit of \(ByteFormat.string(tooLarge.limit)).")
            }
            throw error
        }
        if current != nil || collector.inPart {
            if let writer = current?.writer { await writer.discard() }
            for file in result.files { try? FileManager.default.removeItem(at: paths.upload(file.uploadId)) }
            throw HTTPError(.badRequest, message: "The multipart body ended in the middle of a part.")
        }
        return result
    }

    /// `Content-Disposition: form-data; name="file"; filename="x.jpg"`; every part must have one with a name.
    static func disposition(_ headers: [(String, String)]) throws -> (name: String, fileName: String?) {
        for (name, value) in headers where name.lowercased() == "content-type" && value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw HTTPError(.badRequest, message: "A multipart part has an empty Content-Type.")
        }
        guard let value = headers.first(where: { $0.0.lowercased() == "content-disposition" })?.1 else {
            throw HTTPError(.badRequest, message: "A multipart part has no Content-Disposition.")
        }
        let name = parameter("name", in: value)
        guard let name, !name.isEmpty else { throw HTTPError(.badRequest, message: "A multipart part has no name.") }
        return (name, parameter("filename", in: value))
    }

    static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.replacingOccurrences(of: "\\\"", with: "\"")
        }
        return nil
    }
}
