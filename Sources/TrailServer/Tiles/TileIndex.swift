import Crypto
import Foundation
import GRDB
import PackageFormat

/// `tiles/index.json` of a package: every tile's SHA-256 by its XYZ address. The web player cannot open SQLite, so it
/// is served single tiles by the tile route and checks each against this file, which the signed manifest lists.
///
/// Written by hand in a fixed order (zoom, column, row) so that the same MBTiles always gives the same bytes and a
/// rebuilt package stays byte-identical.
enum TileIndex {
    static func make(mbtiles: URL, format: String) throws -> Data {
        let reader = try MBTilesReader(url: mbtiles)
        defer { reader.close() }
        var entries: [(TileID, String)] = []
        try reader.everyTile { id, data in entries.append((id, SHA256.hash(data: data).hexString)) }
        var text = "{\"format\":\"\(format)\",\"tiles\":{"
        var seen = Set<TileID>()
        for (id, hash) in entries where seen.insert(id).inserted {
            if seen.count > 1 { text += "," }
            text += "\"\(id.z)/\(id.x)/\(id.y)\":\"\(hash)\""
        }
        text += "}}\n"
        return Data(text.utf8)
    }
}
