import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Hourly (and at start) clean-up of what users leave behind while the server runs, so a disk is not filled by
/// abandoned work between restarts: expired tus uploads (their rows and bytes), import previews nobody applied within
/// an hour, and staging folders of review requests that are closed (withdrawn, denied, released, failed).
struct MaintenanceService: Service {
    struct Report: Sendable, Equatable {
        var expiredUploads = 0
        var stalePreviews = 0
        var staleStagingFolders = 0
    }

    let database: AppDatabase
    let paths: DataPaths
    let interval: Duration
    let logger: Logger
    /// An import preview or a closed request's staging folder older than this is removed. The age also keeps the sweep
    /// off a folder created after it read the list of open requests.
    static let leftoverAge: TimeInterval = 3600

    init(database: AppDatabase, paths: DataPaths, interval: Duration = .seconds(3600), logger: Logger = Logger(label: "trail.maintenance")) {
        self.database = database
        self.paths = paths
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        // The hour's sleep is cancelled by a graceful shutdown: a stop must not wait for the next sweep.
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                let report = await (try? sweep()) ?? Report()
                if report != Report() { logger.notice("maintenance: \(report)") }
                try? await Task.sleep(for: interval)
            }
        }
    }

    @discardableResult
    func sweep(now: Date = Date()) async throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        let expired = try await database.removeExpiredUploads(now: now)
        for id in expired { try? fileManager.removeItem(at: paths.upload(id)) }
        report.expiredUploads = expired.count

        func age(_ url: URL) -> TimeInterval {
            let modified = (try? fileManager.attributesOfItem(atPath: url.path)[.modificationDate]) as? Date
            return now.timeIntervalSince(modified ?? now)
        }
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.uploads.path)) ?? [] where name.hasPrefix("import-") {
            let file = paths.uploads.appendingPathComponent(name)
            if age(file) > Self.leftoverAge {
                try? fileManager.removeItem(at: file)
                report.stalePreviews += 1
            }
        }
        let open = try await database.openPublishRequestIds()
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.staging.path)) ?? [] where !open.contains(name) {
            let folder = paths.staging.appendingPathComponent(name)
            if age(folder) > Self.leftoverAge {
                try? fileManager.removeItem(at: folder)
                report.staleStagingFolders += 1
            }
        }
        return report
    }
}
