import Foundation
import Hummingbird
import NIOPosix
import PackageFormat
import _NIOFileSystem

/// Turns a fully received upload file into a pending asset: type from the bytes, quota, database row, scan job.
/// On any refusal the file is removed, so nothing half-made stays behind.
struct AssetIntake: Sendable {
    let database: AppDatabase
    let paths: DataPaths
    let scans: ScanService

    struct Received: Sendable {
        let uploadId: String
        let size: Int64
        let sha256: String
        let header: [UInt8]
        let originalName: String
    }

    /// How many file bytes a multipart request to this tour may carry before the site's quota is reached (nil: no quota):
    /// the upload stops as the bytes arrive, not after gigabytes were written.
    func uploadBudget(tourId: Int64, excludingUpload uploadId: String? = nil) async throws -> MultipartUpload.Budget? {
        guard let room = try await database.uploadRoom(tourId: tourId, excludingUpload: uploadId) else { return nil }
        return MultipartUpload.Budget(
            bytes: max(0, room.quota - room.committed),
            message: ByteFormat.quotaMessage(site: room.site, quota: room.quota)
        )
    }

    /// The quota check of a received file (its own upload not counted twice): 413 when it does not fit.
    func requireRoom(for file: Received, tourId: Int64) async throws {
        if let budget = try await uploadBudget(tourId: tourId, excludingUpload: file.uploadId), file.size > budget.bytes {
            throw OverQuota(message: budget.message)
        }
    }

    func register(_ file: Received, tourId: Int64, waypointId: Int64, replacing: Int64?, actor: AuditActor) async throws -> Asset {
        let url = paths.upload(file.uploadId)
        do {
            let detected = try await Self.detect(url: url, header: file.header, size: file.size)
            guard let detected else {
                throw HTTPError(
                    .unsupportedMediaType,
                    message: "“\(Self.displayName(file.originalName))” is not a supported file. Accepted: \(FileTypeDetector.acceptedDescription)."
                )
            }
            guard file.size > 0 else { throw HTTPError(.unprocessableContent, message: "The file is empty.") }
            // A playlist or concat list dressed as media would have the converter open the files it names.
            if try await Self.isReferenceList(url: url, header: file.header, kind: detected.kind) {
                throw HTTPError(
                    .unsupportedMediaType,
                    message:
                        "“\(Self.displayName(file.originalName))” is not audio or video: it is a playlist or a list of other files, which are never opened. Accepted: \(FileTypeDetector.acceptedDescription)."
                )
            }
            try await requireRoom(for: file, tourId: tourId)
            let duration =
                detected.kind == .audio || detected.kind == .video
                ? try await BlockingWork.short { MediaDuration.seconds(of: url, mimeType: detected.mimeType) } : nil
            let (asset, released) = try await database.addAsset(
                NewAsset(
                    tourId: tourId,
                    waypointId: waypointId,
                    replacesAssetId: replacing,
                    detected: detected,
                    originalName: Self.displayName(file.originalName),
                    size: file.size,
                    sha256: file.sha256,
                    uploadId: file.uploadId,
                    durationSeconds: duration
                ),
                actor: actor
            )
            await StoredFiles(paths: paths).removeUnreferenced(released)
            scans.wake()
            return asset
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: FilePath(url.path))
            throw error
        }
    }

    /// Turns a received caption or transcript file into a pending companion of `ownerId`: checked as text
    /// (``CompanionText``: WebVTT for captions; UTF-8 text or WebVTT for a transcript), quota, row and scan job.
    /// A refusal (422 on `file`) removes the file; a previous file in the same role is replaced.
    func registerCompanion(_ file: Received, ownerId: Int64, role: CompanionRole, actor: AuditActor) async throws -> Asset {
        let url = paths.upload(file.uploadId)
        do {
            guard file.size <= CompanionText.maxSize else {
                throw HTTPError(.contentTooLarge, message: "A \(role.label) file may be at most \(ByteFormat.string(CompanionText.maxSize)).")
            }
            let format: CompanionText.Format
            do {
                format = try await BlockingWork.short { try CompanionText.check(try Data(contentsOf: url), role: role) }
            } catch let problem as CompanionTextProblem {
                throw ValidationErrors(["file": problem.message])
            }
            guard
                let (owner, tourId) = try await database.assetWithTour(id: ownerId)
            else { throw NotFound() }
            try await requireRoom(for: file, tourId: tourId)
            let name = Self.companionName(file.originalName, owner: owner, role: role, format: format)
            let (companion, released) = try await database.addCompanion(
                NewCompanion(
                    ownerId: ownerId,
                    role: role,
                    format: format,
                    originalName: name,
                    size: file.size,
                    sha256: file.sha256,
                    uploadId: file.uploadId
                ),
                actor: actor
            )
            await StoredFiles(paths: paths).removeUnreferenced(released)
            scans.wake()
            return companion
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: FilePath(url.path))
            throw error
        }
    }

    /// A transcript typed as text (the panel's text box, the API's `{text}`): written to an upload file, hashed, then
    /// registered like an uploaded one, so it is scanned, stored and packaged the same way.
    func registerTranscript(text: String, ownerId: Int64, actor: AuditActor) async throws -> Asset {
        let data = Data(text.replacingOccurrences(of: "\r\n", with: "\n").utf8)
        guard Int64(data.count) <= CompanionText.maxSize else {
            throw ValidationErrors(["text": "A transcript may be at most \(ByteFormat.string(CompanionText.maxSize)) of text."])
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ValidationErrors(["text": "Write the transcript's text."]) }
        let uploadId = UUID().uuidString.lowercased()
        let url = paths.upload(uploadId)
        try await BlockingWork.short {
            try FileManager.default.createDirectory(at: self.paths.uploads, withIntermediateDirectories: true)
            try data.write(to: url)
        }
        let file = Received(
            uploadId: uploadId,
            size: Int64(data.count),
            sha256: PackageHashing.sha256Hex(data),
            header: Array(data.prefix(64)),
            originalName: "transcript.txt"
        )
        do {
            return try await registerCompanion(file, ownerId: ownerId, role: .transcript, actor: actor)
        } catch let errors as ValidationErrors {
            // The text box's field, not the upload's.
            throw ValidationErrors(["text": errors["file"] ?? errors.message])
        }
    }

    /// `intro.vtt` as uploaded; a file without a name (typed text) is named after its media file.
    static func companionName(_ raw: String, owner: Asset, role: CompanionRole, format: CompanionText.Format) -> String {
        let name = displayName(raw)
        guard name == "unnamed" || name == "transcript.txt" else { return name }
        let stem = owner.originalName.split(separator: ".").dropLast().joined(separator: ".")
        return "\(stem.isEmpty ? owner.originalName : stem).\(role.rawValue).\(format.fileExtension)"
    }

    /// Magic numbers first; only a file that matches none is read whole to check it is plain UTF-8 text (off the event loop).
    static func detect(url: URL, header: [UInt8], size: Int64) async throws -> FileTypeDetector.Detected? {
        try await BlockingWork.short {
            try FileTypeDetector.detect(header: header, fileSize: size) {
                FileTypeDetector.isPlainUTF8(try Data(contentsOf: url))
            }
        }
    }

    /// Whether an upload taken for audio, video or text is a list that names other files (``FileTypeDetector/referencesOtherFiles(read:)``);
    /// read off the event loop. Images are decoded by libvips, which follows no such lists.
    static func isReferenceList(url: URL, header: [UInt8], kind: AssetKind) async throws -> Bool {
        switch kind {
        case .image: return false
        case .text: return FileTypeDetector.startsAsReferenceList(header)
        case .audio, .video:
            return try await BlockingWork.short {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                return try FileTypeDetector.referencesOtherFiles { offset, count in
                    guard offset >= 0 else { return [] }
                    try handle.seek(toOffset: UInt64(offset))
                    return [UInt8](try handle.read(upToCount: count) ?? Data())
                }
            }
        }
    }

    /// The user's file name is kept as metadata only: no path, no control characters, at most 255 characters.
    static func displayName(_ raw: String) -> String {
        let lastComponent = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let cleaned = String(lastComponent.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        let name = String(cleaned.prefix(255))
        return name.isEmpty || name == "." || name == ".." ? "unnamed" : name
    }

    /// The asset number a form field or tus metadata gives in `replaces` (a positive integer), or nil when it is not one.
    static func replacedAssetId(_ text: String) -> Int64? {
        guard let id = Int64(text), id > 0 else { return nil }
        return id
    }

    static let replacesProblem = "“replaces” must be the number of one asset of this waypoint."
}

/// Moving and removing stored files; every move is a rename within the data folder (atomic on one file system).
struct StoredFiles: Sendable {
    let paths: DataPaths

    func removeUnreferenced(_ relativePaths: [String]) async {
        for relative in relativePaths {
            _ = try? await FileSystem.shared.removeItem(at: FilePath(paths.absolute(relative).path))
        }
    }
}
