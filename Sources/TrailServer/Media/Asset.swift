import Foundation
import GRDB

package enum AssetKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case video, audio, image, text
}

package enum ScanStatus: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case pending, clean, infected, unscannable, error

    package var badge: String {
        switch self {
        case .pending: "secondary"
        case .clean: "success"
        case .infected: "danger"
        case .unscannable, .error: "warning"
        }
    }
}

/// A file attached to a waypoint. The user's file name is metadata only; the bytes live at a server-made path.
package struct Asset: Codable, Sendable, Identifiable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: Int64
    package var waypointId: Int64
    package var position: Int
    package var kind: AssetKind
    package var originalName: String
    package var mimeType: String
    package var size: Int64
    package var sha256: String
    package var scanStatus: ScanStatus
    package var scanDetail: String
    /// Relative to the data folder.
    package var storedPath: String
    package var uploadedBy: Int64?
    package var createdAt: Date
    package var scannedAt: Date?
    /// Play time of audio and video when the file's headers tell it.
    package var durationSeconds: Double? = nil
    /// What the visitor's app shows as the file's name (empty: none).
    package var title: String = ""
    /// The text alternative of an image (WCAG 1.1.1), read aloud by screen readers; empty for other kinds.
    package var altText: String = ""
    /// Set on a caption or transcript file: the asset it belongs to (its "companion"), and which of the two it is.
    /// Such a row is not one of the waypoint's listed files; it travels with its owner.
    package var companionOf: Int64? = nil
    package var companionRole: CompanionRole? = nil
    /// The one language this file is for (the Spanish narration), or nil: every language (a photo).
    package var language: String? = nil
    /// The ranger chose to ship the original rather than its phone-sized copy (a photo meant for zooming).
    package var useOriginal: Bool = false

    package static let databaseTableName = "asset"

    /// A file of the waypoint's own list, not a caption or transcript of one.
    package static let listed = Column(CodingKeys.companionOf) == nil

    package enum Columns {
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
    package struct New: NewRecord {
        package typealias Stored = Asset
        package var waypointId: Int64
        package var position: Int
        package var kind: AssetKind
        package var originalName: String
        package var mimeType: String
        package var size: Int64
        package var sha256: String
        package var scanStatus: ScanStatus = .pending
        /// Relative to the data folder.
        package var storedPath: String
        package var uploadedBy: Int64?
        package var createdAt: Date
        package var durationSeconds: Double? = nil
        package var companionOf: Int64? = nil
        package var companionRole: CompanionRole? = nil
    }
}

/// The captions and transcript of one media file (either may be missing).
package struct AssetCompanions: Sendable {
    package var captions: Asset?
    package var transcript: Asset?

    package subscript(role: CompanionRole) -> Asset? {
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
package struct UploadRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: String
    package var userId: Int64
    package var tourId: Int64
    package var waypointId: Int64
    package var replacesAssetId: Int64?
    package var fileName: String
    package var length: Int64
    package var offset: Int64
    package var createdAt: Date
    package var expiresAt: Date

    package static let databaseTableName = "upload"
}
