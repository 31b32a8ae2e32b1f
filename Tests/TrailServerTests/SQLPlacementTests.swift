import Foundation
import Testing

/// SQL lives in `*Database.swift` files only: each feature's named reads and writes (`MediaDatabase`,
/// `PublishingDatabase`, `OperationsDatabase`, …), and `MBTilesDatabase` for the tile archives. Everywhere else calls
/// them by name, so a reader finds every statement on a table in a few files, next to each other.
@Suite struct SQLPlacementTests {
    @Test("no SQL outside *Database.swift")
    func sqlOnlyInDatabaseFiles() throws {
        let sources = projectRoot.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var offenders: [String] = []
        var checked = 0
        for case let file as URL in walker where file.pathExtension == "swift" && !file.path.contains("/Generated/") {
            checked += 1
            guard !file.lastPathComponent.hasSuffix("Database.swift") else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for marker in ["sql:", "SQLRequest(", "SQLLiteral"] where text.contains(marker) {
                offenders.append("\(file.path.replacingOccurrences(of: sources.path + "/", with: "")) (\(marker))")
            }
        }
        #expect(checked > 100, "the walk found the sources")
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
