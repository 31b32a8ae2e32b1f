import Foundation
import GRDB
import PackageFormat

public enum PublishState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case building, pending, ready, published, denied, failed, withdrawn

    /// Open requests lock their tour.
    public var isOpen: Bool { Self.open.contains(self) }
    /// The states of a request that still locks its tour (the database's `publishRequest_open` index says the same).
    public static let open: [PublishState] = [.building, .pending, .ready]
    /// Waiting for a reviewer's decision (a reviewer may still deny a request that has its approvals).
    public static let reviewable: [PublishState] = [.pending, .ready]

    public var label: String {
        switch self {
        case .building: "Building package"
        case .pending: "Waiting for review"
        case .ready: "Approved, ready to release"
        case .published: "Released"
        case .denied: "Denied"
        case .failed: "Build failed"
        case .withdrawn: "Withdrawn"
        }
    }

    public var badge: String {
        switch self {
        case .building: "info"
        case .pending: "warning"
        case .ready: "primary"
        case .published: "success"
        case .denied, .failed: "danger"
        case .withdrawn: "secondary"
        }
    }
}

/// A frozen snapshot of a tour, the package built from it, and its review.
public struct PublishRequest: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var id: String
    public var tourId: Int64?
    public var siteId: Int64
    public var packageId: String
    public var version: Int
    public var authorId: Int64?
    public var state: PublishState
    /// The tour as frozen at submission (a JSON column): what the package is built from.
    public var snapshot: TourSnapshot
    public var requiredApprovals: Int
    public var filesDone: Int
    public var filesTotal: Int
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var failureReason: String?
    public var denialComment: String?
    public var zipSha256: String?
    public var zipSize: Int64?
    public var signature: String?
    public var manifestJSON: String?
    /// Every packaged file's verdict from the build's re-scan (a JSON column); nil before the build ends.
    public var scanReport: [ScanReportEntry]?
    public var createdAt: Date
    public var updatedAt: Date

    public static let databaseTableName = "publishRequest"

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let siteId = Column(CodingKeys.siteId)
        static let state = Column(CodingKeys.state)
        static let createdAt = Column(CodingKeys.createdAt)
    }
}

/// One file of a build's re-scan, shown to reviewers.
public struct ScanReportEntry: Codable, Sendable, Equatable {
    public let file: String
    public let sha256: String
    public let verdict: String
}

/// What a reviewer decided.
public enum ReviewDecision: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case approve, deny
}

public struct Review: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var requestId: String
    public var reviewerId: Int64
    public var decision: ReviewDecision
    public var comment: String
    public var createdAt: Date

    public static let databaseTableName = "review"
}

/// The tour exactly as submitted: what the package is built from.
public struct TourSnapshot: Codable, Sendable, Equatable {
    public struct AssetEntry: Codable, Sendable, Equatable {
        public var assetId: Int64
        public var kind: String
        public var mimeType: String
        public var size: Int64
        public var sha256: String
        public var originalName: String
        /// Where the clean file was when the tour was frozen (relative to the data folder).
        public var storedPath: String
        /// Play time of audio and video, when known (for the duration estimate).
        public var durationSeconds: Double? = nil
        public var title: String? = nil
        public var altText: String? = nil
        /// Clean caption and transcript files frozen with it (absent from requests made before them).
        public var captions: CompanionEntry? = nil
        public var transcript: CompanionEntry? = nil
        /// The one language the file is for (nil: every language).
        public var language: String? = nil
        /// Width and height in pixels of what ships (images and video), when measured.
        public var width: Int? = nil
        public var height: Int? = nil
        /// The original's size when its optimized copy ships instead.
        public var originalSize: Int64? = nil
        /// True while the file's optimized copy was still being made at submission: the build waits for it and then
        /// ships it (``resolve(_:)``).
        public var awaitingCopy: Bool? = nil

        /// Ships `copy` instead of the original when it is ready; keeps the original otherwise (with the copy's
        /// measurements when it was skipped).
        mutating func resolve(_ copy: OptimizedCopy?) {
            awaitingCopy = nil
            guard let copy else { return }
            if copy.state == .skipped {
                width = copy.width ?? width
                height = copy.height ?? height
                durationSeconds = durationSeconds ?? copy.durationSeconds
            }
            guard copy.state == .ready, let path = copy.storedPath, let size = copy.size, let sha = copy.sha256, let mime = copy.mimeType else {
                return
            }
            if mime != mimeType {
                // The package names the file by its new type: `trail.mov` ships as `trail.mp4`.
                let stem = originalName.lastIndex(of: ".").map { String(originalName[..<$0]) } ?? originalName
                originalName = stem + "." + ManifestMaker.fileExtension(mime)
            }
            originalSize = self.size
            mimeType = mime
            self.size = size
            sha256 = sha
            storedPath = path
            width = copy.width
            height = copy.height
            durationSeconds = copy.durationSeconds ?? durationSeconds
        }

        public var frozen: FrozenFile { FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName) }
        public var companions: [(role: CompanionRole, entry: CompanionEntry)] {
            [(CompanionRole.captions, captions), (.transcript, transcript)].compactMap { role, entry in entry.map { (role, $0) } }
        }
    }

    /// A caption or transcript file as frozen: its own asset row, packaged beside its media file.
    public struct CompanionEntry: Codable, Sendable, Equatable {
        public var assetId: Int64
        public var mimeType: String
        public var size: Int64
        public var sha256: String
        public var originalName: String
        public var storedPath: String

        public var frozen: FrozenFile { FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName) }
    }

    /// One stored file the package is built from (a media file, captions or a transcript).
    public struct FrozenFile: Sendable, Equatable {
        public var assetId: Int64
        public var sha256: String
        public var size: Int64
        public var storedPath: String
        public var originalName: String
    }

    public struct WaypointEntry: Codable, Sendable, Equatable {
        public var name: String
        public var order: Int
        public var latitude: Double
        public var longitude: Double
        public var description: String
        public var assets: [AssetEntry]
        /// Absent from requests submitted before trigger zones (their packages carry no radius).
        public var triggerRadiusMeters: Int?
        /// Name and description in the further languages (absent from requests made before languages).
        public var localized: [String: LocalizedText]? = nil
        /// The waypoint's id, written into the manifest (absent from requests made before alerts).
        public var waypointId: Int64? = nil
    }

    public var tourId: Int64
    public var name: String
    public var description: String
    public var mapName: String
    public var siteName: String
    public var siteSlug: String
    public var frame: Frame
    public var minZoom: Int
    public var maxZoom: Int
    public var waypoints: [WaypointEntry]
    /// The route as stored on the tour, and the walking pace. (Requests frozen before the route was typed hold it as a
    /// JSON string; `RoutePath` reads both.)
    public var route: RoutePath? = nil
    public var paceKmh: Double? = nil
    /// Where the package's map tiles come from (nil: no tiles); see `TileSourceSnapshot`.
    public var tiles: TileSourceSnapshot? = nil
    /// The tour's languages, default first, and its texts in the further ones (absent from older requests).
    public var languages: [String]? = nil
    public var localized: [String: LocalizedText]? = nil

    /// Every stored file the package is built from, in package order: each media file, then its captions and transcript.
    public var frozenFiles: [FrozenFile] {
        waypoints.flatMap(\.assets).flatMap { [$0.frozen] + $0.companions.map(\.entry.frozen) }
    }
    public var totalBytes: Int64 { frozenFiles.reduce(0) { $0 + $1.size } }
    public var fileCount: Int { frozenFiles.count }
}

/// A released package (one per tour) and its immutable versions.
public struct PackageRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var id: String
    public var tourId: Int64?
    public var siteId: Int64
    public var currentVersion: Int?
    public var isVisible: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public static let databaseTableName = "package"
}

public struct PackageVersion: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    public var packageId: String
    public var version: Int
    public var requestId: String?
    public var name: String
    public var description: String
    public var mapName: String
    public var sha256: String
    public var size: Int64
    public var signature: String
    public var manifestJSON: String
    public var releasedBy: Int64?
    public var createdAt: Date
    public var verifiedCount: Int

    public static let databaseTableName = "packageVersion"

    /// Relative to the data folder.
    public var storedPath: String { "packages/\(packageId)/\(version).zip" }
}

extension PackageVersion {
    /// The signed manifest, decoded. The stored text is what was signed and is never rewritten, so a damaged one is an
    /// error (logged, a 500 for the page that needed it), not a version treated as if it had no manifest.
    public func decodedManifest() throws -> Manifest { try Manifest.decode(Data(manifestJSON.utf8)) }
}

extension PublishRequest {
    /// The built package's manifest: nil until the build wrote it; a damaged one is an error, as for a released version.
    public func decodedManifest() throws -> Manifest? { try manifestJSON.map { try Manifest.decode(Data($0.utf8)) } }
}
