import Foundation
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// The `trail-companion` executable as scripts use it: `migrate`, `user create|disable`, `site create`, `member add`, `token create`,
/// each with `--root` and `--data`. Runs the binary that `swift build --build-tests` leaves in `.build/debug`.
@Suite(.enabled(if: CLI.isBuilt, "build it first: swift build --product trail-companion (scripts/test.sh does)"))
struct CLITests {
    @Test func migrateCreatesAndMigratesTheDatabase() async throws {
        let data = try CLI.dataFolder()
        let run = try await CLI.run(["migrate"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        let last = try #require(try MigrationTests.migrationNames.last)
        #expect(run.output.contains("Database \(data.appendingPathComponent("trail.sqlite").path) is at migration \(last)."))
        let database = try CLI.open(data)
        #expect(try await database.appliedMigrations() == MigrationTests.migrationNames)
        #expect(try await database.userCount() == 0, "migrate creates no account")
        let again = try await CLI.run(["migrate"], data: data)
        #expect(again.status == 0 && again.output == run.output)
        for folder in DataFolder.subfolders {
            #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent(folder).path), "data/\(folder)")
        }
    }

    @Test func userCreatePrintsAOneTimePasswordThatMustBeChanged() async throws {
        let data = try CLI.dataFolder()
        let run = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat Ranger"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("Created ranger@park.org."))
        let range = try #require(run.output.range(of: #"One-time password: [A-Za-z0-9]{16}"#, options: .regularExpression), "\(run.output)")
        let password = String(run.output[range].suffix(16))
        let database = try CLI.open(data)
        let user = try #require(try await database.user(email: "ranger@park.org"))
        #expect(user.displayName == "Pat Ranger" && user.mustChangePassword && !user.isAdmin)
        await #expect(try database.auditEvents(AuditFilter(objectType: "user")).first?.action == .known(.userCreate))

        let app = try await TestApp.make(database: database)
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            let response = try await client.post("/login", form: ["email": "ranger@park.org", "password": password], session: browser)
            #expect(response.location == "/account/password")
        }

        let admin = try await CLI.run(
            ["user", "create", "--email", "chief@park.org", "--name", "Chief", "--password", "a chosen password", "--admin"],
            data: data
        )
        #expect(admin.status == 0)
        #expect(admin.output.contains("Created chief@park.org (admin)."))
        #expect(!admin.output.contains("One-time password"))
        let chief = try #require(try await database.user(email: "chief@park.org"))
        #expect(chief.isAdmin && !chief.mustChangePassword)

        let duplicate = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Again"], data: data)
        #expect(duplicate.status != 0)
        let short = try await CLI.run(["user", "create", "--email", "x@park.org", "--name", "X", "--password", "short"], data: data)
        #expect(short.status != 0)
        #expect((short.output + short.errors).contains("Use at least 10 characters"), "\(short.errors)")
        #expect(try await database.user(email: "x@park.org") == nil)
    }

    @Test func userDisableEndsSessionsAndTokens() async throws {
        let data = try CLI.dataFolder()
        _ = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat", "--password", "a chosen password"], data: data)
        let token = try await CLI.run(["token", "create", "--email", "ranger@park.org"], data: data).output.trimmed
        let database = try CLI.open(data)
        let user = try #require(try await database.user(email: "ranger@park.org"))
        _ = try await database.startSession(userId: user.id, ipAddress: nil)

        let run = try await CLI.run(["user", "disable", "--email", "ranger@park.org"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("Disabled ranger@park.org."))
        #expect(try await database.user(email: "ranger@park.org")?.isDisabled == true)
        #expect(try await database.userForAPIToken(token) == nil)
        let sessions: Int? = try await database.scalar("SELECT COUNT(*) FROM session")
        #expect(sessions == 0)

        let unknown = try await CLI.run(["user", "disable", "--email", "nobody@park.org"], data: data)
        #expect(unknown.status != 0)
        #expect(unknown.errors.contains("No user with email nobody@park.org."))
    }

    @Test func userResetPasswordPrintsAOneTimePasswordAndEndsSessionsAndTokens() async throws {
        let data = try CLI.dataFolder()
        _ = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat", "--password", "a chosen password"], data: data)
        let token = try await CLI.run(["token", "create", "--email", "ranger@park.org"], data: data).output.trimmed
        let database = try CLI.open(data)
        let user = try #require(try await database.user(email: "ranger@park.org"))
        _ = try await database.startSession(userId: user.id, ipAddress: nil)
        #expect(try await database.userForAPIToken(token) != nil)

        let run = try await CLI.run(["user", "reset-password", "--email", "ranger@park.org"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("Reset the password of ranger@park.org; their sessions and API tokens have ended."))
        let range = try #require(run.output.range(of: #"One-time password: [A-Za-z0-9]{16}"#, options: .regularExpression), "\(run.output)")
        let password = String(run.output[range].suffix(16))
        #expect(try await database.userForAPIToken(token) == nil)
        let sessions: Int? = try await database.scalar("SELECT COUNT(*) FROM session")
        #expect(sessions == 0)
        #expect(try await database.user(email: "ranger@park.org")?.mustChangePassword == true)
        await #expect(
            try database.auditEvents(AuditFilter(objectType: "user")).contains {
                $0.action == .known(.userResetPassword) && $0.detail == "ranger@park.org"
            }
        )

        let app = try await TestApp.make(database: database)
        try await app.test { client in
            let browser = try await client.anonymousBrowser()
            let signedIn = try await client.post("/login", form: ["email": "ranger@park.org", "password": password], session: browser)
            #expect(signedIn.location == "/account/password")
            let old = try await client.post(
                "/login",
                form: ["email": "ranger@park.org", "password": "a chosen password"],
                session: try await client.anonymousBrowser()
            )
            #expect(old.status == .unauthorized)
        }
        let unknown = try await CLI.run(["user", "reset-password", "--email", "nobody@park.org"], data: data)
        #expect(unknown.status != 0 && unknown.errors.contains("No user with email nobody@park.org."))
    }

    @Test func userResetTwoStepClearsTheSecondStepAndEndsSessions() async throws {
        let data = try CLI.dataFolder()
        _ = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat", "--password", "a chosen password"], data: data)
        let database = try CLI.open(data)
        let user = try #require(try await database.user(email: "ranger@park.org"))
        let secret = try await database.beginTwoStepEnrolment(userId: user.id, actor: .system)
        let now = Date()
        #expect(
            try await database.confirmTwoStepEnrolment(
                userId: user.id,
                code: TwoStepCodes.code(secret: secret, step: TwoStepCodes.step(at: now)),
                at: now,
                actor: .system
            )?.count == 10
        )
        _ = try await database.startSession(userId: user.id, ipAddress: nil)

        let run = try await CLI.run(["user", "reset-two-step", "--email", "ranger@park.org"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("Reset the two-step sign-in of ranger@park.org; their sessions have ended."))
        let status = try await database.twoStepStatus(userId: user.id)
        #expect(!status.enrolled && !status.enrolling && status.recoveryCodesLeft == 0 && status.resetNotice)
        let sessions: Int? = try await database.scalar("SELECT COUNT(*) FROM session")
        #expect(sessions == 0)
        await #expect(
            try database.auditEvents(AuditFilter(objectType: "user")).contains {
                $0.action == .known(.userResetTwoStep) && $0.detail == "ranger@park.org"
            }
        )
        let unknown = try await CLI.run(["user", "reset-two-step", "--email", "nobody@park.org"], data: data)
        #expect(unknown.status != 0 && unknown.errors.contains("No user with email nobody@park.org."))
    }

    @Test func siteCreateAndMemberAdd() async throws {
        let data = try CLI.dataFolder()
        let site = try await CLI.run(
            ["site", "create", "--slug", "sweet-home", "--name", "Sweet Home Ranger District", "--required-approvals", "2"],
            data: data
        )
        #expect(site.status == 0, "\(site.errors)")
        #expect(site.output.contains("Created site sweet-home (Sweet Home Ranger District), 2 approvals required."))
        _ = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat", "--password", "a chosen password"], data: data)

        let member = try await CLI.run(["member", "add", "--site", "sweet-home", "--email", "ranger@park.org", "--role", "reviewer"], data: data)
        #expect(member.status == 0, "\(member.errors)")
        #expect(member.output.contains("ranger@park.org is now reviewer of sweet-home."))
        let database = try CLI.open(data)
        let record = try #require(try await database.site(slug: "sweet-home"))
        #expect(record.name == "Sweet Home Ranger District" && record.requiredApprovals == 2)
        #expect(try await database.members(siteId: record.id).map { "\($0.email) \($0.role.rawValue)" } == ["ranger@park.org reviewer"])
        // Again with another role: changed, not doubled.
        #expect(
            try await CLI.run(["member", "add", "--site", "sweet-home", "--email", "ranger@park.org", "--role", "manager"], data: data).status == 0
        )
        #expect(try await database.members(siteId: record.id).map(\.role) == [.manager])

        let badSlug = try await CLI.run(["site", "create", "--slug", "Sweet Home", "--name", "X"], data: data)
        #expect(badSlug.status != 0)
        let badRole = try await CLI.run(["member", "add", "--site", "sweet-home", "--email", "ranger@park.org", "--role", "owner"], data: data)
        #expect(badRole.status != 0)
        #expect(badRole.errors.contains("--role must be author, reviewer or manager"))
        let badSite = try await CLI.run(["member", "add", "--site", "nowhere", "--email", "ranger@park.org", "--role", "author"], data: data)
        #expect(badSite.errors.contains("No site with slug nowhere."))
        #expect(try await database.allSites().count == 1)
    }

    @Test func tokenCreatePrintsATokenThatWorksAgainstTheAPI() async throws {
        let data = try CLI.dataFolder()
        _ = try await CLI.run(["site", "create", "--slug", "sweet-home", "--name", "Sweet Home"], data: data)
        _ = try await CLI.run(["user", "create", "--email", "ranger@park.org", "--name", "Pat", "--password", "a chosen password"], data: data)
        _ = try await CLI.run(["member", "add", "--site", "sweet-home", "--email", "ranger@park.org", "--role", "author"], data: data)
        let run = try await CLI.run(["token", "create", "--email", "ranger@park.org", "--name", "import"], data: data)
        #expect(run.status == 0, "\(run.errors)")
        let token = run.output.trimmed
        #expect(token.hasPrefix("tc_") && !token.contains(" ") && !token.contains("\n"), "only the token is printed: \(run.output)")

        let database = try CLI.open(data)
        let stored = try await database.apiTokens(userId: try #require(try await database.user(email: "ranger@park.org")?.id))
        #expect(stored.map(\.name) == ["import"])
        #expect(stored.first?.tokenHash == SecretToken.hash(token) && stored.first?.tokenHash != token)

        let app = try await TestApp.make(database: database)
        try await app.test { client in
            let created = try await client.api(
                .post,
                "/api/v1/manage/tours",
                token: token,
                json: #"{"site":"sweet-home","name":"Iron Mountain Loop"}"#
            )
            #expect(created.status == .created)
            let list = try await client.api(.get, "/api/v1/manage/tours?site=sweet-home", token: token)
            #expect((list.jsonObject["tours"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Iron Mountain Loop"])
        }
        let unknown = try await CLI.run(["token", "create", "--email", "nobody@park.org"], data: data)
        #expect(unknown.status != 0)
    }

    /// Without the flags, `TRAIL_ROOT` and `TRAIL_DATA` say where things are; a flag wins over its variable.
    @Test func environmentVariablesAndFlags() async throws {
        let data = try CLI.dataFolder()
        let other = try CLI.dataFolder()
        let viaEnvironment = try await CLI.run(
            ["migrate"],
            data: nil,
            root: nil,
            environment: ["TRAIL_ROOT": projectRoot.path, "TRAIL_DATA": data.path]
        )
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.errors)")
        #expect(viaEnvironment.output.contains(data.path))
        let flagWins = try await CLI.run(["migrate"], data: other, environment: ["TRAIL_DATA": data.path])
        #expect(flagWins.output.contains(other.path))
        #expect(!flagWins.output.contains(data.path))
        let wrongRoot = try await CLI.run(["migrate"], data: try CLI.dataFolder(), root: FileManager.default.temporaryDirectory)
        #expect(wrongRoot.status != 0)
        #expect(wrongRoot.errors.contains("is --root pointing at the project folder?"))
    }

    @Test("serve refuses an --accel-redirect that is not a location path, from the flag or the environment, before starting")
    func accelRedirectMustBeALocation() async throws {
        for bad in ["_trail_files/", "/_trail_files", "/", "/../data/", "/files?x/"] {
            let flag = try await CLI.run(["serve", "--port", "0", "--accel-redirect", bad], data: try CLI.dataFolder())
            #expect(flag.status != 0 && flag.errors.contains("--accel-redirect must be a location path"), "\(bad): \(flag.errors)")
        }
        let variable = try await CLI.run(["serve", "--port", "0"], data: try CLI.dataFolder(), environment: ["TRAIL_ACCEL_REDIRECT": "files"])
        #expect(variable.status != 0 && variable.errors.contains("--accel-redirect must be a location path"), "\(variable.errors)")
    }

    /// The names scripts depend on (docs/operators.md: the configuration table and the command list).
    @Test func commandsAndFlagsHaveTheirDocumentedNames() async throws {
        let serve = try await CLI.run(["serve", "--help"], data: nil, root: nil)
        for flag in [
            "--hostname", "--port", "--root", "--data", "--clamav-db", "--clamd", "--max-upload-size", "--required-approvals",
            "--tile-url", "--public-url", "--demo", "--require-two-step",
        ] {
            #expect(serve.output.contains(flag), "serve \(flag)")
        }
        for variable in [
            "TRAIL_HOSTNAME", "TRAIL_PORT", "TRAIL_ROOT", "TRAIL_DATA", "TRAIL_CLAMAV_DB", "TRAIL_CLAMD", "TRAIL_MAX_UPLOAD_SIZE",
            "TRAIL_REQUIRED_APPROVALS", "TRAIL_TILE_URL", "TRAIL_PUBLIC_URL", "TRAIL_DEMO", "TRAIL_REQUIRE_TWO_STEP",
        ] {
            #expect(serve.output.contains(variable), "serve help mentions \(variable)")
        }
        let commands: [([String], [String])] = [
            (["user", "create"], ["--email", "--name", "--password", "--admin", "--root", "--data"]),
            (["user", "disable"], ["--email", "--root", "--data"]),
            (["user", "reset-two-step"], ["--email", "--root", "--data"]),
            (["site", "create"], ["--slug", "--name", "--required-approvals", "--root", "--data"]),
            (["member", "add"], ["--site", "--email", "--role", "--root", "--data"]),
            (["token", "create"], ["--email", "--root", "--data"]),
            (["migrate"], ["--root", "--data"]),
        ]
        for (command, flags) in commands {
            let help = try await CLI.run(command + ["--help"], data: nil, root: nil)
            #expect(help.status == 0, "\(command)")
            for flag in flags {
                #expect(help.output.contains(flag), "\(command.joined(separator: " ")) \(flag)")
            }
        }
    }
}

/// The whole command tree, read from the binary's own help: every command answers `--help`, the top-level help gives
/// each command one line, and every command that uses the data folder takes `--root` and `--data`.
@Suite(.enabled(if: CLI.isBuilt, "build it first: swift build --product trail-companion (scripts/test.sh does)"))
struct CLIHelpTests {
    /// Commands that work on a package zip or an app's folder, not on a server's data folder.
    static let withoutDataFolder: Set = ["package verify", "package install", "package update", "dem check", "map check"]

    @Test func everyCommandHasHelpAndTheDataFolderCommandsTakeRootAndData() async throws {
        var leaves: [String] = []
        var pending: [[String]] = [[]]
        while let command = pending.popLast() {
            let help = try await CLI.run(command + ["--help"], data: nil, root: nil, environment: ["COLUMNS": "80"])
            #expect(help.status == 0, "\(command.joined(separator: " ")) --help: \(help.errors)")
            let subcommands = CLIHelp.subcommands(in: help.output)
            if subcommands.isEmpty {
                leaves.append(command.joined(separator: " "))
                continue
            }
            if command.isEmpty {
                // One line each: the name and what it does, nothing wrapped onto a second line.
                #expect(subcommands.allSatisfy { !$0.summary.isEmpty }, "\(help.output)")
                #expect(CLIHelp.continuationLines(in: help.output) == 0, "a command's line is wrapped: \(help.output)")
            }
            pending += subcommands.map { command + [$0.name] }
        }
        for expected in [
            "serve", "migrate", "user create", "user disable", "user reset-password", "user reset-two-step", "site create", "member add",
            "token create", "package verify",
            "backup create", "backup verify", "restore", "doctor", "storage sync", "storage check", "media optimize", "dem check",
            "map check",
        ] {
            #expect(leaves.contains(expected), "\(expected) is missing from the help: \(leaves)")
        }
        for command in leaves where !Self.withoutDataFolder.contains(command) {
            let help = try await CLI.run(command.split(separator: " ").map(String.init) + ["--help"], data: nil, root: nil)
            #expect(help.output.contains("--root") && help.output.contains("--data"), "\(command) does not take --root and --data")
            #expect(help.output.contains("TRAIL_ROOT") && help.output.contains("TRAIL_DATA"), "\(command) does not name TRAIL_ROOT/TRAIL_DATA")
        }
    }
}

/// Reads swift-argument-parser's help text.
enum CLIHelp {
    struct Entry {
        let name: String
        let summary: String
    }

    /// The SUBCOMMANDS section's entries: two spaces, the name (maybe "(default)"), then its one-line summary.
    static func subcommands(in help: String) -> [Entry] {
        section(in: help).compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1).map(String.init)
            let summary = (parts.count > 1 ? parts[1] : "").replacingOccurrences(of: "(default)", with: "").trimmingCharacters(in: .whitespaces)
            return Entry(name: parts[0], summary: summary)
        }
    }

    /// Lines of the SUBCOMMANDS section that continue the line before (indented deeper): wrapped summaries.
    static func continuationLines(in help: String) -> Int {
        section(in: help).filter { $0.hasPrefix("   ") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count
    }

    private static func section(in help: String) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "SUBCOMMANDS:") else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }
}

/// Finds and runs the built executable.
enum CLI {
    static var binary: URL { projectRoot.appendingPathComponent(".build/debug/trail-companion") }
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }

    struct Result {
        let status: Int32
        let output: String
        let errors: String
    }

    static func dataFolder() throws -> URL {
        TestScratch.folder("trail-cli")
    }

    static func open(_ data: URL) throws -> AppDatabase {
        try AppDatabase.openFile(
            at: data.appendingPathComponent("trail.sqlite").path,
            migrationsFolder: projectRoot.appendingPathComponent("migrations")
        )
    }

    /// Runs `trail-companion arguments --root <root> --data <data>` with a clean `TRAIL_…` environment, waiting for it on
    /// a Dispatch thread (see `offPool`).
    static func run(_ arguments: [String], data: URL?, root: URL? = projectRoot, environment: [String: String] = [:]) async throws -> Result {
        try await offPool { try runBlocking(arguments, data: data, root: root, environment: environment) }
    }

    private static func runBlocking(_ arguments: [String], data: URL?, root: URL?, environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments + (root.map { ["--root", $0.path] } ?? []) + (data.map { ["--data", $0.path] } ?? [])
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TRAIL_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot stall the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self)
        )
    }
}
