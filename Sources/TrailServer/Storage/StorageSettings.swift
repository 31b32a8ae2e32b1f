import Foundation

/// `--storage` and its companions (docs/operators.md, "Object storage and a CDN"): where the public, immutable side is
/// mirrored.
public struct StorageSettings: Sendable {
    public var location: StorageLocation
    /// nil: AWS (`https://s3.<region>.amazonaws.com`).
    public var endpoint: URL?
    public var region: String
    public var credentials: S3Credentials
    /// Where phones reach the bucket (usually a CDN); nil: the server keeps streaming every download itself.
    public var publicDownloadURL: String?
    /// Files larger than this go up as multipart uploads of `partSize` parts, `partConcurrency` at a time.
    public var multipartThreshold: Int64 = 64 * 1024 * 1024
    public var partSize: Int64 = 16 * 1024 * 1024
    public var partConcurrency = 4
    public var connectTimeout: Duration = .seconds(10)
    /// A request that sends or receives nothing for this long has failed.
    public var readTimeout: Duration = .seconds(120)
    /// Back-off between failed sync attempts: doubles from the first to the last.
    public var firstRetryDelay: Duration = .seconds(2)
    public var longestRetryDelay: Duration = .seconds(300)
    /// How often the sync looks even when nothing woke it: a catalog re-signed before it expires goes up this way.
    public var checkInterval: Duration = .seconds(60)

    public init(
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

    public func makeClient() -> S3Client {
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
