import ArgumentParser
import Foundation
import TrailServer

/// `backup --to DIR` and `backup verify DIR`: see ``DataBackup``.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up a data folder, or verify a backup.",
        discussion: "`backup --to DIR` copies a running server's data folder; `backup verify DIR` checks a copy.",
        subcommands: [Create.self, Verify.self],
        defaultSubcommand: Create.self
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Copy the database (SQLite's online backup), the signing key and every file a row names into DIR.",
            discussion: """
                Safe while the server serves: uploads and releases go on. Run it again into the same DIR and only what \
                changed is copied (files are stored once each, by SHA-256); files no row names any more are removed \
                from DIR. Exit status: 0 done, 1 a file in the data folder is damaged or the backup failed.
                """
        )
        @OptionGroup var location: LocationOptions
        @Option(help: "The backup folder (created; a folder of an earlier backup is brought up to date).") var to: String

        func run() async throws {
            var config = AppConfig()
            location.apply(to: &config)
            guard FileManager.default.fileExists(atPath: config.databasePath) else {
                print("error: \(config.databasePath) does not exist: is --data the server's data folder?")
                throw ExitCode.failure
            }
            let database = try AppDatabase.openFile(at: config.databasePath, migrationsFolder: config.migrationsFolder)
            let folder = URL(fileURLWithPath: to)
            let started = Date()
            do {
                let report = try await DataBackup(dataFolder: config.dataFolder).run(database: database, to: folder)
                print(
                    "Backed up \(config.dataFolder.path) to \(folder.path): \(report.fileCount) files, \(report.totalBytes) bytes; "
                        + "copied \(report.copiedFiles) files (\(report.copiedBytes) bytes), removed \(report.prunedFiles) no longer named, in "
                        + String(format: "%.1f s.", Date().timeIntervalSince(started))
                )
            } catch {
                print("error: \(error)")
                throw ExitCode.failure
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-hash every file of a backup against its index and check the database copy; names each damaged or missing file.",
            discussion:
                "Reads only: the database copy is opened immutable, so nothing in the backup folder changes. Exit status: 0 good, 1 a problem was found."
        )
        // Taken like every other command's, so scripts can pass the same options to each; verifying reads only DIR.
        @OptionGroup var location: LocationOptions
        @Argument(help: "The backup folder.") var folder: String

        func run() async throws {
            let problems: [String]
            do { problems = try DataBackup.verify(URL(fileURLWithPath: folder)) } catch {
                print("error: \(error)")
                throw ExitCode.failure
            }
            if problems.isEmpty {
                print("Backup \(folder) is good: every file matches its SHA-256 and the database copy is intact.")
            } else {
                print("Backup \(folder) has \(problems.count) problem(s):")
                for problem in problems { print("  - \(problem)") }
                throw ExitCode.failure
            }
        }
    }
}

/// `restore --from DIR --data NEWDIR` (or `TRAIL_DATA=NEWDIR`).
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a backup into a new, empty data folder.",
        discussion:
            "Then `serve --data NEWDIR` starts on it. Refuses a folder that is not empty. Each file is checked against its SHA-256 as it is written; a restore that fails removes what it wrote. Uploads that were unfinished at backup time must be started again."
    )
    @Option(help: "The backup folder.") var from: String
    @OptionGroup var location: LocationOptions

    func run() async throws {
        var config = AppConfig()
        location.apply(to: &config)
        let data = config.dataFolder.path
        do {
            let count = try DataBackup.restore(from: URL(fileURLWithPath: from), to: config.dataFolder)
            print("Restored \(count) files and the database into \(data). Start the server with --data \(data).")
        } catch {
            print("error: \(error)")
            throw ExitCode.failure
        }
    }
}

/// `doctor`: see ``Doctor``. Takes the same options as `serve`, so it checks the configuration the server runs with.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the installation and say how to fix problems.",
        discussion:
            "Checks signatures, clamd, the data folder, the signing key, free space, migrations, the tile source and the public URL. Prints a line per check, with a fix for each problem. Reads only. Exit status: 0 when nothing failed (warnings allowed), 1 otherwise."
    )
    @OptionGroup var options: ServerOptions

    func run() async throws {
        let checks = await Doctor(config: try options.makeConfig()).run()
        for check in checks { print(check.line) }
        let failed = checks.filter { $0.status == .failure }.count
        let warned = checks.filter { $0.status == .warning }.count
        print(failed == 0 ? "All checks passed\(warned > 0 ? " (\(warned) warning\(warned == 1 ? "" : "s"))" : "")." : "\(failed) check(s) failed.")
        if failed > 0 { throw ExitCode.failure }
    }
}
