import Foundation

/// Where each kind of file lives in the data folder (docs/operators.md, "Data folder").
public struct DataPaths: Sendable {
    public let root: URL
    public init(root: URL) { self.root = root }

    public var uploads: URL { root.appendingPathComponent("uploads") }
    public var assets: URL { root.appendingPathComponent("assets") }
    public var quarantine: URL { root.appendingPathComponent("quarantine") }
    public var staging: URL { root.appendingPathComponent("staging") }
    public var packages: URL { root.appendingPathComponent("packages") }
    public var keys: URL { root.appendingPathComponent("keys") }

    public var signingKey: URL { keys.appendingPathComponent("signing.ed25519") }
    public func upload(_ id: String) -> URL { uploads.appendingPathComponent(id) }
    public func absolute(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}
