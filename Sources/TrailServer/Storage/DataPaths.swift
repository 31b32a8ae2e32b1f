import Foundation

/// Where each kind of file lives in the data folder (docs/operators.md, "Data folder").
package struct DataPaths: Sendable {
    let root: URL
    init(root: URL) { self.root = root }

    var uploads: URL { root.appendingPathComponent("uploads") }
    var assets: URL { root.appendingPathComponent("assets") }
    var quarantine: URL { root.appendingPathComponent("quarantine") }
    var staging: URL { root.appendingPathComponent("staging") }
    var packages: URL { root.appendingPathComponent("packages") }
    var keys: URL { root.appendingPathComponent("keys") }

    var signingKey: URL { keys.appendingPathComponent("signing.ed25519") }
    func upload(_ id: String) -> URL { uploads.appendingPathComponent(id) }
    func absolute(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}
