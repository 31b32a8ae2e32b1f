import Foundation
import OpenMap
import Terrain
import TestSupport
import Testing

/// The drawn map from extracts written here as OSM XML and turned into `.osm.pbf` by osmium itself, so the index reads
/// what osmium writes, with features inside, across and outside the frame.
@Suite struct OpenMapTests {
    static let frame = Basemap.Frame(west: -122.20, south: 44.30, east: -122.10, north: 44.40)

    /// Features whose fate in `frame` is known: kept whole, cut at the edge, or left out.
    static let sample = OSMXML { osm in
        osm.node(1, -122.15, 44.35, ["natural": "peak", "name": "Eagle Peak", "ele": "1500"])
        osm.node(2, -122.50, 44.35, ["tourism": "viewpoint", "name": "Far View"])
        osm.node(3, -122.16, 44.36, ["amenity": "toilets"])
        osm.way(10, [(-122.18, 44.32), (-122.12, 44.33), (-122.05, 44.34)], ["highway": "footway", "name": "Lakeshore Trail"])
        osm.way(11, [(-122.19, 44.31), (-122.17, 44.39)], ["highway": "track", "name": "Forest Road 12"])
        osm.way(12, [(-122.15, 44.31), (-122.14, 44.32)], ["barrier": "fence"])
        osm.ring(13, [(-122.16, 44.37), (-122.14, 44.37), (-122.14, 44.38), (-122.16, 44.38)], ["natural": "water", "name": "Blue Lake"])
        osm.ring(14, [(-122.25, 44.31), (-122.18, 44.31), (-122.18, 44.33), (-122.25, 44.33)], ["landuse": "forest", "name": "Old Wood"])
        osm.ring(15, [(-122.131, 44.351), (-122.130, 44.351), (-122.130, 44.352), (-122.131, 44.352)], ["building": "yes"])
        osm.ring(
            16,
            [(-122.121, 44.321), (-122.120, 44.321), (-122.120, 44.322), (-122.121, 44.322)],
            ["amenity": "parking", "name": "Trailhead Parking"]
        )
        osm.way(17, [(-121.50, 45.00), (-121.40, 45.10)], ["highway": "primary", "name": "Distant Highway"])
        osm.ring(18, [(-122.19, 44.385), (-122.17, 44.385), (-122.17, 44.395), (-122.19, 44.395)], [:])
        osm.ring(19, [(-122.185, 44.388), (-122.18, 44.388), (-122.18, 44.392), (-122.185, 44.392)], [:])
        osm.multipolygon(30, outer: [18], inner: [19], ["type": "multipolygon", "natural": "water", "name": "Island Lake"])
        osm.way(20, [(-122.11, 44.31), (-122.111, 44.35)], ["waterway": "stream", "name": "Cold Creek"])
    }

    @Test func indexesOnceAndFindsPlaces() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extract = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let root = folder.url.appendingPathComponent("index")
        let (index, made) = try OSMIndexer.index(extract: extract.path, root: root)
        #expect(made)
        #expect(index.metadata.features == 12)
        let extent = try #require(index.metadata.extent)
        #expect(abs(extent.west - -122.50) < 1e-6 && abs(extent.north - 45.10) < 1e-6)
        // A second start finds the index and reads nothing of the extract.
        let (_, madeAgain) = try OSMIndexer.index(extract: extract.path, root: root)
        #expect(!madeAgain)
        #expect(folder.listing("index").filter { !$0.contains("/") } == [index.metadata.fingerprint])
        #expect(index.places(matching: "eagle").map(\.name) == ["Eagle Peak"])
        #expect(Set(index.places(matching: "LAKE").map(\.name)) == ["Blue Lake", "Island Lake", "Lakeshore Trail"])
        #expect(index.places(matching: "lake").first?.name == "Lakeshore Trail")
        #expect(index.places(matching: "nowhere at all").isEmpty)
    }

    @Test func clipsToTheFrameWithNamesAndClasses() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extract = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let (index, _) = try OSMIndexer.index(extract: extract.path, root: folder.url.appendingPathComponent("index"))
        let f = Self.frame
        let features = try index.features(west: f.west, south: f.south, east: f.east, north: f.north)
        let map = try #require(Basemap.make(frame: f, maxZoom: 16, features: features))
        let json = try Self.features(map.data)
        var byName: [String: [String: Any]] = [:]
        for feature in json { if let name = (feature["properties"] as? [String: Any])?["name"] as? String { byName[name] = feature } }
        #expect(
            Set(byName.keys) == [
                "Eagle Peak", "Lakeshore Trail", "Forest Road 12", "Blue Lake", "Old Wood", "Trailhead Parking", "Island Lake", "Cold Creek",
            ]
        )
        #expect(Self.property(byName["Lakeshore Trail"], "kind") == "path" && Self.property(byName["Lakeshore Trail"], "class") == "footway")
        #expect(Self.property(byName["Forest Road 12"], "kind") == "path" && Self.property(byName["Forest Road 12"], "class") == "track")
        #expect(Self.property(byName["Eagle Peak"], "kind") == "peak")
        #expect((byName["Eagle Peak"]?["properties"] as? [String: Any])?["elevation"] as? Int == 1500)
        #expect(Self.property(byName["Cold Creek"], "kind") == "stream")
        #expect(Self.geometryType(byName["Trailhead Parking"]) == "Point")
        #expect(Self.geometryType(byName["Blue Lake"]) == "Polygon")
        // The island stays a hole of its lake.
        let island = try #require((byName["Island Lake"]?["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])
        #expect(island.count == 2)
        // Cut at the frame's east edge: the trail ends on it, and the wood begins at the west edge.
        let trail = try #require((byName["Lakeshore Trail"]?["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
        #expect(abs(trail.last![0] - f.east) < 1e-5)
        let wood = try #require((byName["Old Wood"]?["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])
        #expect(abs(wood[0].map { $0[0] }.min()! - f.west) < 1e-5)
        // Nothing outside the frame; no fence; the unnamed toilets and building are there by kind.
        for position in json.flatMap({ Self.positions($0["geometry"]) }) {
            #expect(position[0] >= f.west - 1e-9 && position[0] <= f.east + 1e-9 && position[1] >= f.south - 1e-9 && position[1] <= f.north + 1e-9)
        }
        let kinds = json.compactMap { ($0["properties"] as? [String: Any])?["kind"] as? String }
        #expect(kinds.filter { $0 == "building" }.count == 1 && kinds.filter { $0 == "toilets" }.count == 1)
        #expect(!kinds.contains("barrier") && kinds.count == 10)
        #expect(Set(map.layers) == Set(kinds) && map.leftOut.isEmpty)
        #expect(map.attribution == "© OpenStreetMap contributors")
        #expect((try JSONSerialization.jsonObject(with: map.data) as? [String: Any])?["attribution"] as? String == map.attribution)
        // Areas first, points last, as the player draws them.
        #expect(kinds.first == "wood" && kinds.last == "peak")
    }

    @Test func staysUnderTheSizeLimit() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extract = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let (index, _) = try OSMIndexer.index(extract: extract.path, root: folder.url.appendingPathComponent("index"))
        let f = Self.frame
        let features = try index.features(west: f.west, south: f.south, east: f.east, north: f.north)
        let whole = try #require(Basemap.make(frame: f, maxZoom: 16, features: features))
        let limit = whole.data.count - 10
        let smaller = try #require(Basemap.make(frame: f, maxZoom: 16, features: features, sizeLimit: limit))
        #expect(smaller.data.count <= limit)
        #expect(smaller.leftOut.first == "buildings")
        #expect(!smaller.layers.contains("building") && smaller.layers.contains("peak"))
        _ = try Self.features(smaller.data)
        // A limit far below anything: the most important features that fit, still valid GeoJSON.
        let tiny = try #require(Basemap.make(frame: f, maxZoom: 16, features: features, sizeLimit: 400))
        #expect(tiny.data.count <= 400)
        #expect(try Self.features(tiny.data).count >= 1)
    }

    @Test func anExtractFarFromTheFrameDrawsNothing() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extract = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let (index, _) = try OSMIndexer.index(extract: extract.path, root: folder.url.appendingPathComponent("index"))
        #expect(!index.covers(west: 10, south: 45, east: 10.1, north: 45.1))
        #expect(index.covers(west: Self.frame.west, south: Self.frame.south, east: Self.frame.east, north: Self.frame.north))
        let features = try index.features(west: 10, south: 45, east: 10.1, north: 45.1)
        #expect(features.isEmpty)
        #expect(Basemap.make(frame: .init(west: 10, south: 45, east: 10.1, north: 45.1), maxZoom: 16, features: features) == nil)
    }

    @Test func aCorruptOrTruncatedExtractIsRefusedAndLeavesNothing() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let good = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let bytes = try Data(contentsOf: good)
        let cases: [(String, Data)] = [
            ("garbage.osm.pbf", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) })),
            ("truncated.osm.pbf", bytes.prefix(bytes.count * 2 / 3)),
            ("broken.osm", Data("<osm version=\"0.6\"><node id=\"1\" lat=\"44\" lon=".utf8)),
        ]
        for (name, content) in cases {
            let file = folder.file(name)
            try content.write(to: file)
            let root = folder.url.appendingPathComponent("index-\(name)")
            let error = #expect(throws: OpenMapError.self) { try OSMIndexer.index(extract: file.path, root: root) }
            #expect(error?.description.contains("cannot be read") == true, "\(name): \(error?.description ?? "")")
            #expect(folder.listing("index-\(name)").isEmpty, "\(name) left \(folder.listing("index-\(name)"))")
        }
        let notAnExtract = folder.file("map.txt")
        try Data("x".utf8).write(to: notAnExtract)
        #expect(throws: OpenMapError.self) { try OSMIndexer.index(extract: notAnExtract.path, root: folder.url.appendingPathComponent("i")) }
        #expect(throws: OpenMapError.self) {
            try OSMIndexer.index(extract: folder.file("missing.osm.pbf").path, root: folder.url.appendingPathComponent("i"))
        }
    }

    @Test func anExtractTooLargeForTheDiskIsRefusedBeforeReading() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extract = try await Self.sample.pbf(to: folder.file("extract.osm.pbf"))
        let root = folder.url.appendingPathComponent("index")
        let error = #expect(throws: OpenMapError.self) { try OSMIndexer.index(extract: extract.path, root: root, freeBytes: { _ in 1 << 20 }) }
        #expect(error?.description.contains("too large for the disk") == true)
        #expect(folder.listing("index").isEmpty)
    }

    @Test("an extract out of order (relations first, nodes backwards) is read whole; a multipolygon missing a way is left out")
    func unsortedExtractsAndIncompleteMultipolygons() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        func node(_ id: Int, _ longitude: Double, _ latitude: Double) -> String {
            #" <node id="\#(id)" version="1" lat="\#(latitude)" lon="\#(longitude)"/>"#
        }
        func way(_ id: Int, _ refs: [Int], _ tags: String = "") -> String {
            #" <way id="\#(id)" version="1">\#(refs.map { #"<nd ref="\#($0)"/>"# }.joined())\#(tags)</way>"#
        }
        let lake = #"<tag k="type" v="multipolygon"/><tag k="natural" v="water"/><tag k="name" v="Island Lake"/>"#
        let wood = #"<tag k="type" v="multipolygon"/><tag k="natural" v="wood"/><tag k="name" v="Half Wood"/>"#
        let lines = [
            // Way 99 is not in the file: "Half Wood" cannot be closed and is left out, as osmium's own tools do.
            #" <relation id="2" version="1"><member type="way" ref="11" role="outer"/><member type="way" ref="99" role="outer"/>\#(wood)</relation>"#,
            #" <relation id="1" version="1"><member type="way" ref="11" role="outer"/><member type="way" ref="12" role="inner"/>\#(lake)</relation>"#,
            node(9, -122.185, 44.392), node(8, -122.18, 44.392), node(7, -122.18, 44.388), node(6, -122.185, 44.388),
            node(5, -122.19, 44.395), node(4, -122.17, 44.395), node(3, -122.17, 44.385), node(2, -122.19, 44.385),
            node(21, -122.16, 44.36), node(20, -122.15, 44.37), node(1, -122.14, 44.34),
            way(13, [21, 20, 1], #"<tag k="highway" v="path"/><tag k="name" v="Back Trail"/>"#),
            way(11, [2, 3, 4, 5, 2]), way(12, [6, 7, 8, 9, 6]),
        ]
        let extract = folder.file("unsorted.osm")
        try Data(("<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\">\n" + lines.joined(separator: "\n") + "\n</osm>\n").utf8)
            .write(to: extract)
        let (index, _) = try OSMIndexer.index(extract: extract.path, root: folder.url.appendingPathComponent("index"))
        let f = Self.frame
        let map = try #require(
            Basemap.make(frame: f, maxZoom: 16, features: try index.features(west: f.west, south: f.south, east: f.east, north: f.north))
        )
        var byName: [String: [String: Any]] = [:]
        for feature in try Self.features(map.data) {
            if let name = (feature["properties"] as? [String: Any])?["name"] as? String { byName[name] = feature }
        }
        #expect(Set(byName.keys) == ["Island Lake", "Back Trail"])
        let island = try #require((byName["Island Lake"]?["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])
        #expect(island.count == 2)
        let trail = try #require((byName["Back Trail"]?["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
        #expect(trail.count == 3 && abs(trail[0][0] - -122.16) < 1e-5 && abs(trail[2][1] - 44.34) < 1e-5)
    }

    @Test func aFolderOfExtractsIsReadWhole() async throws {
        let folder = try TemporaryFolder("osm")
        defer { folder.remove() }
        let extracts = try folder.subfolder("extracts")
        try await Self.sample.pbf(to: extracts.appendingPathComponent("a.osm.pbf"))
        let east = OSMXML { osm in osm.node(900, -122.12, 44.39, ["tourism": "viewpoint", "name": "Raven Point"]) }
        try await east.pbf(to: extracts.appendingPathComponent("b.osm.pbf"))
        let (index, _) = try OSMIndexer.index(extract: extracts.path, root: folder.url.appendingPathComponent("index"))
        #expect(index.metadata.files == ["a.osm.pbf", "b.osm.pbf"])
        #expect(index.places(matching: "raven").count == 1 && index.places(matching: "eagle").count == 1)
    }

    // MARK: Contours

    @Test func contourIntervalFollowsTheRelief() {
        #expect(TerrainModel.contourInterval(relief: 50) == 10)
        #expect(TerrainModel.contourInterval(relief: 400) == 10)
        #expect(TerrainModel.contourInterval(relief: 401) == 20)
        #expect(TerrainModel.contourInterval(relief: 800) == 20)
        #expect(TerrainModel.contourInterval(relief: 801) == 50)
    }

    @Test func contoursAreMultiplesOfTheIntervalInTheModelsRange() async throws {
        let folder = try TemporaryFolder("dem")
        defer { folder.remove() }
        // A round hill: 1,300 m at the middle of the frame, falling 3 m for every 0.001° to about 1,000 m at the edge.
        let model = try await Self.hill(in: folder)
        let f = Self.frame
        let set = try #require(try model.contours(west: f.west, south: f.south, east: f.east, north: f.north))
        #expect(set.interval == 10)
        #expect(set.lowest >= 1000 - 1 && set.highest <= 1300 + 1)
        #expect(set.lines.count > 10)
        for line in set.lines {
            #expect(line.elevation.truncatingRemainder(dividingBy: Double(set.interval)) == 0)
            #expect(line.elevation >= set.lowest && line.elevation <= set.highest)
            #expect(line.isIndex == (Int(line.elevation) % set.indexInterval == 0))
        }
        #expect(set.lines.contains(where: \.isIndex) && set.lines.contains(where: { !$0.isIndex }))
        // Drawn into the basemap: kind contour, the elevation, index lines marked.
        let lines = ContourLines(interval: set.interval, lines: set.lines.map { ($0.elevation, $0.isIndex, $0.points) })
        let map = try #require(Basemap.make(frame: f, maxZoom: 16, features: [], contours: lines))
        let features = try Self.features(map.data)
        #expect(features.count > 10 && map.layers == ["contour"] && map.contourInterval == 10)
        #expect(map.attribution == "Contour lines from the agency's terrain model", "no OpenStreetMap data, no OpenStreetMap credit")
        for feature in features {
            let properties = try #require(feature["properties"] as? [String: Any])
            let elevation = try #require(properties["elevation"] as? Int)
            #expect(elevation % 10 == 0 && properties["index"] as? Bool == (elevation % 50 == 0))
        }
        // Off the model: nothing to trace.
        #expect(try model.contours(west: 10, south: 45, east: 10.1, north: 45.1) == nil)
    }

    // MARK: Helpers

    static func hill(in folder: TemporaryFolder) async throws -> TerrainModel {
        let cell = 1.0 / 1200
        let (columns, rows) = (150, 150)
        let (west, south) = (-122.21, 44.29)
        var grid = "ncols \(columns)\nnrows \(rows)\nxllcorner \(west)\nyllcorner \(south)\ncellsize \(cell)\nNODATA_value -9999\n"
        for row in 0..<rows {
            let latitude = south + (Double(rows - row) - 0.5) * cell
            let line = (0..<columns).map { column -> String in
                let longitude = west + (Double(column) + 0.5) * cell
                let distance = hypot(longitude + 122.15, latitude - 44.35)
                return String(format: "%.2f", max(1300 - 3000 * distance, 1000))
            }
            grid += line.joined(separator: " ") + "\n"
        }
        let ascii = folder.file("hill.asc")
        try Data(grid.utf8).write(to: ascii)
        let tif = folder.file("hill.tif")
        let output = try await ChildProcess.run("gdal_translate", ["-q", "-a_srs", "EPSG:4326", ascii.path, tif.path])
        #expect(output.status == 0, "gdal_translate: \(output.stderr)")
        return try TerrainModel(path: tif.path)
    }

    static func features(_ data: Data) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["type"] as? String == "FeatureCollection")
        return try #require(object["features"] as? [[String: Any]])
    }

    static func property(_ feature: [String: Any]?, _ key: String) -> String? {
        (feature?["properties"] as? [String: Any])?[key] as? String
    }

    static func geometryType(_ feature: [String: Any]?) -> String? {
        (feature?["geometry"] as? [String: Any])?["type"] as? String
    }

    /// Every position of a GeoJSON geometry, whatever its nesting.
    static func positions(_ geometry: Any?) -> [[Double]] {
        func walk(_ value: Any) -> [[Double]] {
            if let position = value as? [Double] { return [position] }
            if let list = value as? [Any] { return list.flatMap(walk) }
            return []
        }
        return walk((geometry as? [String: Any])?["coordinates"] ?? [])
    }
}
