import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOConcurrencyHelpers
import NIOCore
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

#if canImport(Glibc)
import Glibc
#endif

/// What the tiles tests ask of the app harness.
extension TestEnv {
    /// The frame of the seeded tour.
    static let frame = Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28)

    static func fastFetch() -> TileFetchOptions {
        var options = TileFetchOptions()
        options.concurrency = 4
        // Generous: under a full parallel test run a loopback answer can take over a second, and a time-out
        // would retry and break the one-request-per-tile count. The "stops answering" test sets its own.
        options.requestTimeout = 15
        options.attempts = 5
        options.initialBackoff = 0.02
        options.maxBackoff = 0.1
        options.allowPrivateAddresses = true  // the tests' tile servers listen on 127.0.0.1
        return options
    }

    /// Frames the seeded tour with a zoom range (the seed's 11–15 needs 417 tiles; 10–13 needs 39).
    func setZooms(_ zooms: ClosedRange<Int>, frame: Frame = TestEnv.frame) async throws {
        _ = try await database.setFrame(
            tourId: seed.tourId,
            FrameInput(
                north: frame.north,
                south: frame.south,
                east: frame.east,
                west: frame.west,
                minZoom: zooms.lowerBound,
                maxZoom: zooms.upperBound
            ),
            maxAreaKm2: 2500,
            actor: .system
        )
    }

    /// Saves tile settings as an admin would in the panel.
    func useTileServer(_ template: String?, cap: Int = TileSettings.defaultTileCap, attribution: String = "© Test Tiles") async throws {
        _ = try await app.dependencies.tileSettings.save(
            urlTemplate: template ?? "",
            attribution: template == nil ? "" : attribution,
            tileCap: cap,
            actor: try actor("admin@test.org")
        )
    }

    /// A build service like the app's, with other fetch options (e.g. no retries).
    func buildService(fetch: TileFetchOptions) -> PackageBuildService {
        PackageBuildService(
            database: database,
            paths: paths,
            scanner: scans.scanner,
            signingKey: app.dependencies.signingKey,
            tiles: TilePackager(
                paths: paths,
                cacheRoot: config.tileCacheFolder,
                options: fetch,
                userAgent: TileFetcher.userAgent(publicURL: config.effectivePublicURL)
            )
        )
    }

    /// Submits the tour (as its author, with the tile settings in force) and runs the build; returns the request.
    func submitAndBuild(using service: PackageBuildService? = nil) async throws -> PublishRequest {
        let request = try await database.startPublish(
            tourId: seed.tourId,
            actor: try actor("author@test.org"),
            tiles: app.dependencies.tileSettings.current
        )
        #expect(await (service ?? builds).drain() == 1)
        return try #require(try await database.publishRequest(id: request.id))
    }

    /// Every file under the data folder's `staging/` and `packages/`.
    func packageFiles() -> [String] {
        var found: [String] = []
        for folder in [paths.staging, paths.packages] {
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            while let relative = walker.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent(relative).path, isDirectory: &isDirectory),
                    !isDirectory.boolValue
                {
                    found.append("\(folder.lastPathComponent)/\(relative)")
                }
            }
        }
        return found.sorted()
    }
}

// MARK: Tiles as a tile server would send them

enum TileImages {
    /// A real 8 × 8 RGB PNG (zlib stored blocks), coloured from the tile address: every tile differs, except that
    /// tiles with (x + y) divisible by 4 are the same "blank" tile (as sea or forest tiles repeat on real maps).
    static func png(_ tile: TileID) -> Data {
        if (tile.x + tile.y) % 4 == 0 { return png(red: 230, green: 240, blue: 225, marker: 0) }
        return png(
            red: UInt8(truncatingIfNeeded: tile.z * 13 + tile.x),
            green: UInt8(truncatingIfNeeded: tile.y),
            blue: UInt8(truncatingIfNeeded: tile.x >> 8),
            marker: UInt8(truncatingIfNeeded: tile.y >> 8) | 0x80
        )
    }

    static func png(red: UInt8, green: UInt8, blue: UInt8, marker: UInt8, size: Int = 8) -> Data {
        var raw: [UInt8] = []
        for row in 0..<size {
            raw.append(0)  // filter: none
            for column in 0..<size {
                let isMarker = row == 0 && column == 0
                raw += isMarker ? [marker, marker, marker] : [red, green, blue]
            }
        }
        var zlib: [UInt8] = [0x78, 0x01, 0x01]
        let length = UInt16(raw.count)
        zlib += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        zlib += raw
        zlib += bigEndian(adler32(raw))
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(size)) + bigEndian(UInt32(size)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", zlib)
        png += chunk("IEND", [])
        return Data(png)
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return (b << 16) | a
    }

}

// MARK: A tile server for the tests

/// How the test tile server behaves.
final class TileServerState: Sendable {
    enum Mode: Sendable, Equatable {
        case normal
        /// About `percent` % of requests fail (500, 503 or 429), never more than twice in a row for one tile.
        case flaky(percent: Int)
        /// The first `answered` requests are served; every later one gets no answer until `release()`.
        case stopsAnswering(after: Int)
        /// Every tile request without `?hop=1` is answered 302 to the same path with `?hop=1` on this host name (same
        /// port); those are served.
        case redirect(toHost: String)
    }

    struct Counters: Sendable {
        var requests = 0
        var failed = 0
        var hung = 0
        var served: [String: Int] = [:]
        var failuresByTile: [String: Int] = [:]
        var userAgents = Set<String>()
        var random: UInt64 = 0x2545_F491_4F6C_DD1D
    }

    let mode: Mode
    private let counters = NIOLockedValueBox(Counters())
    private let released = NIOLockedValueBox(false)

    init(mode: Mode) { self.mode = mode }

    var requests: Int { counters.withLockedValue { $0.requests } }
    var failed: Int { counters.withLockedValue { $0.failed } }
    var hung: Int { counters.withLockedValue { $0.hung } }
    var served: [String: Int] { counters.withLockedValue { $0.served } }
    var userAgents: Set<String> { counters.withLockedValue { $0.userAgents } }
    func release() { released.withLockedValue { $0 = true } }

    enum Decision {
        case serve
        case fail(HTTPResponse.Status)
        case hang
        case redirect(String)
    }

    func decide(_ key: String, userAgent: String?, hop: Bool = false) -> Decision {
        counters.withLockedValue { state in
            state.requests += 1
            if let userAgent { state.userAgents.insert(userAgent) }
            switch mode {
            case .redirect(let host) where !hop:
                return .redirect(host)
            case .normal, .redirect:
                state.served[key, default: 0] += 1
                return .serve
            case .flaky(let percent):
                state.random ^= state.random << 13
                state.random ^= state.random >> 7
                state.random ^= state.random << 17
                if Int(state.random % 100) < percent, state.failuresByTile[key, default: 0] < 2 {
                    state.failuresByTile[key, default: 0] += 1
                    state.failed += 1
                    return .fail([HTTPResponse.Status.internalServerError, .serviceUnavailable, .tooManyRequests][Int(state.random % 3)])
                }
                state.served[key, default: 0] += 1
                return .serve
            case .stopsAnswering(let answered):
                if state.requests > answered {
                    state.hung += 1
                    return .hang
                }
                state.served[key, default: 0] += 1
                return .serve
            }
        }
    }

    /// Waits (without answering) until released or the request is cancelled.
    func hang() async {
        while !released.withLockedValue({ $0 }) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

enum TestTileServer {
    /// `/{z}/{x}/{y}.png`, answering `TileImages.png`; 404 for tiles outside the grid.
    static func application(_ state: TileServerState) -> some ApplicationProtocol {
        let router = Router()
        router.get("/{z}/{x}/{file}") { request, context -> Response in
            guard let z = context.parameters.get("z", as: Int.self), let x = context.parameters.get("x", as: Int.self),
                let file = context.parameters.get("file"), file.hasSuffix(".png"), let y = Int(file.dropLast(4))
            else {
                return Response(status: .notFound)
            }
            let tile = TileID(z: z, x: x, y: y)
            guard tile.isValid else { return Response(status: .notFound) }
            switch state.decide(tile.description, userAgent: request.headers[.userAgent], hop: request.uri.queryParameters["hop"] != nil) {
            case .redirect(let host):
                let port = request.head.authority?.split(separator: ":").last.map(String.init) ?? "80"
                return Response(status: .found, headers: [.location: "http://\(host):\(port)/\(z)/\(x)/\(file)?hop=1"])
            case .serve:
                return Response(status: .ok, headers: [.contentType: "image/png"], body: .init(byteBuffer: ByteBuffer(bytes: TileImages.png(tile))))
            case .fail(let status):
                return Response(status: status, headers: [.retryAfter: "0"])
            case .hang:
                await state.hang()
                return Response(status: .serviceUnavailable)
            }
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// Runs the server on a free port for the duration of `body`, which gets the URL template.
    static func with(_ state: TileServerState, _ body: @Sendable (String) async throws -> Void) async throws {
        try await application(state).testLive { client in
            let port = try #require(client.port)
            defer { state.release() }
            try await body("http://127.0.0.1:\(port)/{z}/{x}/{y}.png")
        }
    }
}

// MARK: MBTiles files to upload

enum MBTilesFixture {
    enum Kind { case raster, vector, noTables, noMetadataFormat, boundsOutside, notSQLite, infected }

    /// Writes an MBTiles file (a plain `tiles` table, as QGIS and gdal write it) covering `frame` at `zooms`.
    static func write(_ kind: Kind, to url: URL, frame: Frame = TestEnv.frame, zooms: ClosedRange<Int> = 10...12) throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if kind == .notSQLite {
            try TileImages.png(TileID(z: 1, x: 1, y: 1)).write(to: url)
            return
        }
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            if kind == .noTables {
                try db.execute(sql: "CREATE TABLE photos (id INTEGER PRIMARY KEY, data BLOB)")
                return
            }
            try db.execute(
                sql: """
                    CREATE TABLE metadata (name TEXT, value TEXT);
                    CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
                    CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
                    """
            )
            // A margin around the frame: the package must keep only the tiles that touch the frame.
            let covered =
                kind == .boundsOutside
                ? Frame(north: 10.2, south: 10, east: 20.2, west: 20)
                : Frame(north: frame.north + 0.3, south: frame.south - 0.3, east: frame.east + 0.4, west: frame.west - 0.4)
            var metadata: [(String, String)] = [
                ("name", "Agency topo"), ("type", "baselayer"), ("minzoom", "\(zooms.lowerBound)"),
                ("maxzoom", "\(zooms.upperBound)"), ("attribution", "© Test Agency"),
                ("bounds", "\(covered.west),\(covered.south),\(covered.east),\(covered.north)"),
            ]
            switch kind {
            case .vector: metadata.append(("format", "pbf"))
            case .noMetadataFormat: break
            default: metadata.append(("format", "png"))
            }
            for (name, value) in metadata { try db.execute(sql: "INSERT INTO metadata VALUES (?, ?)", arguments: [name, value]) }
            for tile in TileMath.tiles(covered, zooms: zooms) {
                var data = kind == .vector ? Data([0x1F, 0x8B, 0x08, 0x00]) + Data(tile.description.utf8) : TileImages.png(tile)
                if kind == .infected, tile == TileMath.tiles(covered, zooms: zooms).first { data += Data(EICAR.testFileBody.utf8) }
                try db.execute(sql: "INSERT INTO tiles VALUES (?, ?, ?, ?)", arguments: [tile.z, tile.x, tile.tmsRow, data])
            }
        }
        try queue.close()
    }

    /// The tiles the fixture holds that touch `frame`, by XYZ address, with their bytes' SHA-256.
    static func expectedTiles(frame: Frame = TestEnv.frame, zooms: ClosedRange<Int> = 10...12) -> [TileID: String] {
        Dictionary(uniqueKeysWithValues: TileMath.tiles(frame, zooms: zooms).map { ($0, MediaFixtures.sha256(TileImages.png($0))) })
    }
}

// MARK: Reading packages back with Python

struct PythonMBTiles {
    let json: [String: Any]
    var metadata: [String: String] { json["metadata"] as? [String: String] ?? [:] }
    var schema: [String: String] { json["schema"] as? [String: String] ?? [:] }
    /// (zoom_level, tile_column, tile_row) → SHA-256 of tile_data.
    var rows: [(z: Int, column: Int, row: Int, sha256: String)] {
        (json["tiles"] as? [[Any]] ?? []).map { ($0[0] as? Int ?? -1, $0[1] as? Int ?? -1, $0[2] as? Int ?? -1, $0[3] as? String ?? "") }
    }
    /// mercantile's tiles of the frame, XYZ.
    var expected: Set<TileID> { Set((json["expected"] as? [[Int]] ?? []).map { TileID(z: $0[0], x: $0[1], y: $0[2]) }) }
    var fileSHA256: String { json["fileSHA256"] as? String ?? "" }
    var fileSize: Int64 { (json["fileSize"] as? NSNumber)?.int64Value ?? -1 }

    static func read(_ file: URL, frame: Frame? = nil) async throws -> PythonMBTiles {
        var arguments = [file.path]
        if let frame { arguments += [frame.west, frame.south, frame.east, frame.north].map { "\($0)" } }
        let output = try await TestScripts.python("mbtiles_read.py", arguments)
        try #require(output.status == 0, "mbtiles_read.py failed (\(output.status)): \(output.stderr)")
        return PythonMBTiles(json: output.json)
    }
}

// MARK: HTTP helpers

extension TestClientProtocol {
    /// A multipart body with one `file` part, to the API (bearer token) or the panel (session, its `_csrf` field first).
    func tilesUpload(
        _ uri: String,
        data: Data,
        fileName: String = "map.mbtiles",
        token: String? = nil,
        session: BrowserSession? = nil
    ) async throws -> TestResponse {
        let boundary = "tiles-\(UUID().uuidString)"
        var body = ByteBuffer()
        if let session { body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n\(session.csrf)\r\n") }
        body.writeString(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        body.writeBytes(data)
        body.writeString("\r\n--\(boundary)--\r\n")
        var headers: HTTPFields = [.contentType: "multipart/form-data; boundary=\(boundary)"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let session { headers[.cookie] = session.cookieHeader }
        return try await execute(uri: uri, method: .post, headers: headers, body: body)
    }
}

extension TestResponse {
    var tilesJSON: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:] }
    var tilesErrorMessage: String { ((tilesJSON["error"] as? [String: Any])?["message"] as? String) ?? "" }
}
