import Foundation
import GRDB

/// An MBTiles file uploaded for one tour (table `tourTileset`): it replaces the tile server for that tour's packages.
package struct TourTileset: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var tourId: Int64
    package var originalName: String
    package var size: Int64
    package var sha256: String
    package var format: String
    package var minZoom: Int
    package var maxZoom: Int
    package var boundsWest: Double
    package var boundsSouth: Double
    package var boundsEast: Double
    package var boundsNorth: Double
    package var attribution: String
    package var tileCount: Int
    package var scanStatus: ScanStatus
    package var scanDetail: String
    /// Relative to the data folder.
    package var storedPath: String
    package var uploadedBy: Int64?
    package var createdAt: Date
    package var scannedAt: Date?

    package static let databaseTableName = "tourTileset"

    package var bounds: Frame { Frame(north: boundsNorth, south: boundsSouth, east: boundsEast, west: boundsWest) }
    package var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

extension DataPaths {
    /// Uploaded MBTiles files: `tilesets/pending/<uuid>` until scanned, then `tilesets/<sha256>.mbtiles` (clean)
    /// or `tilesets/quarantine/<uuid>`.
    package var tilesets: URL { root.appendingPathComponent("tilesets") }
    /// Package MBTiles taken out of built zips for the review map and the phone preview, by their SHA-256.
    package var tilePreviews: URL { root.appendingPathComponent("tile-previews") }
}

/// Where a package's tiles come from, frozen with the rest of the tour when it is submitted.
package struct TileSourceSnapshot: Codable, Sendable, Equatable {
    package enum Kind: String, Codable, Sendable, CaseIterable { case upload, server }
    package var kind: Kind
    package var minZoom: Int
    package var maxZoom: Int
    package var attribution: String
    // An uploaded file:
    package var originalName: String?
    package var sha256: String?
    package var size: Int64?
    package var storedPath: String?
    package var format: String?
    // A tile server:
    package var urlTemplate: String?
    package var tileCap: Int?

    package var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

/// Frames overlap when they share more than an edge.
extension Frame {
    func overlaps(_ other: Frame) -> Bool {
        west < other.east && other.west < east && south < other.north && other.south < north
    }
}
