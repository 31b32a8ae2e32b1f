import Foundation
import GRDB
import HummingbirdTesting
import PackageFormat
import Terrain
import TestSupport
import Testing
import TrailClient

@testable import TrailServer

/// Trail facts from terrain models whose answers are known exactly (``TerrainFixtures``), read through GDAL.
@Suite("Trail facts", .scratch)
struct TrailFactsTests {
    /// A walk east along the plane's slope, then back north-west: 160 m up, then 70 m down (exact on the plane).
    static let walk = try! RoutePath(positions: [[-122.28, 44.39], [-122.20, 44.39], [-122.24, 44.40]])

    static func waypoints(_ points: [(Double, Double)]) -> [(id: Int64, point: RoutePoint)] {
        points.enumerated().map { (Int64($0.offset + 1), RoutePoint(longitude: $0.element.0, latitude: $0.element.1)) }
    }

    static func source(_ url: URL) throws -> TerrainSource { TerrainSource(model: try TerrainModel(path: url.path)) }

    static func expectWithin(_ value: Double?, _ exact: Double, percent: Double, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let value else {
            Issue.record("\(what): no value", sourceLocation: sourceLocation)
            return
        }
        #expect(abs(value - exact) <= abs(exact) * percent / 100, "\(what): \(value), exact \(exact)", sourceLocation: sourceLocation)
    }

    // MARK: The model, read through GDAL

    @Test("EPSG:4326 GeoTIFF: ascent, descent, lowest and highest exact; stops within 1 m of gdallocationinfo; grades")
    func geographicModel() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let stops = [(-122.28, 44.39), (-122.0, 44.40), (-122.2213, 44.3987)]
        let facts = TerrainFacts.compute(route: Self.walk, waypoints: Self.waypoints(stops), terrain: try Self.source(dem))
        #expect(facts.elevationSource == "dem" && facts.note == nil)
        Self.expectWithin(facts.ascentMeters, 160, percent: 0.5, "ascent")
        Self.expectWithin(facts.descentMeters, 70, percent: 0.5, "descent")
        Self.expectWithin(facts.minElevationMeters, 580, percent: 0.05, "lowest")
        Self.expectWithin(facts.maxElevationMeters, 740, percent: 0.05, "highest")
        // 160 m over 6.36 km and 70 m over 3.37 km: every 25 m is gentle (1–5 %), but the one that turns at the top.
        let grades = try #require(facts.grades)
        #expect(grades.gentle > 0.99 && grades.steep == 0 && grades.verySteep == 0, "\(grades)")
        Self.expectWithin(facts.maxGradePercent, 2.52, percent: 2, "steepest grade")
        #expect(facts.profile.count >= 2 && facts.profile.count <= 500 && facts.profile.first?[1] == 580)
        for (index, stop) in stops.enumerated() {
            let gdal = try await TerrainFixtures.locationInfo(dem, longitude: stop.0, latitude: stop.1)
            let ours = try #require(facts.elevation(ofWaypoint: Int64(index + 1)))
            #expect(abs(ours - gdal) <= 1, "stop \(index + 1): \(ours) m, gdallocationinfo \(gdal) m")
            Self.expectWithin(ours, TerrainFixtures.plane4326(longitude: stop.0, latitude: stop.1), percent: 0.05, "stop on the plane")
        }
    }

    @Test("a projected model (UTM 10N): the heights GDAL's own transformation gives, within 2 %")
    func projectedModel() async throws {
        let dem = try await TerrainFixtures.shared.projected()
        let facts = TerrainFacts.compute(route: Self.walk, waypoints: Self.waypoints([(-122.1, 44.41)]), terrain: try Self.source(dem))
        #expect(facts.elevationSource == "dem")
        let utm = try await TerrainFixtures.toUTM(Self.walk.points.map { ($0.longitude, $0.latitude) })
        let heights = utm.map { TerrainFixtures.planeUTM(x: $0.x, y: $0.y) }
        let ascent = zip(heights, heights.dropFirst()).reduce(0) { $0 + max(0, $1.1 - $1.0) }
        let descent = zip(heights, heights.dropFirst()).reduce(0) { $0 + max(0, $1.0 - $1.1) }
        Self.expectWithin(facts.ascentMeters, ascent, percent: 2, "ascent")
        Self.expectWithin(facts.descentMeters, descent, percent: 2, "descent")
        let gdal = try await TerrainFixtures.locationInfo(dem, longitude: -122.1, latitude: 44.41)
        #expect(abs(try #require(facts.elevation(ofWaypoint: 1)) - gdal) <= 1, "stop: \(facts.elevation(ofWaypoint: 1) ?? .nan), gdal \(gdal)")
    }

    @Test("a folder of two GeoTIFF tiles reads as one model, across the seam")
    func folderOfTiles() async throws {
        let folder = try await TerrainFixtures.shared.twoTiles()
        let model = try TerrainModel(path: folder.path)
        #expect(model.files.count == 2)
        let across = try RoutePath(positions: [[-122.25, 44.39], [-122.02, 44.41]])
        let facts = TerrainFacts.compute(route: across, waypoints: [], terrain: TerrainSource(model: model))
        #expect(facts.elevationSource == "dem", "\(facts.note ?? "")")
        // 2000 · 0.23 + 1000 · 0.02 = 480 m, all of it up.
        Self.expectWithin(facts.ascentMeters, 480, percent: 2, "ascent across two tiles")
        #expect((facts.descentMeters ?? 99) < 1)
    }

    @Test("SRTM .hgt tiles in a folder: the ascent within 2 %, a stop on a pixel centre as gdallocationinfo reads it")
    func srtmTiles() async throws {
        let folder = try await TerrainFixtures.shared.srtmTiles()
        let model = try TerrainModel(path: folder.path)
        #expect(model.files.map { ($0 as NSString).lastPathComponent } == ["N44W122.hgt", "N44W123.hgt"])
        let east = try RoutePath(positions: [[-122.3, 44.5], [-121.8, 44.52]])
        let facts = TerrainFacts.compute(route: east, waypoints: Self.waypoints([(-122.5, 44.5)]), terrain: TerrainSource(model: model))
        Self.expectWithin(facts.ascentMeters, 1500 * 0.5, percent: 2, "ascent across the tiles' seam")
        let gdal = try await TerrainFixtures.locationInfo(folder.appendingPathComponent("N44W123.hgt"), longitude: -122.5, latitude: 44.5)
        #expect(abs(try #require(facts.elevation(ofWaypoint: 1)) - gdal) <= 1)
    }

    // MARK: Where the heights come from

    @Test("a GPX route with heights of its own: the route's heights win over the model's")
    func routeHeightsWin() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        // The route says 100 → 130 → 110, nothing like the plane's 580 → 740 → 670.
        let route = try RoutePath(positions: [[-122.28, 44.39, 100], [-122.20, 44.39, 130], [-122.24, 44.40, 110]])
        let facts = TerrainFacts.compute(route: route, waypoints: Self.waypoints([(-122.20, 44.39)]), terrain: try Self.source(dem))
        #expect(facts.elevationSource == "route")
        #expect(facts.ascentMeters == 30 && facts.descentMeters == 20 && facts.minElevationMeters == 100 && facts.maxElevationMeters == 130)
        #expect(facts.elevation(ofWaypoint: 1) == 130, "a stop takes the route's height where it meets the route")
        // One point without a height: the model's heights are used instead.
        let partial = try RoutePath(positions: [[-122.28, 44.39, 100], [-122.20, 44.39]])
        #expect(TerrainFacts.compute(route: partial, waypoints: [], terrain: try Self.source(dem)).elevationSource == "dem")
    }

    @Test("no model and no heights: length and walking time only, said plainly")
    func noHeights() {
        let facts = TerrainFacts.compute(route: Self.walk, waypoints: [], terrain: TerrainSource())
        #expect(facts.elevationSource == nil && facts.ascentMeters == nil && facts.profile.isEmpty && facts.grades == nil)
        #expect(facts.lengthMeters > 9000 && facts.lengthMeters < 10_500)
        #expect(facts.note == "No heights: the route has no elevations and the server has no terrain model (--dem).")
        let shipped = TrailFacts(terrain: facts, walkingMinutes: 150, accessibility: nil)
        let json = String(decoding: try! JSONEncoder().encode(shipped), as: UTF8.self)
        #expect(json.contains(#""elevationSource":null"#), "null, not left out: \(json)")
    }

    @Test("a model that is not a raster, a folder without tiles, a missing path: refused with a reason, never a crash")
    func badModels() async throws {
        let folder = TestScratch.folder("bad-dem")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = folder.appendingPathComponent("notes.tif")
        try Data("not a raster at all\n".utf8).write(to: text)
        let notRaster = TerrainSource.open(path: text.path)
        #expect(notRaster.model == nil)
        #expect(notRaster.problem?.contains("GDAL cannot read notes.tif as a terrain model") == true, "\(notRaster.problem ?? "")")
        let empty = folder.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(TerrainSource.open(path: empty.path).problem?.contains("holds no terrain tiles") == true)
        #expect(TerrainSource.open(path: folder.appendingPathComponent("nowhere").path).problem?.contains("does not exist") == true)
        // The facts say why they have no heights.
        let facts = TerrainFacts.compute(route: Self.walk, waypoints: [], terrain: notRaster)
        #expect(facts.elevationSource == nil && facts.note?.hasPrefix("The terrain model (--dem) cannot be used") == true)
    }

    @Test("a model far from the route: no heights, and the note says the model does not cover it")
    func modelFarAway() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let alps = try RoutePath(positions: [[7.65, 45.97], [7.70, 45.99]])
        let facts = TerrainFacts.compute(route: alps, waypoints: [], terrain: try Self.source(dem))
        #expect(facts.elevationSource == nil && facts.ascentMeters == nil)
        #expect(facts.note?.hasPrefix("The terrain model does not cover this tour's route") == true, "\(facts.note ?? "")")
    }

    @Test("a long route's profile keeps at most 500 points, from the start to the end")
    func profileLimit() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let positions: [[Double]] = (0..<200).map { (index: Int) -> [Double] in
            let longitude: Double = index % 2 == 0 ? -122.29 : -121.99
            return [longitude, 44.355 + Double(index) * 0.0004]
        }
        let zigzag = try RoutePath(positions: positions)
        let facts = TerrainFacts.compute(route: zigzag, waypoints: [], terrain: try Self.source(dem))
        #expect(facts.profile.count == 500, "\(facts.profile.count)")
        #expect(facts.profile.first?[0] == 0 && facts.profile.last?[0] == facts.lengthMeters.rounded())
    }

    // MARK: In the app

    @Test("the facts in the tour's JSON, worked out in the write that changes the route or a stop, and after a new model")
    func factsInTheTourJSON() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: try Self.source(dem))
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            // The seed's stop alone: a line needs two points, so no heights yet but the stop's own.
            var body = try await client.api(.get, tour, token: token).jsonObject
            #expect(((body["trail"] as? [String: Any])?["lengthMeters"] as? Double) == 0)
            try await env.database.setRoute(tourId: env.seed.tourId, route: Self.walk, actor: .system)
            body = try await client.api(.get, tour, token: token).jsonObject
            let trail = try #require(body["trail"] as? [String: Any], "\(body)")
            #expect(trail["elevationSource"] as? String == "dem")
            Self.expectWithin(trail["ascentMeters"] as? Double, 160, percent: 0.5, "ascent in the JSON")
            #expect((trail["profile"] as? [[Double]])?.count ?? 0 >= 2)
            #expect((trail["walkingMinutes"] as? Int ?? 0) > 0)
            let stop = try #require((body["waypoints"] as? [[String: Any]])?.first)
            Self.expectWithin(stop["elevationMeters"] as? Double, 1150, percent: 0.1, "the stop's height")
            #expect(body["trailNote"] == nil)
            // Moving the stop works its height out again in the same write.
            let moved = try await client.api(.patch, "\(tour)/waypoints/\(env.seed.waypointId)", token: token, json: #"{"longitude":-122.1}"#)
            #expect(moved.status == .ok)
            body = try await client.api(.get, tour, token: token).jsonObject
            Self.expectWithin(
                (body["waypoints"] as? [[String: Any]])?.first?["elevationMeters"] as? Double,
                950,
                percent: 0.1,
                "the moved stop's height"
            )
        }
        // Reopened without a model: the start-up pass works the facts out again, and they say why there are no heights.
        let plain = try AppDatabase.openFile(
            at: env.folder.appendingPathComponent("data/trail.sqlite").path,
            migrationsFolder: env.config.migrationsFolder
        )
        let outcome = try await plain.refreshTrailFactsForTerrain()
        #expect(outcome.refreshed >= 1)
        let facts = try #require(try await plain.terrainFacts(tourId: env.seed.tourId))
        #expect(facts.elevationSource == nil && facts.note?.contains("no terrain model") == true)
        // And with the model again, they have their heights back.
        let again = try AppDatabase.openFile(
            at: env.folder.appendingPathComponent("data/trail.sqlite").path,
            migrationsFolder: env.config.migrationsFolder,
            terrain: try Self.source(dem)
        )
        _ = try await again.refreshTrailFactsForTerrain()
        #expect(try await again.terrainFacts(tourId: env.seed.tourId)?.elevationSource == "dem")
    }

    @Test("accessibility: stored through the API and the panel, refused when wrong with nothing stored, and shown")
    func accessibility() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            let tour = "/api/v1/manage/tours/\(env.seed.tourId)"
            let saved = try await client.api(
                .patch,
                tour,
                token: token,
                json: #"{"accessibility":{"surface":"boardwalk","minWidthCm":120,"stepFree":true,"notes":"A bench every 200 m."}}"#
            )
            #expect(saved.status == .ok, "\(saved.text)")
            let access = try #require((saved.jsonObject["trail"] as? [String: Any])?["accessibility"] as? [String: Any])
            #expect(access["surface"] as? String == "boardwalk" && access["minWidthCm"] as? Int == 120 && access["stepFree"] as? Bool == true)
            let audited = try await env.auditCount("tour.accessibility")
            #expect(audited == 1)

            // Refused: every bad field named, nothing stored, nothing else in the body applied either.
            for bad in [
                #"{"name":"Renamed","accessibility":{"surface":"lava"}}"#, #"{"name":"Renamed","accessibility":{"minWidthCm":3}}"#,
                #"{"name":"Renamed","accessibility":{"minWidthCm":"wide"}}"#,
                #"{"name":"Renamed","accessibility":{"notes":"\#(String(repeating: "x", count: 2001))"}}"#,
            ] {
                let refused = try await client.api(.patch, tour, token: token, json: bad)
                #expect(refused.status == .unprocessableContent, "\(bad.prefix(60)): \(refused.status) \(refused.text.prefix(200))")
                let fields = (refused.jsonObject["error"] as? [String: Any])?["fields"] as? [String: String] ?? [:]
                #expect(fields.keys.contains { ["surface", "minWidthCm", "notes"].contains($0) }, "\(refused.text.prefix(300))")
            }
            let stored = try await env.tour()
            #expect(stored.name == "Ridge Walk" && stored.accessSurface == .boardwalk && stored.accessMinWidthCm == 120)
            #expect(try await env.auditCount("tour.accessibility") == 1)

            // The panel: the form saves, a refused one comes back with its message and stores nothing.
            let session = try await client.signIn("author@test.org")
            let posted = try await client.post(
                "/tours/\(env.seed.tourId)/accessibility",
                form: ["surface": "compacted", "minWidthCm": "90", "stepFree": "no", "notes": "Two steps at the bridge."],
                session: session
            )
            #expect(posted.status == .seeOther && posted.location == "/tours/\(env.seed.tourId)#trail-facts")
            let page = try await client.get("/tours/\(env.seed.tourId)", session: session).text
            for shown in [
                "Surface: compacted gravel or earth.", "Narrowest width: 90 cm.", "Not step-free: there are steps.", "Two steps at the bridge.",
            ] {
                #expect(page.contains(shown), "\(shown)")
            }
            let refused = try await client.post(
                "/tours/\(env.seed.tourId)/accessibility",
                form: ["surface": "compacted", "minWidthCm": "2", "stepFree": "no", "notes": ""],
                session: session
            )
            #expect(refused.status == .unprocessableContent)
            #expect(HTML.fieldError(refused.text, field: "minWidthCm")?.contains("from 10 to 5000") == true)
            #expect(try await env.tour().accessMinWidthCm == 90)
        }
    }

    @Test("the tour page shows the profile, its table and the totals in words; a model the server cannot read is said there")
    func tourPage() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: try Self.source(dem))
        try await env.database.setRoute(tourId: env.seed.tourId, route: Self.walk, actor: .system)
        try await env.app.test { client in
            let session = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(env.seed.tourId)", session: session).text
            #expect(page.contains("<svg data-elevation-profile") && page.contains("<table class=\"table table-sm\" data-elevation-table>"))
            #expect(page.contains("160 m up and 70 m down, between 580 and 740 m above sea level"), "the totals in words")
            #expect(page.contains("Heights from the terrain model, sampled every 25 m."))
            #expect(page.contains("<td>Stop 1: Fish Lake</td>"))
        }
        let broken = TerrainSource(problem: "The terrain model (--dem) cannot be used: GDAL cannot read dem.txt as a terrain model.")
        let other = try await TestEnv.publishing(requiredApprovals: 1, terrain: broken)
        try await other.app.test { client in
            let session = try await client.signIn("author@test.org")
            let page = try await client.get("/tours/\(other.seed.tourId)", session: session).text
            #expect(page.contains("GDAL cannot read dem.txt as a terrain model."), "the tour page says what is wrong with the model")
        }
    }

    @Test("the facts and each stop's height in the built package's manifest, and in TrailClient's download of it")
    func factsInThePackage() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: try Self.source(dem))
        try await env.database.setRoute(tourId: env.seed.tourId, route: Self.walk, actor: .system)
        _ = try await env.database.setAccessibility(
            tourId: env.seed.tourId,
            AccessibilityInput(surface: "paved", minWidthCm: "150", stepFree: true),
            actor: .system
        )
        final class Box: @unchecked Sendable { var released: ReleasedPackage? }
        let box = Box()
        try await env.app.test { client in box.released = try await env.releaseThroughAPI(client) }
        let released = try #require(box.released)
        try await env.app.application.testLive { client in
            let trail = TrailClient(baseURL: URL(string: "http://localhost:\(try #require(client.port))")!)
            let manifest = try await trail.package(id: released.packageId).manifest
            let facts = try #require(manifest.trail)
            #expect(facts.elevationSource == "dem" && facts.accessibility == .init(surface: "paved", minWidthCm: 150, stepFree: true))
            Self.expectWithin(facts.ascentMeters, 160, percent: 0.5, "ascent in the manifest")
            #expect(facts.walkingMinutes == manifest.estimatedDurationMinutes)
            Self.expectWithin(manifest.waypoints.first?.elevationMeters, 1150, percent: 0.1, "the stop's height in the manifest")
            #expect(manifest.route?.allSatisfy { $0.elevation != nil } == true, "the route's positions carry their heights")
        }
    }

    @Test("GPX and GeoJSON exports carry the heights, as GDAL's ogr2ogr reads them back")
    func exportsCarryHeights() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let env = try await TestEnv.publishing(requiredApprovals: 1, terrain: try Self.source(dem))
        try await env.database.setRoute(tourId: env.seed.tourId, route: Self.walk, actor: .system)
        let token = try await env.token("author@test.org")
        try await env.app.test { client in
            for (format, layer) in [("gpx", "waypoints"), ("geojson", "")] {
                let response = try await client.api(.get, "/api/v1/manage/tours/\(env.seed.tourId)/export.\(format)", token: token)
                #expect(response.status == .ok)
                let file = env.folder.appendingPathComponent("export.\(format)")
                try Data(response.body.readableBytesView).write(to: file)
                let csv = env.folder.appendingPathComponent("export-\(format).csv")
                let converted = try await ChildProcess.run(
                    "ogr2ogr",
                    ["-f", "CSV", csv.path, file.path] + (layer.isEmpty ? [] : [layer]) + ["-lco", "GEOMETRY=AS_WKT"]
                )
                #expect(converted.status == 0, "ogr2ogr \(format): \(converted.stderr)")
                let text = try String(contentsOf: csv, encoding: .utf8)
                // The stop at 1150 m: GPX's <ele> column, GeoJSON's third coordinate (POINT Z).
                #expect(text.contains("1150"), "\(format): \(text.prefix(400))")
                if format == "geojson" { #expect(text.contains("POINT Z (-122 44.4 1150)") && text.contains("LINESTRING Z (-122.28 44.39 580")) }
                try? FileManager.default.removeItem(at: csv)
            }
            let track = env.folder.appendingPathComponent("track.csv")
            let points = try await ChildProcess.run(
                "ogr2ogr",
                ["-f", "CSV", track.path, env.folder.appendingPathComponent("export.gpx").path, "track_points"]
            )
            #expect(points.status == 0, "\(points.stderr)")
            let rows = try String(contentsOf: track, encoding: .utf8).split(separator: "\n")
            #expect(rows.count == 4 && rows[1].contains(",580"), "three track points with their heights: \(rows)")
        }
    }

    @Test("dem check: says what the model covers and works a track's facts out; a model GDAL cannot read exits 1 with why")
    func demCheckCommand() async throws {
        let dem = try await TerrainFixtures.shared.geographic()
        let folder = TestScratch.folder("dem-check")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let track = folder.appendingPathComponent("walk.gpx")
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="44.39" lon="-122.28"><ele>9</ele></trkpt><trkpt lat="44.39" lon="-122.20"><ele>9</ele></trkpt>
            </trkseg></trk></gpx>
            """.utf8
        ).write(to: track)
        let checked = try await CLI.run(["dem", "check", "--dem", dem.path, "--track", track.path], data: nil, root: nil)
        #expect(checked.status == 0, "\(checked.output) \(checked.errors)")
        #expect(checked.output.contains("1 file(s); covers -122.3"), "\(checked.output)")
        #expect(checked.output.contains(#""ascentMeters":160"#) && checked.output.contains(#""elevationSource":"dem""#), "\(checked.output)")
        #expect(checked.output.contains("computeMilliseconds"))
        let text = folder.appendingPathComponent("dem.txt")
        try Data("no heights here".utf8).write(to: text)
        let refused = try await CLI.run(["dem", "check", "--dem", text.path], data: nil, root: nil)
        #expect(refused.status == 1 && refused.output.contains("GDAL cannot read dem.txt"), "\(refused.output) \(refused.errors)")
    }
}
