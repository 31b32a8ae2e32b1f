import Foundation
import GRDB

/// An MBTiles file uploaded for one tour (table `tourTileset`): it replaces the tile server for that tour's packages.
public struct TourTileset: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var tourId: Int64
    public var originalName: String
    public var size: Int64
    public var sha256: String
    public var format: String
    public var minZoom: Int
    public var maxZoom: Int
    public var boundsWest: Double
    public var boundsSouth: Double
    public var boundsEast: Double
    public var boundsNorth: Double
    public var attribution: String
    public var tileCount: Int
    public var scanStatus: ScanStatus
    public var scanDetail: String
    /// Relative to the data folder.
    public var storedPath: String
    public var uploadedBy: Int64?
    public var createdAt: Date
    public var scannedAt: Date?

    public static let databaseTableName = "tourTileset"

    public var bounds: Frame { Frame(north: boundsNorth, south: boundsSouth, east: boundsEast, west: boundsWest) }
    public var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

extension DataPaths {
    /// Uploaded MBTiles files: `tilesets/pending/<uuid>` until scanned, then `tilesets/<sha256>.mbtiles` (clean)
    /// or `tilesets/quarantine/<uuid>`.
    public var tilesets: URL { root.appendingPathComponent("tilesets") }
    /// Package MBTiles taken out of built zips for the review map and the phone preview, by their SHA-256.
    public var tilePreviews: URL { root.appendingPathComponent("tile-previews") }
}

/// Where a package's tiles come from, frozen with the rest of the tour when it is submitted.
public struct TileSourceSnapshot: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable { case upload, server }
    public var kind: Kind
    public var minZoom: Int
    public var maxZoom: Int
    public var attribution: String
    // An uploaded file:
    public var originalName: String?
    public var sha256: String?
    public var size: Int64?
    public var storedPath: String?
    public var format: String?
    // A tile server:
    public var urlTemplate: String?
    public var tileCap: Int?

    public var zooms: ClosedRange<Int> { minZoom...max(minZoom, maxZoom) }
}

/// Frames overlap when they share more than an edge.
extension Frame {
    func overlaps(_ other: Frame) -> Bool {
        west < other.east && other.west < east && south < other.north && other.south < north
    }
}
