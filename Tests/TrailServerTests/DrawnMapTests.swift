import Foundation
import OpenMap
import PackageFormat
import Terrain
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

/// The drawn map through the whole server: `--osm-extract` indexed at start, `map/basemap.geojson` in the released
/// package (listed, verified by the CLI and TrailClient, read back by Python's zipfile), and the bad cases.
@Suite struct DrawnMapTests {
    /// Around the seed tour's frame (N 44.43, S 44.36, E −121.97, W −122.28): a peak, a trail crossing the frame's
    /// west edge, a lake, and a road outside.
    static let ridge = OSMXML { osm in
        osm.node(1, -122.10, 44.40, ["natural": "peak", "name": "Ridge Top", "ele": "1400"])
        osm.way(10, [(-122.35, 44.39), (-122.20, 44.395), (-122.05, 44.40)], ["highway": "path", "name": "Ridge Trail"])
        osm.ring(11, [(-122.02, 44.39), (-121.99, 44.39), (-121.99, 44.41), (-122.02, 44.41)], ["natural": "water", "name": "Fish Lake"])
        osm.way(12, [(-121.50, 44.90), (-121.40, 44.95)], ["highway": "secondary", "name": "Far Road"])
    }

    /// An extract of somewhere else entirely (the Alps).
    static let elsewhere = OSMXML { osm in
        osm.node(1, 7.65, 45.97, ["natural": "peak", "name": "Matterhorn", "ele": "4478"])
    }

    static func env(extract: OSMXML?, badExtract: Data? = nil, terrain: TerrainSource = TerrainSource()) async throws -> TestEnv {
        let scratch = TestScratch.folder("trail-osm")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var path: String?
        if let extract {
            path = try await extract.pbf(to: scratch.appendingPathComponent("region.osm.pbf")).path
        } else if let badExtract {
            let file = scratch.appendingPathComponent("region.osm.pbf")
            try badExtract.write(to: file)
            path = file.path
        }
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: terrain) { $0.osmExtractPath = path }
        await env.app.dependencies.openMap.prepare()
        return env
    }

    static func release(_ env: TestEnv) async throws -> ReleasedPackage {
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        return try #require(box.released)
    }

    static func basemap(in zip: URL) async throws -> [[String: Any]]? {
        let listing = try await expectPackageMatchesManifest(zip)
        guard listing.entries.contains(where: { $0.name == PackageLayout.basemapPath }) else { return nil }
        let unzipped = try await ChildProcess.run("unzip", ["-p", zip.path, PackageLayout.basemapPath])
        #expect(unzipped.status == 0, "unzip -p: \(unzipped.stderr)")
        let bytes = Data(unzipped.stdout.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        return object["features"] as? [[String: Any]]
    }

    static func names(_ features: [[String: Any]]) -> Set<String> {
        Set(features.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String })
    }

    @Test("an extract and a model: the package carries the drawn map, listed, credited, verified by the CLI and TrailClient")
    func packageCarriesTheMap() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await Self.env(extract: Self.ridge, terrain: TerrainSource(model: try TerrainModel(path: dem.path)))
        guard case .ready(let index) = env.app.dependencies.openMap.indexState else {
            Issue.record("the extract was not indexed: \(env.app.dependencies.openMap.indexState)")
            return
        }
        #expect(index.metadata.features == 4)
        let released = try await Self.release(env)
        let features = try #require(try await Self.basemap(in: released.zip))
        #expect(Self.names(features) == ["Ridge Top", "Ridge Trail", "Fish Lake"])
        let contours = features.filter { ($0["properties"] as? [String: Any])?["kind"] as? String == "contour" }
        #expect(contours.count > 5, "the terrain model's contours are drawn")
        try await env.app.application.testLive { client in
            let trail = TrailClient(baseURL: URL(string: "http://localhost:\(try #require(client.port))")!)
            let manifest = try await trail.package(id: released.packageId).manifest
            let basemap = try #require(manifest.basemap)
            #expect(basemap.path == "map/basemap.geojson" && basemap.attribution == "© OpenStreetMap contributors")
            #expect(Set(basemap.layers) == ["peak", "path", "water", "contour"])
            let file = env.folder.appendingPathComponent("downloaded.zip")
            _ = try await trail.downloadPackage(id: released.packageId, to: file)
            func verify(_ zip: URL) async throws -> ChildProcess.Output {
                try await ChildProcess.run(CLI.binary.path, ["package", "verify", zip.path, "--key", env.publicKey], timeout: .seconds(60))
            }
            let verified = try await verify(file)
            #expect(verified.status == 0 && verified.stdout.contains("Result: VALID"), "\(verified.stdout) \(verified.stderr)")
            // The verifier checks the map like every listed file: one byte changed in it fails the package.
            let tampered = env.folder.appendingPathComponent("tampered.zip")
            try ZipTamper.flipByte(of: file, at: try ZipTamper.dataOffset(in: file, entrySuffix: "basemap.geojson") + 20, to: tampered)
            let refused = try await verify(tampered)
            #expect(refused.status != 0 && refused.stdout.contains("map/basemap.geojson"), "\(refused.stdout) \(refused.stderr)")
        }
    }

    @Test("neither extract nor model: no drawn map in the package")
    func noOpenData() async throws {
        let env = try await Self.env(extract: nil)
        guard case .off = env.app.dependencies.openMap.indexState else {
            Issue.record("no extract should leave the map off")
            return
        }
        let released = try await Self.release(env)
        #expect(try await Self.basemap(in: released.zip) == nil)
    }

    @Test("a corrupt extract: said at start, the build goes on with the model's contours alone")
    func corruptExtract() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await Self.env(
            extract: nil,
            badExtract: Data(repeating: 0x5a, count: 10_000),
            terrain: TerrainSource(model: try TerrainModel(path: dem.path))
        )
        guard case .failed(let reason) = env.app.dependencies.openMap.indexState else {
            Issue.record("a corrupt extract must fail its indexing: \(env.app.dependencies.openMap.indexState)")
            return
        }
        #expect(reason.contains("cannot be read"), "\(reason)")
        #expect(FileManager.default.contentsOfDirectoryOrEmpty(env.config.osmIndexFolder).isEmpty, "no half-written index stays")
        let released = try await Self.release(env)
        let features = try #require(try await Self.basemap(in: released.zip))
        #expect(Self.names(features).isEmpty && !features.isEmpty, "contours only")
    }

    @Test("an extract far from the frame: no features from it, and the reason is given")
    func extractFarAway() async throws {
        let env = try await Self.env(extract: Self.elsewhere)
        let frame = Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28)
        guard case .nothing(let reason) = await env.app.dependencies.openMap.basemap(frame: frame, maxZoom: 15) else {
            Issue.record("an extract of the Alps draws nothing in Oregon")
            return
        }
        #expect(reason.contains("does not cover this tour's frame"), "\(reason)")
        let released = try await Self.release(env)
        #expect(try await Self.basemap(in: released.zip) == nil)
    }

    @Test("a terrain model that cannot be read: no contours, and the reason is given")
    func unreadableModel() async throws {
        let scratch = TestScratch.folder("trail-bad-dem")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let file = scratch.appendingPathComponent("dem.tif")
        try Data("not a raster".utf8).write(to: file)
        let source = TerrainSource.open(path: file.path)
        let map = OpenDataMap(extractPath: nil, indexRoot: scratch.appendingPathComponent("osm"), terrain: source)
        guard case .nothing(let reason) = await map.basemap(frame: Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28), maxZoom: 15)
        else {
            Issue.record("an unreadable model draws nothing")
            return
        }
        #expect(reason.contains("The terrain model (--dem) cannot be used"), "\(reason)")
    }
}

extension FileManager {
    func contentsOfDirectoryOrEmpty(_ url: URL) -> [String] { (try? contentsOfDirectory(atPath: url.path)) ?? [] }
}
