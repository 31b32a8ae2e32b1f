import Foundation

/// Every setting of the server in one typed place. The CLI fills it from flags and `TRAIL_...` variables;
/// tests build it directly.
package struct AppConfig: Sendable {
    package var hostname = "127.0.0.1"
    package var port = 8080
    /// Holds `Templates/`, `Public/` and `migrations/`.
    package var root: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    package var dataFolder: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("data")
    /// Where each kind of file lives inside `dataFolder`: the one place paths are made from the configuration (the
    /// server's dependencies and each command take them from here).
    package var dataPaths: DataPaths { DataPaths(root: dataFolder) }
    package var clamavDatabaseFolders: [String] = ["/var/lib/clamav"]
    package var clamdAddress: String? = nil
    package var maxUploadSize: Int64 = 2 * 1024 * 1024 * 1024 - 1
    /// Below this many free bytes on the data folder's disk, uploads get 507 and `/readyz` says not ready (0: no floor).
    package var minFreeSpace: Int64 = 2 * 1024 * 1024 * 1024
    /// How long `/readyz` reuses its database write check: anonymous probes then cost no write and no fsync each.
    var readinessWriteCheckInterval: Duration = .seconds(5)
    /// An HTTP/1 connection that sends nothing for this long (between requests, or in the middle of one) is closed, so
    /// slow or silent clients cannot hold connections forever; an upload whose bytes keep arriving is never cut.
    var idleConnectionTimeout: Duration = .seconds(60)
    /// An answer whose bytes the client stops taking (no write accepted by the socket) for this long is cut and its
    /// connection closed, so a peer that never reads cannot hold a connection, its memory and its task forever.
    var writeTimeout: Duration = .seconds(60)
    /// The same for file bodies (answers with `Accept-Ranges`): a phone on a weak signal may stall for minutes and
    /// resume; as long as nginx's `send_timeout` for downloads in `deploy/nginx.conf`.
    var fileWriteTimeout: Duration = .seconds(300)
    /// During a graceful stop, an answer that made no progress for this long is cut at once instead of holding the stop.
    var stoppingWriteTimeout: Duration = .seconds(5)
    /// With nginx in front (`--accel-redirect`): the internal location, e.g. `/_trail_files/`, that nginx maps to the
    /// data folder. Public package and file downloads then answer with `X-Accel-Redirect` and nginx sends the bytes;
    /// the route still decides access, the status, the range and the headers, and counts the bytes. Nil: the server
    /// sends the bytes itself.
    package var accelRedirect: String? = nil
    package var defaultRequiredApprovals = 1
    package var tileURLTemplate: String? = nil
    /// Credit shown with the tiles of `tileURLTemplate` and written into each package's MBTiles (`--tile-attribution`).
    package var tileAttribution: String? = nil
    /// The panel maps' basemap (`--editor-tile-url`): nil for `--tile-url`'s tiles when set, else OpenStreetMap's;
    /// `none` for no basemap. Fetched by the ranger's browser only, never by the server.
    package var editorTileURL: String? = nil
    /// Credit shown on the panel maps (`--editor-tile-attribution`).
    package var editorTileAttribution: String? = nil
    /// Most tiles one package build may fetch from the tile server (`--tile-cap`); an admin may change it in the panel.
    package var tileCap = 20_000
    /// Concurrency, time-outs and retries of the build-time tile fetcher.
    package var tileFetch = TileFetchOptions()
    package var publicURL: String? = nil
    /// The terrain model the trail facts sample (`--dem`): a raster GDAL reads, or a folder of them; nil for none.
    package var demPath: String? = nil
    /// The OpenStreetMap extract the drawn map is made from (`--osm-extract`): a file or a folder; nil for none.
    package var osmExtractPath: String? = nil
    package var demo = false
    /// The object-storage mirror (`--storage`); nil: the data folder alone, as for a district on one machine.
    package var storage: StorageSettings? = nil

    /// Largest tour frame accepted, in square kilometres.
    package var maxFrameAreaKm2: Double = 2_500
    /// A session ends after this long without a request.
    var sessionIdleTimeout: TimeInterval = 8 * 3600
    /// A session ends this long after sign-in however busy it is.
    var sessionLifetime: TimeInterval = 7 * 86_400
    /// Failed sign-ins allowed per email from one address (and, times four, per address) within `loginThrottleWindow`.
    var loginFailureLimit = 5
    var loginThrottleWindow: TimeInterval = 15 * 60
    /// Past `loginFailureLimit` failures of one email from all addresses together, each further attempt waits longer,
    /// up to this long; it is never refused, so guesses from elsewhere cannot lock the owner out.
    var loginMaxDelay: TimeInterval = 8
    /// Who must use two-step sign-in (`--require-two-step`): those not enrolled enrol at their next sign-in.
    package var twoStepRequirement = TwoStepRequirement.admins
    /// How long a browser may take between a right password and its code (or its enrolment) before signing in again.
    var pendingSignInLifetime: TimeInterval = 10 * 60
    /// The clock second-step codes are checked against: tests set it, to check codes made for a known time.
    var twoStepClock: @Sendable () -> Date = { Date() }
    /// Single sign-on through the agency's OpenID Connect provider (`--oidc-issuer` …); nil: passwords only.
    package var oidc: OIDCSettings? = nil
    /// Email through an SMTP server (`--smtp-url` …); nil: no email (invitations show their link instead).
    package var mail: MailSettings? = nil
    /// Reverse proxies whose `X-Forwarded-For` names the client (sign-in throttle, audit log); none by default.
    package var trustedProxies = TrustedProxies.none
    /// bcrypt cost; tests lower it to keep the suite fast.
    package var bcryptCost: UInt8 = 12
    /// A signed catalog is valid this long; it is re-signed well before.
    package var catalogLifetime: TimeInterval = 7 * 86_400
    /// Largest file (GeoJSON, GPX, KML, KMZ, CSV) an import accepts.
    package var importMaxSize = 20 * 1024 * 1024
    /// An unfinished tus upload is removed after this long.
    var uploadExpiry: TimeInterval = 24 * 3600
    /// Unfinished tus uploads one user may have open at once.
    var maxOpenUploadsPerUser = 10
    /// Phone-sized copies of media files: on, one conversion at a time, with the limits of docs/operators.md.
    package var mediaOptimization = MediaOptimizationSettings()
    /// Where the vendored browser libraries (Debian's libjs-* packages) live.
    var javascriptFolder = "/usr/share/javascript"

    package init() {}

    var templatesFolder: URL { root.appendingPathComponent("Templates") }
    var publicFolder: URL { root.appendingPathComponent("Public") }
    package var migrationsFolder: URL { root.appendingPathComponent("migrations") }
    /// The API's OpenAPI document, served at `/api/v1/openapi.json`.
    var openAPIFile: URL { root.appendingPathComponent("openapi.json") }
    package var databasePath: String { dataFolder.appendingPathComponent("trail.sqlite").path }
    /// Tiles fetched from tile servers, shared by every build: `tile-cache/<template>/<z>/<x>/<y>.<ext>`.
    var tileCacheFolder: URL { dataFolder.appendingPathComponent("tile-cache") }
    /// The index of the OpenStreetMap extract, made once per extract: `osm/<fingerprint>/`.
    var osmIndexFolder: URL { dataFolder.appendingPathComponent("osm") }

    var effectivePublicURL: String { publicURL ?? "http://\(hostname):\(port)" }
    /// Cookies get `Secure` when the panel is served over TLS.
    var usesTLS: Bool { effectivePublicURL.lowercased().hasPrefix("https://") }

    /// The origin of the basemap tiles, for the Content-Security-Policy; nil when no tile server is configured.
    var tileOrigin: String? { Self.tileOrigin(of: tileURLTemplate) }

    /// `scheme://host[:port]` of a tile URL template, with a `{s}.` subdomain as `*.`.
    static func tileOrigin(of template: String?) -> String? {
        guard let template,
            let components = URLComponents(string: template.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
            let scheme = components.scheme, let host = components.host
        else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host.replacingOccurrences(of: "s.", with: "*.", options: .anchored))\(port)"
    }
}
