import Foundation
import PackageFormat
import TestSupport
import Testing

/// Runs a Python 3 script (written to a temp file) and returns its standard output; fails the
/// calling test with Python's standard error when the script exits non-zero.
func python(_ script: String, _ arguments: [String]) throws -> Data {
    let folder = try TemporaryFolder("py")
    defer { folder.remove() }
    let scriptURL = folder.file("script.py")
    try Data(script.utf8).write(to: scriptURL)
    let result = try ChildProcess.runBlocking("python3", [scriptURL.path] + arguments)
    guard result.status == 0 else {
        throw TestFailure("python3 exited with \(result.status): \(result.stderr)")
    }
    return Data(result.stdout.utf8)
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Zip entries as Python's `zipfile` reads them (an independent implementation).
struct PythonZipEntry: Decodable {
    var name: String
    var size: Int64
    var compressedSize: Int64
    var method: Int
    var sha256: String
    var dateTime: [Int]
    var externalAttr: UInt32
    var createSystem: Int
}

struct PythonZipListing: Decodable {
    var entries: [PythonZipEntry]
    var fileSHA256: String
    var fileSize: Int64
    var zip64EndRecord: Bool
}

/// Reads every entry (Python checks each CRC-32 as it reaches the end of an entry) and hashes it.
func pythonZipListing(_ zip: URL) throws -> PythonZipListing {
    let script = #"""
        import hashlib, json, os, sys, zipfile
        path = sys.argv[1]
        entries = []
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                digest = hashlib.sha256()
                with archive.open(info) as stream:
                    while True:
                        chunk = stream.read(1 << 20)
                        if not chunk:
                            break
                        digest.update(chunk)
                entries.append({
                    "name": info.filename, "size": info.file_size, "compressedSize": info.compress_size,
                    "method": info.compress_type, "sha256": digest.hexdigest(),
                    "dateTime": list(info.date_time), "externalAttr": info.external_attr,
                    "createSystem": info.create_system,
                })
        whole = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                whole.update(chunk)
            size = handle.tell()
            handle.seek(max(0, size - 200))
            tail = handle.read()
        json.dump({"entries": entries, "fileSHA256": whole.hexdigest(), "fileSize": size,
                   "zip64EndRecord": b"PK\x06\x06" in tail and b"PK\x06\x07" in tail}, sys.stdout)
        """#
    return try JSONDecoder().decode(PythonZipListing.self, from: try python(script, [zip.path]))
}

/// Rewrites a zip entry by entry with Python: `edits` maps an entry name to new bytes (base64)
/// or to null (drop it); `additions` are extra entries `[name, base64, kind]` where kind is
/// "file" or "symlink".
func pythonRewrite(
    _ source: URL,
    to destination: URL,
    replace: [String: Data] = [:],
    drop: Set<String> = [],
    add: [(name: String, data: Data, symlink: Bool)] = []
) throws {
    let script = #"""
        import base64, json, sys, zipfile
        source, destination, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
        with zipfile.ZipFile(source) as original, zipfile.ZipFile(destination, "w") as result:
            for info in original.infolist():
                if info.filename in spec["drop"]:
                    continue
                data = original.read(info)
                if info.filename in spec["replace"]:
                    data = base64.b64decode(spec["replace"][info.filename])
                result.writestr(info, data)
            for name, payload, symlink in spec["add"]:
                info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = ((0o120777 if symlink else 0o100644) << 16)
                result.writestr(info, base64.b64decode(payload))
        """#
    let spec: [String: Any] = [
        "replace": replace.mapValues { $0.base64EncodedString() },
        "drop": Array(drop),
        "add": add.map { [$0.name, $0.data.base64EncodedString(), $0.symlink] as [Any] },
    ]
    let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
    _ = try python(script, [source.path, destination.path, json])
}

// MARK: - A tour fixture

/// A three-waypoint tour with video, image, audio and text media (and optionally tiles and a
/// route), its files written to a temp folder.
struct TourFixture {
    var folder: TemporaryFolder
    var manifest: Manifest
    var media: [PackageEntrySource]
    var tilesFile: URL?
    var key: SigningKey

    var geoJSON: Data { get throws { try TourGeoJSON.make(manifest: manifest) } }

    static func make(withTiles: Bool = true, seed: UInt64 = 7) throws -> TourFixture {
        let folder = try TemporaryFolder("tour")
        var random = SeededBytes(seed: seed)
        let mediaFolder = folder.url.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: mediaFolder, withIntermediateDirectories: true)

        struct Spec {
            var waypoint: Int
            var name: String
            var type: Manifest.AssetType
            var mime: String
            var data: Data
        }
        var mp4 = Data([0, 0, 0, 0x20]) + Data("ftypisom".utf8)
        mp4 += random.bytes(300_000)
        var jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data("JFIF".utf8)
        jpeg += random.bytes(200_000) + Data([0xFF, 0xD9])
        let mp3 = Data("ID3".utf8) + random.bytes(120_000)
        let text = Data(String(repeating: "The trail climbs gently through old-growth Douglas fir. ", count: 400).utf8)
        let wav = Data("RIFF".utf8) + Data(repeating: 0, count: 4) + Data("WAVEfmt ".utf8) + Data(repeating: 0x10, count: 40_000)

        let waypointNames = ["Fish Lake", "Café Ñandú Overlook", "Devil's Punchbowl"]
        let specs = [
            Spec(waypoint: 0, name: "intro.mp4", type: .video, mime: "video/mp4", data: mp4),
            Spec(waypoint: 0, name: "lake.jpg", type: .image, mime: "image/jpeg", data: jpeg),
            Spec(waypoint: 1, name: "narration.mp3", type: .audio, mime: "audio/mpeg", data: mp3),
            Spec(waypoint: 1, name: "notes.txt", type: .text, mime: "text/plain; charset=utf-8", data: text),
            Spec(waypoint: 2, name: "birdsong.wav", type: .audio, mime: "audio/wav", data: wav),
        ]
        var assetsByWaypoint: [[Manifest.Asset]] = [[], [], []]
        var media: [PackageEntrySource] = []
        for (index, spec) in specs.enumerated() {
            let folderName = PackageLayout.waypointFolder(order: spec.waypoint + 1, name: waypointNames[spec.waypoint])
            let path = "\(folderName)/\(PackageLayout.safeFileName(spec.name, fallbackExtension: "bin"))"
            // Stored under a server-made name, as the server does.
            let file = mediaFolder.appendingPathComponent("asset-\(index)")
            try spec.data.write(to: file)
            assetsByWaypoint[spec.waypoint].append(
                Manifest.Asset(
                    type: spec.type,
                    path: path,
                    mimeType: spec.mime,
                    size: Int64(spec.data.count),
                    sha256: PackageHashing.sha256Hex(spec.data)
                )
            )
            media.append(PackageEntrySource(path: path, fileURL: file, mimeType: spec.mime))
        }
        let coordinates = [(44.40, -122.00), (44.41234567891, -122.1), (44.38, -122.15)]
        let waypoints = waypointNames.enumerated().map { index, name in
            Manifest.Waypoint(
                name: name,
                order: index + 1,
                coordinates: .init(latitude: coordinates[index].0, longitude: coordinates[index].1),
                description: "Stop \(index + 1): \(name) / \"quoted\" \\ backslash",
                assets: assetsByWaypoint[index],
                distanceFromPreviousMeters: index == 0 ? nil : 1234.5 * Double(index)
            )
        }
        var tiles: Manifest.Tiles?
        var tilesFile: URL?
        if withTiles {
            let data = Data("SQLite format 3\u{0}".utf8) + Data(repeating: 0x42, count: 50_000) + random.bytes(10_000)
            let url = folder.url.appendingPathComponent("map.mbtiles")
            try data.write(to: url)
            tiles = Manifest.Tiles(
                format: "png",
                minZoom: 10,
                maxZoom: 16,
                tileCount: 1234,
                sha256: PackageHashing.sha256Hex(data),
                size: Int64(data.count)
            )
            tilesFile = url
        }
        let manifest = Manifest(
            packageId: "3f6c1d2e-santiam",
            version: 3,
            createdAt: "2026-11-22T10:00:00Z",
            packageName: "Santiam Wagon Road",
            park: "Sweet Home Ranger District",
            mapName: "santiam-wagon-road",
            bounds: .init(north: 44.43, south: 44.36, east: -122.00, west: -122.20),
            description: "A walk along the old wagon road.",
            waypoints: waypoints,
            tiles: tiles,
            route: [
                .init(longitude: -122.0, latitude: 44.40), .init(longitude: -122.1, latitude: 44.41),
                .init(longitude: -122.15, latitude: 44.38),
            ],
            estimatedDurationMinutes: 95
        )
        return TourFixture(
            folder: folder,
            manifest: manifest,
            media: media,
            tilesFile: tilesFile,
            key: SigningKey.generate()
        )
    }

    /// The fixture's manifest (the fixture's files are removed again).
    static func manifest() throws -> Manifest {
        let fixture = try make()
        defer { fixture.folder.remove() }
        return fixture.manifest
    }

    @discardableResult
    func build(to destination: URL, progress: PackageBuilder.Progress? = nil, inputCheck: PackageBuilder.InputCheck = .sha256) throws -> BuiltPackage
    {
        try PackageBuilder.build(
            manifest: manifest,
            geoJSON: try geoJSON,
            media: media,
            tilesFile: tilesFile,
            signingKey: key,
            to: destination,
            progress: progress,
            inputCheck: inputCheck
        )
    }
}

final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
