import ArgumentParser
import Foundation
import ObjectStorage
import TrailServer

/// `--storage` and its companions (docs/operators.md, "Object storage and a CDN"), each also a variable (the flag wins).
struct StorageOptions: ParsableArguments {
    @Option(name: .customLong(Settings.storage.flag), help: ArgumentHelp(Settings.storage.help))
    var storage: String?
    @Option(name: .customLong(Settings.s3Endpoint.flag), help: ArgumentHelp(Settings.s3Endpoint.help))
    var s3Endpoint: String?
    @Option(name: .customLong(Settings.s3Region.flag), help: ArgumentHelp(Settings.s3Region.help))
    var s3Region: String?
    @Option(name: .customLong(Settings.publicDownloadURL.flag), help: ArgumentHelp(Settings.publicDownloadURL.help))
    var publicDownloadURL: String?
    @Option(name: .customLong(Settings.s3PartSize.flag), help: ArgumentHelp(Settings.s3PartSize.help))
    var s3PartSize: String?

    /// nil without `--storage`. Keys come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or from
    /// systemd's `LoadCredential=` files: never a flag, so they stay out of `ps` and shell history.
    func makeSettings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StorageSettings? {
        guard let text = Settings.storage.value(storage, in: environment), !text.isEmpty else {
            if Settings.publicDownloadURL.value(publicDownloadURL, in: environment) != nil {
                throw ValidationError("--public-download-url needs --storage: it names where the bucket is reached")
            }
            return nil
        }
        let location: StorageLocation
        do { location = try StorageLocation.parse(text) } catch { throw ValidationError("--storage: \(error)") }
        var endpoint: URL? = nil
        if let endpointText = Settings.s3Endpoint.value(s3Endpoint, in: environment), !endpointText.isEmpty {
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
        var publicURL = Settings.publicDownloadURL.value(publicDownloadURL, in: environment)
        if let text = publicURL, text.isEmpty { publicURL = nil }
        if let text = publicURL {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--public-download-url \(text): give an http:// or https:// URL")
            }
        }
        var settings = StorageSettings(
            location: location,
            endpoint: endpoint,
            region: Settings.s3Region.value(s3Region, in: environment) ?? "us-east-1",
            credentials: credentials,
            publicDownloadURL: publicURL
        )
        if let text = Settings.s3PartSize.value(s3PartSize, in: environment) {
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
