import Foundation
import GRDB
import MalwareScan
import ObjectStorage

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `trail-companion doctor`: what an operator would check by hand before trusting a server, one line each, with the fix
/// for anything wrong. Reads only: it never creates, migrates or repairs anything.
package struct Doctor: Sendable {
    package struct Check: Sendable, Equatable {
        package enum Status: String, Sendable, Equatable { case ok, warning, failure }
        package var status: Status
        var name: String
        var message: String
        /// What to do about a warning or a failure.
        var fix: String?

        static func ok(_ name: String, _ message: String) -> Check { Check(status: .ok, name: name, message: message) }
        static func warning(_ name: String, _ message: String, fix: String) -> Check {
            Check(status: .warning, name: name, message: message, fix: fix)
        }
        static func failure(_ name: String, _ message: String, fix: String) -> Check {
            Check(status: .failure, name: name, message: message, fix: fix)
        }

        package var line: String {
            let mark =
                switch status {
                case .ok: "[ok]  "
                case .warning: "[warn]"
                case .failure: "[FAIL]"
                }
            return "\(mark) \(name): \(message)" + (fix.map { "\n         fix: \($0)" } ?? "")
        }
    }

    let config: AppConfig
    /// Signatures older than this are a warning (freshclam normally updates them several times a day).
    var signatureMaxAge: TimeInterval = 3 * 86_400
    var now = Date()

    package init(config: AppConfig) { self.config = config }

    static let signatureExtensions: Set<String> = [
        "cvd", "cld", "cud", "ndb", "ndu", "hdb", "hdu", "hsb", "hsu", "mdb", "mdu", "msb",
        "msu", "ldb", "ldu", "idb", "cdb", "cfg", "ign", "ign2", "fp", "sfp", "pdb", "gdb", "wdb", "yar", "yara",
    ]

    package func run() async -> [Check] {
        var checks = [signatures()]
        if let clamd = config.clamdAddress { checks.append(await clamdCheck(clamd)) }
        checks += [dataFolder(), signingKey(), freeSpace(), migrations(), await tileSource(), publicURL(), mediaTools()]
        if let storage = config.storage { checks.append(await objectStorage(storage)) }
        if let oidc = config.oidc { checks.append(oidcSecret(oidc)) }
        return checks
    }

    /// ffmpeg, ffprobe, vips and vipsheader, which make the phone-sized copies of media files.
    func mediaTools() -> Check {
        let name = "media tools"
        let settings = config.mediaOptimization
        guard settings.enabled else { return .ok(name, "media optimization is off (--no-optimize-media): packages ship the originals") }
        let missing = [settings.ffmpeg, settings.ffprobe, settings.vips, settings.vipsheader].filter { ConverterProcess.locate($0) == nil }
        guard missing.isEmpty else {
            return .failure(
                name,
                "\(missing.joined(separator: ", ")) not found: new uploads get no phone-sized copy and cannot be published",
                fix: "install Debian's ffmpeg and libvips-tools (scripts/install-deps.sh), or start with --no-optimize-media"
            )
        }
        return .ok(name, "ffmpeg and libvips found; \(settings.concurrency) conversion(s) at a time")
    }

    func signatures() -> Check {
        let name = "malware signatures"
        var newest: Date?
        var count = 0
        for folder in config.clamavDatabaseFolders {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                guard Self.signatureExtensions.contains((file as NSString).pathExtension.lowercased()) else { continue }
                count += 1
                let modified = (try? FileManager.default.attributesOfItem(atPath: "\(folder)/\(file)")[.modificationDate]) as? Date
                if let modified, modified > (newest ?? .distantPast) { newest = modified }
            }
        }
        let folders = config.clamavDatabaseFolders.joined(separator: ":")
        guard count > 0, let newest else {
            return .failure(
                name,
                "no ClamAV signature files in \(folders): every upload stays pending",
                fix: "apt-get install clamav-freshclam && freshclam (or point --clamav-db at the signature folder)"
            )
        }
        let days = now.timeIntervalSince(newest) / 86_400
        let age = String(format: "%.1f days old", days)
        if now.timeIntervalSince(newest) > signatureMaxAge {
            return .warning(
                name,
                "\(count) signature files in \(folders), the newest \(age)",
                fix: "check that clamav-freshclam runs: systemctl status clamav-freshclam; journalctl -u clamav-freshclam"
            )
        }
        return .ok(name, "\(count) signature files in \(folders), the newest \(age)")
    }

    func clamdCheck(_ address: String) async -> Check {
        let scanner = ClamdScanner(endpoint: ClamdEndpoint(parsing: address), signatureDirectories: config.clamavDatabaseFolders)
        if await scanner.ping() { return .ok("clamd", "\(address) answers PING") }
        return .failure(
            "clamd",
            "\(address) does not answer PING",
            fix: "systemctl status clamav-daemon; check --clamd (a unix socket path or host:port)"
        )
    }

    func dataFolder() -> Check {
        let name = "data folder"
        let path = config.dataFolder.path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return .failure(name, "\(path) does not exist", fix: "check --data (TRAIL_DATA); `trail-companion migrate --data \(path)` creates it")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
        if owner != getuid() {
            return .failure(
                name,
                "\(path) belongs to uid \(owner.map(String.init) ?? "?"), not to this user (uid \(getuid()))",
                fix: "run doctor as the service's user, or chown -R <service user> \(path)"
            )
        }
        if access(path, W_OK) != 0 {
            return .failure(name, "\(path) is not writable", fix: "chmod u+rwx \(path)")
        }
        // With --accel-redirect, nginx reads released packages through the service's group (docs/operators.md).
        let allowed = config.accelRedirect == nil ? 0o700 : 0o750
        if mode & ~allowed & 0o777 != 0 {
            return .failure(
                name,
                String(format: "%@ has mode %o: others can read uploads, unpublished media and the database", path, mode),
                fix: String(format: "chmod %o %@", allowed, path)
            )
        }
        return .ok(name, String(format: "%@, mode %o, owned by this user", path, mode))
    }

    func signingKey() -> Check {
        let name = "signing key"
        let key = config.dataPaths.signingKey
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: key.path) else {
            if releasedVersions() > 0 {
                return .failure(
                    name,
                    "\(key.path) is missing but packages were released with it: apps will refuse packages signed by a new key",
                    fix: "restore keys/signing.ed25519 from a backup (trail-companion restore)"
                )
            }
            return .warning(name, "\(key.path) does not exist yet", fix: "serve creates it at its first start; back it up with the data folder")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o077 != 0 {
            return .failure(
                name,
                String(format: "%@ has mode %o: anyone who reads it can sign packages apps trust", key.path, mode),
                fix: "chmod 600 \(key.path)"
            )
        }
        return .ok(name, String(format: "%@, mode %o", key.path, mode))
    }

    /// The single sign-on client secret: readable, not empty, and nobody else's business.
    func oidcSecret(_ settings: OIDCSettings) -> Check {
        let name = "single sign-on secret"
        guard let path = settings.clientSecretFile else { return .ok(name, "none: a public client, PKCE alone proves it") }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), (try? settings.clientSecret()) != nil else {
            return .failure(name, "\(path) cannot be read or is empty", fix: "put the client secret the provider gave you into \(path), on one line")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o077 != 0 {
            return .failure(
                name,
                String(format: "%@ has mode %o: others on this machine can read the client secret", path, mode),
                fix: "chmod 600 \(path)"
            )
        }
        return .ok(name, String(format: "%@, mode %o", path, mode))
    }

    func freeSpace() -> Check {
        let name = "free space"
        guard let free = FreeSpace.available(at: config.dataFolder) else {
            return .failure(name, "cannot read the free space of \(config.dataFolder.path)", fix: "check that the data folder exists")
        }
        if free < config.minFreeSpace {
            return .failure(
                name,
                "\(FreeSpace.describe(free)) free, below the floor of \(FreeSpace.describe(config.minFreeSpace)): uploads are refused",
                fix: "free space (old backups, logs), grow the disk, or lower --min-free-space"
            )
        }
        return .ok(name, "\(FreeSpace.describe(free)) free (floor \(FreeSpace.describe(config.minFreeSpace)))")
    }

    func migrations() -> Check {
        let name = "database"
        guard FileManager.default.fileExists(atPath: config.databasePath) else {
            return .warning(name, "\(config.databasePath) does not exist yet", fix: "trail-companion migrate (serve does it at start)")
        }
        let known = ((try? FileManager.default.contentsOfDirectory(atPath: config.migrationsFolder.path)) ?? [])
            .filter { $0.hasSuffix(".sql") }.map { String($0.dropLast(4)) }.sorted()
        let applied: [String]
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let queue = try DatabaseQueue(path: config.databasePath, configuration: readOnly)
            defer { try? queue.close() }
            applied = try queue.read { try AppDatabase.appliedMigrationIdentifiers($0) }
        } catch {
            return .failure(name, "\(config.databasePath) cannot be read: \(error)", fix: "check its owner and mode (0600, the service's user)")
        }
        let pending = known.filter { !applied.contains($0) }
        let unknown = applied.filter { !known.contains($0) }
        if !unknown.isEmpty {
            return .failure(
                name,
                "applied migrations this binary does not know: \(unknown.joined(separator: ", "))",
                fix: "run the binary (and --root) that made this database, or restore a backup"
            )
        }
        if !pending.isEmpty {
            return .failure(
                name,
                "\(pending.count) migration(s) not applied: \(pending.joined(separator: ", "))",
                fix: "trail-companion migrate --data \(config.dataFolder.path) (serve also does it at start)"
            )
        }
        return .ok(name, "all \(known.count) migrations applied (\(known.last ?? "none"))")
    }

    func releasedVersions() -> Int {
        var readOnly = Configuration()
        readOnly.readonly = true
        guard FileManager.default.fileExists(atPath: config.databasePath),
            let queue = try? DatabaseQueue(path: config.databasePath, configuration: readOnly)
        else { return 0 }
        defer { try? queue.close() }
        return (try? queue.read { try AppDatabase.releasedVersionCount($0) }) ?? 0
    }

    /// The tile server the panel's settings name (else `--tile-url`), asked for its world tile (0/0/0).
    func tileSource() async -> Check {
        let name = "tile source"
        var template = config.tileURLTemplate
        var readOnly = Configuration()
        readOnly.readonly = true
        if FileManager.default.fileExists(atPath: config.databasePath),
            let queue = try? DatabaseQueue(path: config.databasePath, configuration: readOnly)
        {
            if let saved = try? await queue.read({ try AppDatabase.savedTileURLTemplate($0) }) {
                template = saved
            }
            try? queue.close()
        }
        guard let template, !template.isEmpty else {
            return .warning(
                name,
                "no tile server is set: packages get a basemap only from an MBTiles file a tour brings",
                fix: "set one in the panel (Admin → Map tiles) or with --tile-url"
            )
        }
        let url = TileURLTemplate.expand(template, TileID(z: 0, x: 0, y: 0))
        guard URL(string: url) != nil else {
            return .failure(name, "\(template) is not a valid URL template", fix: "correct it in the panel or --tile-url")
        }
        // The same fetcher (and address checks) as a package build, with one try and a cache that is thrown away.
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("trail-doctor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        var options = config.tileFetch
        options.attempts = 1
        options.requestTimeout = 10
        let fetcher = TileFetcher(
            template: template,
            cacheRoot: cache,
            options: options,
            userAgent: TileFetcher.userAgent(publicURL: config.effectivePublicURL)
        )
        switch await fetcher.probe(TileID(z: 0, x: 0, y: 0)) {
        case .success(.file(_, let format)):
            return .ok(name, "\(url) answered a \(format) tile")
        case .success(.absent):
            return .failure(name, "\(url) has no world tile (0/0/0)", fix: "check the template and any API key in it")
        case .failure(let failure) where failure.message.contains("--tile-allow-private"):
            return .failure(
                name,
                "\(failure.message): package builds refuse it",
                fix: "serve with --tile-allow-private if this tile server is really yours"
            )
        case .failure(let failure) where failure.message.hasPrefix("HTTP ") || failure.message.contains("not a PNG"):
            return .failure(name, "\(url) answered \(failure.message)", fix: "check the template and any API key in it; use a raster tile URL")
        case .failure(let failure):
            return .failure(name, "\(url) did not answer: \(failure.message)", fix: "check the network path to the tile server (proxy, firewall)")
        }
    }

    func publicURL() -> Check {
        let name = "public URL"
        guard let url = config.publicURL else {
            return .failure(
                name,
                "--public-url is not set: links and package URLs say \(config.effectivePublicURL), and cookies are not Secure",
                fix: "serve behind TLS (deploy/nginx.conf) and set --public-url https://your.host (TRAIL_PUBLIC_URL)"
            )
        }
        guard config.usesTLS else {
            return .failure(
                name,
                "\(url) is not https: sign-in cookies and passwords would cross the network in the clear",
                fix: "serve behind TLS (deploy/nginx.conf) and set --public-url https://…"
            )
        }
        return .ok(name, "\(url)")
    }

    /// With `--storage`: the bucket answers to the keys and takes a write under the prefix (what `serve` checks at start).
    func objectStorage(_ settings: StorageSettings) async -> Check {
        let name = "object storage"
        let client = settings.makeClient()
        defer { Task { await client.shutdown() } }
        do {
            try await client.checkWritable(by: "doctor")
        } catch let error as S3Error {
            let fix =
                switch error.kind {
                case .accessDenied: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to keys that may read and write \(settings.location)"
                case .noSuchBucket: "create the bucket \(settings.location.bucket), or correct --storage"
                case .unreachable: "check --s3-endpoint (\(settings.endpoint?.absoluteString ?? "AWS")) and the network path to it"
                default: "see the error; `trail-companion storage check` shows what the bucket lacks"
                }
            return .failure(name, "\(error)", fix: fix)
        } catch {
            return .failure(name, "\(error)", fix: "check --storage and --s3-endpoint")
        }
        if settings.publicDownloadURL == nil {
            return .warning(
                name,
                "\(settings.location) answers and takes writes, but without --public-download-url phones still download from this server",
                fix: "set --public-download-url to the CDN (or public bucket) URL of \(settings.location)"
            )
        }
        return .ok(name, "\(settings.location) answers and takes writes; phones download from \(settings.publicDownloadURL!)")
    }
}
