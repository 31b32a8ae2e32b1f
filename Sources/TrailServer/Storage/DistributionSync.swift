import Crypto
import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
import ObjectStorage
import PackageFormat
import ServiceLifecycle
import _NIOFileSystem

/// Mirrors the distribution tree to the bucket (docs/operators.md, "Object storage and a CDN"), in this order, so that
/// a catalog never names an object that is not there:
/// 1. every immutable object the published state needs (`AppDatabase.distributionItems`) that is not confirmed yet is
///    uploaded (multipart from disk above `multipartThreshold`, continuing an upload a restart interrupted), then read
///    back with HEAD (size and SHA-256) and recorded as confirmed;
/// 2. only then `catalog.json` (the exact bytes `GET /api/v1/catalog` serves, its signature also in
///    `x-amz-meta-signature`) and `catalog.json.sig`;
/// 3. the waiting jobs up to that catalog version are done.
/// An unpublish needs no new object, so its catalog goes up at once; old objects stay for rollbacks.
///
/// A failure (bucket down, wrong keys) never blocks authoring or a local release: the jobs stay waiting with the error
/// and the time failing began (the panel shows them) and the pass is retried with back-off. A pass is idempotent, so a
/// crash anywhere only repeats work.
package final class DistributionSync: Service, Sendable {
    package struct Report: Sendable, Equatable {
        package var uploaded: [String] = []
        package var catalogVersion: Int? = nil
        package var catalogUploaded = false
    }

    let database: AppDatabase
    let paths: DataPaths
    let state: DistributionState
    let catalog: CatalogSigner
    let signingKey: SigningKey
    let files: ContentStore
    let client: S3Client
    let logger: Logger
    private let wakeup = WakeSignal()
    private let running = NIOLockedValueBox(false)

    init(
        database: AppDatabase,
        paths: DataPaths,
        state: DistributionState,
        catalog: CatalogSigner,
        signingKey: SigningKey,
        files: ContentStore,
        logger: Logger = Logger(label: "trail.storage")
    ) {
        self.database = database
        self.paths = paths
        self.state = state
        self.catalog = catalog
        self.signingKey = signingKey
        self.files = files
        self.client = state.settings.makeClient()
        self.logger = logger
    }

    var settings: StorageSettings { state.settings }
    package var location: StorageLocation { settings.location }

    /// Called after a release, unpublish or rollback: the job is in the database already, this only saves the wait.
    func wake() { wakeup.signal() }

    package func run() async throws {
        // Every release, unpublish and rollback moves the catalog version: that wakes the sync at once.
        let cancellable = try database.observeChanges(to: ["catalogState"]) { [wakeup] in wakeup.signal() }
        defer { cancellable.cancel() }
        await cancelWhenGracefulShutdown { [self] in
            var delay = settings.firstRetryDelay
            while !Task.isCancelled {
                do {
                    _ = try await syncOnce()
                    delay = settings.firstRetryDelay
                    await wakeup.wait(upTo: settings.checkInterval)
                } catch is CancellationError {
                    break
                } catch {
                    if Task.isCancelled { break }
                    await wakeup.wait(upTo: delay)
                    delay = min(delay * 2, settings.longestRetryDelay)
                }
            }
        }
        await client.shutdown()
    }

    /// For the `storage` commands: the same parts `serve` wires, from the same configuration. Nil without `--storage`.
    package static func make(
        config: AppConfig,
        database: AppDatabase,
        logger: Logger = Logger(label: "trail.storage")
    ) async throws -> DistributionSync? {
        guard let settings = config.storage else { return nil }
        let paths = config.dataPaths
        let signingKey = try SigningKey.loadOrCreate(at: paths.signingKey)
        let state = try await DistributionState(settings: settings, database: database)
        let catalog = CatalogSigner(
            database: database,
            signingKey: signingKey,
            lifetime: config.catalogLifetime,
            publicURL: config.effectivePublicURL,
            distribution: state
        )
        return DistributionSync(
            database: database,
            paths: paths,
            state: state,
            catalog: catalog,
            signingKey: signingKey,
            files: ContentStore(database: database, paths: paths, logger: logger),
            logger: logger
        )
    }

    package func shutdown() async { await client.shutdown() }

    /// `storage sync --all`: nothing counts as confirmed in this bucket any more, so the next pass uploads everything.
    package func forgetConfirmed() async throws {
        try await database.forgetDistributionObjects(location: location.description)
        state.forgetAll()
    }

    /// `storage check`: each object the published state needs that the bucket lacks or holds with other bytes, and
    /// whether the bucket's catalog verifies, is current and names only objects that are there. Empty: in sync.
    package func compare() async throws -> [String] {
        var problems: [String] = []
        var present = Set<String>()
        let (paths, signingKey) = (self.paths, self.signingKey)
        for item in try await database.distributionItems(paths: paths, signingKey: signingKey) {
            guard let info = try await client.headObject(location.key(item.path)) else {
                problems.append("missing: \(item.path)")
                continue
            }
            if info.size != item.size || info.sha256 != item.sha256 {
                problems.append(
                    "different: \(item.path) is \(info.size) bytes with SHA-256 \(info.sha256 ?? "unknown"), the database has \(item.size) with \(item.sha256)"
                )
            } else {
                present.insert(item.path)
            }
        }
        guard try await client.headObject(location.key(DistributionPath.catalog)) != nil else {
            problems.append("missing: \(DistributionPath.catalog)")
            return problems
        }
        let body = try await client.getObject(location.key(DistributionPath.catalog))
        let signatureText = String(decoding: try await client.getObject(location.key(DistributionPath.catalogSignature)), as: UTF8.self)
        guard let signature = Data(base64Encoded: signatureText.trimmingCharacters(in: .whitespacesAndNewlines)),
            SignatureCheck.verify(signature: signature, of: body, publicKeyBase64: signingKey.publicKeyBase64)
        else {
            problems.append("catalog.json does not verify with catalog.json.sig and this server's signing key")
            return problems
        }
        struct Listed: Decodable {
            struct Item: Decodable {
                let id: String
                let version: Int
            }
            let catalogVersion: Int
            let packages: [Item]
        }
        let listed = try JSONDecoder().decode(Listed.self, from: body)
        let current = try await database.catalogVersion()
        if listed.catalogVersion != current {
            problems.append("catalog.json is catalog version \(listed.catalogVersion), the database is at \(current)")
        }
        for item in listed.packages where !present.contains(DistributionPath.zip(item.id, item.version)) {
            problems.append("catalog.json names \(DistributionPath.zip(item.id, item.version)), which is not in the bucket as released")
        }
        return problems
    }

    /// `serve` at start and `storage check`: the bucket answers to these keys and takes a write under the prefix.
    package func checkBucket() async throws {
        try await client.checkWritable(by: "serve")
    }

    /// One pass of the order above; records the outcome (the jobs' error, or their end).
    @discardableResult
    package func syncOnce() async throws -> Report {
        do {
            let report = try await pass()
            state.recordSuccess()
            return report
        } catch {
            if error is CancellationError { throw error }
            let message = (error as? S3Error)?.description ?? "\(error)"
            logger.error("storage sync: \(message)")
            state.recordFailure(message)
            try? await database.recordDistributionFailure(message)
            throw error
        }
    }

    func pass() async throws -> Report {
        var report = Report()
        // First the bucket itself: some stores (SeaweedFS) create a missing bucket on the first PUT, which would
        // publish into a bucket nobody set up.
        try await client.headBucket()
        // A catalog that moved on during the uploads may name more: go round until everything it names is confirmed.
        for _ in 0..<5 {
            let items = try await database.distributionItems(paths: paths, signingKey: signingKey)
            for item in items where !state.isConfirmed(item.path, sha256: item.sha256) {
                try Task.checkCancellation()
                try await upload(item)
                report.uploaded.append(item.path)
            }
            let named = try await database.publishedPackages().flatMap {
                [DistributionPath.zip($0.package.id, $0.version.version), DistributionPath.manifest($0.package.id, $0.version.version)]
            }
            guard named.allSatisfy({ state.isConfirmed($0) }) else { continue }
            // The signer built this body before or after the last confirmations; either way it must use bucket URLs.
            let fresh = try await catalog.current()
            let body = fresh.body
            if !state.isConfirmed(DistributionPath.catalog, sha256: body.sha256Hex) {
                try await client.putObject(
                    location.key(DistributionPath.catalog),
                    data: body,
                    contentType: "application/json",
                    cacheControl: "no-cache",
                    metadata: ["signature": fresh.signature]
                )
                try await client.putObject(
                    location.key(DistributionPath.catalogSignature),
                    data: Data(fresh.signature.utf8),
                    contentType: "text/plain",
                    cacheControl: "no-cache"
                )
                try await record(DistributionPath.catalog, size: Int64(body.count), sha256: body.sha256Hex)
                report.catalogUploaded = true
                logger.info("storage: catalog version \(fresh.catalogVersion) published to \(location)")
            }
            report.catalogVersion = fresh.catalogVersion
            try await database.finishDistributionJobs(upTo: fresh.catalogVersion)
            return report
        }
        throw S3Error(kind: .other, operation: "sync", status: nil, code: nil, message: "the catalog kept changing during the sync; trying again")
    }

    func record(_ path: String, size: Int64, sha256: String) async throws {
        try await database.confirmDistributionObject(location: location.description, path: path, size: size, sha256: sha256)
        state.confirm(path, sha256: sha256)
    }

    /// Uploads one object and reads it back: confirmed only when the bucket reports the size and SHA-256 expected.
    func upload(_ item: DistributionItem) async throws {
        let key = location.key(item.path)
        switch item.source {
        case .bytes(let data):
            try await client.putObject(key, data: data, contentType: item.contentType, cacheControl: item.cacheControl)
        case .file(let url):
            try await uploadFile(item, from: url)
        case .servedFile:
            guard let url = try await files.file(sha256: item.sha256) else {
                throw S3Error(kind: .other, operation: "upload \(item.path)", status: nil, code: nil, message: "no served version lists it any more")
            }
            try await uploadFile(item, from: url)
        }
        guard let info = try await client.headObject(key) else {
            throw S3Error(kind: .mismatch, operation: "confirm \(key)", status: 404, code: nil, message: "the object is not there after its upload")
        }
        guard info.size == item.size, info.sha256 == item.sha256 else {
            throw S3Error(
                kind: .mismatch,
                operation: "confirm \(key)",
                status: nil,
                code: nil,
                message: "the bucket reports \(info.size) bytes with SHA-256 \(info.sha256 ?? "none"), expected \(item.size) with \(item.sha256)"
            )
        }
        try await record(item.path, size: item.size, sha256: item.sha256)
    }

    func uploadFile(_ item: DistributionItem, from url: URL) async throws {
        let key = location.key(item.path)
        guard item.size > settings.multipartThreshold else {
            try await client.putObject(
                key,
                file: url,
                size: item.size,
                sha256: item.sha256,
                contentType: item.contentType,
                cacheControl: item.cacheControl
            )
            return
        }
        let where_ = location.description
        let partSize = max(settings.partSize, (item.size + 9_999) / 10_000)
        var done: [Int: S3Client.Part] = [:]
        let uploadId: String
        if let row = try await database.distributionUpload(location: where_, path: item.path), row.sha256 == item.sha256,
            row.partSize == partSize,
            let listed = try await client.listParts(key, uploadId: row.uploadId)
        {
            uploadId = row.uploadId
            // Parts the bucket holds from before a restart: kept when their size and MD5 are those of the file's part.
            for part in listed {
                let range = Self.partRange(part.number, partSize: partSize, size: item.size)
                guard !range.isEmpty, part.size == Int64(range.count),
                    try await Self.md5(of: url, range: range) == part.etag.lowercased()
                else { continue }
                done[part.number] = part
            }
            logger.info("storage: continuing the upload of \(item.path) with \(done.count) parts already in the bucket")
        } else {
            uploadId = try await client.createMultipartUpload(
                key,
                contentType: item.contentType,
                cacheControl: item.cacheControl,
                sha256: item.sha256
            )
            try await database.startDistributionUpload(
                location: where_,
                path: item.path,
                row: .init(uploadId: uploadId, size: item.size, sha256: item.sha256, partSize: partSize)
            )
        }
        let count = Int((item.size + partSize - 1) / partSize)
        let missing = (1...count).filter { done[$0] == nil }
        let client = self.client
        try await withThrowingTaskGroup(of: S3Client.Part.self) { group in
            var next = missing.makeIterator()
            func addNext() {
                guard let number = next.next() else { return }
                group.addTask {
                    try await client.uploadPart(
                        key,
                        uploadId: uploadId,
                        number: number,
                        file: url,
                        range: Self.partRange(number, partSize: partSize, size: item.size)
                    )
                }
            }
            for _ in 0..<max(1, settings.partConcurrency) { addNext() }
            while let part = try await group.next() {
                done[part.number] = part
                addNext()
            }
        }
        let parts = (1...count).compactMap { done[$0] }
        try await client.completeMultipartUpload(key, uploadId: uploadId, parts: parts)
        try await database.endDistributionUpload(location: where_, path: item.path)
    }

    static func partRange(_ number: Int, partSize: Int64, size: Int64) -> Range<Int64> {
        let start = Int64(number - 1) * partSize
        return min(start, size)..<min(start + partSize, size)
    }

    static func md5(of url: URL, range: Range<Int64>) async throws -> String {
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(url.path)) { handle in
            var hasher = Insecure.MD5()
            for try await chunk in handle.readChunks(in: range, chunkLength: .mebibytes(1)) {
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            return hasher.finalize().hexString
        }
    }
}

/// A wake-up call that is not lost when nobody waits yet (the next wait returns at once) and a wait that ends after a
/// time, on a signal, or when the task is cancelled (graceful shutdown).
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)? = nil
        var nextId = 0
    }
    private let state = NIOLockedValueBox(State())

    func signal() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    private func end(_ id: Int) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    func wait(upTo duration: Duration) async {
        let id = state.withLockedValue { state -> Int in
            state.nextId += 1
            return state.nextId
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: duration)
            self?.end(id)
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            end(id)
        }
    }
}
