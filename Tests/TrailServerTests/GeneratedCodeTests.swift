import Crypto
import Foundation
import Testing

/// The wire types are generated from `openapi.json` once and committed (a fresh clone then builds without the
/// generator). The generated file records the hashes of its inputs; a change to either without running
/// `scripts/generate-openapi.sh` fails here.
struct GeneratedCodeTests {
    static let generated = projectRoot.appendingPathComponent("Sources/TrailAPI/Generated/Types.swift")

    @Test func theGeneratedWireTypesMatchTheDocumentAndTheConfiguration() throws {
        let header = try String(contentsOf: Self.generated, encoding: .utf8).split(separator: "\n").prefix(6).map(String.init)
        for (name, path) in [
            ("openapi.json", "openapi.json"),
            ("openapi-generator-config.yaml", "Sources/TrailAPI/openapi-generator-config.yaml"),
        ] {
            let bytes = try Data(contentsOf: projectRoot.appendingPathComponent(path))
            let hash = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            let recorded = header.first { $0.hasPrefix("// \(name) sha256 ") }.map { String($0.dropFirst("// \(name) sha256 ".count)) }
            #expect(recorded != nil, "Types.swift names no hash of \(name)")
            #expect(recorded == hash, "\(path) changed since Sources/TrailAPI/Generated/Types.swift was generated: run scripts/generate-openapi.sh")
        }
    }

    @Test func theBuildDoesNotRunTheGenerator() throws {
        let manifest = try String(contentsOf: projectRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(
            !manifest.contains("github.com/apple/swift-openapi-generator"),
            "a fresh build would compile the generator, OpenAPIKit and Yams again"
        )
    }
}
