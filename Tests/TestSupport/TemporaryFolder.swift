import Foundation

/// A fresh folder under the system temporary folder, removed by `remove()`.
public struct TemporaryFolder: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "trail") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("trail-\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// A folder inside, created.
    public func subfolder(_ name: String) throws -> URL {
        let folder = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Every file and folder below (or below `sub`), relative, sorted.
    public func listing(_ sub: String = "") -> [String] {
        let base = sub.isEmpty ? url : url.appendingPathComponent(sub)
        guard let enumerator = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return (enumerator.allObjects as? [String] ?? []).sorted()
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
