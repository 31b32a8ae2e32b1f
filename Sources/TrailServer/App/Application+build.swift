import Foundation
import Hummingbird
import HummingbirdBcrypt
import Logging
import MalwareScan
import PackageFormat
import Prometheus
import ServiceLifecycle

/// What the router needs; tests build it with an in-memory database.
struct AppDependencies: Sendable {
    let config: AppConfig
    let database: AppDatabase
    let views: ViewRenderer
    let scans: ScanService
    let builds: PackageBuildService
    /// Makes the phone-sized copies of media files (nil: `--no-optimize-media`, packages ship the originals).
    let media: MediaOptimizer?
    let signingKey: SigningKey
    let catalog: CatalogSigner
    /// The tile server settings in force (panel, else command line).
    let tileSettings: TileSettingsStore
    /// Built packages' MBTiles, for the review map and the phone preview.
    let packageTiles: PackageTilesStore
    /// The map drawn from open data (`--osm-extract`, `--dem`) for packages, the editor and the place search.
    let openMap: OpenDataMap
    /// Request counts and the scrape of `/metrics`; `serve` also hands its registry to swift-metrics.
    let metrics: AppMetrics
    let tusHashes = TusHashStates()
    /// What a sign-in with an unknown email is checked against: a hash of the configured cost, made once, so that the
    /// answer takes as long as for a known email with a wrong password and timing does not tell which emails exist.
    let unknownUserPasswordHash: String
    /// `openapi.json` from the root folder, with the public URL filled in; nil when it cannot be read.
    let openAPIDocument: String?
    /// Served package files by SHA-256 (delta updates).
    let files: ContentStore
    /// The object-storage mirror's state, with `--storage`.
    let distribution: DistributionState?
    /// Who reported a verified download today, so the count takes each caller once a day.
    let verifiedDownloads = VerifiedDownloads()
    /// How many visitor events each address sent this hour (in memory only), for the events route's cap.
    let eventRateLimit = EventRateLimit()
    /// Invitations and notifications by email, through the outbox (which sends only with `--smtp-url`).
    let mailer: Mailer
    /// The web player's files, read at start.
    let playerAssets: PlayerAssets
    /// How much importing runs at once, weighed by size: one budget for the panel's and the API's import routes.
    let importSlots: ImportSlots

    /// Without a scan service, one is made from the configuration (libclamav, or clamd with `--clamd`);
    /// without a key, the one in `data/keys/` is loaded or created. A key that cannot be read or made, or an object
    /// store setting that cannot be used, is an error here: a server that signed with a throwaway key would publish
    /// packages no app could verify after the next restart.
    init(
        config: AppConfig,
        database: AppDatabase,
        views: ViewRenderer,
        scans: ScanService? = nil,
        signingKey: SigningKey? = nil,
        metrics: AppMetrics = AppMetrics()
    ) async throws {
        self.config = config
        self.metrics = metrics
        self.unknownUserPasswordHash = Bcrypt.hash(SecretToken.make(), cost: config.bcryptCost)
        self.database = database
        self.views = views
        self.mailer = Mailer(
            database: database,
            outbox: config.mail.map { MailOutbox(database: database, settings: $0) },
            publicURL: config.effectivePublicURL
        )
        self.openAPIDocument = OpenAPIDocument.load(from: config.openAPIFile, serverURL: config.effectivePublicURL)
        self.playerAssets = try PlayerAssets(publicFolder: config.publicFolder)
        self.importSlots = ImportSlots(maxFileSize: config.importMaxSize)
        let paths = config.dataPaths
        self.paths = paths
        self.files = ContentStore(database: database, paths: paths)
        let scans = scans ?? ScanService(database: database, paths: paths, scanner: makeScanner(config))
        self.scans = scans
        let media = config.mediaOptimization.enabled ? MediaOptimizer(database: database, paths: paths, settings: config.mediaOptimization) : nil
        if let media { scans.attach(media) }
        self.media = media
        let key = try signingKey ?? SigningKey.loadOrCreate(at: paths.signingKey)
        self.signingKey = key
        self.tileSettings = try await TileSettingsStore(database: database, commandLine: TileSettings(config: config))
        self.packageTiles = PackageTilesStore(paths: paths)
        let tiles = TilePackager(
            paths: paths,
            cacheRoot: config.tileCacheFolder,
            options: config.tileFetch,
            userAgent: TileFetcher.userAgent(publicURL: config.effectivePublicURL)
        )
        let openMap = OpenDataMap(extractPath: config.osmExtractPath, indexRoot: config.osmIndexFolder, terrain: database.terrain)
        self.openMap = openMap
        self.builds = PackageBuildService(
            database: database,
            paths: paths,
            scanner: scans.scanner,
            signingKey: key,
            tiles: tiles,
            media: media,
            openMap: openMap
        )
        var distribution: DistributionState?
        if let storage = config.storage { distribution = try await DistributionState(settings: storage, database: database) }
        self.distribution = distribution
        self.catalog = CatalogSigner(
            database: database,
            signingKey: key,
            lifetime: config.catalogLifetime,
            publicURL: config.effectivePublicURL,
            distribution: distribution
        )
    }

    /// The sync service of the object-storage mirror, with `--storage`.
    func makeDistributionSync(logger: Logger = Logger(label: "trail.storage")) -> DistributionSync? {
        distribution.map {
            DistributionSync(database: database, paths: paths, state: $0, catalog: catalog, signingKey: signingKey, files: files, logger: logger)
        }
    }

    /// Where each kind of file lives in the data folder: made once, from the configuration.
    let paths: DataPaths
}

/// The configured malware scanner: clamd when `--clamd` names a socket, else libclamav in-process.
func makeScanner(_ config: AppConfig) -> any MalwareScanner {
    if let address = config.clamdAddress {
        return ClamdScanner(endpoint: ClamdEndpoint(parsing: address), signatureDirectories: config.clamavDatabaseFolders)
    }
    return ClamAVEngineScanner(
        configuration: ClamAVEngineConfiguration(
            databaseDirectories: config.clamavDatabaseFolders,
            maxFileSize: config.maxUploadSize
        )
    )
}

/// Wires I/O: the data folder, the database file, the templates; then the router and the server.
package func buildApplication(
    config: AppConfig,
    logger: Logger = Logger(label: "trail-companion"),
    metrics: AppMetrics = AppMetrics()
) async throws -> some ApplicationProtocol {
    try DataFolder.prepare(config.dataFolder, sharedWithProxy: config.accelRedirect != nil)
    let terrain = TerrainSource.open(path: config.demPath)
    let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder, terrain: terrain)
    let views = try await ViewRenderer(templatesFolder: config.templatesFolder)
    let dependencies = try await AppDependencies(config: config, database: database, views: views, metrics: metrics)
    let paths = dependencies.paths
    try await MediaRecovery.run(database: database, paths: paths, logger: logger)
    try await dependencies.media?.recover()
    try await PublishingRecovery.run(database: database, paths: paths, logger: logger)
    try await TilesRecovery.run(database: database, paths: paths, tileCache: config.tileCacheFolder, logger: logger)
    try await TrailFactsStart.run(database: database, print: Console.line)
    // A state's extract takes a while to index: in the background, and builds that come meanwhile wait for it.
    let openMap = dependencies.openMap
    Task { await openMap.prepare(logger: logger, print: Console.line) }
    try await Bootstrap.firstStart(database: database, config: config, print: Console.line)
    if config.demo { try await DemoContent.install(database: database, config: config, print: Console.line) }
    try await dependencies.files.prune()
    var services: [any Service] = [
        dependencies.scans, dependencies.builds, MaintenanceService(database: database, paths: paths, logger: logger),
    ]
    if let media = dependencies.media { services.append(media) }
    if let outbox = dependencies.mailer.outbox { services.append(outbox) }
    if config.demo {
        services.append(
            DemoSample(
                database: database,
                intake: AssetIntake(database: database, paths: paths, scans: dependencies.scans),
                publishing: PublishingService(
                    database: database,
                    authorization: Authorization(database: database),
                    builds: dependencies.builds,
                    paths: paths,
                    tileSettings: dependencies.tileSettings
                ),
                logger: logger
            )
        )
    }
    if let sync = dependencies.makeDistributionSync(logger: logger) {
        // A bucket that cannot be used is said clearly at start, but does not stop the server: authoring and local
        // releases go on, the sync retries, and the panel shows what is waiting and why.
        do {
            try await sync.checkBucket()
            Console.line("Object storage: \(sync.location) answers and takes writes.")
        } catch {
            Console.line("Object storage \(sync.location) cannot be used: \(error). Releases are kept locally and sent once it can.")
            sync.state.recordFailure("\(error)")
        }
        services.append(sync)
    }
    let router = buildRouter(dependencies)
    return Application(
        router: router,
        server: .trail(config),
        configuration: .init(address: .hostname(config.hostname, port: config.port), serverName: "trail-companion"),
        services: services,
        onServerRunning: { _ in Console.line("Trail Companion is running at \(config.effectivePublicURL)\(Console.sinceStart())") },
        logger: logger
    )
}

/// Pure: routes and middleware only, so tests can inject what they need.
func buildRouter(_ dependencies: AppDependencies) -> Router<AppRequestContext> {
    let config = dependencies.config
    let database = dependencies.database
    let router = Router(context: AppRequestContext.self)
    let tileSettings = dependencies.tileSettings
    router.add(middleware: TakeTurnsMiddleware())
    router.add(middleware: ClientAddressMiddleware(trusted: config.trustedProxies))
    router.add(middleware: RequestMetricsMiddleware(metrics: dependencies.metrics))
    var securityHeaders = SecurityHeadersMiddleware(tileOrigin: { tileSettings.tileOrigin })
    securityHeaders.strictTransportSecurity = config.usesTLS
    securityHeaders.editorTileOrigin = {
        let basemap = EditorBasemap.resolve(
            editorTileURL: config.editorTileURL,
            editorTileAttribution: config.editorTileAttribution,
            packageTiles: tileSettings.current
        )
        return basemap?.origin
    }
    securityHeaders.downloadOrigin = SecurityHeadersMiddleware.origin(of: config.storage?.publicDownloadURL)
    securityHeaders.signInOrigin = SecurityHeadersMiddleware.origin(of: config.oidc?.issuer)
    router.add(middleware: securityHeaders)
    router.add(middleware: ErrorMiddleware(views: dependencies.views))
    router.add(middleware: MethodNotAllowedMiddleware(api: APIMethods(document: dependencies.openAPIDocument)))
    router.add(
        middleware: FileMiddleware(config.publicFolder.path, urlBasePath: "/static", cacheControl: .init([(MediaType(type: .any), [.noCache])]))
    )
    for library in ["leaflet", "bootstrap5", "sortable", "chart.js"] {
        router.add(
            middleware: FileMiddleware(
                "\(config.javascriptFolder)/\(library)",
                urlBasePath: "/vendor/\(library)",
                cacheControl: .init([(MediaType(type: .any), [.maxAge(86_400)])])
            )
        )
    }
    router.add(middleware: AuthenticationMiddleware(database: database, config: config))
    router.add(middleware: CSRFMiddleware())
    router.add(middleware: DiskSpaceMiddleware(dataFolder: config.dataFolder, floor: config.minFreeSpace))

    router.get("/healthz") { _, _ in "ok" }
    let readiness = ReadinessCheck(
        database: database,
        scanner: dependencies.scans.scanner,
        dataFolder: config.dataFolder,
        floor: config.minFreeSpace,
        writeCheckInterval: config.readinessWriteCheckInterval
    )
    router.get("/readyz", use: readiness.respond)

    let pages = PageResponder(
        views: dependencies.views,
        database: database,
        secureCookies: config.usesTLS,
        scans: dependencies.scans,
        distribution: dependencies.distribution
    )
    let authorization = Authorization(database: database)
    let intake = AssetIntake(database: database, paths: dependencies.paths, scans: dependencies.scans)
    let tus = TusController(
        database: database,
        authorization: authorization,
        paths: dependencies.paths,
        intake: intake,
        config: config,
        hashes: dependencies.tusHashes
    )
    let media = MediaController(
        database: database,
        authorization: authorization,
        paths: dependencies.paths,
        intake: intake,
        pages: pages,
        config: config,
        tileSettings: tileSettings,
        openMap: dependencies.openMap
    )
    let publishingService = PublishingService(
        database: database,
        authorization: authorization,
        builds: dependencies.builds,
        paths: dependencies.paths,
        tileSettings: tileSettings,
        mailer: dependencies.mailer
    )
    let publishing = PublishingController(publishing: publishingService, pages: pages, publicURL: config.effectivePublicURL)
    let tiles = TilesController(
        database: database,
        authorization: authorization,
        paths: dependencies.paths,
        pages: pages,
        config: config,
        settings: tileSettings,
        packageTiles: dependencies.packageTiles,
        scans: dependencies.scans,
        openMap: dependencies.openMap
    )
    let exchange = TourExchangeController(
        database: database,
        authorization: authorization,
        pages: pages,
        paths: dependencies.paths,
        config: config,
        intake: intake,
        tileSettings: tileSettings,
        openMap: dependencies.openMap,
        slots: dependencies.importSlots
    )
    tus.addDiscovery(to: router)
    HelpController(pages: pages, screenshots: config.root.appendingPathComponent("docs/screenshots")).addRoutes(to: router)
    // Routes behind sign-in get a SignedInContext: the user, not an optional to check.
    let signedIn = router.group().add(middleware: RequireUserMiddleware()).group(context: SignedInContext.self)
    // A site's routes get a SiteMemberContext: the site and the user's access there, read once.
    let site = signedIn.siteGroup(authorization)

    let oidc = config.oidc.map { OIDCProvider(settings: $0) }
    let signIn = SignInService(database: database, config: config, unknownUserPasswordHash: dependencies.unknownUserPasswordHash)
    let responder = SignInResponder(database: database, pages: pages, config: config)
    PasswordSignInController(database: database, pages: pages, config: config, service: signIn, responder: responder, oidc: oidc)
        .addRoutes(to: router)
    AccountsController(database: database, pages: pages, config: config).addRoutes(signedIn: signedIn)
    let invitations = InvitationController(
        database: database,
        pages: pages,
        config: config,
        mailer: dependencies.mailer,
        responder: responder
    )
    invitations.addRoutes(public: router, site: site)
    EmailPagesController(database: database, pages: pages, mailer: dependencies.mailer).addRoutes(signedIn: signedIn)
    OIDCController(database: database, pages: pages, config: config, service: signIn, responder: responder, provider: oidc).addRoutes(to: router)
    TwoStepController(database: database, pages: pages, config: config, service: signIn, responder: responder)
        .addRoutes(public: router, signedIn: signedIn)
    AdminController(database: database, pages: pages, config: config).addRoutes(to: signedIn)
    MetricsController(metrics: dependencies.metrics, database: database).addRoutes(to: signedIn)
    SitesController(database: database, pages: pages, mailer: dependencies.mailer).addRoutes(to: signedIn, site: site)
    ToursController(
        database: database,
        pages: pages,
        authorization: authorization,
        config: config,
        tileSettings: tileSettings,
        paths: dependencies.paths,
        openMap: dependencies.openMap
    ).addRoutes(to: signedIn, site: site)
    tiles.addPanelRoutes(to: signedIn)
    media.addPanelRoutes(to: signedIn)
    publishing.addPanelRoutes(to: signedIn)
    exchange.addPanelRoutes(to: signedIn)

    MobileAPI(
        database: database,
        paths: dependencies.paths,
        signingKey: dependencies.signingKey,
        catalog: dependencies.catalog,
        publicURL: config.effectivePublicURL,
        openAPIDocument: dependencies.openAPIDocument,
        files: dependencies.files,
        metrics: dependencies.metrics,
        distribution: dependencies.distribution,
        verifiedDownloads: dependencies.verifiedDownloads,
        accel: config.accelRedirect.map { AccelRedirect(prefix: $0, dataFolder: config.dataFolder) }
    )
    .addRoutes(to: router.group("api/v1"))
    EventsAPI(
        database: database,
        metrics: dependencies.metrics,
        rateLimit: dependencies.eventRateLimit,
        playerOrigin: SecurityHeadersMiddleware.origin(of: config.effectivePublicURL)
    )
    .addRoutes(to: router.group("api/v1"))
    var visit = VisitController(
        database: database,
        paths: dependencies.paths,
        pages: pages,
        packageTiles: dependencies.packageTiles,
        assets: dependencies.playerAssets,
        authorization: authorization,
        publicURL: config.effectivePublicURL
    )
    visit.scannerReady = { [scans = dependencies.scans] in scans.scannerReady }
    visit.addRoutes(to: router)
    visit.addAPIRoutes(to: router.group("api/v1"))
    visit.addQRRoutes(to: signedIn.group("manage"))
    let manage = router.group("api/v1/manage").add(middleware: RequireUserMiddleware()).group(context: SignedInContext.self)
    let manageSite = manage.siteGroup(authorization)
    ToursAPI(database: database, authorization: authorization, config: config).addRoutes(to: manage)
    media.addAPIRoutes(to: manage)
    publishing.addAPIRoutes(to: manage)
    invitations.addAPIRoutes(site: manageSite)
    SiteSettingsController(database: database, pages: pages).addRoutes(site: site, manageSite: manageSite)
    StatsPages(database: database, pages: pages).addRoutes(site: site, manageSite: manageSite)
    tiles.addAPIRoutes(to: manage)
    exchange.addAPIRoutes(to: manage)
    tus.addRoutes(to: manage)
    visit.addQRRoutes(to: manage)
    // One bound for the panel's and the API's print routes: they draw on the same two threads.
    let print = PrintController(
        database: database,
        authorization: authorization,
        publicURL: config.effectivePublicURL,
        slots: PrintSlots(),
        packageTiles: dependencies.packageTiles,
        paths: dependencies.paths
    )
    print.addRoutes(to: signedIn)
    print.addRoutes(to: manage)
    let drawnMap = DrawnMapController(authorization: authorization, openMap: dependencies.openMap)
    drawnMap.addRoutes(to: signedIn)
    drawnMap.addRoutes(to: manage)
    let alerts = AlertsService(database: database, mailer: dependencies.mailer)
    AlertsAPI(alerts: alerts).addRoutes(to: manage)
    AlertsPages(alerts: alerts, database: database, pages: pages, catalogLifetime: config.catalogLifetime).addRoutes(to: signedIn)
    return router
}

/// The data folder layout (docs/operators.md, "Data folder"), created on start.
package enum DataFolder {
    static let subfolders = ["keys", "uploads", "assets", "quarantine", "staging", "packages"]

    /// What nginx reads with `--accel-redirect`: released packages and the files they are made of.
    static let sharedWithProxy = ["assets", "packages", "files"]

    /// - Parameter sharedWithProxy: true with `--accel-redirect`: the service's group (which nginx's user joins, see
    ///   docs/operators.md) may enter the folder and read ``sharedWithProxy``; false: the owner alone; nil: an existing
    ///   folder keeps its modes (the CLI's commands, which do not know how `serve` runs). Keys, uploads, quarantine,
    ///   staging and the database are the owner's alone in every case.
    package static func prepare(_ folder: URL, sharedWithProxy shared: Bool? = false) throws {
        let fileManager = FileManager.default
        let existed = fileManager.fileExists(atPath: folder.path)
        for name in [""] + subfolders {
            try fileManager.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        func set(_ mode: Int, _ name: String) throws {
            let path = folder.appendingPathComponent(name).path
            if fileManager.fileExists(atPath: path) { try fileManager.setAttributes([.posixPermissions: mode], ofItemAtPath: path) }
        }
        // Uploads, unpublished media and the database are nobody else's business on a shared machine.
        for name in ["keys", "uploads", "quarantine", "staging"] { try set(0o700, name) }
        guard let shared = shared ?? (existed ? nil : false) else { return }
        try set(shared ? 0o750 : 0o700, "")
        for name in sharedWithProxy { try set(shared ? 0o750 : 0o700, name) }
    }
}

/// Writes straight to standard output, unbuffered: the first-start password must show even when output goes to a file.
enum Console {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// " (ready 312 s after scripts/start.sh began)" when started by that script, which sets `TRAIL_START_CLOCK` to the
    /// Unix time it began: a newcomer sees how long the whole first start took, installs and build included.
    static func sinceStart(now: Date = Date(), environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard let text = environment[Settings.startClockVariable], let began = TimeInterval(text), began <= now.timeIntervalSince1970 else {
            return ""
        }
        return " (ready \(Int(now.timeIntervalSince1970 - began)) s after scripts/start.sh began)"
    }
}
