import Foundation
import GRDB
import PackageFormat
import TrailAPI

// The object-storage mirror's named reads and writes (jobs, confirmed objects, the tree to send).
extension AppDatabase {
    /// The immutable objects the bucket must hold for what is published now: every released version of each visible
    /// package (zip, manifest, signature: a rollback then needs no upload) and the files of the versions served, plus
    /// the signing key. The catalog is not among them: it goes last, once all of these are confirmed.
    /// (Without a key, the signing-key object is left out: the panel's per-package status does not need it.)
    func distributionItems(paths: DataPaths, signingKey: SigningKey?) async throws -> [DistributionItem] {
        var items: [DistributionItem] = []
        if let signingKey {
            let key = try WireCoding.encoder.encode(Components.Schemas.SigningKey(signingKey))
            items.append(
                DistributionItem(
                    path: DistributionPath.signingKey,
                    size: Int64(key.count),
                    sha256: key.sha256Hex,
                    contentType: "application/json",
                    cacheControl: DistributionItem.immutable,
                    source: .bytes(key)
                )
            )
        }
        var seenFiles = Set<String>()
        for published in try await publishedPackages() {
            for version in try await packageVersions(packageId: published.package.id) {
                let manifest = Data(version.manifestJSON.utf8)
                let signature = Data(version.signature.utf8)
                items.append(
                    DistributionItem(
                        path: DistributionPath.zip(version.packageId, version.version),
                        size: version.size,
                        sha256: version.sha256,
                        contentType: "application/zip",
                        cacheControl: DistributionItem.immutable,
                        source: .file(paths.absolute(version.storedPath))
                    )
                )
                items.append(
                    DistributionItem(
                        path: DistributionPath.manifest(version.packageId, version.version),
                        size: Int64(manifest.count),
                        sha256: manifest.sha256Hex,
                        contentType: "application/json",
                        cacheControl: DistributionItem.immutable,
                        source: .bytes(manifest)
                    )
                )
                items.append(
                    DistributionItem(
                        path: DistributionPath.manifestSignature(version.packageId, version.version),
                        size: Int64(signature.count),
                        sha256: signature.sha256Hex,
                        contentType: "text/plain",
                        cacheControl: DistributionItem.immutable,
                        source: .bytes(signature)
                    )
                )
            }
            // A damaged manifest fails the sync with an error naming it, rather than a bucket silently without its files.
            let manifest = try published.version.decodedManifest()
            for file in manifest.listedFiles where ContentStore.isHash(file.sha256) && seenFiles.insert(file.sha256).inserted {
                guard let size = file.size else { continue }
                items.append(
                    DistributionItem(
                        path: DistributionPath.file(file.sha256),
                        size: size,
                        sha256: file.sha256,
                        contentType: "application/octet-stream",
                        cacheControl: DistributionItem.immutable,
                        source: .servedFile
                    )
                )
            }
        }
        return items
    }

    /// path → SHA-256 of what is confirmed at `location`.
    func confirmedDistributionObjects(location: String) async throws -> [String: String] {
        try await read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT path, sha256 FROM distributionObject WHERE location = ?", arguments: [location])
                    .map { ($0["path"] as String, $0["sha256"] as String) },
                uniquingKeysWith: { _, last in last }
            )
        }
    }

    func confirmDistributionObject(location: String, path: String, size: Int64, sha256: String) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO distributionObject (location, path, size, sha256, confirmedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (location, path) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, confirmedAt = excluded.confirmedAt
                    """,
                arguments: [location, path, size, sha256, Date().dbTime]
            )
        }
    }

    /// `storage sync --all`: everything is uploaded again.
    func forgetDistributionObjects(location: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM distributionObject WHERE location = ?", arguments: [location]) }
    }

    func waitingDistributionJobs() async throws -> [DistributionJob] {
        try await read { db in try DistributionJob.filter(Column("state") == DistributionJob.State.waiting).order(Column("id")).fetchAll(db) }
    }

    /// Jobs up to `catalogVersion` are done: the bucket's catalog is of that version.
    func finishDistributionJobs(upTo catalogVersion: Int) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE distributionJob SET state = ?, doneAt = ?, lastError = NULL, failingSince = NULL
                    WHERE state = ? AND catalogVersion <= ?
                    """,
                arguments: [DistributionJob.State.done, Date().dbTime, DistributionJob.State.waiting, catalogVersion]
            )
        }
    }

    func recordDistributionFailure(_ message: String, at time: Date = Date()) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE distributionJob SET attempts = attempts + 1, lastError = ?, failingSince = COALESCE(failingSince, ?)
                    WHERE state = ?
                    """,
                arguments: [message, time.dbTime, DistributionJob.State.waiting]
            )
        }
    }

    struct DistributionUploadRow: Sendable {
        let uploadId: String
        let size: Int64
        let sha256: String
        let partSize: Int64
    }

    func distributionUpload(location: String, path: String) async throws -> DistributionUploadRow? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM distributionUpload WHERE location = ? AND path = ?", arguments: [location, path]).map {
                DistributionUploadRow(uploadId: $0["uploadId"], size: $0["size"], sha256: $0["sha256"], partSize: $0["partSize"])
            }
        }
    }

    func startDistributionUpload(location: String, path: String, row: DistributionUploadRow) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO distributionUpload (location, path, uploadId, size, sha256, partSize, startedAt) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [location, path, row.uploadId, row.size, row.sha256, row.partSize, Date().dbTime]
            )
        }
    }

    func endDistributionUpload(location: String, path: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM distributionUpload WHERE location = ? AND path = ?", arguments: [location, path])
        }
    }
}
