import Foundation

/// One setting of the command line: its flag, its `TRAIL_…` variable (the flag wins), its default as people read it,
/// and what it does. ``Settings`` declares each one once; the commands' `--help`, their reading of the variables and
/// the operators' guide's table come from here, and `SettingsTests` holds the guide and `serve --help` to it.
package struct Setting: Sendable {
    enum Group: Sendable {
        /// `--root` and `--data`, which every command takes.
        case location
        /// `serve` (and `doctor`, which checks what `serve` would run with).
        case server
        /// Object storage, taken by `serve`, `doctor` and `storage`.
        case storage
        /// The client side of `package`: not the server's, so not in the operators' table.
        case client
    }

    /// The long flag without its dashes.
    package let flag: String
    let variable: String
    /// For an on/off flag: the variable's value that means the same as giving the flag.
    var switchValue: String? = nil
    /// The default as the guide and `--help` say it; nil where there is none to state.
    let defaultText: String?
    let about: String
    var group: Group = .server

    /// `--help`'s text: what it does, then its variable and its default.
    package var help: String {
        if let switchValue { return "\(about) (\(variable)=\(switchValue))." }
        return "\(about) (\(variable)\(defaultText.map { "; default \($0)" } ?? ""))."
    }

    /// The flag's value, else the variable's.
    package func value(_ flag: String?, in environment: [String: String]) -> String? { flag ?? environment[variable] }

    /// An on/off flag: given, or its variable set to the value that means it.
    package func isOn(_ flag: Bool, in environment: [String: String]) -> Bool { flag || environment[variable] == switchValue }

    /// A number: the flag's, else the variable's read as one; a variable that is not a number is refused.
    package func number<T: LosslessStringConvertible>(_ flag: T?, in environment: [String: String]) throws(SettingProblem) -> T? {
        if let flag { return flag }
        guard let text = environment[variable] else { return nil }
        guard let value = T(text) else { throw SettingProblem("\(variable)=\(text) is not a valid number") }
        return value
    }
}

/// A setting's value that cannot be used, said at start.
package struct SettingProblem: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// Every setting, declared once.
package enum Settings {
    /// Not a setting (no flag, not in the operators' table): the Unix time at which scripts/start.sh began, which it
    /// exports so the server's ready line can say how long the whole first start took. Named here with the settings'
    /// variables, so this file is the one that names a `TRAIL_…` variable.
    static let startClockVariable = "TRAIL_START_CLOCK"

    package static let root = Setting(
        flag: "root",
        variable: "TRAIL_ROOT",
        defaultText: "current folder",
        about: "Folder holding Templates/, Public/ and migrations/",
        group: .location
    )
    package static let data = Setting(
        flag: "data",
        variable: "TRAIL_DATA",
        defaultText: "./data",
        about: "Data folder",
        group: .location
    )
    package static let hostname = Setting(
        flag: "hostname",
        variable: "TRAIL_HOSTNAME",
        defaultText: "127.0.0.1",
        about: "Address to listen on"
    )
    package static let port = Setting(
        flag: "port",
        variable: "TRAIL_PORT",
        defaultText: "8080",
        about: "Port"
    )
    package static let clamavDB = Setting(
        flag: "clamav-db",
        variable: "TRAIL_CLAMAV_DB",
        defaultText: "/var/lib/clamav",
        about: "ClamAV signature folders joined by ':'"
    )
    package static let clamd = Setting(
        flag: "clamd",
        variable: "TRAIL_CLAMD",
        defaultText: "none (in-process libclamav)",
        about: "clamd unix socket path or host:port; selects the clamd backend"
    )
    package static let maxUploadSize = Setting(
        flag: "max-upload-size",
        variable: "TRAIL_MAX_UPLOAD_SIZE",
        defaultText: "2 GiB − 1 byte",
        about: "Largest upload in bytes"
    )
    package static let requiredApprovals = Setting(
        flag: "required-approvals",
        variable: "TRAIL_REQUIRED_APPROVALS",
        defaultText: "1",
        about: "Approvals a new site requires"
    )
    package static let tileURL = Setting(
        flag: "tile-url",
        variable: "TRAIL_TILE_URL",
        defaultText: "none",
        about: "Basemap tile URL template https://…/{z}/{x}/{y}.png"
    )
    package static let tileAttribution = Setting(
        flag: "tile-attribution",
        variable: "TRAIL_TILE_ATTRIBUTION",
        defaultText: "none",
        about: "Credit for the tiles of --tile-url, written into each package"
    )
    package static let editorTileURL = Setting(
        flag: "editor-tile-url",
        variable: "TRAIL_EDITOR_TILE_URL",
        defaultText: "--tile-url's tiles when set, else https://tile.openstreetmap.org/{z}/{x}/{y}.png",
        about: "Basemap of the panel's maps, fetched by browsers only"
    )
    package static let editorTileAttribution = Setting(
        flag: "editor-tile-attribution",
        variable: "TRAIL_EDITOR_TILE_ATTRIBUTION",
        defaultText: "© OpenStreetMap contributors (linked to openstreetmap.org/copyright) for the default; --tile-attribution's with --tile-url",
        about: "Credit shown on the panel's maps"
    )
    package static let tileCap = Setting(
        flag: "tile-cap",
        variable: "TRAIL_TILE_CAP",
        defaultText: "20000",
        about: "Most map tiles one package build may fetch"
    )
    package static let tileAllowPrivate = Setting(
        flag: "tile-allow-private",
        variable: "TRAIL_TILE_ALLOW_PRIVATE",
        switchValue: "1",
        defaultText: "off",
        about: "Let package builds fetch tiles from loopback, private and link-local addresses, e.g. an agency's own tile server on its LAN"
    )
    package static let publicURL = Setting(
        flag: "public-url",
        variable: "TRAIL_PUBLIC_URL",
        defaultText: "http://<hostname>:<port>",
        about: "URL the server is reached at"
    )
    package static let dem = Setting(
        flag: "dem",
        variable: "TRAIL_DEM",
        defaultText: "none",
        about:
            "The agency's terrain model for the trail facts' heights: a GeoTIFF or SRTM .hgt file, or a folder of them, in any coordinate system GDAL reads"
    )
    package static let osmExtract = Setting(
        flag: "osm-extract",
        variable: "TRAIL_OSM_EXTRACT",
        defaultText: "none",
        about:
            "An OpenStreetMap extract (.osm.pbf or .osm, e.g. a state's from Geofabrik) or a folder of them: every tour's package gets a map drawn from it, offline"
    )
    package static let catalogLifetimeDays = Setting(
        flag: "catalog-lifetime-days",
        variable: "TRAIL_CATALOG_LIFETIME_DAYS",
        defaultText: "7",
        about: "Days a signed catalog stays valid; re-signed when a quarter is left"
    )
    package static let maxFrameArea = Setting(
        flag: "max-frame-area",
        variable: "TRAIL_MAX_FRAME_AREA",
        defaultText: "2500",
        about: "Largest tour frame in km²"
    )
    package static let importMaxSize = Setting(
        flag: "import-max-size",
        variable: "TRAIL_IMPORT_MAX_SIZE",
        defaultText: "20 MiB",
        about: "Largest import file (GeoJSON, GPX, KML, KMZ, CSV) in bytes"
    )
    package static let trustedProxies = Setting(
        flag: "trusted-proxies",
        variable: "TRAIL_TRUSTED_PROXIES",
        defaultText: "none",
        about: "Reverse proxies whose X-Forwarded-For names the client, as addresses or CIDR ranges joined by ','"
    )
    package static let accelRedirect = Setting(
        flag: "accel-redirect",
        variable: "TRAIL_ACCEL_REDIRECT",
        defaultText: "none (the server sends the bytes)",
        about:
            "With nginx in front: its internal location for the data folder, e.g. /_trail_files/; package and file downloads are then sent by nginx"
    )
    package static let minFreeSpace = Setting(
        flag: "min-free-space",
        variable: "TRAIL_MIN_FREE_SPACE",
        defaultText: "2G",
        about: "Free space the data folder's disk keeps: below it uploads get 507 and /readyz fails, e.g. 2G, 500M, or bytes; 0 for none"
    )
    package static let requireTwoStep = Setting(
        flag: "require-two-step",
        variable: "TRAIL_REQUIRE_TWO_STEP",
        defaultText: "admins",
        about: "Who must use two-step sign-in: none, admins, managers (and admins) or all; those not enrolled enrol at their next sign-in"
    )
    package static let oidcIssuer = Setting(
        flag: "oidc-issuer",
        variable: "TRAIL_OIDC_ISSUER",
        defaultText: "none (passwords only)",
        about: "Single sign-on: the OpenID Connect provider's issuer URL, https:// (http:// only on loopback)"
    )
    package static let oidcClientId = Setting(
        flag: "oidc-client-id",
        variable: "TRAIL_OIDC_CLIENT_ID",
        defaultText: nil,
        about: "The client id registered with the provider"
    )
    package static let oidcClientSecretFile = Setting(
        flag: "oidc-client-secret-file",
        variable: "TRAIL_OIDC_CLIENT_SECRET_FILE",
        defaultText: nil,
        about: "A file holding the client secret, mode 600"
    )
    package static let oidcLabel = Setting(
        flag: "oidc-label",
        variable: "TRAIL_OIDC_LABEL",
        defaultText: "Sign in with your agency account",
        about: "The sign-in button's label"
    )
    package static let oidcPublicClient = Setting(
        flag: "oidc-public-client",
        variable: "TRAIL_OIDC_PUBLIC_CLIENT",
        switchValue: "1",
        defaultText: "off",
        about: "Register as a public client: PKCE alone, no client secret (Login.gov's PKCE way)"
    )
    package static let oidcAcrValues = Setting(
        flag: "oidc-acr-values",
        variable: "TRAIL_OIDC_ACR_VALUES",
        defaultText: "none",
        about: "acr_values for the provider's sign-in, where it requires them (Login.gov: http://idmanagement.gov/ns/assurance/ial/1)"
    )
    package static let oidcPrompt = Setting(
        flag: "oidc-prompt",
        variable: "TRAIL_OIDC_PROMPT",
        defaultText: "none",
        about: "prompt for the provider's sign-in, where it requires one (Login.gov: select_account)"
    )
    package static let oidcAcr = Setting(
        flag: "oidc-acr",
        variable: "TRAIL_OIDC_ACR",
        defaultText: "none",
        about: "acr values, comma-separated, that show the provider asked for a second factor, so no second step is asked here"
    )
    package static let oidcSkipSecondStep = Setting(
        flag: "oidc-skip-second-step",
        variable: "TRAIL_OIDC_SKIP_SECOND_STEP",
        switchValue: "1",
        defaultText: "off",
        about: "Trust the provider's sign-in alone: enrolled accounts and admins give no second step here after single sign-on"
    )
    package static let oidcCreateUsers = Setting(
        flag: "oidc-create-users",
        variable: "TRAIL_OIDC_CREATE_USERS",
        switchValue: "1",
        defaultText: "off",
        about: "Create an account at the first single sign-on of a verified email nobody has"
    )
    package static let smtpURL = Setting(
        flag: "smtp-url",
        variable: "TRAIL_SMTP_URL",
        defaultText: "none (no email)",
        about: "Email (invitations, notifications) through smtp://host:port (STARTTLS; plain only to a loopback relay) or smtps://host:port"
    )
    package static let smtpUser = Setting(
        flag: "smtp-user",
        variable: "TRAIL_SMTP_USER",
        defaultText: "none",
        about: "The SMTP account, when the server asks for one"
    )
    package static let smtpPasswordFile = Setting(
        flag: "smtp-password-file",
        variable: "TRAIL_SMTP_PASSWORD_FILE",
        defaultText: "none",
        about: "A file holding the SMTP password, mode 600"
    )
    package static let mailFrom = Setting(
        flag: "mail-from",
        variable: "TRAIL_MAIL_FROM",
        defaultText:
            "Trail Companion <trail@DOMAIN>, DOMAIN the host of --public-url or else the machine's name, the first that is a mail domain (has a dot, is no IP address); with neither, --smtp-url asks for --mail-from at start",
        about: "The sender of every email"
    )
    package static let demo = Setting(
        flag: "demo",
        variable: "TRAIL_DEMO",
        switchValue: "1",
        defaultText: "off",
        about: "Add a demo site and tour"
    )
    package static let noOptimizeMedia = Setting(
        flag: "no-optimize-media",
        variable: "TRAIL_OPTIMIZE_MEDIA",
        switchValue: "0",
        defaultText: "on",
        about: "Make no phone-sized copies of videos, audio and images; packages ship the originals"
    )
    package static let mediaConversions = Setting(
        flag: "media-conversions",
        variable: "TRAIL_MEDIA_CONVERSIONS",
        defaultText: "1",
        about: "Media conversions at a time, each a bounded ffmpeg or libvips process"
    )
    package static let storage = Setting(
        flag: "storage",
        variable: "TRAIL_STORAGE",
        defaultText: "none",
        about: "Mirror released packages, manifests, files and the signed catalog to s3://BUCKET/PREFIX",
        group: .storage
    )
    package static let s3Endpoint = Setting(
        flag: "s3-endpoint",
        variable: "TRAIL_S3_ENDPOINT",
        defaultText: "AWS",
        about: "S3-compatible endpoint URL, e.g. http://127.0.0.1:8333 for SeaweedFS",
        group: .storage
    )
    package static let s3Region = Setting(
        flag: "s3-region",
        variable: "AWS_REGION",
        defaultText: "us-east-1",
        about: "Region of the bucket",
        group: .storage
    )
    package static let publicDownloadURL = Setting(
        flag: "public-download-url",
        variable: "TRAIL_PUBLIC_DOWNLOAD_URL",
        defaultText: "none (the server streams)",
        about: "Where phones reach the bucket, usually a CDN: catalog URLs point there and downloads redirect there once an object is in the bucket",
        group: .storage
    )
    package static let s3PartSize = Setting(
        flag: "s3-part-size",
        variable: "TRAIL_S3_PART_SIZE",
        defaultText: "16M",
        about: "Part size of multipart uploads, at least 5M; files over four parts go in parts, four at a time",
        group: .storage
    )
    package static let clientState = Setting(
        flag: "state",
        variable: "TRAIL_CLIENT_STATE",
        defaultText: "$XDG_STATE_HOME/trail-companion/catalogs or ~/.local/state/trail-companion/catalogs",
        about: "The client's state folder: the newest catalog version seen per key is kept there, and an older catalog refused",
        group: .client
    )

    static let all: [Setting] = [
        root, data, hostname, port, clamavDB, clamd, maxUploadSize, requiredApprovals, tileURL, tileAttribution, editorTileURL, editorTileAttribution,
        tileCap, tileAllowPrivate, publicURL, dem, osmExtract, catalogLifetimeDays, maxFrameArea, importMaxSize, trustedProxies, accelRedirect,
        minFreeSpace,
        requireTwoStep, oidcIssuer, oidcClientId, oidcClientSecretFile, oidcLabel, oidcPublicClient, oidcAcrValues, oidcPrompt, oidcAcr,
        oidcSkipSecondStep, oidcCreateUsers, smtpURL, smtpUser, smtpPasswordFile, mailFrom, demo, noOptimizeMedia, mediaConversions, storage,
        s3Endpoint, s3Region, publicDownloadURL, s3PartSize, clientState,
    ]
}
