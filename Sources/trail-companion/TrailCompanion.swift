import ArgumentParser
import Foundation
import Hummingbird
import Metrics
import Prometheus
import ServiceLifecycle
import TrailServer

@main
struct TrailCompanion: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trail-companion",
        abstract: "Build, review and publish offline park tours.",
        subcommands: [
            Serve.self, Migrate.self, UserCommand.self, SiteCommand.self, MemberCommand.self, TokenCommand.self,
            PackageCommand.self, BackupCommand.self, RestoreCommand.self, DoctorCommand.self, StorageCommand.self,
            MediaCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// `--root` and `--data`, shared by every command; each also reads its `TRAIL_...` variable (the flag wins).
struct LocationOptions: ParsableArguments {
    @Option(help: "Folder holding Templates/, Public/ and migrations/ (TRAIL_ROOT; default: current folder).")
    var root: String?

    @Option(help: "Data folder (TRAIL_DATA; default: ./data).")
    var data: String?

    func apply(to config: inout AppConfig) {
        let environment = ProcessInfo.processInfo.environment
        let cwd = FileManager.default.currentDirectoryPath
        config.root = URL(fileURLWithPath: root ?? environment["TRAIL_ROOT"] ?? cwd)
        config.dataFolder = URL(fileURLWithPath: data ?? environment["TRAIL_DATA"] ?? "\(cwd)/data")
    }

    func openDatabase() throws -> (AppDatabase, AppConfig) {
        var config = AppConfig()
        apply(to: &config)
        try DataFolder.prepare(config.dataFolder, sharedWithProxy: nil)
        return (try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder), config)
    }
}

/// Every setting of `serve`, each a flag and a `TRAIL_…` variable (the flag wins): the one place that turns them into
/// an ``AppConfig``. `doctor` takes the same options, so it checks the configuration the server would run with.
struct ServerOptions: ParsableArguments {
    @OptionGroup var location: LocationOptions
    @Option(help: "Address to listen on (TRAIL_HOSTNAME; default 127.0.0.1).") var hostname: String?
    @Option(help: "Port (TRAIL_PORT; default 8080).") var port: Int?
    @Option(name: .customLong("clamav-db"), help: "ClamAV signature folders joined by ':' (TRAIL_CLAMAV_DB; default /var/lib/clamav).") var clamavDB:
        String?
    @Option(help: "clamd unix socket path or host:port; selects the clamd backend (TRAIL_CLAMD).") var clamd: String?
    @Option(name: .customLong("max-upload-size"), help: "Largest upload in bytes (TRAIL_MAX_UPLOAD_SIZE; default 2 GiB - 1).") var maxUploadSize:
        Int64?
    @Option(name: .customLong("required-approvals"), help: "Approvals a new site requires (TRAIL_REQUIRED_APPROVALS; default 1).")
    var requiredApprovals: Int?
    @Option(name: .customLong("tile-url"), help: "Basemap tile URL template https://…/{z}/{x}/{y}.png (TRAIL_TILE_URL).") var tileURL: String?
    @Option(name: .customLong("tile-attribution"), help: "Credit for the tiles of --tile-url, written into each package (TRAIL_TILE_ATTRIBUTION).")
    var tileAttribution: String?
    @Option(
        name: .customLong("editor-tile-url"),
        help: "Basemap of the panel's maps, fetched by browsers only (TRAIL_EDITOR_TILE_URL; default --tile-url's, else OpenStreetMap's; none: off)."
    )
    var editorTileURL: String?
    @Option(name: .customLong("editor-tile-attribution"), help: "Credit shown on the panel's maps (TRAIL_EDITOR_TILE_ATTRIBUTION).")
    var editorTileAttribution: String?
    @Option(name: .customLong("tile-cap"), help: "Most map tiles one package build may fetch (TRAIL_TILE_CAP; default 20000).") var tileCap: Int?
    @Flag(
        name: .customLong("tile-allow-private"),
        help:
            "Let package builds fetch tiles from loopback, private and link-local addresses, e.g. an agency's own tile server on its LAN (TRAIL_TILE_ALLOW_PRIVATE=1)."
    )
    var tileAllowPrivate = false
    @Option(name: .customLong("public-url"), help: "URL the server is reached at (TRAIL_PUBLIC_URL; default http://<hostname>:<port>).")
    var publicURL: String?
    @Option(
        name: .customLong("catalog-lifetime-days"),
        help: "Days a signed catalog stays valid; re-signed when a quarter is left (TRAIL_CATALOG_LIFETIME_DAYS; default 7)."
    ) var catalogLifetimeDays: Double?
    @Option(name: .customLong("max-frame-area"), help: "Largest tour frame in km² (TRAIL_MAX_FRAME_AREA; default 2500).") var maxFrameArea: Double?
    @Option(
        name: .customLong("import-max-size"),
        help: "Largest import file (GeoJSON, GPX, KML, KMZ, CSV) in bytes (TRAIL_IMPORT_MAX_SIZE; default 20 MB)."
    ) var importMaxSize: Int?
    @Option(
        name: .customLong("trusted-proxies"),
        help:
            "Reverse proxies whose X-Forwarded-For names the client, as addresses or CIDR ranges joined by ',' (TRAIL_TRUSTED_PROXIES; default none)."
    ) var trustedProxies: String?
    @Option(
        name: .customLong("accel-redirect"),
        help:
            "With nginx in front: its internal location for the data folder, e.g. /_trail_files/; package and file downloads are then sent by nginx (TRAIL_ACCEL_REDIRECT; default: the server sends them)."
    )
    var accelRedirect: String?
    @Option(
        name: .customLong("min-free-space"),
        help:
            "Free space the data folder's disk keeps: below it uploads get 507 and /readyz fails, e.g. 2G, 500M, or bytes; 0 for none (TRAIL_MIN_FREE_SPACE; default 2G)."
    )
    var minFreeSpace: String?
    @Option(
        name: .customLong("require-two-step"),
        help:
            "Who must use two-step sign-in: none, admins, managers (and admins) or all; those not enrolled enrol at their next sign-in (TRAIL_REQUIRE_TWO_STEP; default admins)."
    )
    var requireTwoStep: String?
    @Option(
        name: .customLong("oidc-issuer"),
        help: "Single sign-on: the OpenID Connect provider's issuer URL, https:// (http:// only on loopback) (TRAIL_OIDC_ISSUER)."
    )
    var oidcIssuer: String?
    @Option(name: .customLong("oidc-client-id"), help: "The client id registered with the provider (TRAIL_OIDC_CLIENT_ID).") var oidcClientId: String?
    @Option(name: .customLong("oidc-client-secret-file"), help: "A file holding the client secret, mode 600 (TRAIL_OIDC_CLIENT_SECRET_FILE).")
    var oidcClientSecretFile: String?
    @Option(name: .customLong("oidc-label"), help: "The sign-in button's label (TRAIL_OIDC_LABEL; default \"Sign in with your agency account\").")
    var oidcLabel: String?
    @Flag(
        name: .customLong("oidc-public-client"),
        help: "Register as a public client: PKCE alone, no client secret (Login.gov's PKCE way) (TRAIL_OIDC_PUBLIC_CLIENT=1)."
    )
    var oidcPublicClient = false
    @Option(
        name: .customLong("oidc-acr-values"),
        help:
            "acr_values for the provider's sign-in, where it requires them (Login.gov: http://idmanagement.gov/ns/assurance/ial/1) (TRAIL_OIDC_ACR_VALUES)."
    )
    var oidcAcrValues: String?
    @Option(
        name: .customLong("oidc-prompt"),
        help: "prompt for the provider's sign-in, where it requires one (Login.gov: select_account) (TRAIL_OIDC_PROMPT)."
    )
    var oidcPrompt: String?
    @Option(
        name: .customLong("oidc-acr"),
        help:
            "acr values, comma-separated, that show the provider asked for a second factor, so no second step is asked here (TRAIL_OIDC_ACR)."
    )
    var oidcAcr: String?
    @Flag(
        name: .customLong("oidc-skip-second-step"),
        help:
            "Trust the provider's sign-in alone: enrolled accounts and admins give no second step here after single sign-on (TRAIL_OIDC_SKIP_SECOND_STEP=1)."
    )
    var oidcSkipSecondStep = false
    @Flag(
        name: .customLong("oidc-create-users"),
        help: "Create an account at the first single sign-on of a verified email nobody has (TRAIL_OIDC_CREATE_USERS=1)."
    )
    var oidcCreateUsers = false
    @Option(
        name: .customLong("smtp-url"),
        help:
            "Email (invitations, notifications) through smtp://host:port (STARTTLS; plain only to a loopback relay) or smtps://host:port (TRAIL_SMTP_URL; default: no email)."
    )
    var smtpURL: String?
    @Option(name: .customLong("smtp-user"), help: "The SMTP account, when the server asks for one (TRAIL_SMTP_USER).") var smtpUser: String?
    @Option(name: .customLong("smtp-password-file"), help: "A file holding the SMTP password, mode 600 (TRAIL_SMTP_PASSWORD_FILE).")
    var smtpPasswordFile: String?
    @Option(
        name: .customLong("mail-from"),
        help:
            "The sender of every email (TRAIL_MAIL_FROM; default \"Trail Companion <trail@DOMAIN>\", DOMAIN the public URL's host or this machine's name, when either is a mail domain)."
    )
    var mailFrom: String?
    @Flag(help: "Add a demo site and tour (TRAIL_DEMO=1).") var demo = false
    @Flag(
        name: .customLong("no-optimize-media"),
        help: "Make no phone-sized copies of videos, audio and images; packages ship the originals (TRAIL_OPTIMIZE_MEDIA=0)."
    )
    var noOptimizeMedia = false
    @Option(
        name: .customLong("media-conversions"),
        help: "Media conversions at a time, each a bounded ffmpeg or libvips process (TRAIL_MEDIA_CONVERSIONS; default 1)."
    )
    var mediaConversions: Int?
    @OptionGroup(title: "Object storage") var storage: StorageOptions

    func makeConfig() throws -> AppConfig {
        let environment = ProcessInfo.processInfo.environment
        var config = AppConfig()
        location.apply(to: &config)
        config.hostname = hostname ?? environment["TRAIL_HOSTNAME"] ?? config.hostname
        config.port = try port ?? environment["TRAIL_PORT"].map { try Self.parse($0, "TRAIL_PORT") } ?? config.port
        config.clamavDatabaseFolders =
            (clamavDB ?? environment["TRAIL_CLAMAV_DB"]).map { $0.split(separator: ":").map(String.init) } ?? config.clamavDatabaseFolders
        config.clamdAddress = clamd ?? environment["TRAIL_CLAMD"]
        config.maxUploadSize =
            try maxUploadSize ?? environment["TRAIL_MAX_UPLOAD_SIZE"].map { try Self.parse($0, "TRAIL_MAX_UPLOAD_SIZE") } ?? config.maxUploadSize
        config.defaultRequiredApprovals =
            try requiredApprovals ?? environment["TRAIL_REQUIRED_APPROVALS"].map { try Self.parse($0, "TRAIL_REQUIRED_APPROVALS") }
            ?? config.defaultRequiredApprovals
        config.tileURLTemplate = tileURL ?? environment["TRAIL_TILE_URL"]
        config.tileAttribution = tileAttribution ?? environment["TRAIL_TILE_ATTRIBUTION"]
        config.tileCap = try tileCap ?? environment["TRAIL_TILE_CAP"].map { try Self.parse($0, "TRAIL_TILE_CAP") } ?? config.tileCap
        if let template = config.tileURLTemplate, let problem = TileURLTemplate.problem(template) {
            throw ValidationError("--tile-url \(template): \(problem)")
        }
        config.editorTileURL = editorTileURL ?? environment["TRAIL_EDITOR_TILE_URL"]
        config.editorTileAttribution = editorTileAttribution ?? environment["TRAIL_EDITOR_TILE_ATTRIBUTION"]
        if let template = config.editorTileURL, let problem = EditorBasemap.problem(template) {
            throw ValidationError("--editor-tile-url \(template): \(problem)")
        }
        guard config.tileCap >= 1 else { throw ValidationError("--tile-cap must be at least 1") }
        config.tileFetch.allowPrivateAddresses = tileAllowPrivate || environment["TRAIL_TILE_ALLOW_PRIVATE"] == "1"
        config.publicURL = publicURL ?? environment["TRAIL_PUBLIC_URL"]
        config.demo = demo || environment["TRAIL_DEMO"] == "1"
        if let issuer = oidcIssuer ?? environment["TRAIL_OIDC_ISSUER"] {
            if let problem = OIDCSettings.issuerProblem(issuer) { throw ValidationError("--oidc-issuer \(problem)") }
            guard let clientId = oidcClientId ?? environment["TRAIL_OIDC_CLIENT_ID"], !clientId.isEmpty else {
                throw ValidationError("--oidc-issuer needs --oidc-client-id")
            }
            let secretFile = (oidcClientSecretFile ?? environment["TRAIL_OIDC_CLIENT_SECRET_FILE"]).flatMap { $0.isEmpty ? nil : $0 }
            let publicClient = oidcPublicClient || environment["TRAIL_OIDC_PUBLIC_CLIENT"] == "1"
            if publicClient, secretFile != nil { throw ValidationError("--oidc-public-client has no client secret: drop --oidc-client-secret-file") }
            if !publicClient, secretFile == nil {
                throw ValidationError(
                    "--oidc-issuer needs --oidc-client-secret-file (a file: a secret on the command line shows in ps), or --oidc-public-client"
                )
            }
            var settings = OIDCSettings(issuer: issuer, clientId: clientId, clientSecretFile: secretFile)
            settings.acrValues = (oidcAcrValues ?? environment["TRAIL_OIDC_ACR_VALUES"]).flatMap {
                $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0
            }
            settings.prompt = (oidcPrompt ?? environment["TRAIL_OIDC_PROMPT"]).flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
            if let label = oidcLabel ?? environment["TRAIL_OIDC_LABEL"], !label.trimmingCharacters(in: .whitespaces).isEmpty {
                settings.label = label
            }
            settings.createUsers = oidcCreateUsers || environment["TRAIL_OIDC_CREATE_USERS"] == "1"
            settings.secondFactorACR = Set(
                (oidcAcr ?? environment["TRAIL_OIDC_ACR"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                    !$0.isEmpty
                }
            )
            settings.askSecondStep = !(oidcSkipSecondStep || environment["TRAIL_OIDC_SKIP_SECOND_STEP"] == "1")
            config.oidc = settings
        } else if (oidcClientId ?? environment["TRAIL_OIDC_CLIENT_ID"]) != nil {
            throw ValidationError("--oidc-client-id needs --oidc-issuer")
        }
        if let text = requireTwoStep ?? environment["TRAIL_REQUIRE_TWO_STEP"] {
            guard let requirement = TwoStepRequirement(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw ValidationError("--require-two-step must be one of none, admins, managers, all (not \(text))")
            }
            config.twoStepRequirement = requirement
        }
        if let prefix = accelRedirect ?? environment["TRAIL_ACCEL_REDIRECT"], !prefix.isEmpty {
            guard prefix.hasPrefix("/"), prefix.hasSuffix("/"), prefix.count > 2, !prefix.contains(".."), !prefix.contains("?") else {
                throw ValidationError("--accel-redirect must be a location path that starts and ends with '/', e.g. /_trail_files/")
            }
            config.accelRedirect = prefix
        }
        if let proxies = trustedProxies ?? environment["TRAIL_TRUSTED_PROXIES"] {
            do { config.trustedProxies = try TrustedProxies(parsing: proxies) } catch { throw ValidationError("--trusted-proxies: \(error)") }
        }
        guard config.defaultRequiredApprovals >= 1 else { throw ValidationError("--required-approvals must be at least 1") }
        guard config.maxUploadSize > 0 else { throw ValidationError("--max-upload-size must be positive") }
        let days: Double =
            try catalogLifetimeDays ?? environment["TRAIL_CATALOG_LIFETIME_DAYS"].map { try Self.parse($0, "TRAIL_CATALOG_LIFETIME_DAYS") } ?? 7
        guard days > 0, days <= 366 else { throw ValidationError("--catalog-lifetime-days must be between 0 and 366") }
        config.catalogLifetime = days * 86_400
        config.maxFrameAreaKm2 =
            try maxFrameArea ?? environment["TRAIL_MAX_FRAME_AREA"].map { try Self.parse($0, "TRAIL_MAX_FRAME_AREA") } ?? config.maxFrameAreaKm2
        guard config.maxFrameAreaKm2 > 0 else { throw ValidationError("--max-frame-area must be positive") }
        config.importMaxSize =
            try importMaxSize ?? environment["TRAIL_IMPORT_MAX_SIZE"].map { try Self.parse($0, "TRAIL_IMPORT_MAX_SIZE") } ?? config.importMaxSize
        guard config.importMaxSize > 0 else { throw ValidationError("--import-max-size must be positive") }
        if let text = minFreeSpace ?? environment["TRAIL_MIN_FREE_SPACE"] {
            guard let bytes = FreeSpace.parse(text) else {
                throw ValidationError("--min-free-space \(text): give bytes, or a size such as 500M or 2G")
            }
            config.minFreeSpace = bytes
        }
        config.storage = try storage.makeSettings(environment: environment)
        config.mail = try makeMailSettings(environment: environment, publicURL: config.publicURL)
        config.mediaOptimization.enabled = !(noOptimizeMedia || environment["TRAIL_OPTIMIZE_MEDIA"] == "0")
        config.mediaOptimization.concurrency =
            try mediaConversions ?? environment["TRAIL_MEDIA_CONVERSIONS"].map { try Self.parse($0, "TRAIL_MEDIA_CONVERSIONS") }
            ?? config.mediaOptimization.concurrency
        guard (1...16).contains(config.mediaOptimization.concurrency) else { throw ValidationError("--media-conversions must be from 1 to 16") }
        return config
    }

    /// The SMTP settings, or nil without `--smtp-url`; a user or password file without it is a mistake said at start.
    func makeMailSettings(environment: [String: String], publicURL: String?) throws -> MailSettings? {
        func value(_ flag: String?, _ name: String) -> String? { (flag ?? environment[name]).flatMap { $0.isEmpty ? nil : $0 } }
        let user = value(smtpUser, "TRAIL_SMTP_USER")
        let passwordFile = value(smtpPasswordFile, "TRAIL_SMTP_PASSWORD_FILE")
        guard let text = value(smtpURL, "TRAIL_SMTP_URL") else {
            if user != nil || passwordFile != nil { throw ValidationError("--smtp-user and --smtp-password-file need --smtp-url") }
            return nil
        }
        do {
            let url = try MailSettings.parseURL(text)
            let from: String
            if let given = value(mailFrom, "TRAIL_MAIL_FROM") {
                from = try MailSettings.parseFrom(given)
            } else if let derived = MailSettings.defaultFrom(publicURL: publicURL) {
                from = derived
            } else {
                throw MailSettingsProblem(
                    "--smtp-url needs --mail-from here: neither the public URL nor this machine's name "
                        + "(\(ProcessInfo.processInfo.hostName)) is a mail domain, e.g. --mail-from \"Trail Companion <trail@parks.example.gov>\""
                )
            }
            let settings = MailSettings(url: url, user: user, passwordFile: passwordFile, from: from)
            if passwordFile != nil, user == nil { throw MailSettingsProblem("--smtp-password-file needs --smtp-user") }
            if let passwordFile, !FileManager.default.isReadableFile(atPath: passwordFile) {
                throw MailSettingsProblem("--smtp-password-file \(passwordFile) cannot be read")
            }
            return settings
        } catch let problem as MailSettingsProblem {
            throw ValidationError(problem.description.hasPrefix("--") ? problem.description : "--smtp-url: \(problem)")
        }
    }

    static func parse<T: LosslessStringConvertible>(_ text: String, _ name: String) throws -> T {
        guard let value = T(text) else { throw ValidationError("\(name)=\(text) is not a valid number") }
        return value
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start the web server (migrates the database first).")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let config = try options.makeConfig()
        // swift-metrics reports of any library land in the same registry that `/metrics` renders.
        let metrics = AppMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let app = try await buildApplication(config: config, metrics: metrics)
        // SIGTERM (systemd's stop) or SIGINT: stop accepting connections and let running requests finish for up to
        // 30 s (an upload cut then resumes later); builds and scans are left to recovery at the next start.
        var lifecycle = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
        lifecycle.maximumGracefulShutdownDuration = .seconds(30)
        lifecycle.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: lifecycle).run()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the migrations in migrations/ to the database.")
    @OptionGroup var location: LocationOptions

    func run() async throws {
        let (database, config) = try location.openDatabase()
        print("Database \(config.databasePath) is at migration \(try await database.appliedMigrations().last ?? "none").")
    }
}

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Create or disable users, or reset a password.",
        subcommands: [Create.self, Disable.self, ResetPassword.self, ResetTwoStep.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user; without --password a one-time password is printed.")
        @OptionGroup var location: LocationOptions
        @Option var email: String
        @Option var name: String
        @Option(help: "At least 10 characters; omit to get a one-time password that must be changed at first sign-in.") var password: String?
        @Flag var admin = false

        func run() async throws {
            let (database, config) = try location.openDatabase()
            let chosen = password ?? CLIPassword.make()
            let user = try await database.createUser(
                email: email,
                displayName: name,
                password: chosen,
                isAdmin: admin,
                mustChangePassword: password == nil,
                bcryptCost: config.bcryptCost,
                actor: .system
            )
            print("Created \(user.email)\(admin ? " (admin)" : "").")
            if password == nil { print("One-time password: \(chosen)") }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user: ends their sessions and revokes their tokens.")
        @OptionGroup var location: LocationOptions
        @Option var email: String

        func run() async throws {
            let (database, _) = try location.openDatabase()
            guard let user = try await database.user(email: email) else { throw ValidationError("No user with email \(email).") }
            try await database.setUserDisabled(id: user.id!, disabled: true, actor: .system)
            print("Disabled \(user.email).")
        }
    }
}

extension UserCommand {
    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password",
            abstract: "Set a new one-time password and print it once; ends the user's sessions and revokes their API tokens.",
            discussion: "The user must choose their own password at their next sign-in. Recorded in the audit log."
        )
        @OptionGroup var location: LocationOptions
        @Option var email: String

        func run() async throws {
            let (database, config) = try location.openDatabase()
            guard let user = try await database.user(email: email) else { throw ValidationError("No user with email \(email).") }
            let (_, password) = try await database.resetPassword(userId: user.id!, bcryptCost: config.bcryptCost, actor: .system)
            print("Reset the password of \(user.email); their sessions and API tokens have ended.")
            print("One-time password: \(password)")
        }
    }
}

extension UserCommand {
    struct ResetTwoStep: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-two-step",
            abstract: "Clear a user's two-step sign-in (a lost phone, recovery codes used up); ends their sessions.",
            discussion: "They are told at their next sign-in, and enrol again there if --require-two-step covers them. Recorded in the audit log."
        )
        @OptionGroup var location: LocationOptions
        @Option var email: String

        func run() async throws {
            let (database, _) = try location.openDatabase()
            guard let user = try await database.user(email: email) else { throw ValidationError("No user with email \(email).") }
            try await database.resetTwoStep(userId: user.id!, actor: .system)
            print("Reset the two-step sign-in of \(user.email); their sessions have ended.")
        }
    }
}

struct SiteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "site", abstract: "Create sites.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a site; its managers then add members.")
        @OptionGroup var location: LocationOptions
        @Option var slug: String
        @Option var name: String
        @Option var description: String = ""
        @Option(name: .customLong("required-approvals")) var requiredApprovals: Int = 1
        @Option(name: .customLong("quota-mb"), help: "Storage quota for the site's media in MB (default: none).") var quotaMB: Int64?

        func run() async throws {
            let (database, _) = try location.openDatabase()
            let site = try await database.createSite(
                SiteInput(
                    slug: slug,
                    name: name,
                    description: description,
                    requiredApprovals: requiredApprovals,
                    storageQuotaBytes: quotaMB.map { $0 * 1_048_576 }
                ),
                actor: .system
            )
            print("Created site \(site.slug) (\(site.name)), \(site.requiredApprovals) approval(s) required.")
        }
    }
}

struct MemberCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "member", abstract: "Manage site memberships.", subcommands: [Add.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give a user a role on a site, or change it.")
        @OptionGroup var location: LocationOptions
        @Option var site: String
        @Option var email: String
        @Option(help: "author, reviewer or manager") var role: String

        func run() async throws {
            let (database, _) = try location.openDatabase()
            guard let siteRole = SiteRole(rawValue: role) else { throw ValidationError("--role must be author, reviewer or manager") }
            guard let record = try await database.site(slug: site) else { throw ValidationError("No site with slug \(site).") }
            try await database.setMembership(siteId: record.id!, email: email, role: siteRole, actor: .system)
            print("\(email) is now \(siteRole.rawValue) of \(record.slug).")
        }
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Manage API tokens.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new bearer token once; only its hash is stored.")
        @OptionGroup var location: LocationOptions
        @Option var email: String
        @Option var name: String = "cli"

        func run() async throws {
            let (database, _) = try location.openDatabase()
            guard let user = try await database.user(email: email) else { throw ValidationError("No user with email \(email).") }
            let (token, _) = try await database.createAPIToken(userId: user.id!, name: name, actor: .system)
            print(token)
        }
    }
}
