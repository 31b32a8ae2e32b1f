import Foundation
import Testing

@testable import TrailServer

/// Each setting is declared once (`Settings`, `App/Settings.swift`): its flag, variable, default and help. The operators'
/// guide's table, `serve --help`, `package update --help` and the server's own defaults are held to that declaration.
@Suite(.enabled(if: CLI.isBuilt, "build it first: swift build --product trail-companion (scripts/test.sh does)"))
struct SettingsTests {
    /// The rows of docs/operators.md's settings table: flag → (variable cell, default cell), backticks removed.
    static func guideRows() throws -> [String: (variable: String, defaultText: String)] {
        let guide = try String(contentsOf: projectRoot.appendingPathComponent("docs/operators.md"), encoding: .utf8)
        var rows: [String: (String, String)] = [:]
        for line in guide.split(separator: "\n") where line.hasPrefix("| `--") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
            guard cells.count >= 3 else { continue }
            rows[String(cells[0].dropFirst(2))] = (cells[1], cells[2])
        }
        return rows
    }

    /// Text with every run of spaces and line breaks made one space: `--help` wraps its lines.
    static func flattened(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }

    @Test func everySettingIsDeclaredOnceWithAFlagAVariableAndHelp() {
        let flags = Settings.all.map(\.flag)
        let variables = Settings.all.map(\.variable)
        #expect(Set(flags).count == flags.count, "a flag declared twice")
        #expect(Set(variables).count == variables.count, "a variable declared twice")
        for setting in Settings.all {
            #expect(setting.variable.hasPrefix("TRAIL_") || setting.variable.hasPrefix("AWS_"), "\(setting.flag)")
            #expect(!setting.about.isEmpty && !setting.about.hasSuffix("."), "\(setting.flag): the help says what it does, once")
            #expect(setting.help.contains(setting.variable), "\(setting.flag)")
        }
    }

    @Test func theOperatorsGuideListsEverySettingWithTheDeclaredVariableAndDefault() throws {
        let rows = try Self.guideRows()
        let declared = Settings.all.filter { $0.group != .client }
        #expect(Set(rows.keys) == Set(declared.map(\.flag)), "the guide's table and the declaration name the same flags")
        for setting in declared {
            let row = try #require(rows[setting.flag], "--\(setting.flag) has no row in docs/operators.md")
            #expect(row.variable == setting.variable + (setting.switchValue.map { "=\($0)" } ?? ""), "--\(setting.flag)")
            if setting.switchValue == nil {
                #expect(row.defaultText == (setting.defaultText ?? "—"), "--\(setting.flag): the guide's default")
            }
        }
    }

    @Test func serveHelpShowsEachSettingsDeclaredHelp() async throws {
        let serve = Self.flattened(try await CLI.run(["serve", "--help"], data: nil, root: nil).output)
        for setting in Settings.all where setting.group != .client {
            #expect(serve.contains("--\(setting.flag)"), "--\(setting.flag)")
            #expect(serve.contains(Self.flattened(setting.help)), "--\(setting.flag): \(setting.help)")
        }
        let update = Self.flattened(try await CLI.run(["package", "update", "--help"], data: nil, root: nil).output)
        #expect(update.contains(Self.flattened(Settings.clientState.help)))
    }

    @Test func theDeclaredDefaultsAreTheServersOwn() throws {
        let config = AppConfig()
        #expect(Settings.hostname.defaultText == config.hostname)
        #expect(Settings.port.defaultText == String(config.port))
        #expect(Settings.requiredApprovals.defaultText == String(config.defaultRequiredApprovals))
        #expect(Settings.tileCap.defaultText == String(config.tileCap))
        #expect(Settings.maxFrameArea.defaultText.flatMap(Double.init) == config.maxFrameAreaKm2)
        #expect(Settings.catalogLifetimeDays.defaultText.flatMap(Double.init).map { $0 * 86_400 } == config.catalogLifetime)
        #expect(Settings.mediaConversions.defaultText == String(config.mediaOptimization.concurrency))
        #expect(Settings.clamavDB.defaultText == config.clamavDatabaseFolders.joined(separator: ":"))
        #expect(Settings.requireTwoStep.defaultText == config.twoStepRequirement.rawValue)
        #expect(Settings.minFreeSpace.defaultText.flatMap(FreeSpace.parse) == config.minFreeSpace)
        #expect(Settings.importMaxSize.defaultText == "20 MiB" && config.importMaxSize == 20 * 1024 * 1024)
        #expect(Settings.maxUploadSize.defaultText == "2 GiB − 1 byte" && config.maxUploadSize == (1 << 31) - 1)
    }

    @Test func aVariableStandsInForItsFlagAndAWrongOneIsSaidAtStart() async throws {
        let data = try CLI.dataFolder()
        let refused = try await CLI.run(["doctor"], data: data, environment: ["TRAIL_PORT": "eighty"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("TRAIL_PORT=eighty is not a valid number"), "\(refused.errors)")
        let twoStep = try await CLI.run(["doctor"], data: data, environment: ["TRAIL_REQUIRE_TWO_STEP": "sometimes"])
        #expect(twoStep.errors.contains("--require-two-step must be one of none, admins, managers, all (not sometimes)"), "\(twoStep.errors)")
    }
}
