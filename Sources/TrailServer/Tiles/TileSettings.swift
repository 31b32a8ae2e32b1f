import Foundation
import GRDB
import NIOConcurrencyHelpers

/// How the build-time tile fetcher behaves. Tests shorten the time-outs and back-offs.
package struct TileFetchOptions: Sendable {
    /// Requests in flight at once, per build.
    var concurrency = 6
    /// A request that gets no answer for this long fails (and is retried).
    var requestTimeout: TimeInterval = 20
    /// Tries per tile (the first one included) before the build fails.
    var attempts = 5
    /// Back-off before the second try; doubled for each further one (with jitter), capped at `maxBackoff`.
    var initialBackoff: TimeInterval = 0.5
    var maxBackoff: TimeInterval = 8
    /// A cached tile older than this is fetched again.
    var cacheMaxAge: TimeInterval = 30 * 86_400
    /// Fetch from tile servers on loopback, private or link-local addresses (`--tile-allow-private`); off by default,
    /// so a tile URL cannot make the server probe its own network (``TileHostGuard``).
    package var allowPrivateAddresses = false
    init() {}
}

/// The tile server in force: the one an admin saved in the panel, else the server's `--tile-url` options.
struct TileSettings: Sendable, Equatable, Codable {
    static let defaultTileCap = 20_000
    static let maxTileCap = 1_000_000

    /// `https://…/{z}/{x}/{y}.png`; nil when there is no tile server.
    var urlTemplate: String?
    var attribution: String
    var tileCap: Int

    init(urlTemplate: String?, attribution: String, tileCap: Int) {
        let trimmed = urlTemplate?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.urlTemplate = trimmed?.isEmpty == false ? trimmed : nil
        self.attribution = attribution
        self.tileCap = tileCap
    }

    /// What the command-line options say.
    init(config: AppConfig) {
        self.init(urlTemplate: config.tileURLTemplate, attribution: config.tileAttribution ?? "", tileCap: config.tileCap)
    }

    /// The template, when it is one a build may use (never a public OpenStreetMap server).
    var usableTemplate: String? {
        guard let urlTemplate, TileURLTemplate.problem(urlTemplate) == nil else { return nil }
        return urlTemplate
    }
}

/// Rules for tile URL templates.
package enum TileURLTemplate {
    /// Hosts whose tile servers forbid bulk downloading for offline use (OpenStreetMap Foundation's tile policy):
    /// these domains and every subdomain of them (`tile.openstreetmap.org`, `a.tile.openstreetmap.org`, `{s}.tile.osm.org`).
    static let forbiddenDomains = ["openstreetmap.org", "osm.org"]

    /// Nil when the template is usable, else why not, in words for the settings form.
    package static func problem(_ template: String) -> String? {
        let template = template.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !template.isEmpty else { return "Enter a URL template." }
        guard template.count <= 500 else { return "Keep the template under 500 characters." }
        guard !template.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            return "The template must not contain spaces."
        }
        for placeholder in ["{z}", "{x}"] where !template.contains(placeholder) {
            return "The template needs the placeholders {z}, {x} and {y} (or {-y}), e.g. https://tiles.example.org/{z}/{x}/{y}.png."
        }
        guard template.contains("{y}") || template.contains("{-y}") else {
            return "The template needs the placeholders {z}, {x} and {y} (or {-y}), e.g. https://tiles.example.org/{z}/{x}/{y}.png."
        }
        let sample = expand(template, TileID(z: 1, x: 0, y: 0))
        guard let components = URLComponents(string: sample), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil
        else { return "Enter an http:// or https:// URL with a host name, e.g. https://tiles.example.org/{z}/{x}/{y}.png." }
        if isForbidden(host: host) {
            return
                "The public OpenStreetMap tile servers forbid bulk downloads for offline use. Use a tile server whose terms allow it (your agency's own, or a commercial provider)."
        }
        return nil
    }

    /// True for the OpenStreetMap Foundation's hosts and their subdomains, whatever the case or a trailing dot.
    static func isForbidden(host: String) -> Bool {
        var host = host.lowercased()
        while host.hasSuffix(".") { host.removeLast() }
        return forbiddenDomains.contains { host == $0 || host.hasSuffix("." + $0) }
    }

    /// The URL of one tile: `{z}`, `{x}`, `{y}`, `{-y}` (TMS row) and `{s}` (subdomains a, b, c, chosen by the tile).
    static func expand(_ template: String, _ tile: TileID) -> String {
        let subdomains = ["a", "b", "c"]
        return
            template
            .replacingOccurrences(of: "{z}", with: "\(tile.z)")
            .replacingOccurrences(of: "{x}", with: "\(tile.x)")
            .replacingOccurrences(of: "{-y}", with: "\(tile.tmsRow)")
            .replacingOccurrences(of: "{y}", with: "\(tile.y)")
            .replacingOccurrences(of: "{s}", with: subdomains[(tile.x + tile.y) % subdomains.count])
    }
}

/// The saved settings row (table `tileSettings`, one row at most).
struct TileSettingsRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64 = 1
    var urlTemplate: String?
    var attribution: String
    var tileCap: Int
    var updatedBy: Int64?
    var updatedAt: Date

    static let databaseTableName = "tileSettings"
}

/// The tile settings in force: the ones an admin saved in the panel, else the command line's. Every page reads them
/// for its Content-Security-Policy, so they are held in memory: read once at start, replaced by a save.
final class TileSettingsStore: Sendable {
    let database: AppDatabase
    private let state: NIOLockedValueBox<(settings: TileSettings, saved: Bool)>

    /// Reads the saved settings. A database that cannot be read is a start-up error, not a quiet switch to the command
    /// line's tile server.
    init(database: AppDatabase, commandLine: TileSettings) async throws {
        self.database = database
        let saved = try await database.savedTileSettings()
        self.state = NIOLockedValueBox((saved ?? commandLine, saved != nil))
    }

    private let origin = NIOLockedValueBox<(template: String?, origin: String?)?>(nil)

    var current: TileSettings { state.withLockedValue { $0.settings } }

    /// Whether the settings come from the panel (else from the command line).
    var isSaved: Bool { state.withLockedValue { $0.saved } }

    func save(urlTemplate: String, attribution: String, tileCap: Int?, actor: AuditActor) async throws -> TileSettings {
        let settings = try await database.saveTileSettings(urlTemplate: urlTemplate, attribution: attribution, tileCap: tileCap, actor: actor)
        state.withLockedValue { $0 = (settings, true) }
        return settings
    }

    /// The origin of the template's tiles for the Content-Security-Policy: read for every answer, so worked out once
    /// per template rather than parsed again each time.
    var tileOrigin: String? {
        let template = current.usableTemplate
        if let known = origin.withLockedValue({ $0 }), known.template == template { return known.origin }
        let value = AppConfig.tileOrigin(of: template)
        origin.withLockedValue { $0 = (template, value) }
        return value
    }
}
