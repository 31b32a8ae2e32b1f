import Foundation
import GRDB

public enum AssetKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case video, audio, image, text
}

public enum ScanStatus: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case pending, clean, infected, unscannable, error

    public var badge: String {
        switch self {
        case .pending: "secondary"
        case .clean: "success"
        case .infected: "danger"
        case .unscannable, .error: "warning"
        }
    }
}

/// A file attached to a waypoint. The user's file name is metadata only; the bytes live at a server-made path.
public struct Asset: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, MutablePersistableRecord {
    public var id: Int64?
    public var waypointId: Int64
    public var position: Int
    public var kind: AssetKind
    public var originalName: String
    public var mimeType: String
    public var size: Int64
    public var sha256: String
    public var scanStatus: ScanStatus
    public var scanDetail: String
    /// Relative to the data folder.
    public var storedPath: String
    public var uploadedBy: Int64?
    public var createdAt: Date
    public var scannedAt: Date?
    /// Play time of audio and video when the file's headers tell it.
    public var durationSeconds: Double? = nil
    /// What the visitor's app shows as the file's name (empty: none).
    public var title: String = ""
    /// The text alternative of an image (WCAG 1.1.1), read aloud by screen readers; empty for other kinds.
    public var altText: String = ""
    /// Set on a caption or transcript file: the asset it belongs to (its "companion"), and which of the two it is.
    /// Such a row is not one of the waypoint's listed files; it travels with its owner.
    public var companionOf: Int64? = nil
    public var companionRole: CompanionRole? = nil
    /// The one language this file is for (the Spanish narration), or nil: every language (a photo).
    public var language: String? = nil
    /// The ranger chose to ship the original rather than its phone-sized copy (a photo meant for zooming).
    public var useOriginal: Bool = false

    public static let databaseTableName = "asset"

    /// A file of the waypoint's own list, not a caption or transcript of one.
    public static let listed = Column(CodingKeys.companionOf) == nil

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let waypointId = Column(CodingKeys.waypointId)
        static let position = Column(CodingKeys.position)
        static let scanStatus = Column(CodingKeys.scanStatus)
        static let sha256 = Column(CodingKeys.sha256)
        static let storedPath = Column(CodingKeys.storedPath)
        static let companionOf = Column(CodingKeys.companionOf)
        static let companionRole = Column(CodingKeys.companionRole)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// The captions and transcript of one media file (either may be missing).
public struct AssetCompanions: Sendable {
    public var captions: Asset?
    public var transcript: Asset?

    public subscript(role: CompanionRole) -> Asset? {
        get { role == .captions ? captions : transcript }
        set { if role == .captions { captions = newValue } else { transcript = newValue } }
    }

    /// Groups companion rows by the asset they belong to.
    static func grouped(_ rows: [Asset]) -> [Int64: AssetCompanions] {
        rows.reduce(into: [:]) { groups, row in
            guard let owner = row.companionOf, let role = row.companionRole else { return }
            groups[owner, default: AssetCompanions()][role] = row
        }
    }
}

/// A tus upload in progress.
public struct UploadRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var id: String
    public var userId: Int64
    public var tourId: Int64
    public var waypointId: Int64
    public var replacesAssetId: Int64?
    public var fileName: String
    public var length: Int64
    public var offset: Int64
    public var createdAt: Date
    public var expiresAt: Date

    public static let databaseTableName = "upload"
}
