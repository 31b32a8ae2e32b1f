import Foundation
import GRDB
import PackageFormat

package enum PublishState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case building, pending, ready, published, denied, failed, withdrawn

    /// Open requests lock their tour.
    package var isOpen: Bool { Self.open.contains(self) }
    /// The states of a request that still locks its tour (the database's `publishRequest_open` index says the same).
    package static let open: [PublishState] = [.building, .pending, .ready]
    /// Waiting for a reviewer's decision (a reviewer may still deny a request that has its approvals).
    package static let reviewable: [PublishState] = [.pending, .ready]

    package var label: String {
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

    package var badge: String {
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
package struct PublishRequest: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: String
    package var tourId: Int64?
    package var siteId: Int64
    package var packageId: String
    package var version: Int
    package var authorId: Int64?
    package var state: PublishState
    /// The tour as frozen at submission (a JSON column): what the package is built from.
    package var snapshot: TourSnapshot
    package var requiredApprovals: Int
    package var filesDone: Int
    package var filesTotal: Int
    package var bytesDone: Int64
    package var bytesTotal: Int64
    package var failureReason: String?
    package var denialComment: String?
    package var zipSha256: String?
    package var zipSize: Int64?
    package var signature: String?
    package var manifestJSON: String?
    /// Every packaged file's verdict from the build's re-scan (a JSON column); nil before the build ends.
    package var scanReport: [ScanReportEntry]?
    package var createdAt: Date
    package var updatedAt: Date

    package static let databaseTableName = "publishRequest"

    package enum Columns {
        static let id = Column(CodingKeys.id)
        static let tourId = Column(CodingKeys.tourId)
        static let siteId = Column(CodingKeys.siteId)
        static let state = Column(CodingKeys.state)
        static let createdAt = Column(CodingKeys.createdAt)
    }
}

/// One file of a build's re-scan, shown to reviewers.
package struct ScanReportEntry: Codable, Sendable, Equatable {
    package let file: String
    package let sha256: String
    package let verdict: String
}

/// What a reviewer decided.
package enum ReviewDecision: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case approve, deny
}

package struct Review: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var requestId: String
    package var reviewerId: Int64
    package var decision: ReviewDecision
    package var comment: String
    package var createdAt: Date

    package static let databaseTableName = "review"
}

/// The tour exactly as submitted: what the package is built from.
package struct TourSnapshot: Codable, Sendable, Equatable {
    package struct AssetEntry: Codable, Sendable, Equatable {
        package var assetId: Int64
        package var kind: String
        package var mimeType: String
        package var size: Int64
        package var sha256: String
        package var originalName: String
        /// Where the clean file was when the tour was frozen (relative to the data folder).
        package var storedPath: String
        /// Play time of audio and video, when known (for the duration estimate).
        package var durationSeconds: Double? = nil
        package var title: String? = nil
        package var altText: String? = nil
        /// Clean caption and transcript files frozen with it (absent from requests made before them).
        package var captions: CompanionEntry? = nil
        package var transcript: CompanionEntry? = nil
        /// The one language the file is for (nil: every language).
        package var language: String? = nil
        /// Width and height in pixels of what ships (images and video), when measured.
        package var width: Int? = nil
        package var height: Int? = nil
        /// The original's size when its optimized copy ships instead.
        package var originalSize: Int64? = nil
        /// True while the file's optimized copy was still being made at submission: the build waits for it and then
        /// ships it (``resolve(_:)``).
        package var awaitingCopy: Bool? = nil

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

        package var frozen: FrozenFile {
            FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName)
        }
        package var companions: [(role: CompanionRole, entry: CompanionEntry)] {
            [(CompanionRole.captions, captions), (.transcript, transcript)].compactMap { role, entry in entry.map { (role, $0) } }
        }
    }

    /// A caption or transcript file as frozen: its own asset row, packaged beside its media file.
    package struct CompanionEntry: Codable, Sendable, Equatable {
        package var assetId: Int64
        package var mimeType: String
        package var size: Int64
        package var sha256: String
        package var originalName: String
        package var storedPath: String

        package var frozen: FrozenFile {
            FrozenFile(assetId: assetId, sha256: sha256, size: size, storedPath: storedPath, originalName: originalName)
        }
    }

    /// One stored file the package is built from (a media file, captions or a transcript).
    package struct FrozenFile: Sendable, Equatable {
        package var assetId: Int64
        package var sha256: String
        package var size: Int64
        package var storedPath: String
        package var originalName: String
    }

    package struct WaypointEntry: Codable, Sendable, Equatable {
        package var name: String
        package var order: Int
        package var latitude: Double
        package var longitude: Double
        package var description: String
        package var assets: [AssetEntry]
        /// Absent from requests submitted before trigger zones (their packages carry no radius).
        package var triggerRadiusMeters: Int?
        /// Name and description in the further languages (absent from requests made before languages).
        package var localized: [String: LocalizedText]? = nil
        /// The waypoint's id, written into the manifest (absent from requests made before alerts).
        package var waypointId: Int64? = nil
    }

    package var tourId: Int64
    package var name: String
    package var description: String
    package var mapName: String
    package var siteName: String
    package var siteSlug: String
    package var frame: Frame
    package var minZoom: Int
    package var maxZoom: Int
    package var waypoints: [WaypointEntry]
    /// The route as stored on the tour, and the walking pace. (Requests frozen before the route was typed hold it as a
    /// JSON string; `RoutePath` reads both.)
    package var route: RoutePath? = nil
    package var paceKmh: Double? = nil
    /// Where the package's map tiles come from (nil: no tiles); see `TileSourceSnapshot`.
    package var tiles: TileSourceSnapshot? = nil
    /// The tour's languages, default first, and its texts in the further ones (absent from older requests).
    package var languages: [String]? = nil
    package var localized: [String: LocalizedText]? = nil
    /// The trail facts as they stood when the tour was frozen (the ground's part) and the ranger's accessibility
    /// fields: the package ships what the reviewer saw, whatever the terrain model does later (absent from older
    /// requests).
    package var terrain: TerrainFacts? = nil
    package var accessibility: TrailFacts.Accessibility? = nil

    /// Every stored file the package is built from, in package order: each media file, then its captions and transcript.
    package var frozenFiles: [FrozenFile] {
        waypoints.flatMap(\.assets).flatMap { [$0.frozen] + $0.companions.map(\.entry.frozen) }
    }
    package var totalBytes: Int64 { frozenFiles.reduce(0) { $0 + $1.size } }
    package var fileCount: Int { frozenFiles.count }
}

/// A released package (one per tour) and its immutable versions.
package struct PackageRecord: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var id: String
    package var tourId: Int64?
    package var siteId: Int64
    package var currentVersion: Int?
    package var isVisible: Bool
    package var createdAt: Date
    package var updatedAt: Date

    package static let databaseTableName = "package"
}

package struct PackageVersion: Codable, Sendable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    package var packageId: String
    package var version: Int
    package var requestId: String?
    package var name: String
    package var description: String
    package var mapName: String
    package var sha256: String
    package var size: Int64
    package var signature: String
    package var manifestJSON: String
    package var releasedBy: Int64?
    package var createdAt: Date
    package var verifiedCount: Int

    package static let databaseTableName = "packageVersion"

    /// Relative to the data folder.
    package var storedPath: String { "packages/\(packageId)/\(version).zip" }
}

extension PackageVersion {
    /// The signed manifest, decoded. The stored text is what was signed and is never rewritten, so a damaged one is an
    /// error (logged, a 500 for the page that needed it), not a version treated as if it had no manifest.
    package func decodedManifest() throws -> Manifest { try Manifest.decode(Data(manifestJSON.utf8)) }
}

extension PublishRequest {
    /// The built package's manifest: nil until the build wrote it; a damaged one is an error, as for a released version.
    package func decodedManifest() throws -> Manifest? { try manifestJSON.map { try Manifest.decode(Data($0.utf8)) } }
}
