import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import TestSupport
import Testing
import TourFormats
import ZIPFoundation

@testable import TrailServer

/// KML, KMZ and CSV imports: files written by GDAL and in Google Earth's style, pictures from a KMZ, the round trip
/// through the GeoJSON export, and hostile or broken files that must change nothing.
@Suite(.scratch) struct TourImportFormatsTests {
    /// What an import may change: compared before and after a refused one.
    struct Saved: Equatable {
        let waypoints: [String]
        let route: Int
        let frame: Frame?
        let assets: Int
    }

    static func saved(_ database: AppDatabase, tourId: Int64) async throws -> Saved {
        let waypoints = try await database.waypoints(tourId: tourId)
        let tour = try #require(try await database.tour(id: tourId))
        var assets = 0
        for waypoint in waypoints { assets += try await database.assets(waypointId: waypoint.id).count }
        return Saved(
            waypoints: waypoints.map { "\($0.name) \($0.latitude) \($0.longitude) \($0.description)" },
            route: tour.route?.points.count ?? 0,
            frame: tour.frame,
            assets: assets
        )
    }

    static func scratch(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trail-import-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name)
    }

    /// A zip written by ZIPFoundation, entries in the order given.
    static func kmz(_ entries: [(String, Data)]) throws -> Data {
        let url = try scratch("made.kmz")
        let archive = try Archive(url: url, accessMode: .create)
        for (path, data) in entries {
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return try Data(contentsOf: url)
    }

    static func plan(_ response: TestResponse) throws -> [String: Any] {
        try #require((response.json as? [String: Any])?["plan"] as? [String: Any], "\(response.status) \(response.text.prefix(400))")
    }

    // MARK: GDAL

    static let sourceGeoJSON = #"""
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-122.1234567,44.4012345]},"properties":{"name":"Lava, \"Flow\" Overlook","description":"Line one\nline two"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-122.05,44.39]},"properties":{"name":"Fish Lake North","description":"Plain; with a semicolon"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-121.99,44.42]},"properties":{"name":"Café Spring","description":""}}
        ]}
        """#
    static let sourceLine = [[-122.2, 44.37], [-122.1, 44.41], [-122.0, 44.40]]

    /// A *change* row of the preview says what changes, in words; an unchanged point has none.
    @Test func changeRowsSayWhatChanges() {
        let now = Date()
        let waypoint = Waypoint(
            id: 1,
            tourId: 1,
            name: "Fish Lake",
            position: 1,
            latitude: 44.4,
            longitude: -122.0,
            description: "Old.",
            createdAt: now,
            updatedAt: now,
            triggerRadiusMeters: 30,
            localized: ["es": LocalizedText(name: "Lago", description: "")]
        )
        func point(
            latitude: Double = 44.4,
            description: String = "Old.",
            radius: Int? = nil,
            localized: [String: ImportedTour.Text] = [:]
        ) -> ImportedTour.Point {
            ImportedTour.Point(
                name: "fish lake",
                description: description,
                latitude: latitude,
                longitude: -122.0,
                triggerRadiusMeters: radius,
                localized: localized
            )
        }
        #expect(TourImport.changes(from: waypoint, to: point(), languages: ["es"]) == [])
        #expect(TourImport.changes(from: waypoint, to: point(description: ""), languages: ["es"]) == [], "an empty description keeps the old one")
        #expect(TourImport.changes(from: waypoint, to: point(latitude: 44.41), languages: ["es"]) == ["moves 1,112 m"])
        #expect(
            TourImport.changes(
                from: waypoint,
                to: point(
                    description: "New.",
                    radius: 50,
                    localized: ["es": ImportedTour.Text(name: "Lago Pez", description: ""), "fr": ImportedTour.Text(name: "Lac")]
                ),
                languages: ["es"]
            ) == ["new description", "trigger zone 30 m → 50 m", "new text in es"]
        )
    }

    @Test(
        "files GDAL's ogr2ogr writes (KML; CSV with GEOMETRY=AS_XY) import the source's points, names, texts and line",
        arguments: ["KML", "CSV"]
    )
    func ogr2ogrFilesImport(driver: String) async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        var source = try #require(try JSONSerialization.jsonObject(with: Data(Self.sourceGeoJSON.utf8)) as? [String: Any])
        if driver == "KML" {
            var features = try #require(source["features"] as? [[String: Any]])
            features.append(["type": "Feature", "geometry": ["type": "LineString", "coordinates": Self.sourceLine], "properties": ["name": "Trail"]])
            source["features"] = features
        }
        let input = try Self.scratch("source.geojson")
        try JSONSerialization.data(withJSONObject: source).write(to: input)
        let output = input.deletingLastPathComponent().appendingPathComponent(driver == "KML" ? "out.kml" : "out.csv")
        let arguments = driver == "KML" ? ["-f", "KML", output.path, input.path] : ["-f", "CSV", output.path, input.path, "-lco", "GEOMETRY=AS_XY"]
        let run = try await ChildProcess.run("ogr2ogr", arguments, timeout: .seconds(120))
        #expect(run.status == 0, "ogr2ogr (install gdal-bin): \(run.stderr)")
        let data = try Data(contentsOf: output)

        let parsed = try TourImport.parse(data)
        #expect(parsed.format?.rawValue == driver)
        let expected = try #require(source["features"] as? [[String: Any]]).filter {
            ($0["geometry"] as? [String: Any])?["type"] as? String == "Point"
        }
        #expect(parsed.points.count == expected.count)
        for (point, feature) in zip(parsed.points, expected) {
            let properties = try #require(feature["properties"] as? [String: Any])
            let position = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double])
            #expect(point.name == properties["name"] as? String)
            #expect(point.description == properties["description"] as? String)
            #expect(abs(point.longitude - position[0]) < 1e-9 && abs(point.latitude - position[1]) < 1e-9)
        }
        if driver == "KML" {
            #expect(parsed.routePath?.points.map { [$0.longitude, $0.latitude] } == Self.sourceLine)
            #expect(parsed.folders == ["source"], "GDAL puts the layer in a folder named after it")
        } else {
            #expect(parsed.columns == ["latitude": "Y", "longitude": "X", "name": "name", "description": "description"])
        }

        try await app.test { client in
            let preview = try await TourExchangeTests.importFile(
                client,
                tourId: seed.tourId,
                token: token,
                data: data,
                name: "out.\(driver.lowercased())",
                dryRun: true
            )
            let plan = try Self.plan(preview)
            #expect(plan["format"] as? String == driver)
            #expect(plan["added"] as? Int == 3)
            let applied = try await TourExchangeTests.importFile(
                client,
                tourId: seed.tourId,
                token: token,
                data: data,
                name: "out.\(driver.lowercased())",
                dryRun: false
            )
            #expect(applied.status == .ok, "\(applied.text)")
        }
        let names = try await app.database.waypoints(tourId: seed.tourId).map(\.name)
        #expect(names == ["Fish Lake", "Lava, \"Flow\" Overlook", "Fish Lake North", "Café Spring"])
        #expect(try await app.database.tour(id: seed.tourId)?.route?.points.count == (driver == "KML" ? 3 : nil))
    }

    // MARK: Google Earth

    static let googleEarthKML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2" xmlns:kml="http://www.opengis.net/kml/2.2" xmlns:atom="http://www.w3.org/2005/Atom">
        <Document>
        \t<name>Ridge Walk.kmz</name>
        \t<Style id="s_ylw-pushpin">
        \t\t<IconStyle><scale>1.1</scale><Icon><href>http://maps.google.com/mapfiles/kml/pushpin/ylw-pushpin.png</href></Icon></IconStyle>
        \t</Style>
        \t<StyleMap id="m_ylw-pushpin">
        \t\t<Pair><key>normal</key><styleUrl>#s_ylw-pushpin</styleUrl></Pair>
        \t</StyleMap>
        \t<Folder>
        \t\t<name>Stops</name>
        \t\t<open>1</open>
        \t\t<Placemark>
        \t\t\t<name>Lava Overlook</name>
        \t\t\t<description><![CDATA[<div><b>Look west</b> &amp; listen.<br>Two things:<ul><li>Basalt</li><li>Cinder &lt;cones&gt;</li></ul><script>alert(1)</script><p>Caf&eacute; &#8211; &#x2713; done</p></div>]]></description>
        \t\t\t<LookAt><longitude>-122.1</longitude><latitude>44.41</latitude><altitude>0</altitude><range>800</range></LookAt>
        \t\t\t<styleUrl>#m_ylw-pushpin</styleUrl>
        \t\t\t<Point>
        \t\t\t\t<gx:drawOrder>1</gx:drawOrder>
        \t\t\t\t<coordinates>
        \t\t\t\t\t-122.1000001,44.4100002,1250.5
        \t\t\t\t</coordinates>
        \t\t\t</Point>
        \t\t</Placemark>
        \t\t<Placemark>
        \t\t\t<name>Spring &amp; Bench</name>
        \t\t\t<description>Plain text, kept as it is.</description>
        \t\t\t<Point><coordinates>-122.05,44.39,0</coordinates></Point>
        \t\t</Placemark>
        \t\t<Placemark>
        \t\t\t<name>Lake</name>
        \t\t\t<Polygon><outerBoundaryIs><LinearRing><coordinates>-122.1,44.4,0 -122.09,44.4,0 -122.09,44.41,0 -122.1,44.4,0</coordinates></LinearRing></outerBoundaryIs></Polygon>
        \t\t</Placemark>
        \t</Folder>
        \t<Folder>
        \t\t<name>Path</name>
        \t\t<Placemark>
        \t\t\t<name>Ridge path</name>
        \t\t\t<LineString>
        \t\t\t\t<tessellate>1</tessellate>
        \t\t\t\t<coordinates>
        \t\t\t\t\t-122.2,44.37,1200 -122.15,44.39,1230
        \t\t\t\t\t-122.1,44.41,1250.04 \t
        \t\t\t\t</coordinates>
        \t\t\t</LineString>
        \t\t</Placemark>
        \t</Folder>
        \t<GroundOverlay><name>Old map</name><Icon><href>http://example.invalid/map.jpg</href></Icon></GroundOverlay>
        \t<NetworkLink><name>Live layer</name><Link><href>http://example.invalid/live.kml</href></Link></NetworkLink>
        </Document>
        </kml>
        """

    @Test(
        "a KML in Google Earth's style: folders flattened, CDATA HTML as plain text, altitude kept on the route and reported dropped on waypoints, the rest listed as not imported"
    )
    func googleEarthKML() async throws {
        let parsed = try TourImport.parse(Data(Self.googleEarthKML.utf8))
        #expect(parsed.format == .kml)
        #expect(parsed.points.map(\.name) == ["Lava Overlook", "Spring & Bench"])
        #expect(parsed.points[0].description == "Look west & listen.\nTwo things:\n• Basalt\n• Cinder <cones>\nCafé – ✓ done")
        #expect(parsed.points[1].description == "Plain text, kept as it is.")
        #expect(abs(parsed.points[0].longitude + 122.1000001) < 1e-9 && abs(parsed.points[0].latitude - 44.4100002) < 1e-9)
        let route = try #require(parsed.routePath)
        #expect(route.points.count == 3)
        #expect(route.positions.map { $0.count == 3 ? $0[2] : -1 } == [1200, 1230, 1250], "elevations kept, to 0.1 m")
        #expect(parsed.folders == ["Stops", "Path"])
        #expect(parsed.notes.contains { $0.contains("Altitude dropped for 1 waypoint") }, "\(parsed.notes)")
        let leftOut = Dictionary(parsed.leftOut.map { ($0.kind, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(leftOut["Polygon"]?.name == "Lake")
        #expect(leftOut["GroundOverlay"]?.name == "Old map")
        #expect(leftOut["NetworkLink"]?.name == "Live layer")
        #expect(leftOut["Style"]?.reason.contains("not imported") == true)

        // The panel's preview shows the same, escaped; applying saves the text and the route's elevations.
        let (app, seed) = try await TestApp.seeded()
        try FileManager.default.createDirectory(at: app.dependencies.paths.uploads, withIntermediateDirectories: true)
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let posted = try await client.tilesUpload(
                "/tours/\(seed.tourId)/import",
                data: Data(Self.googleEarthKML.utf8),
                fileName: "ridge.kml",
                session: author
            )
            let location = try #require(posted.location, "\(posted.status) \(posted.text.prefix(300))")
            let page = try await client.get(location, session: author)
            #expect(page.status == .ok)
            for text in ["Stops", "Path", "Old map", "not imported", "Altitude dropped", "KML"] {
                #expect(page.text.contains(text), "the preview shows \(text)")
            }
            #expect(!page.text.contains("<script>alert"), "nothing from a description is rendered as HTML")
            let applied = try await client.post(location + "/apply", form: [:], session: author)
            #expect(applied.status == .seeOther)
        }
        let lava = try #require(try await app.database.waypoints(tourId: seed.tourId).first { $0.name == "Lava Overlook" })
        #expect(lava.description.hasPrefix("Look west & listen.\nTwo things:"))
        #expect(try await app.database.tour(id: seed.tourId)?.route?.positions.last == [-122.1, 44.41, 1250], "elevation kept, to 0.1 m")
    }

    // MARK: KMZ

    static func kmzKML(image: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Pictures</name>
        <Placemark><name>Lake View</name><description><![CDATA[<p>The lake.</p><img src="\(image)" width="300">]]></description>
        <Point><coordinates>-122.05,44.40,0</coordinates></Point></Placemark>
        <Placemark><name>Web picture</name><description><![CDATA[<img src="https://example.invalid/x.jpg">]]></description>
        <Point><coordinates>-122.06,44.41</coordinates></Point></Placemark>
        </Document></kml>
        """
    }

    @Test("a KMZ made by ZIPFoundation: its picture becomes an asset of its waypoint, scanned like any upload; a web picture is never fetched")
    func kmzPictureBecomesScannedAsset() async throws {
        let env = try await TestEnv.media()
        await env.scans.scanner.reloadIfChanged()
        let token = try await env.token("author@test.org")
        let picture = MediaFixtures.png(size: 4096, seed: 11)
        let kmz = try Self.kmz([("doc.kml", Data(Self.kmzKML(image: "files/lake.png").utf8)), ("files/lake.png", picture)])
        try await env.app.test { client in
            let preview = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: kmz,
                name: "pictures.kmz",
                dryRun: true
            )
            let plan = try Self.plan(preview)
            #expect(plan["format"] as? String == "KMZ")
            let images = try #require(plan["images"] as? [[String: Any]])
            #expect(images.count == 1 && images.first?["file"] as? String == "files/lake.png" && images.first?["waypoint"] as? String == "Lake View")
            let leftOut = try #require(plan["leftOut"] as? [[String: Any]])
            #expect(leftOut.contains { ($0["reason"] as? String)?.contains("not fetched") == true })
            await #expect(try Self.saved(env.database, tourId: env.seed.tourId).assets == 0, "a dry run attaches nothing")

            let applied = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: kmz,
                name: "pictures.kmz",
                dryRun: false
            )
            #expect(applied.status == .ok, "\(applied.text)")
            #expect((applied.json as? [String: Any])?["imagesAttached"] as? Int == 1)
        }
        let lake = try #require(try await env.database.waypoints(tourId: env.seed.tourId).first { $0.name == "Lake View" })
        let assets = try await env.database.assets(waypointId: lake.id)
        #expect(assets.count == 1)
        #expect(assets.first?.kind == .image && assets.first?.originalName == "lake.png")
        #expect(assets.first?.scanStatus == .pending, "queued for the scanner like any upload")
        #expect(await env.scanAll() >= 1)
        let scanned = try await env.asset(try #require(assets.first?.id))
        #expect(scanned.scanStatus == .clean)
        #expect(try env.contents("assets/\(scanned.sha256)") == picture)
    }

    @Test("a KMZ picture carrying malware: quarantined, the import refused, nothing saved")
    func kmzMalwarePicture() async throws {
        let env = try await TestEnv.media()
        await env.scans.scanner.reloadIfChanged()
        let token = try await env.token("author@test.org")
        let kmz = try Self.kmz([
            ("doc.kml", Data(Self.kmzKML(image: "files/lake.png").utf8)),
            ("files/lake.png", MediaFixtures.pngEndingWithEICAR(size: 4096)),
        ])
        let before = try await Self.saved(env.database, tourId: env.seed.tourId)
        try await env.app.test { client in
            for dryRun in [true, false] {
                let response = try await TourExchangeTests.importFile(
                    client,
                    tourId: env.seed.tourId,
                    token: token,
                    data: kmz,
                    name: "bad.kmz",
                    dryRun: dryRun
                )
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("malware") && response.text.contains("quarantined"), "\(response.text)")
            }
        }
        await #expect(try Self.saved(env.database, tourId: env.seed.tourId) == before)
        #expect(env.files(in: "quarantine").count == 2, "each upload's picture went to quarantine")
        #expect(env.files(in: "uploads").isEmpty)
    }

    /// Answers clean for the first file and fails on every later one: a scanner that breaks half-way through an import.
    struct HalfWayScanner: MalwareScanner {
        actor Count {
            var value = 0
            func next() -> Int {
                value += 1
                return value
            }
        }
        let count = Count()
        func scan(fileAt path: String) async -> ScanVerdict { await count.next() == 1 ? .clean : .error(reason: "engine failure (CL_EMEM)") }
        var hasSignatures: Bool { get async { true } }
        var signatureCount: Int { get async { 1 } }
        func reloadIfChanged() async {}
    }

    @Test("a KMZ whose second picture cannot be scanned: refused, and the tour, its files and the uploads folder are as before")
    func kmzScanFailingHalfWayChangesNothing() async throws {
        let env = try await TestEnv.media(scanner: { _ in HalfWayScanner() })
        let token = try await env.token("author@test.org")
        let kml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Pictures</name>
            <Placemark><name>Lake View</name><description><![CDATA[<img src="files/lake.png">]]></description>
            <Point><coordinates>-122.05,44.40,0</coordinates></Point></Placemark>
            <Placemark><name>Ridge View</name><description><![CDATA[<img src="files/ridge.png">]]></description>
            <Point><coordinates>-122.06,44.41,0</coordinates></Point></Placemark>
            </Document></kml>
            """
        let kmz = try Self.kmz([
            ("doc.kml", Data(kml.utf8)),
            ("files/lake.png", MediaFixtures.png(size: 4096, seed: 21)),
            ("files/ridge.png", MediaFixtures.png(size: 4096, seed: 22)),
        ])
        let before = try await Self.saved(env.database, tourId: env.seed.tourId)
        let audited = try await env.database.actions()
        try await env.app.test { client in
            let response = try await TourExchangeTests.importFile(
                client,
                tourId: env.seed.tourId,
                token: token,
                data: kmz,
                name: "two-pictures.kmz",
                dryRun: false
            )
            #expect(response.status == .unprocessableContent, "\(response.status) \(response.text.prefix(300))")
            #expect(response.text.contains("could not be scanned") && response.text.contains("Nothing was imported"), "\(response.text)")
        }
        await #expect(try Self.saved(env.database, tourId: env.seed.tourId) == before, "no waypoint, route, frame or picture of the file")
        #expect(try await env.database.actions() == audited, "nothing audited: nothing happened")
        #expect(env.files(in: "uploads").isEmpty, "the first picture, stored and scanned, was removed again")
        let jobs: Int? = try await env.database.scalar("SELECT COUNT(*) FROM scanJob")
        #expect(jobs == 0)
    }

    // MARK: Round trip

    @Test("KML in, GeoJSON out: the same names, coordinates and route")
    func kmlRoundTripsThroughGeoJSONExport() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let alpha = try #require(try await app.database.site(slug: "alpha"))
        let tour = try await app.database.createTour(siteId: alpha.id, TourInput(name: "From KML", description: ""), actor: .system)
        let data = Data(Self.googleEarthKML.utf8)
        let parsed = try TourImport.parse(data)
        try await app.test { client in
            let applied = try await TourExchangeTests.importFile(client, tourId: tour.id, token: token, data: data, name: "ridge.kml", dryRun: false)
            #expect(applied.status == .ok, "\(applied.text)")
            #expect(try Self.plan(applied)["setsFrame"] as? Bool == true)
            let export = try await client.api(.get, "/api/v1/manage/tours/\(tour.id)/export.geojson", token: token)
            #expect(export.status == .ok)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(buffer: export.body)) as? [String: Any])
            let features = try #require(document["features"] as? [[String: Any]])
            let points = features.filter { ($0["geometry"] as? [String: Any])?["type"] as? String == "Point" }
            #expect(points.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String } == parsed.points.map(\.name))
            for (feature, point) in zip(points, parsed.points) {
                let position = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double])
                #expect(abs(position[0] - point.longitude) < 1e-7 && abs(position[1] - point.latitude) < 1e-7)
            }
            let line = try #require(features.first { ($0["geometry"] as? [String: Any])?["type"] as? String == "LineString" })
            let positions = try #require((line["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
            #expect(positions.map { [$0[0], $0[1]] } == parsed.routePath?.points.map { [$0.longitude, $0.latitude] })
        }
        _ = seed
    }

    // MARK: Refusals

    @Test("bad files are refused with a clear message and change nothing: DTDs, unsafe and oversized KMZ entries, CSV faults, empty and HTML files")
    func badFilesChangeNothing() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        var laughs = #"<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY lol "lol">"#
        for level in 1...9 { laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : "\(level - 1)");", count: 10) + "\">" }
        laughs +=
            #"]><kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><name>&lol9;</name><Point><coordinates>-122,44.4</coordinates></Point></Placemark></kml>"#
        let xxe = #"<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY x SYSTEM "file:///etc/passwd">]><kml><Placemark><name>&x;</name></Placemark></kml>"#
        let doc = Data(Self.kmzKML(image: "files/lake.png").utf8)
        let slip = try Self.kmz([("doc.kml", doc), ("../evil.png", MediaFixtures.png(size: 512))])
        let bomb = try Self.kmz([("doc.kml", doc), ("files/lake.png", Data(count: 40 << 20))])
        let html = "<!DOCTYPE html>\n<html><head><title>My Maps</title></head><body><p>Sign in to see this map</p></body></html>"
        let cases: [(String, Data, String)] = [
            ("laughs.kml", Data(laughs.utf8), "DOCTYPE"),
            ("xxe.kml", Data(xxe.utf8), "DOCTYPE"),
            ("slip.kmz", slip, "unsafe path"),
            ("bomb.kmz", bomb, "expands to"),
            ("plain.csv", Data("name,place\nTop,hill\n".utf8), "no coordinate columns"),
            ("north.csv", Data("name,lat,lon\nA,44.4,-122\nB,95,-122\n".utf8), "Row 3: latitude 95 is outside ±90"),
            ("words.csv", Data("name,lat,lon\nA,north,-122\n".utf8), "Row 2, column “lat”: “north” is not a number"),
            ("empty.kml", Data(), "empty"),
            ("blank.csv", Data(" \n\n".utf8), "The file is empty."),
            ("map.kml", Data(html.utf8), "not KML"),
        ]
        let before = try await Self.saved(app.database, tourId: seed.tourId)
        try await app.test { client in
            for (name, data, message) in cases {
                for dryRun in [true, false] {
                    let response = try await TourExchangeTests.importFile(
                        client,
                        tourId: seed.tourId,
                        token: token,
                        data: data,
                        name: name,
                        dryRun: dryRun
                    )
                    #expect(response.status == .unprocessableContent, "\(name): \(response.status) \(response.text.prefix(300))")
                    #expect(response.text.contains(message), "\(name): \(response.text.prefix(300))")
                }
            }
            // The panel shows the reason on the tour page.
            let author = try await client.signIn("author@test.org")
            let refused = try await client.tilesUpload("/tours/\(seed.tourId)/import", data: Data(html.utf8), fileName: "map.kml", session: author)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("not KML"))
        }
        await #expect(try Self.saved(app.database, tourId: seed.tourId) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.dependencies.paths.uploads.path).isEmpty, "no import file stays behind")
    }

    @Test("points outside the frame: the preview offers to fit the frame to them, and that applies them all")
    func fitFrameToPoints() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let csv = Data("name,latitude,longitude\nInside,44.40,-122.1\nOutside,44.50,-122.1\n".utf8)
        try await app.test { client in
            let author = try await client.signIn("author@test.org")
            let posted = try await client.tilesUpload("/tours/\(seed.tourId)/import", data: csv, fileName: "points.csv", session: author)
            let location = try #require(posted.location, "\(posted.status) \(posted.text.prefix(300))")
            let page = try await client.get(location, session: author)
            #expect(page.text.contains("outside the tour&#39;s frame") || page.text.contains("outside the tour's frame"))
            #expect(page.text.contains("Fit the frame to these points"))
            #expect(page.text.contains("Columns used"))
            let applied = try await client.post(location + "/apply", form: ["fitFrame": "1"], session: author)
            #expect(applied.status == .seeOther)
        }
        let frame = try #require(try await app.database.tour(id: seed.tourId)?.frame)
        #expect(frame.contains(latitude: 44.50, longitude: -122.1) && frame.north > 44.50, "a margin above the northern point")
        #expect(frame.contains(latitude: 44.40, longitude: -122.0) && frame.south == 44.36, "the frame grows; the tour's own waypoints stay inside")
        #expect(try await app.database.waypoints(tourId: seed.tourId).map(\.name) == ["Fish Lake", "Inside", "Outside"])
    }
}
