import Foundation

/// The basemap of the panel's maps (tour page, waypoint page). The ranger's browser fetches these tiles for display
/// only; the server never fetches or packs them (OpenStreetMap's tile usage policy forbids bulk downloads), so
/// packages still take their tiles from `--tile-url` or an uploaded MBTiles.
package struct EditorBasemap: Sendable, Equatable {
    static let openStreetMap = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    static let openStreetMapAttribution = "© OpenStreetMap contributors"
    static let openStreetMapCopyright = "https://www.openstreetmap.org/copyright"

    let template: String
    let attribution: String
    /// Where the credit links to (OpenStreetMap's licence page for its tiles).
    let attributionURL: String?

    /// `--editor-tile-url` when given (`none`: no basemap); else the package tile server in force (`--tile-url` or the
    /// admin's), so one server serves both; else OpenStreetMap's standard tiles.
    static func resolve(editorTileURL: String?, editorTileAttribution: String?, packageTiles: TileSettings) -> EditorBasemap? {
        let chosen = editorTileURL?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let chosen, !chosen.isEmpty {
            if chosen.lowercased() == "none" { return nil }
            let isOSM = chosen == openStreetMap
            return EditorBasemap(
                template: chosen,
                attribution: editorTileAttribution ?? (isOSM ? openStreetMapAttribution : ""),
                attributionURL: isOSM && editorTileAttribution == nil ? openStreetMapCopyright : nil
            )
        }
        if let template = packageTiles.usableTemplate {
            return EditorBasemap(template: template, attribution: editorTileAttribution ?? packageTiles.attribution, attributionURL: nil)
        }
        return EditorBasemap(
            template: openStreetMap,
            attribution: editorTileAttribution ?? openStreetMapAttribution,
            attributionURL: editorTileAttribution == nil ? openStreetMapCopyright : nil
        )
    }

    /// Why a `--editor-tile-url` cannot be used, or nil: `none`, or an http(s) template with `{z}`, `{x}` and `{y}`.
    package static func problem(_ value: String) -> String? {
        let value = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if value.lowercased() == "none" { return nil }
        guard let origin = AppConfig.tileOrigin(of: value), origin.hasPrefix("https://") || origin.hasPrefix("http://") else {
            return "must be an http(s) URL template like \(openStreetMap), or none"
        }
        guard ["{z}", "{x}", "{y}"].allSatisfy(value.contains) else { return "must contain {z}, {x} and {y}" }
        return nil
    }

    /// The tile host for the Content-Security-Policy's `img-src`.
    var origin: String? { AppConfig.tileOrigin(of: template) }
}
