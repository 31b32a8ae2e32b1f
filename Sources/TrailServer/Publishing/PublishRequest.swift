import Foundation
import GRDB
import PackageFormat

enum PublishState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case building, pending, ready, published, denied, failed, withdrawn

    /// Open requests lock their tour.
    var isOpen: Bool { Self.open.contains(self) }
    /// The states of a request that still locks its tour (the database's `publishRequest_open` index says the same).
    static let open: [PublishState] = [.building, .pending, .ready]
    /// Waiting for a reviewer's decision (a reviewer may still deny a request that has its approvals).
    static let reviewable: [PublishState] = [.pending, .ready]

    var label: String {
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

    var badge: String {
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
struct PublishRequest: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: String
    var tourId: Int64?
    var siteId: Int64
    var packageId: String
    var version: Int
    var authorId: Int64?
    var state: PublishState
    /// The tour as frozen at submission (a JSON column): what the package is built from.
    var snapshot: TourSnapshot
    var requiredApprovals: Int
    var filesDone: Int
    var filesTotal: Int
    var bytesDone: Int64
    var bytesTotal: Int64
    var failureReason: String?
    var denialComment: String?
    var zipSha256: String?
    var zipSize: Int64?
    var signature: String?
    var manifestJSON: String?
    /// Every packaged file's verdict from the build's re-scan (a JSON column); nil before the build ends.
    var scanReport: [ScanReportEntry]?
    var createdAt: Date
    var updatedAt: Date

    static let databaseTableName = "publishRequest"

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let siteId = Column(CodingKeys.siteId)
        static let state = Column(CodingKeys.state)
        static let createdAt = Column(CodingKeys.createdAt)
    }
}

/// One file of a build's re-scan, shown to reviewers.
struct ScanReportEntry: Codable, Sendable, Equatable {
    let file: String
    let sha256: String
    let verdict: String
}

/// What a reviewer decided.
enum ReviewDecision: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case approve, deny
}

struct Review: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var requestId: String
    var reviewerId: Int64
    var decision: ReviewDecision
    var comment: String
    var createdAt: Date

    static let databaseTableName = "review"
}

/// The tour exactly as submitted: what the package is built from.
struct TourSnapshot: Codable, Sendable, Equatable {
    struct AssetEntry: Codable, Sendable, Equatable {
        var assetId: Int64
        var kind: String
        var mimeType: String
        var size: Int64
        var sha256: String
        var originalName: String
        /// Where the clean file was when the tour was frozen (relative to the data folder).
        var storedPath: String
        /// Play time of audio and video, when known (for the duration estimate).
        var durationSeconds: Double? = nil
        var title: String? = nil
        var altText: String? = nil
        /// Clean caption and transcript files frozen with it (absent from requests made before them).
        var captions: CompanionEntry? = nil
        var transcript: CompanionEntry? = nil
        /// The one language the file is for (nil: every language).
        var language: String? = nil
        /// Width and height in pixels of what ships (images and video), when measured.
        var width: Int? = nil
        var height: Int? = nil
        /// The original's size when its optimized copy ships instead.
        var originalSize: Int64? = nil
        /// True while the file's optimized copy was still being made at submission: the build waits for it and then
        /// ships it (``resolve(_:)``).
        var awaitingCopy: Bool? = nil

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

        var frozen: FrozenFile {
            FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName)
        }
        var companions: [(role: CompanionRole, entry: CompanionEntry)] {
            [(CompanionRole.captions, captions), (.transcript, transcript)].compactMap { role, entry in entry.map { (role, $0) } }
        }
    }

    /// A caption or transcript file as frozen: its own asset row, packaged beside its media file.
    struct CompanionEntry: Codable, Sendable, Equatable {
        var assetId: Int64
        var mimeType: String
        var size: Int64
        var sha256: String
        var originalName: String
        var storedPath: String

        var frozen: FrozenFile {
            FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName)
        }
    }

    /// One stored file the package is built from (a media file, captions or a transcript).
    struct FrozenFile: Sendable, Equatable {
        var assetId: Int64
        var sha256: String
        var size: Int64
        var storedPath: String
        var originalName: String
    }

    struct WaypointEntry: Codable, Sendable, Equatable {
        var name: String
        var order: Int
        var latitude: Double
        var longitude: Double
        var description: String
        var assets: [AssetEntry]
        /// Absent from requests submitted before trigger zones (their packages carry no radius).
        var triggerRadiusMeters: Int?
        /// Name and description in the further languages (absent from requests made before languages).
        var localized: [String: LocalizedText]? = nil
        /// The waypoint's id, written into the manifest (absent from requests made before alerts).
        var waypointId: Int64? = nil
    }

    var tourId: Int64
    var name: String
    var description: String
    var mapName: String
    var siteName: String
    var siteSlug: String
    var frame: Frame
    var minZoom: Int
    var maxZoom: Int
    var waypoints: [WaypointEntry]
    /// The route as stored on the tour, and the walking pace. (Requests frozen before the route was typed hold it as a
    /// JSON string; `RoutePath` reads both.)
    var route: RoutePath? = nil
    var paceKmh: Double? = nil
    /// Where the package's map tiles come from (nil: no tiles); see `TileSourceSnapshot`.
    var tiles: TileSourceSnapshot? = nil
    /// The tour's languages, default first, and its texts in the further ones (absent from older requests).
    var languages: [String]? = nil
    var localized: [String: LocalizedText]? = nil
    /// The trail facts as they stood when the tour was frozen (the ground's part) and the ranger's accessibility
    /// fields: the package ships what the reviewer saw, whatever the terrain model does later (absent from older
    /// requests).
    var terrain: TerrainFacts? = nil
    var accessibility: TrailFacts.Accessibility? = nil

    /// Every stored file the package is built from, in package order: each media file, then its captions and transcript.
    var frozenFiles: [FrozenFile] {
        waypoints.flatMap(\.assets).flatMap { [$0.frozen] + $0.companions.map(\.entry.frozen) }
    }
    var totalBytes: Int64 { frozenFiles.reduce(0) { $0 + $1.size } }
    var fileCount: Int { frozenFiles.count }
}

/// A released package (one per tour) and its immutable versions.
struct PackageRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var id: String
    var tourId: Int64?
    var siteId: Int64
    var currentVersion: Int?
    var isVisible: Bool
    var createdAt: Date
    var updatedAt: Date

    static let databaseTableName = "package"
}

struct PackageVersion: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var packageId: String
    var version: Int
    var requestId: String?
    var name: String
    var description: String
    var mapName: String
    var sha256: String
    var size: Int64
    var signature: String
    var manifestJSON: String
    var releasedBy: Int64?
    var createdAt: Date
    var verifiedCount: Int

    static let databaseTableName = "packageVersion"

    /// Relative to the data folder.
    var storedPath: String { "packages/\(packageId)/\(version).zip" }
}

extension PackageVersion {
    /// The signed manifest, decoded. The stored text is what was signed and is never rewritten, so a damaged one is an
    /// error (logged, a 500 for the page that needed it), not a version treated as if it had no manifest.
    func decodedManifest() throws -> Manifest { try Manifest.decode(Data(manifestJSON.utf8)) }
}

extension PublishRequest {
    /// The built package's manifest: nil until the build wrote it; a damaged one is an error, as for a released version.
    func decodedManifest() throws -> Manifest? { try manifestJSON.map { try Manifest.decode(Data($0.utf8)) } }
}
