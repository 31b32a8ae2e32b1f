import Foundation
import TestSupport
import Testing

@testable import TourFormats

/// The formats on their own: bytes in, an imported tour out, under rules a test sets. The same formats under the
/// server's rules, and what an import does to a tour: TrailServerTests (`TourImportFormatsTests`, `TourExchangeTests`,
/// `ImportMemoryTests`).
@Suite struct TourFormatsTests {
    /// GPX makes a waypoint's <name> optional: an unnamed one is named by its place in the file, never a refusal.
    @Test func unnamedGPXWaypointsAreNamedByTheirPlace() throws {
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.0" creator="a logger">
            <wpt lat="44.40" lon="-122.00"><name>Trailhead</name></wpt>
            <wpt lat="44.41" lon="-122.01"><ele>1200</ele></wpt>
            <wpt lat="44.42" lon="-122.02"><name>  </name><desc>A spring.</desc></wpt>
            </gpx>
            """
        let imported = try TourImport.parse(Data(gpx.utf8))
        #expect(imported.points.map(\.name) == ["Trailhead", "Waypoint 2", "Waypoint 3"])
        #expect(imported.points.last?.description == "A spring.")
    }

    /// What a GPX file holds beyond what the import uses (its metadata, times, symbols, extensions) is listed as left
    /// out, once per element name with its count, never a refusal; the inside of an unused element is not listed again.
    @Test func unusedGPXElementsAreListedAsLeftOut() throws {
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.1" creator="a watch" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
            <metadata><name>Morning walk</name><time>2026-06-01T07:00:00Z</time></metadata>
            <wpt lat="44.40" lon="-122.00"><name>Trailhead</name><sym>Flag</sym></wpt>
            <trk><name>Walk</name><trkseg>
            <trkpt lat="44.40" lon="-122.00"><ele>1200</ele><time>2026-06-01T07:00:00Z</time></trkpt>
            <trkpt lat="44.41" lon="-122.01"><time>2026-06-01T07:05:00Z</time>
            <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>98</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions></trkpt>
            </trkseg></trk>
            </gpx>
            """
        let imported = try TourImport.parse(Data(gpx.utf8))
        #expect(imported.points.map(\.name) == ["Trailhead"])
        #expect(imported.route?.count == 2)
        #expect(imported.leftOut.map(\.name) == ["<metadata>", "<sym>", "<time>, 2 times", "<extensions>"])
        #expect(imported.leftOut.allSatisfy { $0.kind == "element" && $0.reason == "not used by the import" })
    }

    @Test("a gx:Track becomes the route, elevations included")
    func gxTrack() throws {
        let kml = """
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document><Placemark><name>Walk</name>
            <gx:Track><when>2025-06-01T10:00:00Z</when><when>2025-06-01T10:05:00Z</when><when>2025-06-01T10:10:00Z</when>
            <gx:coord>-122.2 44.37 1200</gx:coord><gx:coord>-122.15 44.39 1215.5</gx:coord>
            <gx:coord>-122.1 44.41 1230</gx:coord></gx:Track></Placemark></Document></kml>
            """
        let parsed = try TourImport.parse(Data(kml.utf8))
        #expect(parsed.route == [[-122.2, 44.37, 1200], [-122.15, 44.39, 1215.5], [-122.1, 44.41, 1230]])
        #expect(parsed.points.isEmpty)
    }

    @Test("CSV: semicolons with decimal commas, a BOM, quoted line breaks, an order column and rows without coordinates")
    func csvVariants() throws {
        let csv =
            "\u{FEFF} Name ;LAT;Lon;Order;Notes\r\n\"Top; of \"\"the\"\" hill\";44,41;-122,1;2;x\r\nStart;44.40;-122.0;1;\"two\nlines\"\r\nNowhere;;;3;\r\n"
        let parsed = try TourImport.parse(Data(csv.utf8))
        #expect(parsed.format == .csv)
        #expect(parsed.points.map(\.name) == ["Start", "Top; of \"the\" hill"])
        #expect(parsed.points[1].latitude == 44.41 && parsed.points[1].longitude == -122.1)
        #expect(parsed.columns == ["latitude": "LAT", "longitude": "Lon", "name": "Name", "order": "Order"])
        #expect(parsed.leftOut == [.init(kind: "row", name: "Nowhere", reason: "no coordinates (Row 4)")])
        #expect(parsed.notes.contains { $0.contains("“Notes”") })
    }

    @Test("GPX: a declared encoding other than UTF-8 is refused (UTF-7 could spell a DOCTYPE the byte check misses); UTF-8 in either quote passes")
    func gpxEncodings() throws {
        let body = #"<gpx version="1.1"><wpt lat="44.4" lon="-122"><name>Lake</name></wpt></gpx>"#
        // `+ADw-` is `<` in UTF-7: the DTD below is invisible to a search for the bytes "<!DOCTYPE".
        let utf7 = #"<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE gpx +AFs-+ADw-!ENTITY x SYSTEM "file:///etc/passwd"+AD4-+AF0-+AD4-"# + body
        for (declaration, refused) in [
            (utf7, "“UTF-7”"), (#"<?xml version="1.0" encoding="ISO-8859-1"?>"# + body, "“ISO-8859-1”"),
            (#"<?xml version='1.0' encoding='utf-16'?>"# + body, "“utf-16”"),
            // A declaration closed with ">" only: libxml2 still switched to UTF-7 and crashed
            // (scripts/fuzz.sh importer).
            (#"<?xml version="1.0" encoding="UTF-7">"# + body, "“UTF-7”"),
        ] {
            #expect(throws: ImportRefused.self, "\(refused)") { try TourImport.parse(Data(declaration.utf8)) }
            do { _ = try TourImport.parse(Data(declaration.utf8)) } catch let error as ImportRefused {
                #expect(error.message.contains(refused) && error.message.contains("only UTF-8"), "\(error.message)")
            }
        }
        for accepted in [
            #"<?xml version="1.0" encoding="UTF-8"?>"#, #"<?xml version='1.0' encoding='utf-8'?>"#, #"<?xml version="1.0"?>"#, "",
            "\u{FEFF}<?xml version=\"1.0\"?>\n",
        ] {
            let parsed = try TourImport.parse(Data((accepted + body).utf8))
            #expect(parsed.points.count == 1, "\(accepted)")
        }
        #expect(XMLImportReader.declaredEncoding(Data(#"<?xml version="1.0" encoding = "UTF-7" ?><gpx/>"#.utf8)) == "UTF-7")
        // Byte order marks of UTF-16 and UTF-32, and NUL bytes, make libxml2 switch encodings by itself: refused too.
        for bytes: [UInt8] in [[0xFF, 0xFE, 0x3C, 0x00], [0xFE, 0xFF, 0x00, 0x3C], [0x3C, 0x00, 0x3F, 0x00], [0xFF, 0xFE, 0x00, 0x00]] {
            #expect(throws: ImportRefused.self, "\(bytes)") { try TourImport.parse(Data(bytes) + Data(body.utf8)) }
        }
    }

    @Test("what only the app decides comes from its rules: a route's check, language tags, a trigger radius, the sizes")
    func rulesDecide() throws {
        func refusal(_ text: String, _ rules: ImportRules = .forTests) -> String? {
            #expect(throws: ImportRefused.self, "\(text)") { try TourImport.parse(Data(text.utf8), rules: rules) }?.message
        }
        let line = #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-122.1,44.4],[-122.2,44.5]]},"properties":{}}"#
        var closed = ImportRules.forTests
        closed.refuseRoute = { _ in "routes are closed" }
        #expect(refusal(line, closed) == "Feature 1: routes are closed.")
        #expect(try TourImport.parse(Data(line.utf8), rules: .forTests).route == [[-122.1, 44.4], [-122.2, 44.5]])

        func point(_ properties: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-122.1,44.4]},"properties":{"name":"A",\#(properties)}}"#
        }
        let parsed = try TourImport.parse(
            Data(point(#""name:ES":"Lago","description:es":"Agua.","triggerRadiusMeters":"45""#).utf8),
            rules: .forTests
        )
        #expect(parsed.points.first?.localized == ["es": ImportedTour.Text(name: "Lago", description: "Agua.")])
        #expect(parsed.points.first?.triggerRadiusMeters == 45)
        #expect(refusal(point(#""name:xx":"?""#)) == "Feature 1 (“A”): name:xx: “xx” is not one of this app's languages.")
        #expect(
            refusal(point(#""triggerRadiusMeters":600"#)) == "Feature 1 (“A”): triggerRadiusMeters must be a whole number of metres from 5 to 500."
        )

        var small = ImportRules.forTests
        small.maxRoutePoints = 2
        let track = #"<gpx version="1.1"><trk><trkseg>"# + String(repeating: #"<trkpt lat="44.4" lon="-122.1"/>"#, count: 3) + "</trkseg></trk></gpx>"
        #expect(refusal(track, small) == "Line 1: the track has more than 2 points.")
        small.maxBytes = 10
        #expect(refusal(line, small) == "The file is larger than 10 bytes.")
    }
}
