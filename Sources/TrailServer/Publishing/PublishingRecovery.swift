import Foundation
import GRDB
import Logging

/// Start-up clean-up for publishing: staging folders of closed requests, zips no version row names,
/// and open requests whose built zip vanished. Requests still `building` are rebuilt by the build service.
enum PublishingRecovery {
    struct Report: Sendable, Equatable {
        var staleStagingFolders = 0
        var orphanZips = 0
        var lostBuilds = 0
    }

    @discardableResult
    static func run(database: AppDatabase, paths: DataPaths, logger: Logger = Logger(label: "trail.recovery")) async throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        let open = try await database.openPublishRequestStates()
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.staging.path)) ?? [] where open[name] == nil {
            try? fileManager.removeItem(at: paths.staging.appendingPathComponent(name))
            report.staleStagingFolders += 1
        }
        for (id, state) in open where state != "building" {
            let zip = paths.staging.appendingPathComponent(id).appendingPathComponent("package.zip")
            if !fileManager.fileExists(atPath: zip.path) {
                try await database.rebuildLostPackage(requestId: id)
                report.lostBuilds += 1
            }
        }
        let versions = try await database.releasedZipPaths()
        for package in (try? fileManager.contentsOfDirectory(atPath: paths.packages.path)) ?? [] {
            let folder = paths.packages.appendingPathComponent(package)
            for file in (try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? [] where !versions.contains("packages/\(package)/\(file)") {
                try? fileManager.removeItem(at: folder.appendingPathComponent(file))
                report.orphanZips += 1
            }
        }
        if report != Report() { logger.notice("publishing recovery: \(report)") }
        return report
    }
}
