import Foundation
import GRDB

/// An MBTiles file uploaded for one tour (table `tourTileset`): it replaces the tile server for that tour's packages.
struct TourTileset: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var tourId: Int64
    var originalName: String
    var size: Int64
    var sha256: String
    var format: String
    var minZoom: Int
    var maxZoom: Int
    var boundsWest: Double
    var boundsSouth: Double
    var boundsEast: Double
    var boundsNorth: Double
    var attribution: String
    var tileCount: Int
    var scanStatus: ScanStatus
    var scanDetail: String
    /// Relative to the data folder.
    var storedPath: String
    var uploadedBy: Int64?
    var createdAt: Date
    var scannedAt: Date?

    static let databaseTableName = "tourTileset"

    var bounds: Frame { Frame(north: boundsNorth, south: boundsSouth, east: boundsEast, west: boundsWest) }
    var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

extension DataPaths {
    /// Uploaded MBTiles files: `tilesets/pending/<uuid>` until scanned, then `tilesets/<sha256>.mbtiles` (clean)
    /// or `tilesets/quarantine/<uuid>`.
    var tilesets: URL { root.appendingPathComponent("tilesets") }
    /// Package MBTiles taken out of built zips for the review map and the phone preview, by their SHA-256.
    var tilePreviews: URL { root.appendingPathComponent("tile-previews") }
}

/// Where a package's tiles come from, frozen with the rest of the tour when it is submitted.
struct TileSourceSnapshot: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable, CaseIterable { case upload, server }
    var kind: Kind
    var minZoom: Int
    var maxZoom: Int
    var attribution: String
    // An uploaded file:
    var originalName: String?
    var sha256: String?
    var size: Int64?
    var storedPath: String?
    var format: String?
    // A tile server:
    var urlTemplate: String?
    var tileCap: Int?

    var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

/// Frames overlap when they share more than an edge.
extension Frame {
    func overlaps(_ other: Frame) -> Bool {
        west < other.east && other.west < east && south < other.north && other.south < north
    }
}
