import ArgumentParser
import Foundation
import TrailServer

/// `media optimize [--site S] [--dry-run]`: phone-sized copies of files uploaded before the server made them.
struct MediaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Make phone-sized copies of older media files.",
        subcommands: [Optimize.self]
    )

    struct Optimize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the missing phone-sized copies of videos, audio and images, and report the bytes saved.",
            discussion:
                "Works the files here, one conversion at a time (--media-conversions); safe while the server runs. With --dry-run, lists the files and estimates the saving without converting anything. Exit status: 0 done, 1 some file could not be optimized."
        )
        @OptionGroup var options: ServerOptions
        @Option(help: "Only this site's files (its slug).") var site: String?
        @Flag(name: .customLong("dry-run"), help: "List what would be converted and estimate the saving; change nothing.") var dryRun = false

        func run() async throws {
            var config = try options.makeConfig()
            config.mediaOptimization.enabled = true
            guard FileManager.default.fileExists(atPath: config.databasePath) else {
                throw ValidationError("\(config.databasePath) does not exist: is --data the server's data folder?")
            }
            let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
            var siteId: Int64?
            if let site {
                guard let found = try await database.site(slug: site) else { throw ValidationError("no site with the slug “\(site)”") }
                siteId = found.id
            }
            let optimizer = MediaOptimizer(database: database, paths: config.dataPaths, settings: config.mediaOptimization)
            let report = try await optimizer.optimizeExisting(siteId: siteId, dryRun: dryRun)
            for line in report.lines {
                let after = line.shippedSize.map { ByteFormat.string($0) } ?? "?"
                let state = line.state.map { " \($0.rawValue)" } ?? ""
                print(
                    "  #\(line.assetId) \(line.kind.rawValue) \(ByteFormat.string(line.originalSize)) → \(after)\(state)\(line.message.isEmpty ? "" : ": \(line.message)")"
                )
            }
            let verb = dryRun ? "would save about" : "saved"
            print(
                "\(report.lines.count) file(s)\(dryRun ? " to optimize" : " optimized"); \(verb) \(ByteFormat.string(report.savedBytes)) (\(report.savedBytes) bytes)."
            )
            if !dryRun, report.lines.contains(where: { $0.state == .failed }) { throw ExitCode.failure }
        }
    }
}
