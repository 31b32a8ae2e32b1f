import Crypto
import Foundation

/// The web player's own files (scripts, style, icon), read once at start and served under
/// `/visit/assets/<version>/<name>`, where the version is a SHA-256 over all of them: the URLs change whenever a file
/// does, so every one is immutable and a CDN or the browser may keep it for a year. The modules import each other by
/// relative URL, which stays inside the same version folder.
struct PlayerAssets: Sendable {
    struct File: Sendable {
        let body: Data
        let contentType: String
    }

    /// The player's scripts, style and icons, by the name they are served under; an icon has the sizes the web app
    /// manifest lists it with.
    static let sources: [(name: String, folder: String, contentType: String, iconSizes: String?)] = [
        ("visit-player.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-stops.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-tracking.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-trust.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-map.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-basemap.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-alerts.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-alerts-view.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-state.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-store.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-profile.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit-events.js", "js", "text/javascript; charset=utf-8", nil),
        ("visit.css", "css", "text/css; charset=utf-8", nil),
        ("icon.svg", "img", "image/svg+xml", "any"),
        // PNG beside the SVG: Android asks for 192 and 512 px icons to install the player, iOS for a PNG touch icon.
        ("icon-192.png", "img", "image/png", "192x192"),
        ("icon-512.png", "img", "image/png", "512x512"),
    ]

    let files: [String: File]
    let version: String
    /// The service worker's script, with the version and the shell's URLs written in before it.
    let serviceWorker: Data

    /// Reads every file of the player at start: a missing or unreadable one is a start-up error, never a script served
    /// empty (the player would then fail on visitors' phones with nothing in the server's log).
    init(publicFolder: URL) throws {
        var files: [String: File] = [:]
        var hasher = SHA256()
        for source in Self.sources {
            let body = try Self.read(publicFolder.appendingPathComponent(source.folder).appendingPathComponent(source.name))
            files[source.name] = File(body: body, contentType: source.contentType)
            hasher.update(data: Data(source.name.utf8))
            hasher.update(data: withUnsafeBytes(of: UInt64(body.count).bigEndian) { Data($0) })
            hasher.update(data: body)
        }
        let worker = try Self.read(publicFolder.appendingPathComponent("js/visit-sw.js"))
        hasher.update(data: worker)
        let version = String(hasher.finalize().hexString.prefix(20))
        self.files = files
        self.version = version
        let shell = Self.sources.map { "\"\(Self.base(version))\($0.name)\"" }.joined(separator: ", ")
        self.serviceWorker = Data("const PLAYER_VERSION = \"\(version)\";\nconst PLAYER_ASSETS = [\(shell)];\n".utf8) + worker
    }

    struct MissingFile: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "the web player's file \(path) cannot be read (\(reason)): check --root, which must hold Public/" }
    }

    static func read(_ file: URL) throws -> Data {
        let data: Data
        do { data = try Data(contentsOf: file) } catch { throw MissingFile(path: file.path, reason: (error as NSError).localizedDescription) }
        guard !data.isEmpty else { throw MissingFile(path: file.path, reason: "it is empty") }
        return data
    }

    static func base(_ version: String) -> String { "/visit/assets/\(version)/" }
    var base: String { Self.base(version) }
}
