import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PackageFormat

/// One tile of a package's map as an HTTP answer, for the visitors' player and the panel's preview alike: the path's
/// `z`, `x` and `y` (`y` may carry an extension, as `12.png`), checked against the map's zoom range, read from the
/// package's MBTiles off the event loop. The validator is the MBTiles' SHA-256 and the tile's place, so a client that
/// has the tile gets `304` before anything is read (``HTTPCaching``).
enum TileAnswer {
    static func respond(
        tiles: Manifest.Tiles?,
        zip: URL,
        store: PackageTilesStore,
        cacheControl: String,
        request: Request,
        context: some RequestContext
    ) async throws -> Response {
        guard let tiles else { throw HTTPError(.notFound, message: "This version has no map tiles.") }
        guard let z = context.parameters.get("z", as: Int.self), let x = context.parameters.get("x", as: Int.self),
            let yText = context.parameters.get("y"), let y = Int(yText.split(separator: ".").first ?? "")
        else { throw NotFound() }
        let tile = TileID(z: z, x: x, y: y)
        guard tile.isValid, (tiles.minZoom...tiles.maxZoom).contains(z) else { throw HTTPError(.notFound, message: "No such tile in this map.") }
        let etag = "\"\(tiles.sha256.prefix(16))-\(tile.z)-\(tile.x)-\(tile.y)\""
        let headers: HTTPFields = [.contentType: TileImageFormat.mimeType(tiles.format), .cacheControl: cacheControl]
        if HTTPCaching.isNotModified(request, etag: etag) {
            var notModified = headers
            notModified[.eTag] = etag
            return Response(status: .notModified, headers: notModified)
        }
        let reader = try await store.reader(zip: zip, tiles: tiles)
        guard let data = try await BlockingWork.short({ try reader.tile(tile) }) else {
            throw HTTPError(.notFound, message: "No such tile in this map.")
        }
        return HTTPCaching.answer(ByteBuffer(bytes: data), etag: etag, headers: headers, request: request)
    }
}
