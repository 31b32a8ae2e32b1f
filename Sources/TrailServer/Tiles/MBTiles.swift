import Crypto
import Foundation
import GRDB
import NIOConcurrencyHelpers

/// Why an MBTiles file cannot be used, in words for the person who uploaded it.
public enum MBTilesError: Error, Sendable, Equatable, CustomStringConvertible {
    case notSQLite
    case unreadable(String)
    case missingTable(String)
    case missingMetadata(String)
    case vectorTiles
    case unsupportedFormat(String)
    case noTiles
    case boundsOutsideFrame(bounds: String, frame: String)
    case formatMismatch(declared: String, found: String)

    public var description: String {
        switch self {
        case .notSQLite:
            return "The file is not an MBTiles file: it is not an SQLite database."
        case .unreadable(let detail):
            return "The MBTiles file cannot be read (\(detail))."
        case .missingTable(let name):
            return "The file is an SQLite database but not an MBTiles file: it has no “\(name)” table (MBTiles 1.3 needs “metadata” and “tiles”)."
        case .missingMetadata(let key):
            return "The MBTiles file's metadata has no “\(key)” entry (MBTiles 1.3 needs “name” and “format”)."
        case .vectorTiles:
            return "The MBTiles file holds vector tiles (pbf). The apps draw raster tiles only: export PNG, JPEG or WebP tiles."
        case .unsupportedFormat(let format):
            return "The MBTiles file's tile format “\(format)” is not supported: use PNG, JPEG or WebP tiles."
        case .noTiles:
            return "The MBTiles file holds no tiles."
        case let .boundsOutsideFrame(bounds, frame):
            return "The MBTiles file covers \(bounds), which does not overlap the tour's frame (\(frame))."
        case let .formatMismatch(declared, found):
            return "The MBTiles file says its tiles are “\(declared)” but they are \(found)."
        }
    }
}

/// What an MBTiles file says about itself, checked against its tiles.
public struct MBTilesInfo: Sendable, Equatable {
    public var name: String
    /// `png`, `jpg` or `webp`.
    public var format: String
    public var minZoom: Int
    public var maxZoom: Int
    /// From the metadata, else from the tiles' extent.
    public var bounds: Frame
    public var attribution: String
    public var tileCount: Int
}

/// Raster tile formats by their magic numbers.
public enum TileImageFormat {
    /// `png`, `jpg`, `webp`, `pbf` (gzip or a bare protobuf is what vector tiles look like) or nil.
    public static func detect(_ data: Data) -> String? {
        let bytes = [UInt8](data.prefix(12))
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "webp" }
        if bytes.starts(with: [0x1F, 0x8B]) { return "pbf" }
        return nil
    }

    public static func mimeType(_ format: String) -> String {
        switch format {
        case "jpg", "jpeg": "image/jpeg"
        case "webp": "image/webp"
        case "pbf": "application/x-protobuf"
        default: "image/png"
        }
    }

    /// MBTiles `format` values accepted for raster tiles, normalised (`jpeg` → `jpg`).
    public static func normalised(_ format: String) -> String? {
        switch format.lowercased().trimmingCharacters(in: .whitespaces) {
        case "png": "png"
        case "jpg", "jpeg": "jpg"
        case "webp": "webp"
        default: nil
        }
    }
}

/// Reads an MBTiles file: read-only, with untrusted schema features off and a time limit on every check,
/// as uploaded files come from outside.
public final class MBTilesReader: @unchecked Sendable {
    let queue: DatabaseQueue
    public let url: URL

    /// Opens the file and checks that it is SQLite with an MBTiles schema (`metadata` table, `tiles` table or view).
    public init(url: URL) throws {
        self.url = url
        let header = (try? FileHandle(forReadingFrom: url)).flatMap { handle -> Data? in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 16)
        } ?? Data()
        guard header == Data("SQLite format 3\0".utf8) else { throw MBTilesError.notSQLite }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "mbtiles"
        configuration.prepareDatabase { db in
            try? db.execute(sql: "PRAGMA trusted_schema = OFF")
            try db.execute(sql: "PRAGMA query_only = 1")
        }
        do {
            queue = try DatabaseQueue(path: url.path, configuration: configuration)
        } catch {
            throw MBTilesError.unreadable(Self.describe(error))
        }
        try guarded { db in
            let objects = try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')")
            let names = Set(objects.map { ($0["name"] as String).lowercased() })
            guard names.contains("metadata") else { throw MBTilesError.missingTable("metadata") }
            guard names.contains("tiles") else { throw MBTilesError.missingTable("tiles") }
            let columns = Set(try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info('tiles')").map { ($0["name"] as String).lowercased() })
            for column in ["zoom_level", "tile_column", "tile_row", "tile_data"] where !columns.contains(column) {
                throw MBTilesError.unreadable("its tiles table has no \(column) column")
            }
            let metadataColumns = Set(try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info('metadata')").map { ($0["name"] as String).lowercased() })
            guard metadataColumns.contains("name"), metadataColumns.contains("value") else {
                throw MBTilesError.unreadable("its metadata table has no name and value columns")
            }
        }
    }

    deinit { try? queue.close() }

    public func close() { try? queue.close() }

    /// Runs a read with a time limit: a crafted view could otherwise keep SQLite busy for ever.
    func guarded<T>(seconds: Double = 30, _ body: (Database) throws -> T) throws -> T {
        let done = NIOLockedValueBox(false)
        let queue = self.queue
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if !done.withLockedValue({ $0 }) { queue.interrupt() } }
        defer { done.withLockedValue { $0 = true } }
        do {
            return try queue.read(body)
        } catch let error as MBTilesError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            throw MBTilesError.unreadable("reading it took longer than \(Int(seconds)) seconds")
        } catch {
            throw MBTilesError.unreadable(Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode.rawValue)" }
        return "\(error)"
    }

    /// Every `metadata` entry (last one wins for a repeated name).
    public func metadata() throws -> [String: String] {
        try guarded { db in
            var values: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM metadata") {
                guard let name = row["name"] as String? else { continue }
                values[name.lowercased()] = (row["value"] as String?) ?? ""
            }
            return values
        }
    }

    /// Checks the file as a raster tile set: `name` and `format` present, raster format (the first tile's bytes agree),
    /// at least one tile; zoom range and bounds from the metadata or, when missing, from the tiles.
    public func info() throws -> MBTilesInfo {
        let metadata = try metadata()
        guard metadata["name"] != nil else { throw MBTilesError.missingMetadata("name") }
        guard let declared = metadata["format"] else { throw MBTilesError.missingMetadata("format") }
        if declared.lowercased() == "pbf" || declared.lowercased() == "mvt" { throw MBTilesError.vectorTiles }
        guard let format = TileImageFormat.normalised(declared) else { throw MBTilesError.unsupportedFormat(declared) }
        return try guarded { db in
            guard let extent = try Row.fetchOne(db, sql: """
                SELECT MIN(zoom_level) AS minZoom, MAX(zoom_level) AS maxZoom, COUNT(*) AS count FROM tiles
                """), let minZoom = extent["minZoom"] as Int?, let maxZoom = extent["maxZoom"] as Int?, (extent["count"] as Int? ?? 0) > 0
            else { throw MBTilesError.noTiles }
            guard (0...30).contains(minZoom), (0...30).contains(maxZoom) else { throw MBTilesError.unreadable("its zoom levels are out of range") }
            if let sample = try Data.fetchOne(db, sql: "SELECT tile_data FROM tiles WHERE tile_data IS NOT NULL LIMIT 1") {
                let found = TileImageFormat.detect(sample)
                if found == "pbf" { throw MBTilesError.vectorTiles }
                if let found, found != format { throw MBTilesError.formatMismatch(declared: declared, found: found.uppercased()) }
                if found == nil { throw MBTilesError.formatMismatch(declared: declared, found: "not PNG, JPEG or WebP images") }
            }
            let bounds = try Self.parseBounds(metadata["bounds"]) ?? Self.tileExtent(db, zoom: maxZoom)
            let metaMin = metadata["minzoom"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let metaMax = metadata["maxzoom"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            // The tiles themselves are the truth; metadata may only narrow them.
            let low = max(minZoom, metaMin.map { min($0, maxZoom) } ?? minZoom)
            let high = min(maxZoom, metaMax.map { max($0, low) } ?? maxZoom)
            return MBTilesInfo(name: metadata["name"] ?? "", format: format, minZoom: low, maxZoom: max(low, high), bounds: bounds,
                               attribution: metadata["attribution"] ?? "", tileCount: extent["count"] ?? 0)
        }
    }

    /// `"west,south,east,north"`; nil when absent or not four numbers in range.
    static func parseBounds(_ text: String?) -> Frame? {
        guard let parts = text?.split(separator: ",").map({ Double($0.trimmingCharacters(in: .whitespaces)) }), parts.count == 4,
              let west = parts[0], let south = parts[1], let east = parts[2], let north = parts[3],
              (-180...180).contains(west), (-180...180).contains(east), (-90...90).contains(south), (-90...90).contains(north),
              south < north, west < east else { return nil }
        return Frame(north: north, south: south, east: east, west: west)
    }

    /// The area the tiles of one zoom cover.
    static func tileExtent(_ db: Database, zoom: Int) throws -> Frame {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT MIN(tile_column) AS minX, MAX(tile_column) AS maxX, MIN(tile_row) AS minRow, MAX(tile_row) AS maxRow FROM tiles WHERE zoom_level = ?
            """, arguments: [zoom]), let minX = row["minX"] as Int?, let maxX = row["maxX"] as Int?, let minRow = row["minRow"] as Int?,
            let maxRow = row["maxRow"] as Int? else { throw MBTilesError.noTiles }
        let upperLeft = TileMath.bounds(TileID.fromTMS(z: zoom, column: minX, row: maxRow))
        let lowerRight = TileMath.bounds(TileID.fromTMS(z: zoom, column: maxX, row: minRow))
        return Frame(north: upperLeft.north, south: lowerRight.south, east: lowerRight.east, west: upperLeft.west)
    }

    /// One tile by its XYZ address (the file stores TMS rows).
    public func tile(_ id: TileID) throws -> Data? {
        try guarded(seconds: 5) { db in
            try Data.fetchOne(db, sql: "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                              arguments: [id.z, id.x, id.tmsRow])
        }
    }

    /// Every tile of the file that lies in the frame at one zoom, in column then row order (XYZ rows).
    public func tiles(in frame: Frame, zoom: Int, _ body: (TileID, Data) throws -> Void) throws {
        guard let (xs, ys) = TileMath.range(frame, zoom: zoom) else { return }
        let rows = ((1 << zoom) - 1 - ys.upperBound)...((1 << zoom) - 1 - ys.lowerBound)
        try guarded(seconds: 600) { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT tile_column, tile_row, tile_data FROM tiles
                WHERE zoom_level = ? AND tile_column BETWEEN ? AND ? AND tile_row BETWEEN ? AND ? AND tile_data IS NOT NULL
                """, arguments: [zoom, xs.lowerBound, xs.upperBound, rows.lowerBound, rows.upperBound])
            var found: [(TileID, Data)] = []
            while let row = try cursor.next() {
                found.append((TileID.fromTMS(z: zoom, column: row["tile_column"], row: row["tile_row"]), row["tile_data"]))
            }
            for (id, data) in found.sorted(by: { $0.0 < $1.0 }) { try body(id, data) }
        }
    }
}

/// Writes a package's MBTiles 1.3 file: the deduplicating schema (`map` + `images`, with the `tiles` view readers
/// expect), TMS rows, every identical image stored once, the metadata, then `VACUUM`. Written to `<url>.partial`
/// and renamed when complete, so a file at `url` is always whole.
public final class MBTilesWriter {
    public let url: URL
    let partial: URL
    private var queue: DatabaseQueue?
    private var imageIds = Set<String>()
    public private(set) var tileCount = 0
    public private(set) var uniqueImageCount = 0
    private var lastTile: TileID?

    public init(url: URL) throws {
        self.url = url
        partial = URL(fileURLWithPath: url.path + ".partial")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        for leftover in [url, partial] { try? FileManager.default.removeItem(at: leftover) }
        var configuration = Configuration()
        configuration.label = "mbtiles-writer"
        let queue = try DatabaseQueue(path: partial.path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            // The file is fsynced once at the end; a crash in between leaves only a partial file that is rebuilt.
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: """
                CREATE TABLE metadata (name TEXT NOT NULL, value TEXT);
                CREATE UNIQUE INDEX metadata_name ON metadata (name);
                CREATE TABLE map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, tile_id TEXT NOT NULL);
                CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row);
                CREATE TABLE images (tile_id TEXT NOT NULL, tile_data BLOB NOT NULL);
                CREATE UNIQUE INDEX images_id ON images (tile_id);
                CREATE VIEW tiles AS
                  SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row, images.tile_data AS tile_data
                  FROM map JOIN images ON images.tile_id = map.tile_id;
                """)
        }
        self.queue = queue
    }

    deinit {
        try? queue?.close()
        try? FileManager.default.removeItem(at: partial)
    }

    /// Adds tiles (XYZ addresses), in increasing (z, x, y) order so the same tiles give the same file.
    public func add(_ tiles: [(TileID, Data)]) throws {
        guard let queue else { throw MBTilesError.unreadable("the writer is closed") }
        try queue.inTransaction { db in
            for (tile, data) in tiles {
                if let lastTile, !(lastTile < tile) {
                    throw MBTilesError.unreadable("tiles must be added in order, \(tile) came after \(lastTile)")
                }
                lastTile = tile
                let id = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
                if imageIds.insert(id).inserted {
                    try db.execute(sql: "INSERT INTO images (tile_id, tile_data) VALUES (?, ?)", arguments: [id, data])
                    uniqueImageCount += 1
                }
                try db.execute(sql: "INSERT INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?, ?, ?, ?)",
                               arguments: [tile.z, tile.x, tile.tmsRow, id])
                tileCount += 1
            }
            return .commit
        }
    }

    /// Writes the metadata (in the order given), vacuums, fsyncs and renames the file into place.
    public func finish(metadata: [(String, String)]) throws {
        guard let queue else { throw MBTilesError.unreadable("the writer is closed") }
        try queue.inTransaction { db in
            for (name, value) in metadata {
                try db.execute(sql: "INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)", arguments: [name, value])
            }
            return .commit
        }
        try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        try queue.close()
        self.queue = nil
        try DurableFile.fsync(partial)
        guard rename(partial.path, url.path) == 0 else { throw POSIXFailure(operation: "rename \(partial.lastPathComponent)", code: errno) }
        try DurableFile.fsyncFolder(url.deletingLastPathComponent())
    }

    /// MBTiles 1.3 metadata for a package's tiles.
    public static func metadata(name: String, description: String, format: String, frame: Frame, zooms: ClosedRange<Int>,
                                attribution: String) -> [(String, String)] {
        func number(_ value: Double) -> String {
            var text = String(format: "%.6f", value)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text == "-0" ? "0" : text
        }
        let center = TileMath.centerZoom(frame, zooms: zooms)
        return [
            ("name", name),
            ("format", format),
            ("bounds", [frame.west, frame.south, frame.east, frame.north].map(number).joined(separator: ",")),
            ("center", "\(number((frame.west + frame.east) / 2)),\(number((frame.south + frame.north) / 2)),\(center)"),
            ("minzoom", "\(zooms.lowerBound)"),
            ("maxzoom", "\(zooms.upperBound)"),
            ("attribution", attribution),
            ("description", description),
            ("type", "baselayer"),
        ]
    }
}
