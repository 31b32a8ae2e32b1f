import Foundation
import GRDB
import Logging

/// Start-up clean-up for publishing: staging folders of closed requests, zips no version row names,
/// and open requests whose built zip vanished. Requests still `building` are rebuilt by the build service.
public enum PublishingRecovery {
    public struct Report: Sendable, Equatable {
        public var staleStagingFolders = 0
        public var orphanZips = 0
        public var lostBuilds = 0
    }

    @discardableResult
    public static func run(database: AppDatabase, paths: DataPaths, logger: Logger = Logger(label: "trail.recovery")) throws -> Report {
        var report = Report()
        let fileManager = FileManager.default
        let open = try database.writer.read { db in
            try Row.fetchAll(db, SQLRequest(literal: "SELECT id, state FROM publishRequest WHERE state IN \(PublishState.open)"))
                .reduce(into: [String: String]()) { $0[$1["id"]] = $1["state"] }
        }
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.staging.path)) ?? [] where open[name] == nil {
            try? fileManager.removeItem(at: paths.staging.appendingPathComponent(name))
            report.staleStagingFolders += 1
        }
        for (id, state) in open where state != "building" {
            let zip = paths.staging.appendingPathComponent(id).appendingPathComponent("package.zip")
            if !fileManager.fileExists(atPath: zip.path) {
                try database.writer.write { db in
                    try db.execute(sql: "UPDATE publishRequest SET state = ?, updatedAt = ? WHERE id = ?", arguments: [PublishState.building, Date().dbTime, id])
                    try db.execute(sql: "INSERT OR IGNORE INTO buildJob (requestId, queuedAt) VALUES (?, ?)", arguments: [id, Date().dbTime])
                }
                report.lostBuilds += 1
            }
        }
        let versions = try database.writer.read { db in
            Set(try String.fetchAll(db, sql: "SELECT 'packages/' || packageId || '/' || version || '.zip' FROM packageVersion"))
        }
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
