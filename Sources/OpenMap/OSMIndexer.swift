import COSMIndex
import Foundation

/// Makes the index of `--osm-extract` once: the extract is read in one pass (libosmium, in `osm_index.cpp`) into a
/// folder named by its fingerprint, written under a `.partial` name and renamed when whole, so a crash or a full disk
/// never leaves an index that looks finished. A changed extract gets a new folder and the old one is removed.
package enum OSMIndexer {
    /// Edge of the index's grid cells in degrees (about 5.5 km north to south): a 10 km frame reads at most 12 cells.
    package static let cellDegrees = 0.05

    /// The extracts `path` names: the file itself, or a folder's `.osm.pbf`, `.pbf` and `.osm` files, in name order.
    package static func extracts(at path: String) throws(OpenMapError) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw OpenMapError("The OpenStreetMap extract \(path) does not exist.")
        }
        guard isFolder.boolValue else {
            guard isExtractName(path) else {
                throw OpenMapError("\(path) is not an OpenStreetMap extract: give an .osm.pbf or .osm file, or a folder of them.")
            }
            return [path]
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter(isExtractName).sorted()
        guard !names.isEmpty else {
            throw OpenMapError("The folder \(path) holds no OpenStreetMap extract (.osm.pbf or .osm files).")
        }
        return names.map { (path as NSString).appendingPathComponent($0) }
    }

    static func isExtractName(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".osm.pbf") || lower.hasSuffix(".pbf") || lower.hasSuffix(".osm")
    }

    /// Names, sizes and modification times, hashed (FNV-1a, 64 bits), with the index layout's version.
    package static func fingerprint(of files: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for file in files {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            for byte in "\((file as NSString).lastPathComponent)|\(size)|\(modified);".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return "v\(OSMIndexMetadata.currentFormat)-" + String(hash, radix: 16)
    }

    package static func totalSize(of files: [String]) -> Int64 {
        files.reduce(0) { $0 + (((try? FileManager.default.attributesOfItem(atPath: $1))?[.size] as? NSNumber)?.int64Value ?? 0) }
    }

    /// Room the index needs on disk: the features it keeps take about as much as the compressed extract they came from
    /// (measured on extracts written by the tests and the benchmark), so the extract's size and a half, plus 64 MiB.
    package static func roomNeeded(forExtractBytes bytes: Int64) -> Int64 { bytes + bytes / 2 + 64 << 20 }

    /// The index of `path` in `root` (made now when missing or out of date), and whether it was made now.
    package static func index(extract path: String, root: URL, freeBytes: (URL) -> Int64? = freeSpace) throws(OpenMapError) -> (OSMIndex, made: Bool)
    {
        let files = try extracts(at: path)
        let fingerprint = fingerprint(of: files)
        let folder = root.appendingPathComponent(fingerprint)
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.json").path) {
            return (try OSMIndex(folder: folder), false)
        }
        do { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) } catch {
            throw OpenMapError("The map index folder \(root.path) cannot be made: \(error.localizedDescription)")
        }
        let bytes = totalSize(of: files)
        let needed = roomNeeded(forExtractBytes: bytes)
        if let free = freeBytes(root), free < needed {
            throw OpenMapError(
                "The OpenStreetMap extract is too large for the disk: indexing \(megabytes(bytes)) needs about \(megabytes(needed)) free in \(root.path), and \(megabytes(free)) is free. Free some room, or give a smaller extract (a region's instead of a country's)."
            )
        }
        let partial = root.appendingPathComponent(fingerprint + ".partial")
        try? FileManager.default.removeItem(at: partial)
        do { try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true) } catch {
            throw OpenMapError("The map index folder \(partial.path) cannot be made: \(error.localizedDescription)")
        }
        let started = Date()
        var stats = trail_osm_index_stats()
        var message = [CChar](repeating: 0, count: 1024)
        let cStrings = files.map { strdup($0) }
        defer { for pointer in cStrings { free(pointer) } }
        var inputs: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        let status = trail_osm_index_build(&inputs, Int32(files.count), partial.path, cellDegrees, &stats, &message, message.count)
        guard status == 0 else {
            try? FileManager.default.removeItem(at: partial)
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw OpenMapError(
                "The OpenStreetMap extract cannot be read: \(reason.isEmpty ? "osmium gave no reason" : reason). Download it again, or give another file."
            )
        }
        let metadata = OSMIndexMetadata(
            format: OSMIndexMetadata.currentFormat,
            fingerprint: fingerprint,
            files: files.map { ($0 as NSString).lastPathComponent },
            bytes: bytes,
            cellDegrees: cellDegrees,
            features: Int(stats.features),
            names: Int(stats.names),
            extent: stats.features > 0 ? .init(west: stats.west, south: stats.south, east: stats.east, north: stats.north) : nil,
            seconds: Date().timeIntervalSince(started)
        )
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(metadata).write(to: partial.appendingPathComponent("index.json"))
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.moveItem(at: partial, to: folder)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            throw OpenMapError("The map index cannot be written to \(root.path): \(error.localizedDescription)")
        }
        // Indexes of extracts given before: their features would never be read again.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] where name != fingerprint && name.hasPrefix("v") {
            try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
        }
        return (try OSMIndex(folder: folder), true)
    }

    package static func freeSpace(_ folder: URL) -> Int64? {
        var stats = statvfs()
        guard statvfs(folder.path, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    static func megabytes(_ bytes: Int64) -> String {
        bytes >= 1 << 30 ? String(format: "%.1f GB", Double(bytes) / Double(1 << 30)) : "\(max(bytes >> 20, 1)) MB"
    }
}
