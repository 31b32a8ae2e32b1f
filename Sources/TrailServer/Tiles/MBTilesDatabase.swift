import CSQLiteHardening
import Crypto
import Foundation
import GRDB
import NIOConcurrencyHelpers
import PackageFormat

/// Why an MBTiles file cannot be used, in words for the person who uploaded it.
enum MBTilesError: Error, Sendable, Equatable, CustomStringConvertible {
    case notSQLite
    case unreadable(String)
    case missingTable(String)
    case missingMetadata(String)
    case vectorTiles
    case unsupportedFormat(String)
    case noTiles
    case boundsOutsideFrame(bounds: String, frame: String)
    case formatMismatch(declared: String, found: String)
    /// A view, trigger, virtual table or generated column: something in the file that would run code when read.
    case untrustedSchema(String)
    case tileTooLarge(tile: String, bytes: Int64, limit: Int64)
    case tileNotImage(tile: String, declared: String)

    var description: String {
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
        case .untrustedSchema(let what):
            return
                "The MBTiles file cannot be used: \(what). An MBTiles file may hold only its tables (metadata and tiles); export it again from your map tool."
        case let .tileTooLarge(tile, bytes, limit):
            return "The MBTiles file's tile \(tile) is \(ByteFormat.string(bytes)); a map tile may be at most \(ByteFormat.string(limit))."
        case let .tileNotImage(tile, declared):
            return "The MBTiles file's tile \(tile) is not a \(declared.uppercased()) image (nor PNG, JPEG or WebP)."
        }
    }
}

/// What an MBTiles file says about itself, checked against its tiles.
struct MBTilesInfo: Sendable, Equatable {
    var name: String
    /// `png`, `jpg` or `webp`.
    var format: String
    var minZoom: Int
    var maxZoom: Int
    /// From the metadata, else from the tiles' extent.
    var bounds: Frame
    var attribution: String
    var tileCount: Int
}

/// Raster tile formats by their magic numbers.
enum TileImageFormat {
    /// `png`, `jpg`, `webp`, `pbf` (gzip or a bare protobuf is what vector tiles look like) or nil.
    static func detect(_ data: Data) -> String? {
        let bytes = [UInt8](data.prefix(12))
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "webp" }
        if bytes.starts(with: [0x1F, 0x8B]) { return "pbf" }
        return nil
    }

    static func mimeType(_ format: String) -> String {
        switch format {
        case "jpg", "jpeg": "image/jpeg"
        case "webp": "image/webp"
        case "pbf": "application/x-protobuf"
        default: "image/png"
        }
    }

    /// MBTiles `format` values accepted for raster tiles, normalised (`jpeg` → `jpg`).
    static func normalised(_ format: String) -> String? {
        switch format.lowercased().trimmingCharacters(in: .whitespaces) {
        case "png": "png"
        case "jpg", "jpeg": "jpg"
        case "webp": "webp"
        default: nil
        }
    }
}

/// Reads an MBTiles file that came from outside. An uploaded SQLite file is a program as much as data: a view can
/// compute a gigabyte (`zeroblob`), a recursive CTE can run for ever, a trigger or a generated column runs code on
/// read. So the reader
/// - opens the file read-only with the connection locked down (`CSQLiteHardening`: defensive mode, untrusted schema,
///   views and triggers disabled, no string or blob over `maxTileBytes` ever built in memory);
/// - accepts only real tables: `tiles` as a table (as QGIS and GDAL write it), or the `map` + `images` pair that
///   `MBTilesWriter` itself writes, whose join it writes itself instead of using the file's `tiles` view;
/// - refuses any other view, any trigger, any virtual table and any generated column in those tables;
/// - puts a time limit on every read, and hands tiles over one at a time, in the order SQLite sorts them (its sorter
///   spills to temporary files), so memory stays flat whatever the file holds.
final class MBTilesReader: @unchecked Sendable {
    let queue: DatabaseQueue
    let url: URL
    /// Where tiles are read from: `tiles`, or the join of `map` and `images`. Always a real table or our own join.
    let tileSource: String

    /// The largest tile accepted: a 512-pixel satellite JPEG is a few hundred KB.
    static let maxTileBytes = 2 << 20

    /// Opens the file and checks that it is SQLite with an MBTiles schema made only of tables.
    init(url: URL) throws {
        self.url = url
        let header =
            (try? FileHandle(forReadingFrom: url)).flatMap { handle -> Data? in
                defer { try? handle.close() }
                return try? handle.read(upToCount: 16)
            } ?? Data()
        guard header == Data("SQLite format 3\0".utf8) else { throw MBTilesError.notSQLite }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "mbtiles"
        configuration.prepareDatabase { db in
            let code = trail_sqlite_harden_untrusted(db.sqliteConnection, Int32(MBTilesReader.maxTileBytes))
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot lock down the connection") }
            try db.execute(sql: "PRAGMA query_only = 1")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: url.path, configuration: configuration)
        } catch {
            throw MBTilesError.unreadable(Self.describe(error))
        }
        self.queue = queue
        do {
            tileSource = try Self.guarded(queue, seconds: 30) { db in try Self.checkSchema(db) }
        } catch {
            try? queue.close()
            throw error
        }
    }

    deinit { try? queue.close() }

    func close() { try? queue.close() }

    /// Checks `sqlite_master` and the columns, and returns the SQL to read tiles from.
    static func checkSchema(_ db: Database) throws -> String {
        let objects = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master")
        var tables = Set<String>()
        var views = Set<String>()
        for object in objects {
            let type: String = object["type"] ?? ""
            let name = (object["name"] as String? ?? "").lowercased()
            let sql = (object["sql"] as String? ?? "").trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
            switch type {
            case "trigger": throw MBTilesError.untrustedSchema("it defines a trigger (“\(name)”)")
            case "view": views.insert(name)
            case "table":
                if sql.hasPrefix("CREATE VIRTUAL") { throw MBTilesError.untrustedSchema("it defines a virtual table (“\(name)”)") }
                tables.insert(name)
            default: continue
            }
        }
        guard tables.contains("metadata") else { throw MBTilesError.missingTable("metadata") }
        let source: String
        if tables.contains("tiles") {
            try requireColumns(db, table: "tiles", ["zoom_level", "tile_column", "tile_row", "tile_data"])
            source = "tiles"
        } else if tables.contains("map"), tables.contains("images") {
            try requireColumns(db, table: "map", ["zoom_level", "tile_column", "tile_row", "tile_id"])
            try requireColumns(db, table: "images", ["tile_id", "tile_data"])
            // The file's own `tiles` view is never read: this is the join the MBTiles spec gives for that schema.
            source = """
                (SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row, images.tile_data AS tile_data
                 FROM map JOIN images ON images.tile_id = map.tile_id)
                """
        } else if views.contains("tiles") {
            throw MBTilesError.untrustedSchema("its “tiles” is a view, not a table")
        } else {
            throw MBTilesError.missingTable("tiles")
        }
        let allowedViews: Set<String> = source == "tiles" ? [] : ["tiles"]
        if let view = views.subtracting(allowedViews).sorted().first {
            throw MBTilesError.untrustedSchema("it defines a view (“\(view)”)")
        }
        try requireColumns(db, table: "metadata", ["name", "value"])
        return source
    }

    /// The table has these columns, none of them generated (a generated column is code that runs on every read).
    static func requireColumns(_ db: Database, table: String, _ required: [String]) throws {
        let columns = try Row.fetchAll(db, sql: "SELECT name, hidden FROM pragma_table_xinfo(?)", arguments: [table])
        if let generated = columns.first(where: { ($0["hidden"] as Int? ?? 0) >= 2 }) {
            throw MBTilesError.untrustedSchema("its “\(table)” table has a generated column (“\(generated["name"] as String? ?? "")”)")
        }
        let names = Set(columns.map { ($0["name"] as String? ?? "").lowercased() })
        for column in required where !names.contains(column) {
            throw MBTilesError.unreadable("its \(table) table has no \(column) column")
        }
    }

    /// Runs a read with a time limit: a crafted file could otherwise keep SQLite busy for ever.
    func guarded<T>(seconds: Double = 30, _ body: (Database) throws -> T) throws -> T {
        try Self.guarded(queue, seconds: seconds, body)
    }

    static func guarded<T>(_ queue: DatabaseQueue, seconds: Double, _ body: (Database) throws -> T) throws -> T {
        let done = NIOLockedValueBox(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if !done.withLockedValue({ $0 }) { queue.interrupt() } }
        defer { done.withLockedValue { $0 = true } }
        do {
            return try queue.read(body)
        } catch let error as MBTilesError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            throw MBTilesError.unreadable("reading it took longer than \(Int(seconds)) seconds")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_TOOBIG {
            throw MBTilesError.unreadable(
                "it holds a value larger than \(ByteFormat.string(Int64(maxTileBytes))), the most a map tile or a metadata entry may be"
            )
        } catch {
            throw MBTilesError.unreadable(Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode.rawValue)" }
        return "\(error)"
    }

    /// Every `metadata` entry (last one wins for a repeated name).
    func metadata() throws -> [String: String] {
        try guarded { db in
            var values: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM metadata") {
                guard let name = row["name"] as String? else { continue }
                values[name.lowercased()] = (row["value"] as String?) ?? ""
            }
            return values
        }
    }

    /// Checks the file as a raster tile set: `name` and `format` present, raster format, at least one tile, and every
    /// tile no larger than `maxTileBytes` and an image of the declared format (its magic bytes); zoom range and bounds
    /// from the metadata or, when missing, from the tiles. Reads every tile once, one at a time.
    func info() throws -> MBTilesInfo {
        let metadata = try metadata()
        guard metadata["name"] != nil else { throw MBTilesError.missingMetadata("name") }
        guard let declared = metadata["format"] else { throw MBTilesError.missingMetadata("format") }
        if declared.lowercased() == "pbf" || declared.lowercased() == "mvt" { throw MBTilesError.vectorTiles }
        guard let format = TileImageFormat.normalised(declared) else { throw MBTilesError.unsupportedFormat(declared) }
        let source = tileSource
        let (minZoom, maxZoom, count) = try guarded { db -> (Int, Int, Int) in
            guard
                let extent = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT MIN(zoom_level) AS minZoom, MAX(zoom_level) AS maxZoom, COUNT(*) AS count FROM \(source)
                        """
                ), let minZoom = extent["minZoom"] as Int?, let maxZoom = extent["maxZoom"] as Int?, let count = extent["count"] as Int?, count > 0
            else { throw MBTilesError.noTiles }
            guard (0...30).contains(minZoom), (0...30).contains(maxZoom) else { throw MBTilesError.unreadable("its zoom levels are out of range") }
            // `typeof()`, and `length()` of a blob, read only the record's header: these checks need no tile in memory.
            // (`length()` of text counts characters, so text is refused first: a tile is never text anyway.)
            if let text = try Row.fetchOne(
                db,
                sql: """
                    SELECT zoom_level, tile_column, tile_row FROM \(source) WHERE typeof(tile_data) NOT IN ('blob', 'null') LIMIT 1
                    """
            ) {
                throw MBTilesError.tileNotImage(tile: Self.address(text), declared: declared)
            }
            if let big = try Row.fetchOne(
                db,
                sql: """
                    SELECT zoom_level, tile_column, tile_row, length(tile_data) AS size FROM \(source)
                    WHERE typeof(tile_data) = 'blob' AND length(tile_data) > ? LIMIT 1
                    """,
                arguments: [Self.maxTileBytes]
            ) {
                throw MBTilesError.tileTooLarge(tile: Self.address(big), bytes: big["size"], limit: Int64(Self.maxTileBytes))
            }
            return (minZoom, maxZoom, count)
        }
        try guarded(seconds: 600) { db in
            let cursor = try Row.fetchCursor(
                db,
                sql: "SELECT zoom_level, tile_column, tile_row, tile_data FROM \(source) WHERE tile_data IS NOT NULL"
            )
            while let row = try cursor.next() {
                let data: Data = row["tile_data"]
                guard let found = TileImageFormat.detect(data) else {
                    throw MBTilesError.tileNotImage(tile: Self.address(row), declared: declared)
                }
                if found == "pbf" { throw MBTilesError.vectorTiles }
                if found != format { throw MBTilesError.formatMismatch(declared: declared, found: found.uppercased()) }
            }
        }
        return try guarded { db in
            let bounds = try Self.parseBounds(metadata["bounds"]) ?? Self.tileExtent(db, source: source, zoom: maxZoom)
            let metaMin = metadata["minzoom"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let metaMax = metadata["maxzoom"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            // The tiles themselves are the truth; metadata may only narrow them.
            let low = max(minZoom, metaMin.map { min($0, maxZoom) } ?? minZoom)
            let high = min(maxZoom, metaMax.map { max($0, low) } ?? maxZoom)
            return MBTilesInfo(
                name: metadata["name"] ?? "",
                format: format,
                minZoom: low,
                maxZoom: max(low, high),
                bounds: bounds,
                attribution: metadata["attribution"] ?? "",
                tileCount: count
            )
        }
    }

    /// `z/x/y` (XYZ) of a row with `zoom_level`, `tile_column` and `tile_row` (TMS), for messages.
    static func address(_ row: Row) -> String {
        let z: Int = row["zoom_level"] ?? 0
        let column: Int = row["tile_column"] ?? 0
        let tmsRow: Int = row["tile_row"] ?? 0
        guard (0...30).contains(z) else { return "\(z)/\(column)/\(tmsRow)" }
        return "\(z)/\(column)/\((1 << z) - 1 - tmsRow)"
    }

    /// `"west,south,east,north"`; nil when absent or not four numbers in range.
    static func parseBounds(_ text: String?) -> Frame? {
        guard let parts = text?.split(separator: ",").map({ Double($0.trimmingCharacters(in: .whitespaces)) }), parts.count == 4,
            let west = parts[0], let south = parts[1], let east = parts[2], let north = parts[3],
            (-180...180).contains(west), (-180...180).contains(east), (-90...90).contains(south), (-90...90).contains(north),
            south < north, west < east
        else { return nil }
        return Frame(north: north, south: south, east: east, west: west)
    }

    /// The area the tiles of one zoom cover.
    static func tileExtent(_ db: Database, source: String, zoom: Int) throws -> Frame {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT MIN(tile_column) AS minX, MAX(tile_column) AS maxX, MIN(tile_row) AS minRow, MAX(tile_row) AS maxRow FROM \(source) WHERE zoom_level = ?
                    """,
                arguments: [zoom]
            ), let minX = row["minX"] as Int?, let maxX = row["maxX"] as Int?, let minRow = row["minRow"] as Int?,
            let maxRow = row["maxRow"] as Int?
        else { throw MBTilesError.noTiles }
        let upperLeft = TileMath.bounds(TileID.fromTMS(z: zoom, column: minX, row: maxRow))
        let lowerRight = TileMath.bounds(TileID.fromTMS(z: zoom, column: maxX, row: minRow))
        return Frame(north: upperLeft.north, south: lowerRight.south, east: lowerRight.east, west: upperLeft.west)
    }

    /// One tile by its XYZ address (the file stores TMS rows).
    func tile(_ id: TileID) throws -> Data? {
        try guarded(seconds: 5) { db in
            try Data.fetchOne(
                db,
                sql: "SELECT tile_data FROM \(tileSource) WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                arguments: [id.z, id.x, id.tmsRow]
            )
        }
    }

    /// Every tile of the file that lies in the frame at one zoom, in column then row order (XYZ rows), handed over one
    /// at a time: SQLite sorts (spilling to temporary files when large), nothing is collected here.
    func tiles(in frame: Frame, zoom: Int, _ body: (TileID, Data) throws -> Void) throws {
        guard let (xs, ys) = TileMath.range(frame, zoom: zoom) else { return }
        let rows = ((1 << zoom) - 1 - ys.upperBound)...((1 << zoom) - 1 - ys.lowerBound)
        try guarded(seconds: 600) { db in
            // XYZ y grows as the TMS row falls: column ascending, then TMS row descending is (x, y) ascending.
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT tile_column, tile_row, tile_data FROM \(tileSource)
                    WHERE zoom_level = ? AND tile_column BETWEEN ? AND ? AND tile_row BETWEEN ? AND ? AND tile_data IS NOT NULL
                    ORDER BY tile_column ASC, tile_row DESC
                    """,
                arguments: [zoom, xs.lowerBound, xs.upperBound, rows.lowerBound, rows.upperBound]
            )
            var previous: TileID?
            while let row = try cursor.next() {
                let id = TileID.fromTMS(z: zoom, column: row["tile_column"], row: row["tile_row"])
                // A file without a unique index may list a tile twice: the first one wins.
                if id == previous { continue }
                previous = id
                try body(id, row["tile_data"])
            }
        }
    }
}

/// Writes a package's MBTiles 1.3 file: the deduplicating schema (`map` + `images`, with the `tiles` view readers
/// expect), TMS rows, every identical image stored once, the metadata, then `VACUUM`. Written to `<url>.partial`
/// and renamed when complete, so a file at `url` is always whole.
final class MBTilesWriter {
    let url: URL
    let partial: URL
    private var queue: DatabaseQueue?
    private var imageIds = Set<String>()
    private(set) var tileCount = 0
    private(set) var uniqueImageCount = 0
    private var lastTile: TileID?

    init(url: URL) throws {
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
            try db.execute(
                sql: """
                    CREATE TABLE metadata (name TEXT NOT NULL, value TEXT);
                    CREATE UNIQUE INDEX metadata_name ON metadata (name);
                    CREATE TABLE map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, tile_id TEXT NOT NULL);
                    CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row);
                    CREATE TABLE images (tile_id TEXT NOT NULL, tile_data BLOB NOT NULL);
                    CREATE UNIQUE INDEX images_id ON images (tile_id);
                    CREATE VIEW tiles AS
                      SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row, images.tile_data AS tile_data
                      FROM map JOIN images ON images.tile_id = map.tile_id;
                    """
            )
        }
        self.queue = queue
    }

    deinit {
        try? queue?.close()
        try? FileManager.default.removeItem(at: partial)
    }

    /// Adds tiles (XYZ addresses), in increasing (z, x, y) order so the same tiles give the same file.
    func add(_ tiles: [(TileID, Data)]) throws {
        guard let queue else { throw MBTilesError.unreadable("the writer is closed") }
        try queue.inTransaction { db in
            for (tile, data) in tiles {
                if let lastTile, !(lastTile < tile) {
                    throw MBTilesError.unreadable("tiles must be added in order, \(tile) came after \(lastTile)")
                }
                lastTile = tile
                let id = SHA256.hash(data: data).hexString
                if imageIds.insert(id).inserted {
                    try db.execute(sql: "INSERT INTO images (tile_id, tile_data) VALUES (?, ?)", arguments: [id, data])
                    uniqueImageCount += 1
                }
                try db.execute(
                    sql: "INSERT INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?, ?, ?, ?)",
                    arguments: [tile.z, tile.x, tile.tmsRow, id]
                )
                tileCount += 1
            }
            return .commit
        }
    }

    /// Writes the metadata (in the order given), vacuums, fsyncs and renames the file into place.
    func finish(metadata: [(String, String)]) throws {
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
    static func metadata(
        name: String,
        description: String,
        format: String,
        frame: Frame,
        zooms: ClosedRange<Int>,
        attribution: String
    ) -> [(String, String)] {
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

extension MBTilesReader {
    /// Every tile of the file in (zoom, column, XYZ row) order, one at a time (a tile listed twice is handed over twice;
    /// the caller keeps the first).
    func everyTile(_ body: (TileID, Data) throws -> Void) throws {
        try guarded(seconds: 600) { db in
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT zoom_level, tile_column, tile_row, tile_data FROM \(tileSource)
                    WHERE tile_data IS NOT NULL ORDER BY zoom_level ASC, tile_column ASC, tile_row DESC
                    """
            )
            while let row = try cursor.next() {
                let z: Int = row["zoom_level"]
                guard (0...30).contains(z) else { continue }
                let id = TileID.fromTMS(z: z, column: row["tile_column"], row: row["tile_row"])
                guard id.isValid else { continue }
                try body(id, row["tile_data"])
            }
        }
    }
}
