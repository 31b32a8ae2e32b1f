import Foundation
import GRDB

package enum AssetKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case video, audio, image, text
}

enum ScanStatus: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case pending, clean, infected, unscannable, error

    var badge: String {
        switch self {
        case .pending: "secondary"
        case .clean: "success"
        case .infected: "danger"
        case .unscannable, .error: "warning"
        }
    }
}

/// A file attached to a waypoint. The user's file name is metadata only; the bytes live at a server-made path.
struct Asset: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: Int64
    var waypointId: Int64
    var position: Int
    var kind: AssetKind
    var originalName: String
    var mimeType: String
    var size: Int64
    var sha256: String
    var scanStatus: ScanStatus
    var scanDetail: String
    /// Relative to the data folder.
    var storedPath: String
    var uploadedBy: Int64?
    var createdAt: Date
    var scannedAt: Date?
    /// Play time of audio and video when the file's headers tell it.
    var durationSeconds: Double? = nil
    /// What the visitor's app shows as the file's name (empty: none).
    var title: String = ""
    /// The text alternative of an image (WCAG 1.1.1), read aloud by screen readers; empty for other kinds.
    var altText: String = ""
    /// Set on a caption or transcript file: the asset it belongs to (its "companion"), and which of the two it is.
    /// Such a row is not one of the waypoint's listed files; it travels with its owner.
    var companionOf: Int64? = nil
    var companionRole: CompanionRole? = nil
    /// The one language this file is for (the Spanish narration), or nil: every language (a photo).
    var language: String? = nil
    /// The ranger chose to ship the original rather than its phone-sized copy (a photo meant for zooming).
    var useOriginal: Bool = false

    static let databaseTableName = "asset"

    /// A file of the waypoint's own list, not a caption or transcript of one.
    static let listed = Column(CodingKeys.companionOf) == nil

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let waypointId = Column(CodingKeys.waypointId)
        static let position = Column(CodingKeys.position)
        static let scanStatus = Column(CodingKeys.scanStatus)
        static let sha256 = Column(CodingKeys.sha256)
        static let storedPath = Column(CodingKeys.storedPath)
        static let companionOf = Column(CodingKeys.companionOf)
        static let companionRole = Column(CodingKeys.companionRole)
    }

    /// A file as it arrives, waiting for its scan; title, alt text, language and the ranger's choices come later.
    struct New: NewRecord {
        typealias Stored = Asset
        var waypointId: Int64
        var position: Int
        var kind: AssetKind
        var originalName: String
        var mimeType: String
        var size: Int64
        var sha256: String
        var scanStatus: ScanStatus = .pending
        /// Relative to the data folder.
        var storedPath: String
        var uploadedBy: Int64?
        var createdAt: Date
        var durationSeconds: Double? = nil
        var companionOf: Int64? = nil
        var companionRole: CompanionRole? = nil
    }
}

/// The captions and transcript of one media file (either may be missing).
struct AssetCompanions: Sendable {
    var captions: Asset?
    var transcript: Asset?

    subscript(role: CompanionRole) -> Asset? {
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
struct UploadRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: String
    var userId: Int64
    var tourId: Int64
    var waypointId: Int64
    var replacesAssetId: Int64?
    var fileName: String
    var length: Int64
    var offset: Int64
    var createdAt: Date
    var expiresAt: Date

    static let databaseTableName = "upload"
}
