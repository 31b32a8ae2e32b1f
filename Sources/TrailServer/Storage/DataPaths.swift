import Foundation

/// Where each kind of file lives in the data folder (docs/operators.md, "Data folder").
package struct DataPaths: Sendable {
    package let root: URL
    package init(root: URL) { self.root = root }

    package var uploads: URL { root.appendingPathComponent("uploads") }
    package var assets: URL { root.appendingPathComponent("assets") }
    package var quarantine: URL { root.appendingPathComponent("quarantine") }
    package var staging: URL { root.appendingPathComponent("staging") }
    package var packages: URL { root.appendingPathComponent("packages") }
    package var keys: URL { root.appendingPathComponent("keys") }

    package var signingKey: URL { keys.appendingPathComponent("signing.ed25519") }
    package func upload(_ id: String) -> URL { uploads.appendingPathComponent(id) }
    package func absolute(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}
