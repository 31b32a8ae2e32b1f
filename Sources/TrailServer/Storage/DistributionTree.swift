import Crypto
import Foundation
import GRDB
import NIOConcurrencyHelpers
import ObjectStorage
import PackageFormat
import TrailAPI

/// A durable job of the object-storage mirror, written with every catalog change (`AppDatabase.bumpCatalog`).
struct DistributionJob: Codable, Sendable, FetchableRecord, PersistableRecord {
    enum Reason: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
        /// `alert`: an alert was posted, ended or ran out (Alerts folder).
        case release, publish, unpublish, rollback, alert
    }

    enum State: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
        case waiting, done
    }

    var id: Int64
    var catalogVersion: Int
    var reason: Reason
    var state: State
    var createdAt: Date
    var attempts: Int
    var lastError: String?
    var failingSince: Date?
    var doneAt: Date?

    static let databaseTableName = "distributionJob"
}

/// One object of the distribution tree (docs/package-format.md, "Served from object storage"), with where its bytes
/// come from.
struct DistributionItem: Sendable {
    enum Source: Sendable {
        case bytes(Data)
        case file(URL)
        /// A served package file: `ContentStore` finds (or extracts) it when it is uploaded.
        case servedFile
    }

    let path: String
    let size: Int64
    let sha256: String
    let contentType: String
    let cacheControl: String
    let source: Source

    static let immutable = "public, max-age=31536000, immutable"
}

/// The paths of the tree, written once.
enum DistributionPath {
    static let catalog = "catalog.json"
    static let catalogSignature = "catalog.json.sig"
    static let signingKey = "signing-key.json"
    static func zip(_ packageId: String, _ version: Int) -> String { "packages/\(packageId)/\(version).zip" }
    static func manifest(_ packageId: String, _ version: Int) -> String { "packages/\(packageId)/\(version)/manifest.json" }
    static func manifestSignature(_ packageId: String, _ version: Int) -> String { "packages/\(packageId)/\(version)/manifest.sig" }
    static func file(_ sha256: String) -> String { "files/\(sha256)" }
    /// Where `serve` proves at start that it may write.
    static let writeCheck = ".trail/write-check"
}

extension Data {
    var sha256Hex: String { SHA256.hash(data: self).hexString }
}

/// What the API and the catalog need to know about the mirror, in memory: which objects are confirmed in the bucket
/// (loaded from the database at start, added to as the sync confirms them), where phones reach the bucket, and how
/// the last attempt went.
final class DistributionState: Sendable {
    struct Failure: Sendable, Equatable {
        let message: String
        let since: Date
    }

    let settings: StorageSettings
    let location: String
    private let confirmed: NIOLockedValueBox<(paths: [String: String], generation: Int)>
    private let failure = NIOLockedValueBox<Failure?>(nil)

    init(settings: StorageSettings, database: AppDatabase) async throws {
        self.settings = settings
        self.location = settings.location.description
        self.confirmed = NIOLockedValueBox((try await database.confirmedDistributionObjects(location: settings.location.description), 0))
    }

    /// Moves on whenever an object is confirmed: the catalog is rebuilt when it changes (its URLs may move to the bucket).
    var generation: Int { confirmed.withLockedValue { $0.generation } }

    func isConfirmed(_ path: String, sha256: String? = nil) -> Bool {
        confirmed.withLockedValue { state in state.paths[path].map { sha256 == nil || $0 == sha256 } ?? false }
    }

    var confirmedPaths: [String: String] { confirmed.withLockedValue { $0.paths } }

    func confirm(_ path: String, sha256: String) {
        confirmed.withLockedValue {
            $0.paths[path] = sha256
            // The catalog's own upload changes no URL in it: re-signing for it would make the bucket's copy stale at once.
            if path != DistributionPath.catalog { $0.generation += 1 }
        }
    }

    func forgetAll() {
        confirmed.withLockedValue {
            $0.paths = [:]
            $0.generation += 1
        }
    }

    /// The public URL of an object once it is confirmed in the bucket; nil without `--public-download-url` or before.
    func publicURL(for path: String) -> String? {
        guard let base = settings.publicDownloadURL, isConfirmed(path) else { return nil }
        return "\(base)/\(path)"
    }

    var lastFailure: Failure? { failure.withLockedValue { $0 } }

    func recordFailure(_ message: String, at time: Date = Date()) {
        failure.withLockedValue { $0 = Failure(message: message, since: $0?.since ?? time) }
    }

    func recordSuccess() { failure.withLockedValue { $0 = nil } }
}

/// What the panel says about the mirror.
enum DistributionStatus {
    /// "retrying since 10:42: <error>"
    static func failureText(_ failure: DistributionState.Failure) -> String {
        "Retrying since \(DisplayFormat.time(failure.since)): \(failure.message)"
    }

    /// One package: "In sync with s3://…" or "3 objects waiting, retrying since 10:42: <error>".
    static func of(packageId: String, database: AppDatabase, paths: DataPaths, state: DistributionState) async throws -> (text: String, inSync: Bool)
    {
        let items = try await database.distributionItems(paths: paths, signingKey: nil)
        var own = Set<String>()
        if let package = try await database.package(id: packageId), package.isVisible, let current = package.currentVersion,
            let version = try await database.packageVersion(packageId: packageId, version: current)
        {
            own = Set(try version.decodedManifest().listedFiles.map { DistributionPath.file($0.sha256) })
        }
        let waiting = items.filter {
            ($0.path.hasPrefix("packages/\(packageId)/") || own.contains($0.path)) && !state.isConfirmed($0.path, sha256: $0.sha256)
        }
        let jobs = try await database.waitingDistributionJobs()
        if waiting.isEmpty && jobs.isEmpty { return ("In sync with \(state.location).", true) }
        var text = waiting.isEmpty ? "The catalog is waiting to be sent" : "\(waiting.count) object\(waiting.count == 1 ? "" : "s") waiting"
        if let failure = state.lastFailure {
            text += ", " + failureText(failure).prefix(1).lowercased() + failureText(failure).dropFirst()
        } else {
            text += "; the sync is on its way."
        }
        return (text, false)
    }
}

extension S3Client {
    /// The check `serve` makes at start and `doctor` and `storage check` repeat: the bucket answers to these keys
    /// (HEAD) and takes a write under the prefix (`.trail/write-check`, naming who wrote it and when).
    func checkWritable(by writer: String) async throws {
        try await headBucket()
        try await putObject(
            location.key(DistributionPath.writeCheck),
            data: Data("written by trail-companion \(writer) at \(Date())\n".utf8),
            contentType: "text/plain",
            cacheControl: "no-store"
        )
    }
}
