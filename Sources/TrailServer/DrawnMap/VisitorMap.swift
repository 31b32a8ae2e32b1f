import Foundation
import OpenMap
import PackageFormat

/// Which map visitors will get with a tour, in the words the publishing card and the review page use: map tiles, the
/// map drawn from open data, both, or none (and then what an admin can do about it).
struct VisitorMap: Sendable, Equatable {
    enum Kind: String, Sendable { case tiles, drawn, both, none }

    let kind: Kind
    /// One sentence for the card.
    let summary: String
    /// Set for `none`: shown among the warnings before submission.
    var warning: String? { kind == .none ? summary : nil }

    static let remedy =
        "An admin can give visitors a map in one of three ways: a tile server that allows bulk downloads (Admin → Map tiles), an MBTiles file uploaded for this tour, or an OpenStreetMap extract (--osm-extract) or terrain model (--dem) the server draws a map from."

    /// Before submission: from the tour's tile source and what the server can draw for its frame.
    static func planned(tileSource: String?, frame: Frame?, openMap: OpenDataMap) -> VisitorMap {
        let drawn = drawnSources(frame: frame, openMap: openMap)
        let sources = drawn.parts.joined(separator: " and ")
        switch (tileSource, drawn.parts.isEmpty) {
        case (let source?, false):
            return VisitorMap(kind: .both, summary: "Visitors get map tiles (\(source)) with a map drawn over them from \(sources).")
        case (let source?, true):
            return VisitorMap(kind: .tiles, summary: "Visitors get map tiles (\(source)).")
        case (nil, false):
            return VisitorMap(kind: .drawn, summary: "Visitors get a map drawn from \(sources), offline with the tour.")
        case (nil, true):
            let why = drawn.reasons.isEmpty ? "" : " " + drawn.reasons.joined(separator: " ")
            return VisitorMap(kind: .none, summary: "Visitors will see no map: only the route and the stops on a blank background.\(why) \(remedy)")
        }
    }

    /// After the build: what the package holds.
    static func shipped(_ manifest: Manifest) -> VisitorMap {
        let tiles = manifest.tiles.map {
            "\($0.format.uppercased()) tiles, zoom \($0.minZoom)–\($0.maxZoom), \(DisplayFormat.grouped($0.tileCount)) tiles, \(ByteFormat.string($0.size ?? 0))"
        }
        let drawn = manifest.basemap.map { basemap in
            let layers = basemap.layers.map { layerNames[$0] ?? $0 }
            return "a drawn map of \(Self.list(layers)), \(ByteFormat.string(basemap.size)), credited “\(basemap.attribution)”"
        }
        switch (tiles, drawn) {
        case (let tiles?, let drawn?): return VisitorMap(kind: .both, summary: "\(tiles); over them \(drawn).")
        case (let tiles?, nil): return VisitorMap(kind: .tiles, summary: "\(tiles).")
        case (nil, let drawn?): return VisitorMap(kind: .drawn, summary: "No tiles: \(drawn).")
        case (nil, nil): return VisitorMap(kind: .none, summary: "None: visitors will see no map under the route and the stops. \(remedy)")
        }
    }

    /// "a, b and c".
    static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items.last!
    }

    /// The tour's tile source in words, or nil when it has none: its clean uploaded file, else the tile server.
    static func tileSource(tileset: TourTileset?, settings: TileSettings) -> String? {
        if let tileset, tileset.scanStatus == .clean { return "from the uploaded file “\(tileset.originalName)”" }
        return settings.usableTemplate == nil ? nil : "from the tile server"
    }

    static let layerNames: [String: String] = [
        "wood": "woods", "water": "water", "building": "buildings", "contour": "contour lines", "stream": "streams", "road": "roads",
        "path": "paths", "parking": "parking", "toilets": "toilets", "shelter": "shelters", "viewpoint": "viewpoints", "peak": "peaks",
    ]

    /// What the server can draw for the frame, and why not where it cannot.
    static func drawnSources(frame: Frame?, openMap: OpenDataMap) -> (parts: [String], reasons: [String]) {
        var parts: [String] = []
        var reasons: [String] = []
        switch openMap.indexState {
        case .off: break
        case .indexing: parts.append("OpenStreetMap data (its extract is being indexed now)")
        case .failed(let reason): reasons.append(reason)
        case .ready(let index):
            if let frame, !index.covers(west: frame.west, south: frame.south, east: frame.east, north: frame.north) {
                reasons.append("The OpenStreetMap extract (\(index.metadata.files.joined(separator: ", "))) does not cover this tour's frame.")
            } else {
                parts.append("OpenStreetMap data")
            }
        }
        if let model = openMap.terrain.model {
            if let frame, !model.coverage.intersects(west: frame.west, south: frame.south, east: frame.east, north: frame.north) {
                reasons.append("The terrain model does not cover this tour's frame.")
            } else {
                parts.append("contour lines of the terrain model")
            }
        } else if let problem = openMap.terrain.problem {
            reasons.append(problem)
        }
        return (parts, reasons)
    }
}
