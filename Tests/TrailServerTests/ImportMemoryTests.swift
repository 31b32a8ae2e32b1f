import Foundation
import Hummingbird
import HummingbirdTesting
import MalwareScan
import TestSupport
import Testing
import TourFormats

@testable import TrailServer

/// Imports in bounded memory: a CSV is read a row at a time with its rows counted, what is left out is kept to a list
/// of 100 and a count, a slot is taken only once the file has arrived, and the server's own memory (measured from
/// `/proc/<pid>/status` of the real binary) stays bounded and is given back.
@Suite(.scratch) struct ImportMemoryTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts")

    // MARK: What is left out

    @Test("the left-out list keeps its first 100 entries and counts the rest: the parse, the API's answer and the panel's preview")
    func leftOutIsCappedWithACountOfTheRest() async throws {
        let csv = "name,latitude,longitude\nKept,44.40,-122.1\n" + (1...250).map { "Nowhere \($0),,\n" }.joined()
        let parsed = try TourImport.parse(Data(csv.utf8))
        #expect(parsed.points.map(\.name) == ["Kept"])
        #expect(parsed.leftOut.count == ImportedTour.LeftOutList.limit)
        #expect(parsed.leftOutMore == 250 - ImportedTour.LeftOutList.limit)
        #expect(parsed.leftOut.first == .init(kind: "row", name: "Nowhere 1", reason: "no coordinates (Row 3)"))
        #expect(parsed.leftOut.last?.name == "Nowhere 100")

        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        try await app.test { client in
            let answer = try await TourExchangeTests.importFile(
                client,
                tourId: seed.tourId,
                token: token,
                data: Data(csv.utf8),
                name: "a.csv",
                dryRun: true
            )
            #expect(answer.status == .ok, "\(answer.text.prefix(300))")
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])?["plan"] as? [String: Any])
            #expect((plan["leftOut"] as? [Any])?.count == 100)
            #expect(plan["leftOutMore"] as? Int == 150)
            #expect(answer.text.utf8.count < 20_000, "the answer stays small: \(answer.text.utf8.count) bytes")

            let author = try await client.signIn("author@test.org")
            let posted = try await client.tilesUpload("/tours/\(seed.tourId)/import", data: Data(csv.utf8), fileName: "points.csv", session: author)
            let location = try #require(posted.location, "\(posted.status) \(posted.text.prefix(300))")
            let page = try await client.get(location, session: author)
            #expect(page.text.contains("… and 150 more (the list shows the first 100)."), "\(page.text)")
            #expect(page.text.components(separatedBy: "<td>row</td>").count - 1 == 100)
        }
    }

    @Test("a CSV of more rows than the limit, blank ones counted, is refused with its reason (API and panel) and stores nothing")
    func csvRowsAreCappedAndNothingIsStored() async throws {
        let blank = "latitude,longitude,name\n" + String(repeating: ",,\n", count: CSVImport.maxRows + 1)
        let newlines = "latitude,longitude\n" + String(repeating: "\n", count: CSVImport.maxRows + 1)
        let atTheLimit = "latitude,longitude\n" + String(repeating: "\n", count: CSVImport.maxRows - 1) + "44.4,-122.1\n"
        #expect(try TourImport.parse(Data(atTheLimit.utf8)).points.count == 1, "the limit's last row is still read")
        for text in [blank, newlines] {
            let refusal = #expect(throws: ImportRefused.self) { try TourImport.parse(Data(text.utf8)) }
            #expect(refusal?.message.contains("more than 10,000 rows") == true, "\(refusal?.message ?? "")")
        }

        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let token = try await app.token(for: "author@test.org")
        let before = try await TourImportFormatsTests.saved(app.database, tourId: seed.tourId)
        try await app.test { client in
            for dryRun in [true, false] {
                let answer = try await TourExchangeTests.importFile(
                    client,
                    tourId: seed.tourId,
                    token: token,
                    data: Data(blank.utf8),
                    name: "a.csv",
                    dryRun: dryRun
                )
                #expect(answer.status == .unprocessableContent, "\(answer.status) \(answer.text.prefix(300))")
                #expect(answer.text.contains("more than 10,000 rows below its header"), "\(answer.text.prefix(300))")
            }
            let author = try await client.signIn("author@test.org")
            let refused = try await client.tilesUpload("/tours/\(seed.tourId)/import", data: Data(blank.utf8), fileName: "rows.csv", session: author)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("more than 10,000 rows"))
        }
        await #expect(try TourImportFormatsTests.saved(app.database, tourId: seed.tourId) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.dependencies.paths.uploads.path).isEmpty, "no import file stays behind")
        #expect(app.dependencies.importSlots.taken == 0)
    }

    @Test("GeoJSON is decoded into what the import reads, with the same refusals: each case and its message")
    func geoJSONKeepsItsMessages() throws {
        func feature(_ geometry: String, _ properties: String = #"{"name":"A"}"#) -> String {
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":\#(geometry),"properties":\#(properties)}]}"#
        }
        let point = #"{"type":"Point","coordinates":[-122.1,44.4]}"#
        let cases: [(String, String)] = [
            (#"{"type":"#, "not valid JSON"),
            (#"{"features":[]}"#, "has no “type”"),
            (#"{"type":"Topology"}"#, "found “Topology”"),
            (#"{"type":"FeatureCollection","features":{}}"#, "no “features” list"),
            (#"{"type":"FeatureCollection","features":[1]}"#, "Feature 1 is not a Feature"),
            (#"{"type":"FeatureCollection","features":[{"type":"Feature"}]}"#, "Feature 1 has no geometry"),
            (feature(#"{"type":"Point","coordinates":["x",1]}"#), "a Point needs [longitude, latitude]"),
            (feature(point, #"{"name":7}"#), "needs a “name” property"),
            (feature(point, #"{"name":"A","triggerRadiusMeters":"wide"}"#), "triggerRadiusMeters must be a whole number"),
            (feature(#"{"type":"LineString","coordinates":[1,2]}"#), "a LineString needs a list of positions"),
            (feature(#"{"type":"MultiPoint","coordinates":[]}"#), "MultiPoint geometries are not supported"),
        ]
        for (json, message) in cases {
            let refusal = #expect(throws: ImportRefused.self, "\(json)") { try TourImport.parse(Data(json.utf8)) }
            #expect(refusal?.message.contains(message) == true, "\(json): \(refusal?.message ?? "")")
        }
        let polygon = #"{"type":"Polygon","coordinates":[[[-122,44],[-121,44],[-121,45],[-122,44]]]}"#
        let mixed =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":\#(polygon),"properties":null},"#
            + #"{"type":"Feature","geometry":\#(point),"properties":{"name":" A ","triggerRadiusMeters":45,"name:de":"Ä","extra":{"x":[1]},"flag":true}},"#
            + #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-122.1,44.4],[-122.2,44.5,1200]]},"properties":{}}]}"#
        let parsed = try TourImport.parse(Data(mixed.utf8))
        #expect(parsed.format == .geoJSON)
        #expect(parsed.points.map(\.name) == ["A"] && parsed.points.first?.triggerRadiusMeters == 45)
        #expect(parsed.points.first?.localized["de"]?.name == "Ä")
        #expect(parsed.routePath?.points.count == 2)
    }

    // MARK: Slots and slow uploads

    @Test("uploads that send a few bytes and stall hold no import slot: while they stall, another user's import succeeds")
    func stalledUploadsHoldNoSlot() async throws {
        let app = try await TestApp.make()
        try DataFolder.prepare(app.config.dataFolder)
        let seed = try await app.seed()
        let stalling = try await app.token(for: "author@test.org")
        let other = try await app.token(for: "manager@test.org")
        let uploads = app.dependencies.paths.uploads
        let stall = TestScratch.folder("stall")
        try FileManager.default.createDirectory(at: stall, withIntermediateDirectories: true)
        let go = stall.appendingPathComponent("go")
        let clients = ImportSlots.defaultLimit
        try await app.application.testLive { client in
            let port = try #require(client.port)
            let stalled = Task {
                try await ChildProcess.run(
                    "python3",
                    [Self.scripts.appendingPathComponent("stalled_upload.py").path, "\(port)", stalling, "\(seed.tourId)", "\(clients)", go.path],
                    timeout: .seconds(180)
                )
            }
            // The state to wait for: every stalled upload is inside the handler, writing its file part (an unnamed
            // file in `uploads/` until it is complete, so it is seen among this process's open files).
            let arrived = await Self.waitUntil(timeout: .seconds(60)) { Self.openFiles(under: uploads) >= clients }
            #expect(arrived, "the stalled uploads never reached the server: \(Self.openFiles(under: uploads)) files open")
            #expect(app.dependencies.importSlots.taken == 0, "an upload still arriving holds no slot")
            let csv = Data("latitude,longitude,name\n44.4,-122.1,One\n".utf8)
            let answer = try await TourExchangeTests.importFile(client, tourId: seed.tourId, token: other, data: csv, name: "a.csv", dryRun: true)
            #expect(answer.status == .ok, "another user's import while \(clients) uploads stall: \(answer.status) \(answer.text.prefix(300))")
            // The stalled uploads then finish, and are read and answered as usual.
            try Data().write(to: go)
            let output = try await stalled.value
            #expect(output.lastLineJSON["statuses"] as? [Int] == Array(repeating: 200, count: clients), "\(output.stdout) \(output.stderr)")
            #expect(app.dependencies.importSlots.taken == 0)
        }
    }

    /// Files this process has open under `folder` (Linux: `/proc/self/fd`), a file being written included.
    static func openFiles(under folder: URL) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
            return target?.hasPrefix(folder.path + "/") == true
        }.count
    }

    /// Calls `check` every 20 ms until it is true or `timeout` passes.
    static func waitUntil(timeout: Duration, _ check: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if check() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return check()
    }

    // MARK: The server's memory

    /// The server binary this test run built: beside the test bundle (any `--scratch-path`), else `.build/debug`.
    static var serverBinary: URL {
        if let test = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let beside = URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent("trail-companion")
            if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        }
        return projectRoot.appendingPathComponent(".build/debug/trail-companion")
    }

    /// VmRSS and VmHWM of a process, in MiB.
    struct Memory: CustomStringConvertible {
        let resident: Double
        let peak: Double

        init(pid: pid_t) throws {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            func value(_ key: String) throws -> Double {
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(key + ":") }, "no \(key) in /proc/\(pid)/status")
                let kilobytes = try #require(Double(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
                return kilobytes / 1024
            }
            resident = try value("VmRSS")
            peak = try value("VmHWM")
        }

        /// Resets the process's peak (VmHWM) to its present size; false where the kernel does not allow it, and the
        /// peak then counts from the start, which only makes the bound harder to meet.
        static func resetPeak(pid: pid_t) -> Bool {
            (try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))) != nil
        }

        var description: String { String(format: "VmRSS %.0f MiB, VmHWM %.0f MiB", resident, peak) }
    }

    @Test(
        "the server's memory for imports of the 20 MiB limit (CSV of empty rows, one and four at once; a full CSV; GeoJSON, one and four): peak under 300 MiB for one and 1 GiB for four, back within 50 MiB",
        .timeLimit(.minutes(10))
    )
    func importMemoryStaysBounded() async throws {
        let binary = Self.serverBinary
        try #require(
            FileManager.default.isExecutableFile(atPath: binary.path),
            "no server binary at \(binary.path): swift build --build-tests builds it"
        )
        let folder = TestScratch.folder("import-memory")
        let data = folder.appendingPathComponent("data")
        let signatures = try EICAR.writeTestSignatures(to: folder.appendingPathComponent("signatures"))
        let server = TrailServerProcess(binary: binary, data: data, signatures: signatures, log: folder.appendingPathComponent("server.log"))
        defer { server.killNow() }
        for arguments in [
            ["user", "create", "--email", "author@memory.test", "--name", "Author", "--password", "correct horse battery staple"],
            ["site", "create", "--slug", "park", "--name", "Memory Park"],
            ["member", "add", "--site", "park", "--email", "author@memory.test", "--role", "author"],
        ] {
            let output = try await server.cli(arguments)
            try #require(output.status == 0, "trail-companion \(arguments.joined(separator: " ")): \(output.stdout) \(output.stderr)")
        }
        let token = try await server.token("author@memory.test")
        try await server.start()
        let pid = try #require(server.pid)
        let tour = try await server.call(
            "POST",
            "/api/v1/manage/tours",
            token: token,
            json: #"{"site":"park","name":"Memory Walk","description":""}"#
        )
        try #require(tour.status == 201, "create tour: \(tour.status) \(tour.text)")
        let tourId = try #require(publishInt(tour.json["id"]))
        let path = "/api/v1/manage/tours/\(tourId)/import?dryRun=true"

        // Exactly the size limit: a header, then empty rows.
        let limit = AppConfig().importMaxSize
        let header = "name,latitude,longitude\n"
        let emptyRows = folder.appendingPathComponent("empty-rows.csv")
        var bytes = Data(header.utf8)
        bytes.append(Data(repeating: UInt8(ascii: "\n"), count: limit - bytes.count))
        try bytes.write(to: emptyRows)
        // The same size read to its end: 2,000 points and a long unused column.
        let full = folder.appendingPathComponent("full.csv")
        var text = "latitude,longitude,name,notes\n"
        let filler = String(repeating: "x", count: limit / 2_000 - 40)
        for row in 0..<2_000 {
            text += String(format: "%.5f,%.5f,Stop %d,", 44.3 + Double(row) * 0.00001, -122.1 - Double(row) * 0.00001, row) + filler + "\n"
        }
        try Data(text.utf8).write(to: full)
        #expect(Data(text.utf8).count <= limit)

        // GeoJSON at the limit: one point, then polygons, which the import skips (their coordinates are never made
        // into values).
        let polygons = folder.appendingPathComponent("polygons.geojson")
        let ring = (0..<200).map { String(format: "[%.5f,%.5f]", -122.1 + Double($0) * 0.00001, 44.4 + Double($0) * 0.00001) }.joined(separator: ",")
        let polygon = #",{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[\#(ring)]]}}"#
        var geoJSON =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"A"},"geometry":{"type":"Point","coordinates":[-122.1,44.4]}}"#
        geoJSON += String(repeating: polygon, count: (limit - geoJSON.utf8.count - 2) / polygon.utf8.count) + "]}"
        try Data(geoJSON.utf8).write(to: polygons)

        // Settle once (the first request's lazily made state), then measure from there.
        _ = try await server.upload(full, to: path, token: token)
        var report: [String] = []

        func measure(_ name: String, files: [URL], expect status: Int, peakBelow: Double) async throws {
            let before = try Memory(pid: pid)
            let reset = Memory.resetPeak(pid: pid)
            let answers = try await withThrowingTaskGroup(of: TrailServerProcess.Answer.self) { group in
                for file in files { group.addTask { try await server.upload(file, to: path, token: token) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let after = try Memory(pid: pid)
            for answer in answers {
                #expect(answer.status == status, "\(name): \(answer.status) \(answer.text.prefix(300))")
                if status == 422 { #expect(answer.text.contains("more than 10,000 rows"), "\(name): \(answer.text.prefix(300))") }
            }
            let line = "\(name): before \(before), after \(after)\(reset ? "" : " (peak since start)")"
            report.append(line)
            #expect(after.peak < peakBelow, "\(line)")
            #expect(after.resident - before.resident < 50, "\(line): not given back")
        }

        try await measure("one CSV of empty rows at the limit", files: [emptyRows], expect: 422, peakBelow: 300)
        try await measure("four at once", files: Array(repeating: emptyRows, count: 4), expect: 422, peakBelow: 1024)
        try await measure("one full CSV at the limit, read to its end", files: [full], expect: 200, peakBelow: 300)
        try await measure("one GeoJSON of polygons at the limit", files: [polygons], expect: 200, peakBelow: 300)
        try await measure("four GeoJSON at once", files: Array(repeating: polygons, count: 4), expect: 200, peakBelow: 1024)
        print(report.joined(separator: "\n"))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("uploads").path)) ?? []).isEmpty)
        await server.stop()
    }
}
