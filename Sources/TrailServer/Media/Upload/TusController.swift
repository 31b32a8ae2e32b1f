import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import _NIOFileSystem

/// tus 1.0 resumable uploads at `/api/v1/manage/uploads` (core, creation, termination, expiration, checksum).
/// A dropped connection keeps every byte already written; the client asks HEAD for the offset and goes on.
struct TusController: Sendable {
    static let version = "1.0.0"
    static let extensions = "creation,termination,expiration,checksum"

    let database: AppDatabase
    let authorization: Authorization
    let paths: DataPaths
    let intake: AssetIntake
    let config: AppConfig
    let hashes: TusHashStates

    /// OPTIONS needs no sign-in: it only describes the server.
    func addDiscovery(to router: some RouterMethods<AppRequestContext>) {
        router.on("/api/v1/manage/uploads", method: .options, use: describe)
    }

    /// What the server supports of tus (`OPTIONS`).
    func describe(_ request: Request, _ context: AppRequestContext) -> Response {
        Response(status: .noContent, headers: Self.discoveryHeaders(maxSize: config.maxUploadSize))
    }

    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        router.post("/uploads", use: create)
        router.head("/uploads/{id}", use: head)
        router.patch("/uploads/{id}", use: patch)
        router.delete("/uploads/{id}", use: terminate)
    }

    static func discoveryHeaders(maxSize: Int64) -> HTTPFields {
        [
            .tusResumable: version, .tusVersion: version, .tusExtension: extensions, .tusMaxSize: "\(maxSize)",
            .tusChecksumAlgorithm: "sha1,sha256",
        ]
    }

    // MARK: Creation

    func create(_ request: Request, _ context: SignedInContext) async throws -> Response {
        try Self.requireVersion(request)
        let user = context.user
        guard let lengthText = request.headers[.uploadLength], let length = Int64(lengthText), length >= 0 else {
            throw TusError(.badRequest, "Send Upload-Length with the file size in bytes (deferred lengths are not supported).")
        }
        guard length <= config.maxUploadSize else {
            throw TusError(
                .contentTooLarge,
                "The file is \(ByteFormat.string(length)), over the \(ByteFormat.string(config.maxUploadSize)) limit for one file: not uploaded. "
                    + ByteFormat.makeItSmaller
            )
        }
        let metadata = Self.parseMetadata(request.headers[.uploadMetadata] ?? "")
        guard let tourText = metadata["tour"], let tourId = Int64(tourText), let waypointText = metadata["waypoint"],
            let waypointId = Int64(waypointText)
        else {
            // Well-formed tus metadata that names no place for the file: 422, as for a form without its required field.
            throw TusError(.unprocessableContent, "Upload-Metadata must name the tour and the waypoint (keys “tour” and “waypoint”).")
        }
        let (tour, site, _) = try await authorization.editableTour(id: tourId, user: user)
        guard try await database.waypoints(tourId: tour.id).contains(where: { $0.id == waypointId }) else { throw NotFound() }
        let replaces = try metadata["replaces"].map { text in
            guard let id = AssetIntake.replacedAssetId(text) else { throw TusError(.unprocessableContent, AssetIntake.replacesProblem) }
            return id
        }
        if let replaces, try await database.asset(id: replaces)?.waypointId != waypointId { throw NotFound() }
        let id = UUID().uuidString.lowercased()
        let now = Date()
        let record = UploadRecord(
            id: id,
            userId: user.id,
            tourId: tourId,
            waypointId: waypointId,
            replacesAssetId: replaces,
            fileName: AssetIntake.displayName(metadata["filename"] ?? "unnamed"),
            length: length,
            offset: 0,
            createdAt: now,
            expiresAt: now.addingTimeInterval(config.uploadExpiry)
        )
        try await FileSystem.shared.withFileHandle(
            forWritingAt: FilePath(paths.upload(id).path),
            options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite])
        ) { _ in }
        do {
            try await database.createUpload(record, siteId: site.id, quota: site.storageQuotaBytes, maxOpenPerUser: config.maxOpenUploadsPerUser)
        } catch let refusal as AppDatabase.UploadRefusal {
            try? FileManager.default.removeItem(at: paths.upload(id))
            switch refusal {
            case .overQuota(let quota):
                throw TusError(
                    .contentTooLarge,
                    "\(site.name) has used its storage quota (\(ByteFormat.string(quota))), counting the uploads still in progress."
                )
            case .tooManyOpen(let limit):
                throw TusError(.tooManyRequests, "You have \(limit) unfinished uploads. Finish or cancel one of them before starting another.")
            }
        } catch {
            try? FileManager.default.removeItem(at: paths.upload(id))
            throw error
        }
        var headers: HTTPFields = [
            .tusResumable: Self.version, .location: APIURL.manageUpload(id),
            .uploadExpires: DisplayFormat.httpDate(record.expiresAt),
        ]
        headers[.cacheControl] = "no-store"
        return Response(status: .created, headers: headers)
    }

    // MARK: Core

    func head(_ request: Request, _ context: SignedInContext) async throws -> Response {
        try Self.requireVersion(request)
        let upload = try await ownUpload(context)
        return Response(
            status: .ok,
            headers: [
                .tusResumable: Self.version, .uploadOffset: "\(upload.offset)", .uploadLength: "\(upload.length)",
                .cacheControl: "no-store", .uploadExpires: DisplayFormat.httpDate(upload.expiresAt),
            ]
        )
    }

    func patch(_ request: Request, _ context: SignedInContext) async throws -> Response {
        try Self.requireVersion(request)
        guard request.headers[.contentType]?.lowercased() == "application/offset+octet-stream" else {
            throw TusError(.unsupportedMediaType, "PATCH bodies must be application/offset+octet-stream.")
        }
        let upload = try await ownUpload(context)
        try await requireEditor(of: upload, context)
        guard let offsetText = request.headers[.uploadOffset], let offset = Int64(offsetText) else {
            throw TusError(.badRequest, "Send Upload-Offset.")
        }
        guard offset == upload.offset else {
            throw TusError(.conflict, "Upload-Offset \(offset) does not match the stored offset \(upload.offset); ask HEAD and resume from there.")
        }
        let checksum = try request.headers[.uploadChecksum].map(ChunkChecksum.init(header:))
        guard hashes.claim(upload.id) else { throw TusError(.conflict, "Another request is writing to this upload.") }
        defer { hashes.release(upload.id) }

        var wholeFile = hashes.state(for: upload.id, at: offset)
        let before = wholeFile
        var chunkHash = checksum?.hasher()
        var written: Int64 = 0
        let path = FilePath(paths.upload(upload.id).path)
        let handle = try await FileSystem.shared.openFile(forWritingAt: path, options: .modifyFile(createIfNecessary: false))
        var failure: (any Error)?
        var writer = handle.bufferedWriter(startingAtAbsoluteOffset: offset, capacity: .bytes(EarlyWriteback.writeBuffer))
        var writeback = EarlyWriteback(from: offset)
        do {
            for try await chunk in request.body {
                guard offset + written + Int64(chunk.readableBytes) <= upload.length else {
                    throw TusError(.contentTooLarge, "The PATCH carries more bytes than Upload-Length (\(upload.length)).")
                }
                try await writer.write(contentsOf: chunk)
                chunk.withUnsafeReadableBytes { bytes in
                    wholeFile?.update(bufferPointer: bytes)
                    chunkHash?.update(bytes)
                }
                written += Int64(chunk.readableBytes)
                await writeback.advance(to: offset + written, handle: handle)
            }
            try await writer.flush()
            if let checksum, let chunkHash, !checksum.matches(chunkHash) {
                throw TusError(.checksumMismatch, "The Upload-Checksum does not match the bytes received; nothing of this PATCH was kept.")
            }
        } catch {
            failure = error
        }
        /// A refused PATCH leaves the upload exactly as it was.
        func refuse(_ error: any Error) async throws -> Never {
            try? await handle.resize(to: .bytes(offset))
            try? await handle.close()
            hashes.store(before, for: upload.id, at: offset)
            throw error
        }
        if let failure, failure is TusError { try await refuse(failure) }
        // Success, or a dropped connection: keep every byte received. The bytes still in the writer's buffer are
        // written first, so the stored offset never runs ahead of the file; if that fails, the file's size decides.
        if failure != nil {
            do { try await writer.flush() } catch {
                let size = (try? await handle.info().size) ?? offset
                written = max(0, min(written, size - offset))
                wholeFile = nil  // recomputed from the file when the upload finishes
            }
        }
        // Only the last PATCH is flushed to disk before it is answered: the asset must be on disk before it exists.
        // Earlier ones are acknowledged once written (as tusd's file store does): a flush per PATCH cost a quarter
        // of tus throughput (BENCHMARKS.md), and after a power cut `MediaRecovery` rewinds the stored offset to the
        // bytes that are really on disk, where the client's HEAD resumes.
        if failure == nil, offset + written == upload.length {
            do { try await handle.synchronize() } catch {
                try await refuse(TusError(.internalServerError, "The upload could not be written to disk; send this PATCH again."))
            }
        }
        try? await handle.close()
        let newOffset = offset + written
        try await database.setUploadOffset(id: upload.id, offset: newOffset)
        hashes.store(wholeFile, for: upload.id, at: newOffset)
        if let failure { throw failure }

        var headers: HTTPFields = [
            .tusResumable: Self.version, .uploadOffset: "\(newOffset)", .uploadExpires: DisplayFormat.httpDate(upload.expiresAt),
        ]
        if newOffset == upload.length {
            // Again at the last byte: membership may have changed while the bytes were arriving.
            try await requireEditor(of: upload, context)
            let asset = try await finish(upload, hash: wholeFile, actor: context.actor)
            headers[.assetId] = "\(asset.id)"
            headers[.assetLocation] = APIURL.manageAsset(asset.id)
        }
        return Response(status: .noContent, headers: headers)
    }

    /// The last byte arrived: the upload becomes a pending asset (or is refused and removed).
    func finish(_ upload: UploadRecord, hash: SHA256?, actor: AuditActor) async throws -> Asset {
        let url = paths.upload(upload.id)
        hashes.forget(upload.id)
        // The upload's row goes whatever happens: the file became an asset, or was refused and removed.
        do {
            let sha256: String
            if let hash { sha256 = hash.finalize().hexString } else { sha256 = try await FileHashing.sha256(of: url) }
            let header = try await FileHashing.header(of: url)
            let asset = try await intake.register(
                .init(uploadId: upload.id, size: upload.length, sha256: sha256, header: header, originalName: upload.fileName),
                tourId: upload.tourId,
                waypointId: upload.waypointId,
                replacing: upload.replacesAssetId,
                actor: actor
            )
            try? await database.deleteUpload(id: upload.id)
            return asset
        } catch let error as HTTPError {
            try? await database.deleteUpload(id: upload.id)
            throw TusError(error.status, error.body ?? error.status.reasonPhrase)
        } catch {
            try? await database.deleteUpload(id: upload.id)
            throw error
        }
    }

    // MARK: Termination

    func terminate(_ request: Request, _ context: SignedInContext) async throws -> Response {
        try Self.requireVersion(request)
        let upload = try await ownUpload(context, allowExpired: true)
        guard hashes.claim(upload.id) else { throw TusError(.conflict, "Another request is writing to this upload.") }
        defer { hashes.release(upload.id) }
        try await database.deleteUpload(id: upload.id)
        hashes.forget(upload.id)
        try? FileManager.default.removeItem(at: paths.upload(upload.id))
        return Response(status: .noContent, headers: [.tusResumable: Self.version])
    }

    // MARK: Helpers

    /// Only the user who created an upload can see or continue it; others get 404.
    func ownUpload(_ context: SignedInContext, allowExpired: Bool = false) async throws -> UploadRecord {
        let user = context.user
        guard let id = context.parameters.get("id"), let upload = try await database.upload(id: id), upload.userId == user.id else {
            throw TusError(.notFound, "No such upload (it may have finished, been cancelled, or expired and been removed).")
        }
        if !allowExpired && upload.expiresAt < Date() {
            throw TusError(.gone, "This upload expired; start it again.")
        }
        return upload
    }

    /// An upload begun earlier finishes only while its creator may still edit the tour: a member removed from the
    /// site (404, as for any tour they cannot see) or made a reviewer (403) cannot add the file.
    func requireEditor(of upload: UploadRecord, _ context: SignedInContext) async throws {
        do {
            _ = try await authorization.editableTour(id: upload.tourId, user: context.user)
        } catch is NotFound {
            throw TusError(.notFound, "No such upload (it may have finished, been cancelled, or expired and been removed).")
        } catch let forbidden as Forbidden {
            throw TusError(.forbidden, forbidden.message)
        }
    }

    static func requireVersion(_ request: Request) throws {
        guard request.headers[.tusResumable] == version else {
            throw TusError(.preconditionFailed, "Send Tus-Resumable: \(version).")
        }
    }

    /// `key base64,key base64` (RFC-less tus syntax); a key may come without a value.
    static func parseMetadata(_ header: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first, !key.isEmpty else { continue }
            let value = parts.count > 1 ? Data(base64Encoded: String(parts[1])).flatMap { String(data: $0, encoding: .utf8) } : ""
            result[String(key)] = value ?? ""
        }
        return result
    }
}

/// A tus error: the JSON error body plus the `Tus-Resumable` header.
struct TusError: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = APIErrorBody.response(status: status, code: ErrorMiddleware.code(for: status), message: message)
        response.headers[.tusResumable] = TusController.version
        if status == .preconditionFailed { response.headers[.tusVersion] = TusController.version }
        return response
    }
}

/// `Upload-Checksum: <algorithm> <base64>` for one PATCH body.
struct ChunkChecksum {
    enum Algorithm { case sha1, sha256 }
    let algorithm: Algorithm
    let expected: Data

    init(header: String) throws {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let expected = Data(base64Encoded: String(parts[1])) else {
            throw TusError(.badRequest, "Upload-Checksum must be “<algorithm> <base64 digest>”.")
        }
        switch parts[0].lowercased() {
        case "sha1": algorithm = .sha1
        case "sha256": algorithm = .sha256
        default: throw TusError(.badRequest, "Unsupported checksum algorithm; use sha1 or sha256.")
        }
        self.expected = expected
    }

    func hasher() -> ChunkHasher { algorithm == .sha1 ? .sha1(Insecure.SHA1()) : .sha256(SHA256()) }

    func matches(_ hasher: ChunkHasher) -> Bool {
        switch hasher {
        case .sha1(let h): Data(h.finalize()) == expected
        case .sha256(let h): Data(h.finalize()) == expected
        }
    }
}

enum ChunkHasher {
    case sha1(Insecure.SHA1)
    case sha256(SHA256)
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .sha1(var h):
            h.update(bufferPointer: bytes)
            self = .sha1(h)
        case .sha256(var h):
            h.update(bufferPointer: bytes)
            self = .sha256(h)
        }
    }
}

/// The running SHA-256 of each tus upload, so the hash is ready when the last byte lands;
/// after a restart it is recomputed from the file. Also one writer per upload at a time.
final class TusHashStates: Sendable {
    private let states = NIOLockedValueBox<[String: (offset: Int64, hash: SHA256)]>([:])
    private let busy = NIOLockedValueBox<Set<String>>([])

    func state(for id: String, at offset: Int64) -> SHA256? {
        if offset == 0 { return SHA256() }
        return states.withLockedValue { $0[id].flatMap { $0.offset == offset ? $0.hash : nil } }
    }

    func store(_ hash: SHA256?, for id: String, at offset: Int64) {
        states.withLockedValue { $0[id] = hash.map { (offset, $0) } }
    }

    func forget(_ id: String) { states.withLockedValue { $0[id] = nil } }

    func claim(_ id: String) -> Bool { busy.withLockedValue { $0.insert(id).inserted } }
    func release(_ id: String) { busy.withLockedValue { _ = $0.remove(id) } }
}

extension HTTPField.Name {
    static let tusResumable = Self("Tus-Resumable")!
    static let tusVersion = Self("Tus-Version")!
    static let tusExtension = Self("Tus-Extension")!
    static let tusMaxSize = Self("Tus-Max-Size")!
    static let tusChecksumAlgorithm = Self("Tus-Checksum-Algorithm")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadMetadata = Self("Upload-Metadata")!
    static let uploadExpires = Self("Upload-Expires")!
    static let uploadChecksum = Self("Upload-Checksum")!
    static let assetId = Self("Asset-Id")!
    static let assetLocation = Self("Asset-Location")!
}

extension HTTPResponse.Status {
    /// tus checksum extension: 460 Checksum Mismatch.
    static let checksumMismatch = HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch")
}
