import ArgumentParser
import Foundation
import TrailServer

/// `--storage` and its companions (docs/operators.md, "Object storage and a CDN"), each also a variable (the flag wins).
struct StorageOptions: ParsableArguments {
    @Option(help: "Mirror released packages, manifests, files and the signed catalog to s3://BUCKET/PREFIX (TRAIL_STORAGE; default: none).")
    var storage: String?
    @Option(
        name: .customLong("s3-endpoint"),
        help: "S3-compatible endpoint URL, e.g. http://127.0.0.1:8333 for SeaweedFS (TRAIL_S3_ENDPOINT; default: AWS)."
    )
    var s3Endpoint: String?
    @Option(name: .customLong("s3-region"), help: "Region of the bucket (AWS_REGION; default us-east-1).")
    var s3Region: String?
    @Option(
        name: .customLong("public-download-url"),
        help:
            "Where phones reach the bucket, usually a CDN: catalog URLs point there and downloads redirect there once an object is in the bucket (TRAIL_PUBLIC_DOWNLOAD_URL; default: the server streams)."
    )
    var publicDownloadURL: String?
    @Option(
        name: .customLong("s3-part-size"),
        help: "Part size of multipart uploads, at least 5M; files over four parts go in parts, four at a time (TRAIL_S3_PART_SIZE; default 16M)."
    )
    var s3PartSize: String?

    /// nil without `--storage`. Keys come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or from
    /// systemd's `LoadCredential=` files: never a flag, so they stay out of `ps` and shell history.
    func makeSettings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StorageSettings? {
        guard let text = storage ?? environment["TRAIL_STORAGE"], !text.isEmpty else {
            if publicDownloadURL ?? environment["TRAIL_PUBLIC_DOWNLOAD_URL"] != nil {
                throw ValidationError("--public-download-url needs --storage: it names where the bucket is reached")
            }
            return nil
        }
        let location: StorageLocation
        do { location = try StorageLocation.parse(text) } catch { throw ValidationError("--storage: \(error)") }
        var endpoint: URL? = nil
        if let endpointText = s3Endpoint ?? environment["TRAIL_S3_ENDPOINT"], !endpointText.isEmpty {
            guard let url = URL(string: endpointText), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--s3-endpoint \(endpointText): give an http:// or https:// URL")
            }
            endpoint = url
        }
        guard let credentials = S3Credentials.fromEnvironment(environment) else {
            throw ValidationError(
                "--storage needs the bucket's keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                    + "or as systemd credentials aws-access-key-id and aws-secret-access-key (LoadCredential=)"
            )
        }
        var publicURL = publicDownloadURL ?? environment["TRAIL_PUBLIC_DOWNLOAD_URL"]
        if let text = publicURL, text.isEmpty { publicURL = nil }
        if let text = publicURL {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--public-download-url \(text): give an http:// or https:// URL")
            }
        }
        var settings = StorageSettings(
            location: location,
            endpoint: endpoint,
            region: s3Region ?? environment["AWS_REGION"] ?? "us-east-1",
            credentials: credentials,
            publicDownloadURL: publicURL
        )
        if let text = s3PartSize ?? environment["TRAIL_S3_PART_SIZE"] {
            // S3 refuses parts under 5 MiB (but the last) and more than 10,000 parts.
            guard let bytes = FreeSpace.parse(text), bytes >= 5 * 1024 * 1024, bytes <= 5 * 1024 * 1024 * 1024 else {
                throw ValidationError("--s3-part-size \(text): give a size from 5M to 5G")
            }
            settings.partSize = bytes
            settings.multipartThreshold = 4 * bytes
        }
        return settings
    }
}

/// `storage sync [--all]` and `storage check`.
struct StorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Sync or check the object-storage mirror.",
        discussion: "Publishes releases to the bucket named by --storage, or compares the bucket with the database.",
        subcommands: [Sync.self, Check.self]
    )

    /// What both subcommands need: the server's configuration (the catalog they write must be the one it serves).
    static func makeSync(_ options: ServerOptions) async throws -> DistributionSync {
        let config = try options.makeConfig()
        guard config.storage != nil else { throw ValidationError("say which bucket with --storage s3://BUCKET/PREFIX (or TRAIL_STORAGE)") }
        guard FileManager.default.fileExists(atPath: config.databasePath) else {
            throw ValidationError("\(config.databasePath) does not exist: is --data the server's data folder?")
        }
        let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
        guard let sync = try await DistributionSync.make(config: config, database: database) else { throw ExitCode.failure }
        return sync
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload what the bucket lacks, then the catalog; with --all, everything again (a new bucket, a CDN change).",
            discussion: "Safe while the server runs. Exit status: 0 the bucket is in sync, 1 it is not (the error says why)."
        )
        @OptionGroup var options: ServerOptions
        @Flag(help: "Forget what is recorded as confirmed in this bucket and upload every object again.") var all = false

        func run() async throws {
            let sync = try await StorageCommand.makeSync(options)
            defer { Task { await sync.shutdown() } }
            if all { try await sync.forgetConfirmed() }
            do {
                let report = try await sync.syncOnce()
                print(
                    "\(sync.location): uploaded \(report.uploaded.count) object(s)"
                        + (report.catalogUploaded ? ", then catalog version \(report.catalogVersion ?? 0)" : "; the catalog was up to date")
                        + ". In sync."
                )
            } catch {
                print("error: \(error)")
                throw ExitCode.failure
            }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare the bucket with the database: list each object that is missing or different, and check the catalog's signature.",
            discussion: "Reads only (besides the write test under PREFIX/.trail/). Exit status: 0 in sync, 1 differences or an error."
        )
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let sync = try await StorageCommand.makeSync(options)
            defer { Task { await sync.shutdown() } }
            let problems: [String]
            do {
                try await sync.checkBucket()
                problems = try await sync.compare()
            } catch {
                print("error: \(error)")
                throw ExitCode.failure
            }
            if problems.isEmpty {
                print(
                    "\(sync.location) is in sync: every object the published packages need is there with its size and SHA-256, "
                        + "and catalog.json verifies with the signing key."
                )
            } else {
                print("\(sync.location) differs from the database in \(problems.count) place(s):")
                for problem in problems { print("  \(problem)") }
                throw ExitCode.failure
            }
        }
    }
}
