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
            MediaCommand.self, TerrainCommand.self, MapCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// `--root` and `--data`, shared by every command; each also reads its `TRAIL_...` variable (the flag wins).
struct LocationOptions: ParsableArguments {
    @Option(name: .customLong(Settings.root.flag), help: ArgumentHelp(Settings.root.help))
    var root: String?

    @Option(name: .customLong(Settings.data.flag), help: ArgumentHelp(Settings.data.help))
    var data: String?

    func apply(to config: inout AppConfig) {
        let environment = ProcessInfo.processInfo.environment
        let cwd = FileManager.default.currentDirectoryPath
        config.root = URL(fileURLWithPath: Settings.root.value(root, in: environment) ?? cwd)
        config.dataFolder = URL(fileURLWithPath: Settings.data.value(data, in: environment) ?? "\(cwd)/data")
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
    @Option(name: .customLong(Settings.hostname.flag), help: ArgumentHelp(Settings.hostname.help)) var hostname: String?
    @Option(name: .customLong(Settings.port.flag), help: ArgumentHelp(Settings.port.help)) var port: Int?
    @Option(name: .customLong(Settings.clamavDB.flag), help: ArgumentHelp(Settings.clamavDB.help)) var clamavDB: String?
    @Option(name: .customLong(Settings.clamd.flag), help: ArgumentHelp(Settings.clamd.help)) var clamd: String?
    @Option(name: .customLong(Settings.maxUploadSize.flag), help: ArgumentHelp(Settings.maxUploadSize.help)) var maxUploadSize: Int64?
    @Option(name: .customLong(Settings.requiredApprovals.flag), help: ArgumentHelp(Settings.requiredApprovals.help))
    var requiredApprovals: Int?
    @Option(name: .customLong(Settings.tileURL.flag), help: ArgumentHelp(Settings.tileURL.help)) var tileURL: String?
    @Option(name: .customLong(Settings.tileAttribution.flag), help: ArgumentHelp(Settings.tileAttribution.help))
    var tileAttribution: String?
    @Option(name: .customLong(Settings.editorTileURL.flag), help: ArgumentHelp(Settings.editorTileURL.help))
    var editorTileURL: String?
    @Option(name: .customLong(Settings.editorTileAttribution.flag), help: ArgumentHelp(Settings.editorTileAttribution.help))
    var editorTileAttribution: String?
    @Option(name: .customLong(Settings.tileCap.flag), help: ArgumentHelp(Settings.tileCap.help)) var tileCap: Int?
    @Flag(name: .customLong(Settings.tileAllowPrivate.flag), help: ArgumentHelp(Settings.tileAllowPrivate.help))
    var tileAllowPrivate = false
    @Option(name: .customLong(Settings.publicURL.flag), help: ArgumentHelp(Settings.publicURL.help))
    var publicURL: String?

    @Option(name: .customLong(Settings.dem.flag), help: ArgumentHelp(Settings.dem.help))
    var dem: String?
    @Option(name: .customLong(Settings.osmExtract.flag), help: ArgumentHelp(Settings.osmExtract.help))
    var osmExtract: String?
    @Option(name: .customLong(Settings.catalogLifetimeDays.flag), help: ArgumentHelp(Settings.catalogLifetimeDays.help)) var catalogLifetimeDays:
        Double?
    @Option(name: .customLong(Settings.maxFrameArea.flag), help: ArgumentHelp(Settings.maxFrameArea.help)) var maxFrameArea: Double?
    @Option(name: .customLong(Settings.importMaxSize.flag), help: ArgumentHelp(Settings.importMaxSize.help)) var importMaxSize: Int?
    @Option(name: .customLong(Settings.trustedProxies.flag), help: ArgumentHelp(Settings.trustedProxies.help)) var trustedProxies: String?
    @Option(name: .customLong(Settings.accelRedirect.flag), help: ArgumentHelp(Settings.accelRedirect.help))
    var accelRedirect: String?
    @Option(name: .customLong(Settings.minFreeSpace.flag), help: ArgumentHelp(Settings.minFreeSpace.help))
    var minFreeSpace: String?
    @Option(name: .customLong(Settings.requireTwoStep.flag), help: ArgumentHelp(Settings.requireTwoStep.help))
    var requireTwoStep: String?
    @Option(name: .customLong(Settings.oidcIssuer.flag), help: ArgumentHelp(Settings.oidcIssuer.help))
    var oidcIssuer: String?
    @Option(name: .customLong(Settings.oidcClientId.flag), help: ArgumentHelp(Settings.oidcClientId.help)) var oidcClientId: String?
    @Option(name: .customLong(Settings.oidcClientSecretFile.flag), help: ArgumentHelp(Settings.oidcClientSecretFile.help))
    var oidcClientSecretFile: String?
    @Option(name: .customLong(Settings.oidcLabel.flag), help: ArgumentHelp(Settings.oidcLabel.help))
    var oidcLabel: String?
    @Flag(name: .customLong(Settings.oidcPublicClient.flag), help: ArgumentHelp(Settings.oidcPublicClient.help))
    var oidcPublicClient = false
    @Option(name: .customLong(Settings.oidcAcrValues.flag), help: ArgumentHelp(Settings.oidcAcrValues.help))
    var oidcAcrValues: String?
    @Option(name: .customLong(Settings.oidcPrompt.flag), help: ArgumentHelp(Settings.oidcPrompt.help))
    var oidcPrompt: String?
    @Option(name: .customLong(Settings.oidcAcr.flag), help: ArgumentHelp(Settings.oidcAcr.help))
    var oidcAcr: String?
    @Flag(name: .customLong(Settings.oidcSkipSecondStep.flag), help: ArgumentHelp(Settings.oidcSkipSecondStep.help))
    var oidcSkipSecondStep = false
    @Flag(name: .customLong(Settings.oidcCreateUsers.flag), help: ArgumentHelp(Settings.oidcCreateUsers.help))
    var oidcCreateUsers = false
    @Option(name: .customLong(Settings.smtpURL.flag), help: ArgumentHelp(Settings.smtpURL.help))
    var smtpURL: String?
    @Option(name: .customLong(Settings.smtpUser.flag), help: ArgumentHelp(Settings.smtpUser.help)) var smtpUser: String?
    @Option(name: .customLong(Settings.smtpPasswordFile.flag), help: ArgumentHelp(Settings.smtpPasswordFile.help))
    var smtpPasswordFile: String?
    @Option(name: .customLong(Settings.mailFrom.flag), help: ArgumentHelp(Settings.mailFrom.help))
    var mailFrom: String?
    @Flag(name: .customLong(Settings.demo.flag), help: ArgumentHelp(Settings.demo.help)) var demo = false
    @Flag(name: .customLong(Settings.noOptimizeMedia.flag), help: ArgumentHelp(Settings.noOptimizeMedia.help))
    var noOptimizeMedia = false
    @Option(name: .customLong(Settings.mediaConversions.flag), help: ArgumentHelp(Settings.mediaConversions.help))
    var mediaConversions: Int?
    @OptionGroup(title: "Object storage") var storage: StorageOptions

    func makeConfig() throws -> AppConfig {
        do { return try readConfig() } catch let problem as SettingProblem { throw ValidationError(problem.description) }
    }

    private func readConfig() throws -> AppConfig {
        let environment = ProcessInfo.processInfo.environment
        var config = AppConfig()
        location.apply(to: &config)
        config.hostname = Settings.hostname.value(hostname, in: environment) ?? config.hostname
        config.port = try Settings.port.number(port, in: environment) ?? config.port
        config.clamavDatabaseFolders =
            Settings.clamavDB.value(clamavDB, in: environment).map { $0.split(separator: ":").map(String.init) } ?? config.clamavDatabaseFolders
        config.clamdAddress = Settings.clamd.value(clamd, in: environment)
        config.maxUploadSize =
            try Settings.maxUploadSize.number(maxUploadSize, in: environment) ?? config.maxUploadSize
        config.defaultRequiredApprovals =
            try Settings.requiredApprovals.number(requiredApprovals, in: environment)
            ?? config.defaultRequiredApprovals
        config.tileURLTemplate = Settings.tileURL.value(tileURL, in: environment)
        config.tileAttribution = Settings.tileAttribution.value(tileAttribution, in: environment)
        config.tileCap = try Settings.tileCap.number(tileCap, in: environment) ?? config.tileCap
        if let template = config.tileURLTemplate, let problem = TileURLTemplate.problem(template) {
            throw ValidationError("--tile-url \(template): \(problem)")
        }
        config.editorTileURL = Settings.editorTileURL.value(editorTileURL, in: environment)
        config.editorTileAttribution = Settings.editorTileAttribution.value(editorTileAttribution, in: environment)
        if let template = config.editorTileURL, let problem = EditorBasemap.problem(template) {
            throw ValidationError("--editor-tile-url \(template): \(problem)")
        }
        guard config.tileCap >= 1 else { throw ValidationError("--tile-cap must be at least 1") }
        config.tileFetch.allowPrivateAddresses = Settings.tileAllowPrivate.isOn(tileAllowPrivate, in: environment)
        config.publicURL = Settings.publicURL.value(publicURL, in: environment)
        config.demPath = Settings.dem.value(dem, in: environment).flatMap { $0.isEmpty ? nil : $0 }
        config.osmExtractPath = Settings.osmExtract.value(osmExtract, in: environment).flatMap { $0.isEmpty ? nil : $0 }
        config.demo = Settings.demo.isOn(demo, in: environment)
        if let issuer = Settings.oidcIssuer.value(oidcIssuer, in: environment) {
            if let problem = OIDCSettings.issuerProblem(issuer) { throw ValidationError("--oidc-issuer \(problem)") }
            guard let clientId = Settings.oidcClientId.value(oidcClientId, in: environment), !clientId.isEmpty else {
                throw ValidationError("--oidc-issuer needs --oidc-client-id")
            }
            let secretFile = Settings.oidcClientSecretFile.value(oidcClientSecretFile, in: environment).flatMap { $0.isEmpty ? nil : $0 }
            let publicClient = Settings.oidcPublicClient.isOn(oidcPublicClient, in: environment)
            if publicClient, secretFile != nil { throw ValidationError("--oidc-public-client has no client secret: drop --oidc-client-secret-file") }
            if !publicClient, secretFile == nil {
                throw ValidationError(
                    "--oidc-issuer needs --oidc-client-secret-file (a file: a secret on the command line shows in ps), or --oidc-public-client"
                )
            }
            var settings = OIDCSettings(issuer: issuer, clientId: clientId, clientSecretFile: secretFile)
            settings.acrValues = Settings.oidcAcrValues.value(oidcAcrValues, in: environment).flatMap {
                $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0
            }
            settings.prompt = Settings.oidcPrompt.value(oidcPrompt, in: environment).flatMap {
                $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0
            }
            if let label = Settings.oidcLabel.value(oidcLabel, in: environment), !label.trimmingCharacters(in: .whitespaces).isEmpty {
                settings.label = label
            }
            settings.createUsers = Settings.oidcCreateUsers.isOn(oidcCreateUsers, in: environment)
            settings.secondFactorACR = Set(
                (Settings.oidcAcr.value(oidcAcr, in: environment) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter
                {
                    !$0.isEmpty
                }
            )
            settings.askSecondStep = !(Settings.oidcSkipSecondStep.isOn(oidcSkipSecondStep, in: environment))
            config.oidc = settings
        } else if Settings.oidcClientId.value(oidcClientId, in: environment) != nil {
            throw ValidationError("--oidc-client-id needs --oidc-issuer")
        }
        if let text = Settings.requireTwoStep.value(requireTwoStep, in: environment) {
            guard let requirement = TwoStepRequirement(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw ValidationError("--require-two-step must be one of none, admins, managers, all (not \(text))")
            }
            config.twoStepRequirement = requirement
        }
        if let prefix = Settings.accelRedirect.value(accelRedirect, in: environment), !prefix.isEmpty {
            guard prefix.hasPrefix("/"), prefix.hasSuffix("/"), prefix.count > 2, !prefix.contains(".."), !prefix.contains("?") else {
                throw ValidationError("--accel-redirect must be a location path that starts and ends with '/', e.g. /_trail_files/")
            }
            config.accelRedirect = prefix
        }
        if let proxies = Settings.trustedProxies.value(trustedProxies, in: environment) {
            do { config.trustedProxies = try TrustedProxies(parsing: proxies) } catch { throw ValidationError("--trusted-proxies: \(error)") }
        }
        guard config.defaultRequiredApprovals >= 1 else { throw ValidationError("--required-approvals must be at least 1") }
        guard config.maxUploadSize > 0 else { throw ValidationError("--max-upload-size must be positive") }
        let days: Double =
            try Settings.catalogLifetimeDays.number(catalogLifetimeDays, in: environment) ?? 7
        guard days > 0, days <= 366 else { throw ValidationError("--catalog-lifetime-days must be between 0 and 366") }
        config.catalogLifetime = days * 86_400
        config.maxFrameAreaKm2 =
            try Settings.maxFrameArea.number(maxFrameArea, in: environment) ?? config.maxFrameAreaKm2
        guard config.maxFrameAreaKm2 > 0 else { throw ValidationError("--max-frame-area must be positive") }
        config.importMaxSize =
            try Settings.importMaxSize.number(importMaxSize, in: environment) ?? config.importMaxSize
        guard config.importMaxSize > 0 else { throw ValidationError("--import-max-size must be positive") }
        if let text = Settings.minFreeSpace.value(minFreeSpace, in: environment) {
            guard let bytes = FreeSpace.parse(text) else {
                throw ValidationError("--min-free-space \(text): give bytes, or a size such as 500M or 2G")
            }
            config.minFreeSpace = bytes
        }
        config.storage = try storage.makeSettings(environment: environment)
        config.mail = try makeMailSettings(environment: environment, publicURL: config.publicURL)
        config.mediaOptimization.enabled = !(Settings.noOptimizeMedia.isOn(noOptimizeMedia, in: environment))
        config.mediaOptimization.concurrency =
            try Settings.mediaConversions.number(mediaConversions, in: environment)
            ?? config.mediaOptimization.concurrency
        guard (1...16).contains(config.mediaOptimization.concurrency) else { throw ValidationError("--media-conversions must be from 1 to 16") }
        return config
    }

    /// The SMTP settings, or nil without `--smtp-url`; a user or password file without it is a mistake said at start.
    func makeMailSettings(environment: [String: String], publicURL: String?) throws -> MailSettings? {
        func value(_ flag: String?, _ setting: Setting) -> String? { setting.value(flag, in: environment).flatMap { $0.isEmpty ? nil : $0 } }
        let user = value(smtpUser, Settings.smtpUser)
        let passwordFile = value(smtpPasswordFile, Settings.smtpPasswordFile)
        guard let text = value(smtpURL, Settings.smtpURL) else {
            if user != nil || passwordFile != nil { throw ValidationError("--smtp-user and --smtp-password-file need --smtp-url") }
            return nil
        }
        do {
            let url = try MailSettings.parseURL(text)
            let from: String
            if let given = value(mailFrom, Settings.mailFrom) {
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
            try await database.setUserDisabled(id: user.id, disabled: true, actor: .system)
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
            let (_, password) = try await database.resetPassword(userId: user.id, bcryptCost: config.bcryptCost, actor: .system)
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
            try await database.resetTwoStep(userId: user.id, actor: .system)
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
            print(
                "Created site \(site.slug) (\(site.name)), \(site.requiredApprovals) \(site.requiredApprovals == 1 ? "approval" : "approvals") required."
            )
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
            try await database.setMembership(siteId: record.id, email: email, role: siteRole, actor: .system)
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
            let (token, _) = try await database.createAPIToken(userId: user.id, name: name, actor: .system)
            print(token)
        }
    }
}
