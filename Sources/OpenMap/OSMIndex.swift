import COSMIndex
import Foundation

/// One thing the drawn map shows, as the index keeps it: coordinates in 1e-7 degrees (OpenStreetMap's own precision).
package struct OSMFeature: Sendable {
    package enum Kind: UInt8, Sendable, CaseIterable {
        case road = 1
        case path, water, stream, wood, building, peak, viewpoint, parking, toilets, shelter

        /// The `kind` property of the package's `map/basemap.geojson`.
        package var name: String {
            switch self {
            case .road: "road"
            case .path: "path"
            case .water: "water"
            case .stream: "stream"
            case .wood: "wood"
            case .building: "building"
            case .peak: "peak"
            case .viewpoint: "viewpoint"
            case .parking: "parking"
            case .toilets: "toilets"
            case .shelter: "shelter"
            }
        }
    }

    package enum Geometry: UInt8, Sendable {
        case point = 1
        case line, polygon
    }

    package let kind: Kind
    package let geometry: Geometry
    package let name: String?
    /// The `highway` value of roads and paths, the `waterway` value of streams.
    package let featureClass: String?
    /// Metres, from the `ele` tag (peaks).
    package let elevation: Double?
    /// Unique across nodes, ways and relations: a feature filed under two cells is drawn once.
    package let id: UInt64
    /// One part for points and lines; for polygons each outer ring followed by its holes.
    package let rings: [[SIMD2<Int32>]]
    package let isInner: [Bool]
}

/// The index of an extract, written once by `OSMIndexer` into a folder, and read by every build after: the features
/// filed by grid cell (`features.bin`, with `cells.bin` saying where each cell's records are) and the named ones in
/// `names.tsv` for the place search. A build reads the cells of its frame and nothing else of the extract.
package final class OSMIndex: Sendable {
    package let folder: URL
    package let metadata: OSMIndexMetadata
    private let cells: [UInt32: (offset: UInt64, length: UInt64)]
    private let columns: UInt32
    /// The named places, read from `names.tsv` at the first search (a state has hundreds of thousands; a server that
    /// is never asked should not hold them).
    private let loadedPlaces = Locked<[Place]?>(nil)

    package struct Place: Sendable, Equatable {
        package let name: String
        package let kind: OSMFeature.Kind
        package let longitude: Double
        package let latitude: Double
    }

    package init(folder: URL) throws(OpenMapError) {
        self.folder = folder
        do {
            metadata = try JSONDecoder().decode(OSMIndexMetadata.self, from: Data(contentsOf: folder.appendingPathComponent("index.json")))
            let directory = try Data(contentsOf: folder.appendingPathComponent("cells.bin"))
            var cells: [UInt32: (UInt64, UInt64)] = [:]
            directory.withUnsafeBytes { raw in
                for start in stride(from: 0, to: raw.count - 23, by: 24) {
                    let key = raw.loadUnaligned(fromByteOffset: start, as: UInt32.self).littleEndian
                    let offset = raw.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self).littleEndian
                    let length = raw.loadUnaligned(fromByteOffset: start + 16, as: UInt64.self).littleEndian
                    cells[key] = (offset, length)
                }
            }
            self.cells = cells
        } catch {
            throw OpenMapError("The map index in \(folder.path) cannot be read: \(error.localizedDescription)")
        }
        columns = UInt32((360 / metadata.cellDegrees).rounded(.up))
    }

    /// Whether the extract's features reach into the frame at all.
    package func covers(west: Double, south: Double, east: Double, north: Double) -> Bool {
        guard let extent = metadata.extent else { return false }
        return west <= extent.east && east >= extent.west && south <= extent.north && north >= extent.south
    }

    /// Every feature whose bounding box meets the frame, each once.
    package func features(west: Double, south: Double, east: Double, north: Double) throws(OpenMapError) -> [OSMFeature] {
        let cell = metadata.cellDegrees
        let rowCount = (180 / cell).rounded(.up)
        func column(_ longitude: Double) -> UInt32 { UInt32(min(max(((longitude + 180) / cell).rounded(.down), 0), Double(columns) - 1)) }
        func row(_ latitude: Double) -> UInt32 { UInt32(min(max(((latitude + 90) / cell).rounded(.down), 0), rowCount - 1)) }
        let frame = (
            Int32((west * 1e7).rounded(.down)), Int32((south * 1e7).rounded(.down)), Int32((east * 1e7).rounded(.up)),
            Int32((north * 1e7).rounded(.up))
        )
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: folder.appendingPathComponent("features.bin")) } catch {
            throw OpenMapError("The map index's features cannot be opened: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        var seen = Set<UInt64>()
        var found: [OSMFeature] = []
        for r in row(south)...row(north) {
            for c in column(west)...column(east) {
                guard let block = cells[r * columns + c] else { continue }
                let bytes: Data
                do {
                    try handle.seek(toOffset: block.offset)
                    bytes = try handle.read(upToCount: Int(block.length)) ?? Data()
                } catch { throw OpenMapError("The map index's features cannot be read: \(error.localizedDescription)") }
                guard bytes.count == Int(block.length) else { throw OpenMapError("The map index is truncated: index the extract again.") }
                try Self.decode(bytes, frame: frame, seen: &seen, into: &found)
            }
        }
        return found
    }

    /// Up to `limit` named places whose name starts with `query` (case and accents ignored), then those that contain
    /// it; inside `near` first when given.
    package func places(matching query: String, limit: Int = 8) -> [Place] {
        let wanted = Self.folded(query)
        guard !wanted.isEmpty else { return [] }
        var starts: [Place] = []
        var contains: [Place] = []
        for place in allPlaces() {
            let name = Self.folded(place.name)
            if name.hasPrefix(wanted) {
                starts.append(place)
                if starts.count >= limit { break }
            } else if contains.count < limit, name.contains(wanted) {
                contains.append(place)
            }
        }
        return Array((starts + contains).prefix(limit))
    }

    private func allPlaces() -> [Place] {
        loadedPlaces.withLock { cached in
            if let cached { return cached }
            let text = (try? String(contentsOf: folder.appendingPathComponent("names.tsv"), encoding: .utf8)) ?? ""
            let places: [Place] = text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
                guard fields.count == 4, let raw = UInt8(fields[0]), let kind = OSMFeature.Kind(rawValue: raw),
                    let longitude = Double(fields[1]), let latitude = Double(fields[2])
                else { return nil }
                return Place(name: String(fields[3]), kind: kind, longitude: longitude, latitude: latitude)
            }
            cached = places
            return places
        }
    }

    static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).trimmingCharacters(in: .whitespaces)
    }

    /// Reads one cell's records (the layout `osm_index.cpp` writes), keeping those whose box meets the frame.
    static func decode(
        _ bytes: Data,
        frame: (Int32, Int32, Int32, Int32),
        seen: inout Set<UInt64>,
        into found: inout [OSMFeature]
    ) throws(OpenMapError) {
        let corrupt = OpenMapError("The map index is damaged: index the extract again.")
        let failed: Bool = bytes.withUnsafeBytes { raw -> Bool in
            var at = 0
            let end = raw.count
            func need(_ n: Int) -> Bool { at + n <= end }
            while at < end {
                guard need(4) else { return true }
                let kindByte = raw[at]
                let geometryByte = raw[at + 1]
                let nameLength = Int(raw[at + 2])
                let classLength = Int(raw[at + 3])
                at += 4
                guard need(nameLength + classLength + 4 + 8 + 16 + 4) else { return true }
                let name = nameLength > 0 ? String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<at + nameLength]), as: UTF8.self) : nil
                at += nameLength
                let featureClass =
                    classLength > 0 ? String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<at + classLength]), as: UTF8.self) : nil
                at += classLength
                let elevation = raw.loadUnaligned(fromByteOffset: at, as: Float32.self)
                let id = raw.loadUnaligned(fromByteOffset: at + 4, as: UInt64.self).littleEndian
                let x0 = raw.loadUnaligned(fromByteOffset: at + 12, as: Int32.self).littleEndian
                let y0 = raw.loadUnaligned(fromByteOffset: at + 16, as: Int32.self).littleEndian
                let x1 = raw.loadUnaligned(fromByteOffset: at + 20, as: Int32.self).littleEndian
                let y1 = raw.loadUnaligned(fromByteOffset: at + 24, as: Int32.self).littleEndian
                let ringCount = Int(raw.loadUnaligned(fromByteOffset: at + 28, as: UInt32.self).littleEndian)
                at += 32
                let meets = x0 <= frame.2 && x1 >= frame.0 && y0 <= frame.3 && y1 >= frame.1
                let keep = meets && !seen.contains(id)
                var rings: [[SIMD2<Int32>]] = []
                var inner: [Bool] = []
                if keep { rings.reserveCapacity(ringCount) }
                for _ in 0..<ringCount {
                    guard need(4) else { return true }
                    let word = raw.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian
                    at += 4
                    let count = Int(word & 0x7fff_ffff)
                    guard need(count * 8) else { return true }
                    if keep {
                        var ring: [SIMD2<Int32>] = []
                        ring.reserveCapacity(count)
                        for i in 0..<count {
                            ring.append(
                                SIMD2(
                                    raw.loadUnaligned(fromByteOffset: at + i * 8, as: Int32.self).littleEndian,
                                    raw.loadUnaligned(fromByteOffset: at + i * 8 + 4, as: Int32.self).littleEndian
                                )
                            )
                        }
                        rings.append(ring)
                        inner.append(word & 0x8000_0000 != 0)
                    }
                    at += count * 8
                }
                guard keep else { continue }
                guard let kind = OSMFeature.Kind(rawValue: kindByte), let geometry = OSMFeature.Geometry(rawValue: geometryByte) else { return true }
                seen.insert(id)
                found.append(
                    OSMFeature(
                        kind: kind,
                        geometry: geometry,
                        name: name,
                        featureClass: featureClass,
                        elevation: elevation.isFinite ? Double(elevation) : nil,
                        id: id,
                        rings: rings,
                        isInner: inner
                    )
                )
            }
            return false
        }
        if failed { throw corrupt }
    }
}

/// `index.json` of an index folder: what it was made from and what it holds.
package struct OSMIndexMetadata: Codable, Sendable, Equatable {
    package struct Extent: Codable, Sendable, Equatable {
        package var west: Double
        package var south: Double
        package var east: Double
        package var north: Double
    }

    /// Bumped when the layout changes, so an index written by an older server is made again.
    package static let currentFormat = 1

    package var format: Int
    /// The extracts' names, sizes and modification times, hashed: a changed extract is indexed again.
    package var fingerprint: String
    package var files: [String]
    package var bytes: Int64
    package var cellDegrees: Double
    package var features: Int
    package var names: Int
    package var extent: Extent?
    package var seconds: Double
}

/// A value behind a lock (this module does not depend on NIO, whose box the server uses).
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

/// Why the drawn map cannot be made, in words an operator can act on.
package struct OpenMapError: Error, CustomStringConvertible, Equatable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
