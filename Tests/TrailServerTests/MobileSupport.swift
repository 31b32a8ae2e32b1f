import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PackageFormat
import TestSupport
import Testing

@testable import TrailServer

/// A version released through the HTTP API, as the mobile API serves it.
struct ReleasedPackage {
    let packageId: String
    let version: Int
    let sha256: String
    let size: Int64
    /// The released zip on the server's disk.
    let zip: URL
    var etag: String { "\"\(sha256)\"" }
}

extension TestEnv {
    /// The whole flow through the management API, as rangers do it: upload clean files (and a video of `videoSize`
    /// bytes), scan them, submit, build, approve as reviewer, push as the author. Returns the released version.
    /// Submits, builds, approves and pushes the seed tour. `media: false` releases the tour as it stands, without the
    /// clean image and text each release adds otherwise.
    func releaseThroughAPI(
        _ client: some TestClientProtocol,
        seed number: UInt64 = 11,
        videoSize: Int? = nil,
        media: Bool = true
    ) async throws -> ReleasedPackage {
        let author = try await token("author@test.org")
        let reviewer = try await token("reviewer@test.org")
        if media { try await client.addCleanMediaForRelease(self, token: author, seed: number) }
        if let videoSize {
            let id = try await client.publishUpload(
                self,
                token: author,
                data: MediaFixtures.mp4(size: videoSize, seed: number + 7),
                fileName: "walk \(number).mp4",
                contentType: "video/mp4"
            )
            #expect(await scanAll() == 2, "the video and its captions")
            #expect(try await database.asset(id: id)?.scanStatus == .clean)
        }
        let requestId = try await client.publishSubmit(self, token: author)
        #expect(await buildAll() == 1)
        let built = try await request(requestId)
        #expect(built.state == .pending, "build failed: \(built.failureReason ?? "")")
        let approve = try await client.publishAction(requestId, "approve", token: reviewer, json: #"{"comment":"Looks right."}"#)
        #expect(approve.status == .ok, "approve: \(approve.status) \(approve.text)")
        await #expect(try request(requestId).state == .ready)
        let push = try await client.publishAction(requestId, "push", token: author)
        #expect(push.status == .ok, "push: \(push.status) \(push.text)")
        let packageId = try #require(push.jsonObject["packageId"] as? String, "no packageId in \(push.text)")
        let version = try #require((push.jsonObject["version"] as? String).flatMap { Int($0) } ?? push.jsonObject["version"] as? Int)
        let record = try #require(try await database.packageVersion(packageId: packageId, version: version))
        let zip = packageZip(packageId, version: version)
        #expect(exists(zip))
        return ReleasedPackage(packageId: packageId, version: version, sha256: record.sha256, size: record.size, zip: zip)
    }

    func verifiedCount(_ packageId: String, version: Int) async throws -> Int {
        try await database.read {
            try Int.fetchOne(
                $0,
                sql: "SELECT verifiedCount FROM packageVersion WHERE packageId = ? AND version = ?",
                arguments: [packageId, version]
            ) ?? -1
        }
    }
}

extension TestClientProtocol {
    /// A clean image and text on the seed's waypoint, scanned.
    func addCleanMediaForRelease(_ env: TestEnv, token: String, seed number: UInt64) async throws {
        let files: [(Data, String, String)] = [
            (MediaFixtures.png(size: 40_000, seed: number), "view \(number).png", "image/png"),
            (MediaFixtures.text("Fish Lake, stop \(number): the old remount depot is to the east."), "notes \(number).txt", "text/plain"),
        ]
        var ids: [Int64] = []
        for (data, name, type) in files {
            ids.append(try await publishUpload(env, token: token, data: data, fileName: name, contentType: type))
        }
        #expect(await env.scanAll() == files.count)
        for id in ids { #expect(try await env.database.asset(id: id)?.scanStatus == .clean, "asset \(id) is not clean") }
    }

    /// `POST /api/v1/manage/packages/{id}/<action>` (unpublish, publish, rollback).
    func managePackage(_ packageId: String, _ action: String, token: String, json: String? = nil) async throws -> TestResponse {
        try await api(.post, "/api/v1/manage/packages/\(packageId)/\(action)", token: token, json: json)
    }

    func catalogVersion() async throws -> Int {
        let response = try await execute(uri: "/api/v1/catalog", method: .get)
        #expect(response.status == .ok)
        return try #require(response.jsonObject["catalogVersion"] as? Int, "\(response.text)")
    }
}

extension TestResponse {
    var data: Data { Data(buffer: body) }
    var jsonArray: [[String: Any]] { (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [[String: Any]] ?? [] }
}

// MARK: Tampering with zips (Python's zipfile)

enum ZipTamper {
    /// A copy of `zip` with one byte inverted at `offset`.
    static func flipByte(of zip: URL, at offset: Int, to destination: URL) throws {
        var data = try Data(contentsOf: zip)
        data[offset] ^= 0xFF
        try data.write(to: destination)
    }

    /// Offset of the first data byte of the entry whose path ends with `suffix`.
    static func dataOffset(in zip: URL, entrySuffix suffix: String) throws -> Int {
        let reader = try PackageArchiveReader(url: zip)
        let entry = try #require(reader.entries.first { $0.path.hasSuffix(suffix) }, "no entry ending \(suffix)")
        return Int(entry.dataOffset)
    }

    /// A copy of `zip` whose manifest.json has one field changed (still valid JSON, same signature).
    static func changeManifest(of zip: URL, to destination: URL) async throws {
        let reader = try PackageArchiveReader(url: zip)
        let entry = try #require(reader.entry(named: "manifest.json"))
        var bytes = Data()
        try reader.read(entry, limit: 1 << 24) { bytes.append($0) }
        var manifest = try Manifest.decode(bytes)
        manifest.description += " (edited)"
        try await rewrite(zip, to: destination, replace: ["manifest.json": try manifest.encoded()])
    }

    /// `zip`'s entries plus `../` entries, an absolute path and a symbolic link (Unix mode 0o120777 in external_attr).
    static func addHostileEntries(to zip: URL, destination: URL, marker: String) async throws {
        try await rewrite(
            zip,
            to: destination,
            add: [
                ("../\(marker)-up.txt", Data("up".utf8), false),
                ("waypoints/../../\(marker)-up2.txt", Data("up".utf8), false),
                ("/tmp/\(marker)-absolute.txt", Data("abs".utf8), false),
                ("waypoints/01-fish-lake/\(marker)-link", Data("/etc/passwd".utf8), true),
            ]
        )
    }

    static func rewrite(
        _ source: URL,
        to destination: URL,
        replace: [String: Data] = [:],
        add: [(name: String, data: Data, symlink: Bool)] = []
    ) async throws {
        let script = #"""
            import base64, json, sys, zipfile
            source, destination, spec = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
            with zipfile.ZipFile(source) as original, zipfile.ZipFile(destination, "w") as result:
                for info in original.infolist():
                    data = original.read(info)
                    if info.filename in spec["replace"]:
                        data = base64.b64decode(spec["replace"][info.filename])
                    result.writestr(info, data)
                for name, payload, symlink in spec["add"]:
                    info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
                    info.create_system = 3
                    info.external_attr = (0o120777 if symlink else 0o100644) << 16
                    result.writestr(info, base64.b64decode(payload))
            """#
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tamper-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec: [String: Any] = [
            "replace": replace.mapValues { $0.base64EncodedString() },
            "add": add.map { [$0.name, $0.data.base64EncodedString(), $0.symlink] as [Any] },
        ]
        try JSONSerialization.data(withJSONObject: spec).write(to: folder.appendingPathComponent("spec.json"))
        try Data(script.utf8).write(to: folder.appendingPathComponent("rewrite.py"))
        let output = try await ChildProcess.run(
            "python3",
            [
                folder.appendingPathComponent("rewrite.py").path, source.path, destination.path,
                folder.appendingPathComponent("spec.json").path,
            ]
        )
        try #require(output.status == 0, "rewrite.py: \(output.stderr)")
    }
}
