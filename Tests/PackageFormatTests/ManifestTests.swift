import Foundation
import PackageFormat
import Testing

@Suite("Manifest and GeoJSON")
struct ManifestTests {
    static func minimalManifest() -> Manifest {
        Manifest(
            packageId: "p1",
            version: 1,
            createdAt: "2026-11-22T10:00:00Z",
            packageName: "Loop",
            park: "Park",
            mapName: "loop",
            bounds: .init(north: 44.43, south: 44.36, east: -122.0, west: -122.2),
            description: "d",
            waypoints: [
                .init(
                    name: "Start",
                    order: 1,
                    coordinates: .init(latitude: 44.4, longitude: -122.1),
                    description: "",
                    assets: [
                        .init(
                            type: .image,
                            path: "waypoints/01-start/a.jpg",
                            mimeType: "image/jpeg",
                            size: 3,
                            sha256: String(repeating: "ab", count: 32)
                        )
                    ]
                )
            ]
        )
    }

    @Test func encodingHasExactlyTheDesignKeysAndOmitsNils() throws {
        let data = try Self.minimalManifest().encoded()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "formatVersion", "packageId", "version", "createdAt", "packageName", "park",
                "mapName", "bounds", "description", "waypoints",
            ]
        )
        let bounds = try #require(object["bounds"] as? [String: Any])
        #expect(Set(bounds.keys) == ["northWest", "southEast"])
        #expect(Set((bounds["northWest"] as? [String: Any] ?? [:]).keys) == ["latitude", "longitude"])
        let waypoint = try #require((object["waypoints"] as? [[String: Any]])?.first)
        #expect(Set(waypoint.keys) == ["name", "order", "coordinates", "description", "assets"])
        let asset = try #require((waypoint["assets"] as? [[String: Any]])?.first)
        #expect(Set(asset.keys) == ["type", "path", "mimeType", "size", "sha256"])
        #expect(object["formatVersion"] as? Int == 1)
    }

    @Test func encodingIsDeterministicSortedAndDoesNotEscapeSlashes() throws {
        let fixture = try TourFixture.make()
        defer { fixture.folder.remove() }
        let first = try fixture.manifest.encoded()
        let second = try Manifest.decode(first).encoded()
        #expect(first == second)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.contains("\"path\":\"waypoints/01-fish-lake/intro.mp4\""))
        #expect(!text.contains("\\/"))
        #expect(!text.contains("\n"))
        #expect(text.hasPrefix("{\"bounds\":"), "keys are sorted")
        // Optional additions are present when set.
        #expect(text.contains("\"route\":[[-122,44.4],[-122.1,44.41],[-122.15,44.38]]"))
        #expect(text.contains("\"estimatedDurationMinutes\":95"))
        #expect(text.contains("\"tiles\":{"))
        #expect(try Manifest.decode(first) == fixture.manifest)
    }

    @Test func decodingIgnoresUnknownKeys() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: Self.minimalManifest().encoded()) as? [String: Any])
        object["someFutureKey"] = ["x": 1]
        let manifest = try Manifest.decode(try JSONSerialization.data(withJSONObject: object))
        #expect(manifest == Self.minimalManifest())
    }

    @Test func timestamps() {
        #expect(Manifest.timestamp(Date(timeIntervalSince1970: 1_795_341_600)) == "2026-11-22T10:00:00Z")
        #expect(Manifest.parseTimestamp("2026-11-22T10:00:00Z") == Date(timeIntervalSince1970: 1_795_341_600))
        for bad in ["2026-11-22 10:00:00Z", "2026-11-22T10:00:00+01:00", "2026-02-31T10:00:00Z", "2026-11-22T10:00:00.5Z", ""] {
            #expect(Manifest.parseTimestamp(bad) == nil, "\(bad)")
        }
    }

    @Test func validManifestHasNoProblems() throws {
        let fixture = try TourFixture.make()
        defer { fixture.folder.remove() }
        #expect(fixture.manifest.validate() == [])
        #expect(Self.minimalManifest().validate() == [])
    }

    @Test func validationCatchesBrokenManifests() {
        func problems(_ change: (inout Manifest) -> Void) -> [String] {
            var manifest = Self.minimalManifest()
            change(&manifest)
            return manifest.validate()
        }
        #expect(!problems { $0.formatVersion = 2 }.isEmpty)
        #expect(!problems { $0.createdAt = "yesterday" }.isEmpty)
        #expect(!problems { $0.waypoints[0].assets[0].path = "waypoints/../../etc/passwd" }.isEmpty)
        #expect(!problems { $0.waypoints[0].assets[0].path = "manifest.json" }.isEmpty)
        #expect(!problems { $0.waypoints[0].assets[0].sha256 = String(repeating: "AB", count: 32) }.isEmpty)
        #expect(!problems { $0.waypoints[0].assets[0].size = -1 }.isEmpty)
        #expect(!problems { $0.waypoints[0].assets[0].type = .init("hologram") }.isEmpty)
        #expect(!problems { $0.waypoints[0].coordinates.latitude = 45 }.isEmpty, "outside the bounds")
        #expect(!problems { $0.waypoints[0].coordinates.longitude = .nan }.isEmpty)
        #expect(!problems { $0.waypoints.append($0.waypoints[0]) }.isEmpty, "duplicate name, order and path")
        #expect(!problems { $0.waypoints = [] }.isEmpty)
        #expect(!problems { $0.bounds = .init(north: 44, south: 45, east: -122, west: -123) }.isEmpty)
        #expect(
            !problems {
                $0.tiles = .init(
                    path: "tiles/other.mbtiles",
                    format: "png",
                    minZoom: 10,
                    maxZoom: 16,
                    tileCount: 1,
                    sha256: String(repeating: "0", count: 64)
                )
            }.isEmpty
        )
        #expect(!problems { $0.route = [.init(longitude: -122, latitude: 44.4)] }.isEmpty)
    }

    @Test func antimeridianBoundsContainPointsAcrossIt() {
        let bounds = Manifest.Bounds(north: 52, south: 51, east: -179, west: 179)
        #expect(bounds.crossesAntimeridian)
        #expect(bounds.contains(.init(latitude: 51.5, longitude: 179.5)))
        #expect(bounds.contains(.init(latitude: 51.5, longitude: -179.5)))
        #expect(!bounds.contains(.init(latitude: 51.5, longitude: 0)))
    }

    // MARK: GeoJSON

    @Test func geoJSONIsAFeatureCollection() throws {
        let fixture = try TourFixture.make()
        defer { fixture.folder.remove() }
        let data = try TourGeoJSON.make(manifest: fixture.manifest)
        #expect(try TourGeoJSON.make(manifest: fixture.manifest) == data, "deterministic")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(root["type"] as? String == "FeatureCollection")
        #expect((root["bbox"] as? [Double]) == [-122.2, 44.36, -122.0, 44.43])
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == 3 + 1 + 1)

        let points = features.filter { ($0["geometry"] as? [String: Any])?["type"] as? String == "Point" }
        #expect(points.count == 3)
        let first = try #require(points.first)
        #expect((first["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [-122.0, 44.4], "[lon, lat]")
        let properties = try #require(first["properties"] as? [String: Any])
        #expect(properties["name"] as? String == "Fish Lake")
        #expect(properties["order"] as? Int == 1)
        #expect(properties["assetCount"] as? Int == 2)
        #expect(properties["description"] as? String == fixture.manifest.waypoints[0].description)

        let frame = try #require(features.first { ($0["properties"] as? [String: Any])?["kind"] as? String == "frame" })
        let geometry = try #require(frame["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "Polygon")
        let ring = try #require((geometry["coordinates"] as? [[[Double]]])?.first)
        #expect(ring.count == 5 && ring.first == ring.last, "closed ring")
        // Counter-clockwise (RFC 7946 right-hand rule): positive signed area.
        let area = zip(ring, ring.dropFirst()).reduce(0.0) { $0 + ($1.0[0] * $1.1[1] - $1.1[0] * $1.0[1]) }
        #expect(area > 0)

        let route = try #require(features.first { ($0["properties"] as? [String: Any])?["kind"] as? String == "route" })
        #expect((route["geometry"] as? [String: Any])?["type"] as? String == "LineString")
        #expect(((route["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])?.count == 3)
    }

    @Test func geoJSONNumbersHaveAtMostSevenDecimalsAndNoExponent() throws {
        var manifest = Self.minimalManifest()
        manifest.waypoints[0].coordinates = .init(latitude: 44.41234567891, longitude: -122.000000049)
        manifest.waypoints[0].description = "line\nbreak \"q\" / \u{1}"
        let text = String(decoding: try TourGeoJSON.make(manifest: manifest), as: UTF8.self)
        #expect(text.contains("\"coordinates\":[-122,44.4123457]"))
        #expect(!text.contains("e-"), "no exponent notation")
        #expect(text.contains("\"description\":\"line\\nbreak \\\"q\\\" / \\u0001\""))
        // Any number in the output has at most 7 decimals.
        let decimals = text.split(whereSeparator: { !"0123456789.".contains($0) })
            .compactMap { $0.split(separator: ".").dropFirst().first?.count }
        #expect(decimals.allSatisfy { $0 <= 7 })
        #expect(decimals.contains(7))
    }

    @Test func geoJSONWithoutRouteHasNoLineString() throws {
        let text = String(decoding: try TourGeoJSON.make(manifest: Self.minimalManifest()), as: UTF8.self)
        #expect(!text.contains("LineString"))
        #expect(text.contains("\"kind\":\"frame\""))
    }
}
