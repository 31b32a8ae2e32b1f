import Foundation
import ObjectStorage
import TestSupport

extension ObjectStore {
    /// Runs `body` with a server of `kind` whose data is in a temporary folder; the server stops and the folder goes
    /// when `body` ends, pass or fail.
    static func withStore(_ kind: Kind, _ body: (ObjectStore) async throws -> Void) async throws {
        let folder = try TemporaryFolder("objectstore-\(kind)")
        defer { folder.remove() }
        let store = try await start(kind, in: folder.url)
        defer { store.stop() }
        try await body(store)
    }

    var credentials: S3Credentials { S3Credentials(accessKeyId: info.accessKey, secretAccessKey: info.secretKey) }

    func client(bucket: String? = nil, prefix: String = "", credentials: S3Credentials? = nil) -> S3Client {
        S3Client(
            location: StorageLocation(bucket: bucket ?? info.bucket, prefix: prefix),
            endpoint: endpoint,
            region: "us-east-1",
            credentials: credentials ?? self.credentials,
            connectTimeout: .seconds(2),
            readTimeout: .seconds(30)
        )
    }
}
