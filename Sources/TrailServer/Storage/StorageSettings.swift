import Foundation
import ObjectStorage

/// `--storage` and its companions (docs/operators.md, "Object storage and a CDN"): where the public, immutable side is
/// mirrored.
package struct StorageSettings: Sendable {
    var location: StorageLocation
    /// nil: AWS (`https://s3.<region>.amazonaws.com`).
    var endpoint: URL?
    var region: String
    var credentials: S3Credentials
    /// Where phones reach the bucket (usually a CDN); nil: the server keeps streaming every download itself.
    var publicDownloadURL: String?
    /// Files larger than this go up as multipart uploads of `partSize` parts, `partConcurrency` at a time.
    package var multipartThreshold: Int64 = 64 * 1024 * 1024
    package var partSize: Int64 = 16 * 1024 * 1024
    var partConcurrency = 4
    var connectTimeout: Duration = .seconds(10)
    /// A request that sends or receives nothing for this long has failed.
    var readTimeout: Duration = .seconds(120)
    /// Back-off between failed sync attempts: doubles from the first to the last.
    var firstRetryDelay: Duration = .seconds(2)
    var longestRetryDelay: Duration = .seconds(300)
    /// How often the sync looks even when nothing woke it: a catalog re-signed before it expires goes up this way.
    var checkInterval: Duration = .seconds(60)

    package init(
        location: StorageLocation,
        endpoint: URL? = nil,
        region: String = "us-east-1",
        credentials: S3Credentials,
        publicDownloadURL: String? = nil
    ) {
        self.location = location
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.publicDownloadURL = publicDownloadURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    func makeClient() -> S3Client {
        S3Client(
            location: location,
            endpoint: endpoint,
            region: region,
            credentials: credentials,
            connectTimeout: .nanoseconds(connectTimeout.nanoseconds),
            readTimeout: .nanoseconds(readTimeout.nanoseconds)
        )
    }
}
