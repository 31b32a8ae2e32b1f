import Foundation
import Logging
import NIOConcurrencyHelpers
import OpenMap
import Terrain

/// The map the server draws for every tour from open data: the OpenStreetMap extract (`--osm-extract`), indexed once
/// into `data/osm/`, and the terrain model's contours (`--dem`). Package builds take `map/basemap.geojson` from it,
/// the editor draws the same for its frame when its tiles are off, and the place search reads the extract's names.
///
/// Indexing a state's extract takes seconds to minutes, so it runs in the background from start; a build that comes
/// while it runs waits for it (the package must not lose its map because the server restarted a minute ago).
package final class OpenDataMap: Sendable {
    enum IndexState: Sendable {
        /// No `--osm-extract`.
        case off
        case indexing(since: Date)
        case ready(OSMIndex)
        /// The extract cannot be used: why, in words an operator can act on.
        case failed(String)
    }

    let extractPath: String?
    let indexRoot: URL
    let terrain: TerrainSource
    private let state: NIOLockedValueBox<IndexState>
    private let settled: NIOLockedValueBox<[CheckedContinuation<Void, Never>]> = .init([])

    init(extractPath: String?, indexRoot: URL, terrain: TerrainSource) {
        self.extractPath = extractPath
        self.indexRoot = indexRoot
        self.terrain = terrain
        state = .init(extractPath == nil ? .off : .indexing(since: Date()))
    }

    var indexState: IndexState { state.withLockedValue { $0 } }

    /// Whether a build would draw anything at all: an extract (being indexed or ready) or a terrain model.
    var hasSources: Bool {
        if terrain.model != nil { return true }
        switch indexState {
        case .indexing, .ready: return true
        case .off, .failed: return false
        }
    }

    /// Indexes the extract (or finds its index from an earlier start) on the file pool; a no-op without one.
    func prepare(logger: Logger = Logger(label: "trail.map"), print: @Sendable (String) -> Void = { _ in }) async {
        guard let extractPath else { return }
        let root = indexRoot
        let outcome: IndexState
        do {
            let (index, made) = try await BlockingWork.files { try OSMIndexer.index(extract: extractPath, root: root) }
            let metadata = index.metadata
            print(
                made
                    ? "Map data: indexed \(metadata.files.joined(separator: ", ")) (\(ByteFormat.string(metadata.bytes)), \(DisplayFormat.grouped(metadata.features)) features) in \(String(format: "%.1f", metadata.seconds)) s."
                    : "Map data: \(metadata.files.joined(separator: ", ")) is indexed (\(DisplayFormat.grouped(metadata.features)) features)."
            )
            outcome = .ready(index)
        } catch let error as OpenMapError {
            print("Map data (--osm-extract) cannot be used: \(error.description) Tours get no drawn map from it until this is fixed.")
            logger.error("map data: \(error.description)")
            outcome = .failed(error.description)
        } catch {
            outcome = .failed("Indexing stopped: \(error)")
        }
        state.withLockedValue { $0 = outcome }
        for waiter in settled.withLockedValue({ list in
            defer { list = [] }
            return list
        }) { waiter.resume() }
    }

    /// Returns once indexing is over (at once when it is).
    func waitUntilIndexed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting: Bool = state.withLockedValue { current in
                guard case .indexing = current else { return false }
                settled.withLockedValue { $0.append(continuation) }
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// What a tour with this frame would get, or why it gets nothing.
    package enum Outcome: Sendable {
        case drawn(Basemap, notes: [String])
        case nothing(reason: String)
    }

    /// The drawn map of a frame at the tour's highest zoom: the extract's features and the model's contours.
    func basemap(frame: Frame, maxZoom: Int) async -> Outcome {
        await waitUntilIndexed()
        let index: OSMIndex?
        var notes: [String] = []
        switch indexState {
        case .ready(let ready): index = ready
        case .failed(let reason):
            index = nil
            notes.append(reason)
        case .off, .indexing: index = nil
        }
        if let problem = terrain.problem { notes.append(problem) }
        guard index != nil || terrain.model != nil else {
            return .nothing(reason: notes.first ?? Self.noSources)
        }
        guard frame.west < frame.east else {
            return .nothing(reason: "The drawn map is not made for a frame across the antimeridian.")
        }
        let terrain = self.terrain
        let outcome = try? await BlockingWork.files { Self.draw(index: index, terrain: terrain, frame: frame, maxZoom: maxZoom) }
        switch outcome ?? .nothing(reason: "The drawn map could not be made: the server is stopping.") {
        case .drawn(let map, let more): return .drawn(map, notes: notes + more)
        case .nothing(let reason): return .nothing(reason: (notes + [reason]).filter { !$0.isEmpty }.joined(separator: " "))
        }
    }

    /// The frame's map from the index (nil: no extract) and the terrain model, on the calling thread: it reads the
    /// index's cells and traces contours for a second or so.
    package static func draw(index: OSMIndex?, terrain: TerrainSource, frame: Frame, maxZoom: Int) -> Outcome {
        var notes: [String] = []
        do {
            var features: [OSMFeature] = []
            if let index {
                if index.covers(west: frame.west, south: frame.south, east: frame.east, north: frame.north) {
                    features = try index.features(west: frame.west, south: frame.south, east: frame.east, north: frame.north)
                } else {
                    notes.append("The OpenStreetMap extract (\(index.metadata.files.joined(separator: ", "))) does not cover this tour's frame.")
                }
            }
            var contours: ContourLines?
            if let model = terrain.model {
                if let set = try model.contours(west: frame.west, south: frame.south, east: frame.east, north: frame.north) {
                    contours = ContourLines(interval: set.interval, lines: set.lines.map { ($0.elevation, $0.isIndex, $0.points) })
                } else {
                    notes.append("The terrain model does not cover this tour's frame, so the map has no contour lines.")
                }
            }
            let map = Basemap.make(
                frame: .init(west: frame.west, south: frame.south, east: frame.east, north: frame.north),
                maxZoom: maxZoom,
                features: features,
                contours: contours
            )
            guard let map else { return .nothing(reason: notes.joined(separator: " ")) }
            return .drawn(map, notes: notes)
        } catch let error as OpenMapError {
            return .nothing(reason: error.description)
        } catch let error as TerrainError {
            return .nothing(reason: error.description)
        } catch {
            return .nothing(reason: "The drawn map could not be made: \(error)")
        }
    }

    static let noSources =
        "The server has no OpenStreetMap extract (--osm-extract) and no terrain model (--dem) to draw a map from."

    /// The place search's answer: named places of the extract (none without one).
    func places(matching query: String, limit: Int = 8) -> [OSMIndex.Place] {
        guard case .ready(let index) = indexState else { return [] }
        return index.places(matching: query, limit: limit)
    }
}
