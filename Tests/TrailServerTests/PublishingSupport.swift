import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MalwareScan
import NIOCore
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

#if canImport(Glibc)
import Glibc
#endif

/// What the publishing tests ask of the app harness.
extension TestEnv {
    func request(_ id: String) async throws -> PublishRequest { try #require(try await database.publishRequest(id: id), "no request \(id)") }

    func package(_ id: String) async throws -> PackageRecord { try #require(try await database.package(id: id), "no package \(id)") }

    func auditCount(_ action: String, objectId: String? = nil) async throws -> Int {
        try await database.read { db in
            if let objectId {
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM auditEvent WHERE action = ? AND objectId = ?", arguments: [action, objectId])
                    ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM auditEvent WHERE action = ?", arguments: [action]) ?? 0
        }
    }

    func reviews(_ requestId: String) async throws -> [Review] {
        try await database.read { try Review.filter(Column("requestId") == requestId).fetchAll($0) }
    }

    func stagedZip(_ requestId: String) -> URL { stagingFolder(requestId).appendingPathComponent("package.zip") }
    func packageZip(_ packageId: String, version: Int) -> URL {
        paths.packages.appendingPathComponent(packageId).appendingPathComponent("\(version).zip")
    }

    // MARK: Content

    /// Adds a clean, scanned image, video and text to a waypoint (seed's Fish Lake by default) through the management API.
    @discardableResult
    func addCleanMedia(_ client: some TestClientProtocol, token: String, waypointId: Int64? = nil, seed number: UInt64 = 11) async throws -> [Int64] {
        let files: [(Data, String, String)] = [
            (MediaFixtures.png(size: 40_000, seed: number), "lake view.png", "image/png"),
            (PublishFixtures.mp4(size: 120_000, seed: number + 1), "intro.mp4", "video/mp4"),
            (MediaFixtures.text("Fish Lake, stop \(number): the old remount depot is to the east."), "notes.txt", "text/plain"),
        ]
        var ids: [Int64] = []
        for (data, name, type) in files {
            ids.append(try await client.publishUpload(self, token: token, data: data, fileName: name, contentType: type, waypointId: waypointId))
        }
        #expect(await scanAll() == files.count + 1, "the three files and the video's captions")
        for id in ids { #expect(try await database.asset(id: id)?.scanStatus == .clean, "asset \(id) is not clean") }
        return ids
    }

    /// Straight to the database, without HTTP: submit, build, and the approvals the site needs.
    func readyRequest(
        tourId: Int64? = nil,
        author: String = "author@test.org",
        approvers: [String] = ["reviewer@test.org", "reviewer2@test.org"]
    ) async throws -> PublishRequest {
        let request = try await database.startPublish(
            tourId: tourId ?? seed.tourId,
            actor: try actor(author),
            tiles: app.dependencies.tileSettings.current
        )
        #expect(await buildAll() == 1)
        let built = try await self.request(request.id)
        #expect(built.state == .pending, "build failed: \(built.failureReason ?? "")")
        for email in approvers {
            _ = try await database.approve(requestId: request.id, reviewer: try user(email), comment: "", actor: try actor(email))
        }
        return try await self.request(request.id)
    }
}

// MARK: HTTP helpers

extension TestClientProtocol {
    /// Multipart upload through `POST /api/v1/manage/tours/{id}/waypoints/{wid}/assets`; returns the new asset's id.
    func publishUpload(
        _ env: TestEnv,
        token: String,
        data: Data,
        fileName: String,
        contentType: String,
        waypointId: Int64? = nil,
        tourId: Int64? = nil
    ) async throws -> Int64 {
        let uri = "/api/v1/manage/tours/\(tourId ?? env.seed.tourId)/waypoints/\(waypointId ?? env.seed.waypointId)/assets"
        let boundary = "trail-publishing-\(UUID().uuidString)"
        let response = try await execute(
            uri: uri,
            method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
            body: PublishFixtures.multipart(data, fileName: fileName, contentType: contentType, boundary: boundary)
        )
        #expect(response.status == .created, "upload of \(fileName): \(response.status) \(response.text)")
        let id = Int64(try #require(publishInt(response.jsonObject["id"]), "no asset id in \(response.text)"))
        // Sites require alt text on images before submitting (the default): fixtures describe every image they add.
        if response.jsonObject["kind"] as? String == "image" {
            let described = try await api(.patch, "/api/v1/manage/assets/\(id)", token: token, json: #"{"altText":"A test picture of the lake."}"#)
            #expect(described.status == .ok, "alt text for \(fileName): \(described.text)")
        }
        // …captions on every video and a transcript on every audio file.
        if response.jsonObject["kind"] as? String == "video" {
            let boundary = "trail-captions-\(UUID().uuidString)"
            let captions = try await execute(
                uri: "/api/v1/manage/assets/\(id)/captions",
                method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: PublishFixtures.multipart(
                    PublishFixtures.captions,
                    fileName: "captions.vtt",
                    contentType: "text/vtt",
                    boundary: boundary
                )
            )
            #expect(captions.status == .created, "captions for \(fileName): \(captions.text)")
        }
        if response.jsonObject["kind"] as? String == "audio" {
            let transcript = try await api(.post, "/api/v1/manage/assets/\(id)/transcript", token: token, json: #"{"text":"Wind over the lake."}"#)
            #expect(transcript.status == .created, "transcript for \(fileName): \(transcript.text)")
        }
        return id
    }

    /// `POST /api/v1/manage/tours/{id}/publish`: expects 202 with a request id and a Location header.
    func publishSubmit(_ env: TestEnv, token: String, tourId: Int64? = nil) async throws -> String {
        let response = try await api(.post, "/api/v1/manage/tours/\(tourId ?? env.seed.tourId)/publish", token: token)
        #expect(response.status == .accepted, "submit: \(response.status) \(response.text)")
        let id = try #require(response.jsonObject["requestId"] as? String, "no requestId in \(response.text)")
        #expect(response.location == "/api/v1/manage/publish-requests/\(id)")
        return id
    }

    /// `GET /api/v1/manage/publish-requests/{rid}` as JSON.
    func publishState(_ id: String, token: String) async throws -> [String: Any] {
        let response = try await api(.get, "/api/v1/manage/publish-requests/\(id)", token: token)
        #expect(response.status == .ok, "GET request \(id): \(response.status) \(response.text)")
        return response.jsonObject
    }

    /// `POST /api/v1/manage/publish-requests/{rid}/<action>`, with a JSON body when given.
    func publishAction(_ id: String, _ action: String, token: String, json: String? = nil) async throws -> TestResponse {
        try await api(.post, "/api/v1/manage/publish-requests/\(id)/\(action)", token: token, json: json)
    }
}

/// A JSON number (or a number in a string: some answers spell versions as strings) as an Int.
func publishInt(_ value: Any?) -> Int? {
    if let number = value as? NSNumber { return number.intValue }
    if let text = value as? String { return Int(text) }
    return nil
}

// MARK: Files to upload

enum PublishFixtures {
    /// An ISO base media file (`ftyp` box, brand `mp42`): MP4 video, stored in the package.
    static func mp4(size: Int, seed: UInt64) -> Data {
        let header: [UInt8] = [0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8) + [0, 0, 0, 8] + Array("free".utf8)
        return Data(header + fillerBytes(count: size - header.count, seed: seed))
    }

    static let captions = Data("WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nWind over the lake.\n".utf8)

    /// One `file` part; with `csrf`, the panel's form: its hidden `_csrf` field first, as browsers send it.
    static func multipart(_ data: Data, fileName: String, contentType: String, boundary: String, csrf: String? = nil) -> ByteBuffer {
        var buffer = ByteBuffer()
        if let csrf { buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n\(csrf)\r\n") }
        buffer.writeString("--\(boundary)\r\n")
        buffer.writeString("Content-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\n")
        buffer.writeString("Content-Type: \(contentType)\r\n\r\n")
        buffer.writeBytes(data)
        buffer.writeString("\r\n--\(boundary)--\r\n")
        return buffer
    }
}

// MARK: Independent readers

/// What Python's `zipfile` reads in a package (Scripts/package_zip.py).
struct PythonZipListing {
    struct Entry {
        let name: String
        let size: Int64
        let compressedSize: Int64
        let method: Int
        let isDirectory: Bool
        let sha256: String
        let dateTime: [Int]
    }
    let entries: [Entry]
    let duplicates: [String]
    let manifest: [String: Any]
    let testzip: String?
    let zip64: Bool
    let fileSHA256: String
    let fileSize: Int64

    static let stored = 0
    static let deflated = 8

    static func read(_ zip: URL, timeout: Duration = .seconds(120)) async throws -> PythonZipListing {
        let output = try await TestScripts.python("package_zip.py", ["inspect", zip.path], timeout: timeout)
        try #require(output.status == 0, "package_zip.py inspect failed (\(output.status)): \(output.stderr)")
        let json = output.lastLineJSON
        let entries = try #require(json["entries"] as? [[String: Any]], "no entries in \(output.stdout.prefix(500))")
        return PythonZipListing(
            entries: entries.map { entry in
                Entry(
                    name: entry["name"] as? String ?? "",
                    size: (entry["size"] as? NSNumber)?.int64Value ?? -1,
                    compressedSize: (entry["compressedSize"] as? NSNumber)?.int64Value ?? -1,
                    method: entry["method"] as? Int ?? -1,
                    isDirectory: entry["isDir"] as? Bool ?? true,
                    sha256: entry["sha256"] as? String ?? "",
                    dateTime: entry["dateTime"] as? [Int] ?? []
                )
            },
            duplicates: json["duplicates"] as? [String] ?? ["?"],
            manifest: json["manifest"] as? [String: Any] ?? [:],
            testzip: json["testzip"] as? String,
            zip64: json["zip64"] as? Bool ?? false,
            fileSHA256: json["fileSHA256"] as? String ?? "",
            fileSize: (json["fileSize"] as? NSNumber)?.int64Value ?? -1
        )
    }

    /// Every `{path, size, sha256}` the manifest lists: the assets and waypoints.geojson (and tiles and their index, and
    /// the drawn map, when present).
    var manifestFiles: [(path: String, size: Int64, sha256: String, mimeType: String)] {
        var files: [(String, Int64, String, String)] = []
        for waypoint in manifest["waypoints"] as? [[String: Any]] ?? [] {
            for asset in waypoint["assets"] as? [[String: Any]] ?? [] {
                files.append(
                    (
                        asset["path"] as? String ?? "", (asset["size"] as? NSNumber)?.int64Value ?? -1, asset["sha256"] as? String ?? "",
                        asset["mimeType"] as? String ?? ""
                    )
                )
                // Its captions and transcript, packaged beside it (WebVTT or plain text).
                for key in ["captions", "transcript"] {
                    guard let file = asset[key] as? [String: Any], let path = file["path"] as? String else { continue }
                    files.append(
                        (
                            path, (file["size"] as? NSNumber)?.int64Value ?? -1, file["sha256"] as? String ?? "",
                            path.hasSuffix(".vtt") ? "text/vtt" : "text/plain"
                        )
                    )
                }
            }
        }
        for key in ["geoJSON", "geojson", "tiles", "basemap"] {
            if let reference = manifest[key] as? [String: Any], let path = reference["path"] as? String {
                files.append(
                    (
                        path, (reference["size"] as? NSNumber)?.int64Value ?? -1, reference["sha256"] as? String ?? "",
                        key == "tiles" ? PackageLayout.mbtilesMimeType : "application/geo+json"
                    )
                )
            }
        }
        // The tiles' index (tiles/index.json), listed with the tiles.
        if let index = (manifest["tiles"] as? [String: Any])?["index"] as? [String: Any], let path = index["path"] as? String {
            files.append((path, (index["size"] as? NSNumber)?.int64Value ?? -1, index["sha256"] as? String ?? "", "application/json"))
        }
        return files
    }
}

/// Checks a built package against its own manifest with Python's `zipfile`: every listed file is in the zip with its
/// size and SHA-256, nothing else is (but the manifest and its signature), no entry name escapes, media that is already
/// compressed is stored and text/JSON deflated, CRCs and `unzip -t` pass. Returns the listing for more checks.
@discardableResult
func expectPackageMatchesManifest(_ zip: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> PythonZipListing {
    let listing = try await PythonZipListing.read(zip)
    #expect(listing.testzip == nil, "zipfile.testzip() found a bad entry: \(listing.testzip ?? "")", sourceLocation: sourceLocation)
    #expect(listing.duplicates.isEmpty, "duplicate entries \(listing.duplicates)", sourceLocation: sourceLocation)
    #expect(!listing.manifest.isEmpty, "manifest.json missing or unreadable", sourceLocation: sourceLocation)
    let listed = listing.manifestFiles
    #expect(!listed.isEmpty, sourceLocation: sourceLocation)
    let entryNames = listing.entries.map(\.name)
    #expect(
        Set(entryNames) == Set(listed.map(\.path) + ["manifest.json", "manifest.sig"]),
        "extra: \(Set(entryNames).subtracting(listed.map(\.path) + ["manifest.json", "manifest.sig"])), missing: \(Set(listed.map(\.path)).subtracting(entryNames))",
        sourceLocation: sourceLocation
    )
    #expect(entryNames.count == listed.count + 2, sourceLocation: sourceLocation)
    #expect(Array(entryNames.prefix(3)) == ["manifest.json", "manifest.sig", "waypoints.geojson"], "\(entryNames)", sourceLocation: sourceLocation)
    for file in listed {
        guard let entry = listing.entries.first(where: { $0.name == file.path }) else {
            Issue.record("\(file.path) is listed in the manifest but not in the zip", sourceLocation: sourceLocation)
            continue
        }
        #expect(entry.size == file.size, "\(file.path): size \(entry.size), manifest says \(file.size)", sourceLocation: sourceLocation)
        #expect(entry.sha256 == file.sha256, "\(file.path): SHA-256 differs from the manifest", sourceLocation: sourceLocation)
        let expectedMethod = PackageLayout.shouldDeflate(mimeType: file.mimeType) ? PythonZipListing.deflated : PythonZipListing.stored
        #expect(entry.method == expectedMethod, "\(file.path) (\(file.mimeType)): method \(entry.method)", sourceLocation: sourceLocation)
    }
    for entry in listing.entries {
        #expect(!entry.isDirectory, "\(entry.name) is a directory entry", sourceLocation: sourceLocation)
        #expect(!entry.name.hasPrefix("/"), "absolute entry name \(entry.name)", sourceLocation: sourceLocation)
        #expect(!entry.name.contains("\\"), "backslash in \(entry.name)", sourceLocation: sourceLocation)
        #expect(
            !entry.name.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0 == "." || $0.isEmpty },
            "unsafe component in \(entry.name)",
            sourceLocation: sourceLocation
        )
        #expect(
            !entry.name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
            "control character in \(entry.name.debugDescription)",
            sourceLocation: sourceLocation
        )
        #expect(entry.dateTime == [2000, 1, 1, 0, 0, 0], "\(entry.name): timestamp \(entry.dateTime)", sourceLocation: sourceLocation)
    }
    if let json = listing.entries.first(where: { $0.name == "manifest.json" }) {
        #expect(json.method == PythonZipListing.deflated, "manifest.json is not deflated", sourceLocation: sourceLocation)
    }
    let unzip = try await TestScripts.unzipTest(zip)
    #expect(unzip.status == 0, "unzip -t: \(unzip.stdout) \(unzip.stderr)", sourceLocation: sourceLocation)
    return listing
}
