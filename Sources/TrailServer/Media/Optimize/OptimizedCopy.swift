import Foundation
import GRDB

/// Where an asset's phone-sized copy stands.
package enum OptimizeState: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// Queued or being made (with `progress`).
    case pending
    /// Made: `storedPath`, `size`, `sha256` and `mimeType` describe it.
    case ready
    /// The original already fits a phone and a copy would not be smaller: the original ships.
    case skipped
    /// The file did not decode, or it is over a limit: it blocks publishing until it is replaced or kept as it is.
    case failed

    var label: String {
        switch self {
        case .pending: "Optimizing"
        case .ready: "Optimized"
        case .skipped: "Already phone-sized"
        case .failed: "Could not optimize"
        }
    }

    var badge: String {
        switch self {
        case .pending: "secondary"
        case .ready: "success"
        case .skipped: "info"
        case .failed: "danger"
        }
    }
}

/// The phone-sized copy of one asset (table `optimizedCopy`); a `pending` row is the durable job that makes it.
struct OptimizedCopy: Codable, Sendable, Equatable, UnixTimeRecord, FetchableRecord, PersistableRecord {
    var assetId: Int64
    var state: OptimizeState
    var progress: Double = 0
    var sourceSha256: String
    var settings: String
    var encoder: String = ""
    var storedPath: String? = nil
    var size: Int64? = nil
    var sha256: String? = nil
    var mimeType: String? = nil
    var width: Int? = nil
    var height: Int? = nil
    var durationSeconds: Double? = nil
    var message: String = ""
    var queuedAt: Date
    var updatedAt: Date

    static let databaseTableName = "optimizedCopy"

    enum Columns {
        static let assetId = Column(CodingKeys.assetId)
        static let state = Column(CodingKeys.state)
        static let queuedAt = Column(CodingKeys.queuedAt)
    }

    /// The kinds that get a copy: captions and transcripts are small text and ship as they are.
    static func applies(to kind: AssetKind) -> Bool { kind != .text }
}

/// The file that ships for an asset: its optimized copy when there is a ready one and the ranger did not keep the
/// original, else the original.
struct ShippedFile: Sendable, Equatable {
    var storedPath: String
    var size: Int64
    var sha256: String
    var mimeType: String
    var width: Int?
    var height: Int?
    var durationSeconds: Double?
    /// True when this is the optimized copy.
    var isOptimized: Bool

    init(asset: Asset, copy: OptimizedCopy?) {
        if let copy, !asset.useOriginal, copy.state == .ready, let path = copy.storedPath, let size = copy.size, let sha = copy.sha256,
            let mime = copy.mimeType
        {
            self.init(
                storedPath: path,
                size: size,
                sha256: sha,
                mimeType: mime,
                width: copy.width,
                height: copy.height,
                durationSeconds: copy.durationSeconds ?? asset.durationSeconds,
                isOptimized: true
            )
        } else {
            // A skipped copy measured the original: its dimensions and play time still describe what ships.
            let measured = copy.flatMap { $0.state == .skipped || $0.state == .ready ? $0 : nil }
            self.init(
                storedPath: asset.storedPath,
                size: asset.size,
                sha256: asset.sha256,
                mimeType: asset.mimeType,
                width: measured?.state == .skipped ? measured?.width : nil,
                height: measured?.state == .skipped ? measured?.height : nil,
                durationSeconds: asset.durationSeconds ?? (measured?.state == .skipped ? measured?.durationSeconds : nil),
                isOptimized: false
            )
        }
    }

    init(
        storedPath: String,
        size: Int64,
        sha256: String,
        mimeType: String,
        width: Int?,
        height: Int?,
        durationSeconds: Double?,
        isOptimized: Bool
    ) {
        self.storedPath = storedPath
        self.size = size
        self.sha256 = sha256
        self.mimeType = mimeType
        self.width = width
        self.height = height
        self.durationSeconds = durationSeconds
        self.isOptimized = isOptimized
    }
}

extension OptimizedCopy {
    /// A ready copy larger than the original: the optimizer keeps it when the original is not in a format every phone
    /// plays (an MP3 or Ogg file becomes AAC, which may take more bytes than a low-bit-rate original). It ships unless
    /// the ranger keeps the original, so "Optimized" would be the wrong word for it.
    func isLarger(thanOriginal originalSize: Int64) -> Bool {
        state == .ready && (size ?? 0) > originalSize
    }

    /// The waypoint page's badge text: the state's label, or what really happened when the copy grew.
    func label(originalSize: Int64, useOriginal: Bool) -> String {
        guard isLarger(thanOriginal: originalSize) else { return state.label }
        return useOriginal ? "Kept the original (smaller)" : "Converted (larger than the original)"
    }

    func badge(originalSize: Int64) -> String {
        isLarger(thanOriginal: originalSize) ? "warning" : state.badge
    }

    /// Why a larger copy is there and how to ship the original instead (nil when the copy is not larger).
    func largerNote(originalSize: Int64, useOriginal: Bool) -> String? {
        guard isLarger(thanOriginal: originalSize), let size else { return nil }
        let sizes = "\(ByteFormat.string(size)) against \(ByteFormat.string(originalSize))"
        return useOriginal
            ? "The original ships: the phone copy would be larger (\(sizes))."
            : "The phone copy is larger than the original (\(sizes)): it was converted to a format every phone plays. "
                + "Choose “Keep original” to ship the smaller original instead."
    }
}
