import Foundation
import PackageFormat
import TestSupport
import Testing

/// Deterministic bytes (SplitMix64).
func seededBytes(_ count: Int, seed: UInt64) -> Data {
    var random = SeededBytes(seed: seed)
    return random.bytes(count)
}

/// A small real package (two waypoints: an image, a video, a text), signed with `key`.
struct PackageFixture {
    let folder: TemporaryFolder
    let zip: URL
    let built: BuiltPackage
    let key: SigningKey

    static func make(key: SigningKey = .generate()) throws -> PackageFixture {
        let folder = try TemporaryFolder("pkg")
        let files: [(waypoint: Int, name: String, type: Manifest.AssetType, mime: String, data: Data)] = [
            (0, "view.png", .image, "image/png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + seededBytes(30_000, seed: 1)),
            (0, "intro.mp4", .video, "video/mp4", Data([0, 0, 0, 0x20]) + Data("ftypisom".utf8) + seededBytes(90_000, seed: 2)),
            (1, "notes.txt", .text, "text/plain", Data(String(repeating: "The trail climbs through old-growth fir. ", count: 200).utf8)),
        ]
        let names = ["Fish Lake", "Lava Overlook"]
        var assets: [[Manifest.Asset]] = [[], []]
        var media: [PackageEntrySource] = []
        for (index, file) in files.enumerated() {
            let path = "\(PackageLayout.waypointFolder(order: file.waypoint + 1, name: names[file.waypoint]))/\(file.name)"
            let source = folder.file("src-\(index)")
            try file.data.write(to: source)
            assets[file.waypoint].append(
                Manifest.Asset(
                    type: file.type,
                    path: path,
                    mimeType: file.mime,
                    size: Int64(file.data.count),
                    sha256: PackageHashing.sha256Hex(file.data)
                )
            )
            media.append(PackageEntrySource(path: path, fileURL: source, mimeType: file.mime))
        }
        let manifest = Manifest(
            packageId: "fixture-\(UUID().uuidString.prefix(8).lowercased())",
            version: 1,
            createdAt: "2026-11-22T10:00:00Z",
            packageName: "Fish Lake Loop",
            park: "Sweet Home Ranger District",
            mapName: "fish-lake-loop",
            bounds: .init(north: 44.43, south: 44.36, east: -122.00, west: -122.20),
            description: "A loop.",
            waypoints: names.enumerated().map { index, name in
                Manifest.Waypoint(
                    name: name,
                    order: index + 1,
                    coordinates: .init(latitude: 44.40 - Double(index) * 0.01, longitude: -122.1),
                    description: "Stop \(index + 1)",
                    assets: assets[index]
                )
            }
        )
        let zip = folder.file("package.zip")
        let built = try PackageBuilder.build(
            manifest: manifest,
            geoJSON: try TourGeoJSON.make(manifest: manifest),
            media: media,
            tilesFile: nil,
            signingKey: key,
            to: zip
        )
        return PackageFixture(folder: folder, zip: zip, built: built, key: key)
    }
}

// MARK: Python's zipfile, to craft hostile archives

struct ProcessOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

func runProcess(_ program: String, _ arguments: [String]) throws -> ProcessOutput {
    let folder = try TemporaryFolder("proc")
    defer { folder.remove() }
    let outURL = folder.file("out")
    let errURL = folder.file("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [program] + arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ProcessOutput(
        status: process.terminationStatus,
        stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
    )
}

/// One entry to add to a crafted zip.
struct CraftedEntry {
    var name: String
    var data: Data
    var symlink = false
    var deflate = false
    /// Written into the local header and the central directory instead of the real size.
    var declaredSize: Int?
}

/// Writes `destination` with Python's `zipfile`: the entries of `source` (minus `drop`, with `replace`d
/// contents), then `add`. Symbolic links get a Unix mode of 0o120777 in `external_attr`.
func craftZip(_ destination: URL, source: URL? = nil, replace: [String: Data] = [:], drop: Set<String> = [], add: [CraftedEntry] = []) throws {
    let script = #"""
        import base64, json, struct, sys, zipfile
        out, spec = sys.argv[1], json.load(open(sys.argv[2]))
        patches = []
        with zipfile.ZipFile(out, "w") as archive:
            if spec["source"]:
                with zipfile.ZipFile(spec["source"]) as original:
                    for info in original.infolist():
                        if info.filename in spec["drop"]:
                            continue
                        data = original.read(info)
                        if info.filename in spec["replace"]:
                            data = base64.b64decode(spec["replace"][info.filename])
                        archive.writestr(info, data)
            for entry in spec["add"]:
                info = zipfile.ZipInfo(entry["name"], date_time=(2000, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = (0o120777 if entry["symlink"] else 0o100644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED if entry["deflate"] else zipfile.ZIP_STORED
                archive.writestr(info, base64.b64decode(entry["data"]))
                if entry["declaredSize"] is not None:
                    patches.append((entry["name"].encode(), entry["declaredSize"]))
        if patches:
            data = bytearray(open(out, "rb").read())
            for name, size in patches:
                index = 0
                while True:
                    index = data.find(b"PK\x01\x02", index)
                    if index < 0:
                        break
                    length = struct.unpack_from("<H", data, index + 28)[0]
                    if bytes(data[index + 46:index + 46 + length]) == name:
                        struct.pack_into("<I", data, index + 24, size)
                        local = struct.unpack_from("<I", data, index + 42)[0]
                        struct.pack_into("<I", data, local + 22, size)
                    index += 4
            open(out, "wb").write(bytes(data))
        """#
    let folder = try TemporaryFolder("craft")
    defer { folder.remove() }
    let spec: [String: Any] = [
        "source": source?.path ?? NSNull(),
        "replace": replace.mapValues { $0.base64EncodedString() },
        "drop": Array(drop),
        "add": add.map { entry -> [String: Any] in
            [
                "name": entry.name, "data": entry.data.base64EncodedString(), "symlink": entry.symlink, "deflate": entry.deflate,
                "declaredSize": entry.declaredSize.map { $0 as Any } ?? NSNull(),
            ]
        },
    ]
    try JSONSerialization.data(withJSONObject: spec).write(to: folder.file("spec.json"))
    try Data(script.utf8).write(to: folder.file("craft.py"))
    let result = try runProcess("python3", [folder.file("craft.py").path, destination.path, folder.file("spec.json").path])
    guard result.status == 0 else { throw CraftError(message: "craft.py exited \(result.status): \(result.stderr)") }
}

struct CraftError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A copy of `zip` with one byte inverted at `offset` (negative: from the end).
func flipByte(of zip: URL, at offset: Int, to destination: URL) throws {
    var data = try Data(contentsOf: zip)
    let index = offset >= 0 ? offset : data.count + offset
    data[index] ^= 0xFF
    try data.write(to: destination)
}
