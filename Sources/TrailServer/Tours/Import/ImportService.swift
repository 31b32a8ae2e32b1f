import Foundation
import MalwareScan
import PackageFormat
import TourFormats

/// A KMZ picture written to `uploads/` and scanned, waiting for the transaction that attaches it to its waypoint.
struct StagedPicture: Sendable {
    let waypointName: String
    let uploadId: String
    let detected: FileTypeDetector.Detected
    let originalName: String
    let size: Int64
    let sha256: String
}

/// Applies an import (panel and API alike) as one outcome: the waypoints and their pictures, or nothing.
///
/// The pictures are the part that can fail half-way (a full disk, a picture that is not one, the scanner), so they go
/// first: each is written to `uploads/`, its type checked and scanned, before the database is touched. Then one
/// transaction applies the waypoints, route and frame and adds every picture as an asset with its scan job. A failure
/// at any step removes the files written so far and leaves the tour as it was.
struct ImportService: Sendable {
    let database: AppDatabase
    let intake: AssetIntake
    let paths: DataPaths

    /// Applies `plan` to the tour; the pictures attached.
    func apply(_ imported: ImportedTour, plan: ImportPlan, tourId: Int64, actor: AuditActor) async throws -> Int {
        let imageBytes = plan.images.reduce(Int64(0)) { $0 + Int64($1.bytes) }
        if imageBytes > 0, let budget = try await intake.uploadBudget(tourId: tourId), imageBytes > budget.bytes {
            throw OverQuota(message: budget.message)
        }
        var staged: [StagedPicture] = []
        do {
            for item in plan.images {
                guard let image = imported.points.first(where: { $0.name == item.waypoint })?.images.first(where: { $0.path == item.file })
                else { continue }
                staged.append(try await stage(image, of: item.waypoint))
            }
            let attached = try await database.applyImport(tourId: tourId, imported: imported, plan: plan, pictures: staged, actor: actor)
            // A picture left out (already on its waypoint) has no row: its staged file goes.
            let used = Set(attached.map(\.storedPath))
            for picture in staged where !used.contains("uploads/\(picture.uploadId)") { remove(picture) }
            if !attached.isEmpty { intake.scans.wake() }
            return attached.count
        } catch {
            for picture in staged { remove(picture) }
            throw error
        }
    }

    /// Writes one picture to `uploads/`, checks that it is a picture, and scans it when the scanner has signatures (it is
    /// scanned again by the scan queue like any upload; without signatures it waits there as pending).
    func stage(_ image: ImportedTour.Image, of waypointName: String) async throws -> StagedPicture {
        let uploadId = UUID().uuidString.lowercased()
        let url = paths.upload(uploadId)
        let name = String(image.path.split(separator: "/").last ?? "image")
        do {
            try await BlockingWork.short {
                try FileManager.default.createDirectory(at: paths.uploads, withIntermediateDirectories: true)
                try image.data.write(to: url)
            }
            let header = Array(image.data.prefix(FileTypeDetector.headerLength))
            guard let detected = try await AssetIntake.detect(url: url, header: header, size: Int64(image.data.count)), detected.kind == .image
            else {
                throw ImportRefused(message: "“\(name.prefix(120))” in the KMZ is not a picture (JPEG, PNG, GIF or WebP). Nothing was imported.")
            }
            try await scan(url, name: name)
            return StagedPicture(
                waypointName: waypointName,
                uploadId: uploadId,
                detected: detected,
                originalName: AssetIntake.displayName(name),
                size: Int64(image.data.count),
                sha256: PackageHashing.sha256Hex(image.data)
            )
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// One staged picture through the scanner: malware is quarantined and refuses the whole import; a picture the
    /// scanner could not read refuses it too (it would never be published), with the reason.
    func scan(_ url: URL, name: String) async throws {
        let scanner = intake.scans.scanner
        guard await scanner.hasSignatures else { return }
        switch await scanner.scan(fileAt: url.path) {
        case .clean:
            return
        case .infected(let signature):
            try FileManager.default.createDirectory(at: paths.quarantine, withIntermediateDirectories: true)
            if (try? FileManager.default.moveItem(at: url, to: paths.quarantine.appendingPathComponent(UUID().uuidString.lowercased()))) == nil {
                try? FileManager.default.removeItem(at: url)
            }
            throw ImportRefused(
                message:
                    "The picture “\(name.prefix(120))” in the KMZ carries malware (\(signature.prefix(80))). It was quarantined and nothing was imported."
            )
        case .unscannable(let reason), .error(let reason):
            throw ImportRefused(
                message:
                    "The picture “\(name.prefix(120))” in the KMZ could not be scanned (\(reason.prefix(120))). Nothing was imported: try again later."
            )
        }
    }

    func remove(_ picture: StagedPicture) { try? FileManager.default.removeItem(at: paths.upload(picture.uploadId)) }
}
