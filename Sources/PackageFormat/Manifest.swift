import Foundation

/// `manifest.json` of a content package, format version 1 (see docs/package-format.md).
///
/// The keys are exactly the ones of docs/package-format.md. Optional additions (`tiles`, `route`,
/// `estimatedDurationMinutes`, `geoJSON`, and per waypoint `distanceFromPreviousMeters` and
/// `triggerRadiusMeters` (visitor content), per tiles
/// `size`) are omitted from the JSON when `nil`. Unknown keys are ignored when decoding, so a newer
/// server may add keys without breaking older clients.
///
/// `route` is encoded as GeoJSON positions, `[[longitude, latitude], ...]`.
public struct Manifest: Codable, Sendable, Hashable {
    /// The only format version this module writes and reads.
    public static let currentFormatVersion = 1

    public var formatVersion: Int
    public var packageId: String
    public var version: Int
    /// ISO-8601 UTC without fractional seconds, e.g. `2026-11-22T10:00:00Z` (see ``Manifest/timestamp(_:)``).
    public var createdAt: String
    public var packageName: String
    public var park: String
    public var mapName: String
    public var bounds: Bounds
    public var description: String
    public var waypoints: [Waypoint]
    public var tiles: Tiles?
    /// The walking route as `[[longitude, latitude], ...]` (GeoJSON position order).
    public var route: [RoutePoint]?
    public var estimatedDurationMinutes: Int?
    /// `waypoints.geojson` with its size and SHA-256, so that the signed manifest covers every
    /// file of the package. ``PackageBuilder`` fills it in when it is `nil`.
    public var geoJSON: FileReference?
    /// Visitor content: the tour's languages as BCP 47 tags, the first the default (the language of `packageName`,
    /// `description` and every waypoint's `name`/`description`); absent from single-language packages made before.
    public var languages: [String]?
    /// The package's name and description in each further language.
    public var localized: [String: TourText]?
    /// Length, heights, the elevation profile, walking time and accessibility (absent from packages made before).
    public var trail: TrailFacts?
    /// The drawn map, `map/basemap.geojson` (absent from packages made before it, and from tours with no open data).
    public var basemap: Basemap?

    /// `map/basemap.geojson`: the frame's OpenStreetMap features and contour lines, drawn by the app beneath the route.
    public struct Basemap: Codable, Sendable, Hashable {
        public var path: String
        public var sha256: String
        public var size: Int64
        /// The credit the data's licence asks for, shown on every map that draws it.
        public var attribution: String
        /// The `kind` values of its features, in drawing order (`contour` among them when it has contour lines).
        public var layers: [String]

        public init(path: String = PackageLayout.basemapPath, sha256: String, size: Int64, attribution: String, layers: [String]) {
            self.path = path
            self.sha256 = sha256
            self.size = size
            self.attribution = attribution
            self.layers = layers
        }
    }

    /// A tour's texts in one further language.
    public struct TourText: Codable, Sendable, Hashable {
        public var packageName: String
        public var description: String
        public init(packageName: String, description: String) {
            self.packageName = packageName
            self.description = description
        }
    }

    /// A waypoint's texts in one further language.
    public struct WaypointText: Codable, Sendable, Hashable {
        public var name: String
        public var description: String
        public init(name: String, description: String) {
            self.name = name
            self.description = description
        }
    }

    public init(
        formatVersion: Int = Manifest.currentFormatVersion,
        packageId: String,
        version: Int,
        createdAt: String,
        packageName: String,
        park: String,
        mapName: String,
        bounds: Bounds,
        description: String,
        waypoints: [Waypoint],
        tiles: Tiles? = nil,
        route: [RoutePoint]? = nil,
        estimatedDurationMinutes: Int? = nil,
        geoJSON: FileReference? = nil
    ) {
        self.formatVersion = formatVersion
        self.packageId = packageId
        self.version = version
        self.createdAt = createdAt
        self.packageName = packageName
        self.park = park
        self.mapName = mapName
        self.bounds = bounds
        self.description = description
        self.waypoints = waypoints
        self.tiles = tiles
        self.route = route
        self.estimatedDurationMinutes = estimatedDurationMinutes
        self.geoJSON = geoJSON
    }

    // MARK: Nested types

    public struct Coordinates: Codable, Sendable, Equatable, Hashable {
        public var latitude: Double
        public var longitude: Double
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// The tour's frame. `northWest` holds (north, west), `southEast` holds (south, east).
    public struct Bounds: Codable, Sendable, Hashable {
        public var northWest: Coordinates
        public var southEast: Coordinates
        public init(northWest: Coordinates, southEast: Coordinates) {
            self.northWest = northWest
            self.southEast = southEast
        }
        public init(north: Double, south: Double, east: Double, west: Double) {
            self.northWest = Coordinates(latitude: north, longitude: west)
            self.southEast = Coordinates(latitude: south, longitude: east)
        }
        public var north: Double { northWest.latitude }
        public var south: Double { southEast.latitude }
        public var west: Double { northWest.longitude }
        public var east: Double { southEast.longitude }
        /// True when the frame crosses the antimeridian (west > east, as in a GeoJSON bbox).
        public var crossesAntimeridian: Bool { west > east }

        public func contains(_ point: Coordinates) -> Bool {
            guard point.latitude >= south, point.latitude <= north else { return false }
            if crossesAntimeridian {
                return point.longitude >= west || point.longitude <= east
            }
            return point.longitude >= west && point.longitude <= east
        }
    }

    public struct Waypoint: Codable, Sendable, Hashable {
        public var name: String
        public var order: Int
        public var coordinates: Coordinates
        public var description: String
        public var assets: [Asset]
        /// Walking distance from the previous waypoint, in metres (optional addition).
        public var distanceFromPreviousMeters: Double?
        /// The trigger zone, 5–500 metres (visitor content; absent from packages made before it).
        public var triggerRadiusMeters: Int?
        /// The name and description in each further language (visitor content).
        public var localized: [String: WaypointText]?
        /// The server's id of the waypoint, the same in every version of the package: alerts in the signed catalog name
        /// closed stops by it. Absent from packages made before alerts.
        public var id: Int64?
        /// The ground's height at the stop, in metres, from the route or the terrain model (absent without heights).
        public var elevationMeters: Double?

        public init(
            name: String,
            order: Int,
            coordinates: Coordinates,
            description: String,
            assets: [Asset],
            distanceFromPreviousMeters: Double? = nil,
            triggerRadiusMeters: Int? = nil,
            localized: [String: WaypointText]? = nil
        ) {
            self.localized = localized
            self.name = name
            self.order = order
            self.coordinates = coordinates
            self.description = description
            self.assets = assets
            self.distanceFromPreviousMeters = distanceFromPreviousMeters
            self.triggerRadiusMeters = triggerRadiusMeters
        }
    }

    /// `"video" | "audio" | "image" | "text"`. A string wrapper rather than an enum so that a
    /// client decoding a manifest with a type it does not know still gets the rest of it;
    /// ``Manifest/validate()`` reports unknown types.
    public struct AssetType: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }

        public static let video = AssetType("video")
        public static let audio = AssetType("audio")
        public static let image = AssetType("image")
        public static let text = AssetType("text")
        public static let known: [AssetType] = [.video, .audio, .image, .text]

        public var isKnown: Bool { Self.known.contains(self) }
        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    public struct Asset: Codable, Sendable, Hashable {
        public var type: AssetType
        /// Entry path inside the zip, `waypoints/<folder>/<file>`.
        public var path: String
        public var mimeType: String
        public var size: Int64
        /// Lowercase hex SHA-256 of the file's bytes.
        public var sha256: String
        /// The name an app shows for the file (visitor content; absent when there is none).
        public var title: String?
        /// An image's text alternative, for screen readers (visitor content; images only).
        public var altText: String?

        /// The video's (or audio's) WebVTT captions, packaged beside it (visitor content).
        public var captions: CompanionFile?
        /// The audio's transcript, plain UTF-8 text or WebVTT, packaged beside it (visitor content).
        public var transcript: CompanionFile?
        /// The one language this file is for (the Spanish narration); absent: every language (visitor content).
        public var language: String?
        /// Pixels of an image or a video as shown (upright), when the server measured them.
        public var width: Int?
        public var height: Int?
        /// Play time of audio and video in seconds, when known.
        public var durationSeconds: Double?

        public init(
            type: AssetType,
            path: String,
            mimeType: String,
            size: Int64,
            sha256: String,
            title: String? = nil,
            altText: String? = nil,
            captions: CompanionFile? = nil,
            transcript: CompanionFile? = nil
        ) {
            self.type = type
            self.path = path
            self.mimeType = mimeType
            self.size = size
            self.sha256 = sha256
            self.title = title
            self.altText = altText
            self.captions = captions
            self.transcript = transcript
        }

        /// The captions and transcript files, in that order, with the key each is under.
        public var companions: [(key: String, file: CompanionFile)] {
            [("captions", captions), ("transcript", transcript)].compactMap { key, file in file.map { (key, $0) } }
        }
    }

    /// A file that belongs to one asset (captions, transcript): listed, hashed and signed like every other file.
    public struct CompanionFile: Codable, Sendable, Hashable {
        public var path: String
        public var size: Int64
        public var sha256: String
        /// BCP 47 tag of the text's language; absent: the tour's (only) language.
        public var language: String?

        public init(path: String, size: Int64, sha256: String, language: String? = nil) {
            self.path = path
            self.size = size
            self.sha256 = sha256
            self.language = language
        }
    }

    public struct Tiles: Codable, Sendable, Hashable {
        public var path: String
        /// Tile image format as in the MBTiles metadata: `png`, `jpg`, `webp` or `pbf`.
        public var format: String
        public var minZoom: Int
        public var maxZoom: Int
        public var tileCount: Int
        public var sha256: String
        /// Size of `tiles/map.mbtiles` in bytes (optional addition; the builder checks it when set).
        public var size: Int64?
        /// `tiles/index.json` (optional addition): `{"format", "tiles": {"z/x/y": sha256}}` with XYZ rows, so that a
        /// reader that cannot open SQLite checks each tile it is served against this signed list.
        public var index: FileReference?

        public init(
            path: String = PackageLayout.tilesPath,
            format: String,
            minZoom: Int,
            maxZoom: Int,
            tileCount: Int,
            sha256: String,
            size: Int64? = nil
        ) {
            self.path = path
            self.format = format
            self.minZoom = minZoom
            self.maxZoom = maxZoom
            self.tileCount = tileCount
            self.sha256 = sha256
            self.size = size
        }
    }

    /// One point of the route, encoded as a GeoJSON position `[longitude, latitude]`.
    public struct RoutePoint: Codable, Sendable, Hashable {
        public var longitude: Double
        public var latitude: Double
        /// Metres above sea level, the position's third value (RFC 7946), when the tour's trail facts have heights.
        public var elevation: Double?

        public init(longitude: Double, latitude: Double) {
            self.longitude = longitude
            self.latitude = latitude
        }

        public init(longitude: Double, latitude: Double, elevation: Double?) {
            self.longitude = longitude
            self.latitude = latitude
            self.elevation = elevation
        }

        public init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            longitude = try container.decode(Double.self)
            latitude = try container.decode(Double.self)
            // The third value (altitude, RFC 7946) is optional; readers made before it ignored it.
            elevation = container.isAtEnd ? nil : try container.decodeNil() ? nil : try container.decode(Double.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(longitude)
            try container.encode(latitude)
            if let elevation { try container.encode(elevation) }
        }
    }

    /// A file of the package that is not a waypoint asset (`waypoints.geojson`).
    public struct FileReference: Codable, Sendable, Hashable {
        public var path: String
        public var size: Int64
        public var sha256: String
        public init(path: String, size: Int64, sha256: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    // MARK: Encoding

    /// Deterministic JSON: sorted keys, compact, `/` not escaped, optional `nil` keys omitted.
    /// These bytes are what `manifest.sig` signs.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    public static func decode(_ data: Data) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: data)
    }

    /// `createdAt` format: ISO-8601 in UTC, whole seconds, e.g. `2026-11-22T10:00:00Z`.
    public static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }

    /// Parses a `createdAt` value written by ``timestamp(_:)``; `nil` for anything else.
    public static func parseTimestamp(_ value: String) -> Date? {
        let bytes = Array(value.utf8)
        guard bytes.count == 20 else { return nil }
        let layout = Array("dddd-dd-ddTdd:dd:ddZ".utf8)
        for (byte, pattern) in zip(bytes, layout) {
            if pattern == UInt8(ascii: "d") {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            } else if byte != pattern {
                return nil
            }
        }
        func number(_ range: Range<Int>) -> Int32 {
            bytes[range].reduce(Int32(0)) { $0 * 10 + Int32($1 - UInt8(ascii: "0")) }
        }
        var parts = tm()
        parts.tm_year = number(0..<4) - 1900
        parts.tm_mon = number(5..<7) - 1
        parts.tm_mday = number(8..<10)
        parts.tm_hour = number(11..<13)
        parts.tm_min = number(14..<16)
        parts.tm_sec = number(17..<19)
        guard (0...11).contains(parts.tm_mon), (1...31).contains(parts.tm_mday),
            (0...23).contains(parts.tm_hour), (0...59).contains(parts.tm_min),
            (0...60).contains(parts.tm_sec)
        else { return nil }
        let date = Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
        // Reject dates that timegm normalised (e.g. February 31st).
        return timestamp(date) == value ? date : nil
    }

    // MARK: Queries

    /// Every asset of every waypoint, in waypoint order then asset order.
    public var allAssets: [Asset] { waypoints.flatMap(\.assets) }

    /// A file that the manifest lists with its SHA-256 (and size, where the manifest gives one).
    public struct ListedFile: Sendable, Equatable {
        public var path: String
        public var size: Int64?
        public var sha256: String
        public init(path: String, size: Int64?, sha256: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    /// Files that the manifest lists: every asset, then tiles (and their index), `waypoints.geojson` and the drawn map
    /// when set.
    public var listedFiles: [ListedFile] {
        var files: [ListedFile] = []
        for asset in allAssets {
            files.append(ListedFile(path: asset.path, size: asset.size, sha256: asset.sha256))
            for (_, file) in asset.companions { files.append(ListedFile(path: file.path, size: file.size, sha256: file.sha256)) }
        }
        if let tiles {
            files.append(ListedFile(path: tiles.path, size: tiles.size, sha256: tiles.sha256))
            if let index = tiles.index { files.append(ListedFile(path: index.path, size: index.size, sha256: index.sha256)) }
        }
        if let geoJSON { files.append(ListedFile(path: geoJSON.path, size: geoJSON.size, sha256: geoJSON.sha256)) }
        if let basemap { files.append(ListedFile(path: basemap.path, size: basemap.size, sha256: basemap.sha256)) }
        return files
    }
}

// MARK: - Validation

extension Manifest {
    /// Checks the rules of format version 1 and returns one human-readable line per problem
    /// (empty when the manifest is valid). Used by ``PackageBuilder`` (which refuses to build an
    /// invalid manifest) and ``PackageVerifier``.
    public func validate() -> [String] {
        var problems: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { problems.append(message()) }
        }

        check(
            formatVersion == Manifest.currentFormatVersion,
            "formatVersion is \(formatVersion), expected \(Manifest.currentFormatVersion)"
        )
        check(
            !packageId.isEmpty && packageId.utf8.count <= 200 && !Self.hasControlCharacters(packageId),
            "packageId must be 1-200 characters without control characters"
        )
        check(version >= 1, "version must be at least 1 (is \(version))")
        check(
            Manifest.parseTimestamp(createdAt) != nil,
            "createdAt \"\(createdAt)\" is not an ISO-8601 UTC timestamp like 2026-11-22T10:00:00Z"
        )
        check(!packageName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "packageName is empty")

        let boundsValid = Self.isValid(bounds.northWest) && Self.isValid(bounds.southEast)
        check(boundsValid, "bounds hold an invalid latitude or longitude")
        if boundsValid {
            check(bounds.north > bounds.south, "bounds: north (\(bounds.north)) must be greater than south (\(bounds.south))")
            check(bounds.west != bounds.east, "bounds: west and east are equal")
        }

        if let languages {
            check(!languages.isEmpty, "languages is empty")
            check(Set(languages).count == languages.count, "languages lists a language twice")
            for tag in languages { check(Self.isLanguageTag(tag), "languages: \"\(tag)\" is not a BCP 47 tag") }
        }
        for tag in (localized ?? [:]).keys {
            check(languages?.dropFirst().contains(tag) == true, "localized text in \"\(tag)\", which is not one of the further languages")
        }
        check(!waypoints.isEmpty, "the tour has no waypoints")
        var names = Set<String>()
        var orders = Set<Int>()
        var paths = Set<String>()
        for waypoint in waypoints {
            let label = "waypoint \(waypoint.order) \"\(waypoint.name)\""
            check(!waypoint.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(label): name is empty")
            check(names.insert(waypoint.name).inserted, "\(label): duplicate waypoint name")
            check(orders.insert(waypoint.order).inserted, "\(label): duplicate waypoint order")
            check(waypoint.order >= 0, "\(label): order must not be negative")
            if Self.isValid(waypoint.coordinates) {
                if boundsValid {
                    check(bounds.contains(waypoint.coordinates), "\(label): coordinates are outside the bounds")
                }
            } else {
                problems.append("\(label): invalid latitude or longitude")
            }
            if let distance = waypoint.distanceFromPreviousMeters {
                check(distance.isFinite && distance >= 0, "\(label): distanceFromPreviousMeters must be a non-negative number")
            }
            for tag in (waypoint.localized ?? [:]).keys {
                check(
                    languages?.dropFirst().contains(tag) == true,
                    "\(label): localized text in \"\(tag)\", which is not one of the further languages"
                )
            }
            if let radius = waypoint.triggerRadiusMeters {
                check((5...500).contains(radius), "\(label): triggerRadiusMeters must be 5 to 500")
            }
            for asset in waypoint.assets {
                let assetLabel = "\(label): asset \"\(asset.path)\""
                check(asset.type.isKnown, "\(assetLabel): unknown type \"\(asset.type.rawValue)\"")
                check(PackageLayout.isSafeEntryPath(asset.path), "\(assetLabel): unsafe path")
                let components = asset.path.split(separator: "/", omittingEmptySubsequences: false)
                check(
                    components.count == 3 && components.first == "waypoints",
                    "\(assetLabel): path must look like waypoints/<folder>/<file>"
                )
                check(paths.insert(asset.path).inserted, "\(assetLabel): duplicate path")
                check(Self.isPlausibleMimeType(asset.mimeType), "\(assetLabel): invalid mimeType \"\(asset.mimeType)\"")
                check(asset.size >= 0, "\(assetLabel): negative size")
                check(Self.isSHA256Hex(asset.sha256), "\(assetLabel): sha256 must be 64 lowercase hex digits")
                if let language = asset.language {
                    check(languages?.contains(language) == true, "\(assetLabel): language \"\(language)\" is not one of the package's languages")
                }
                for (key, file) in asset.companions {
                    let fileLabel = "\(assetLabel): \(key) \"\(file.path)\""
                    check(PackageLayout.isSafeEntryPath(file.path), "\(fileLabel): unsafe path")
                    let parts = file.path.split(separator: "/", omittingEmptySubsequences: false)
                    check(parts.count == 3 && parts.first == "waypoints", "\(fileLabel): path must look like waypoints/<folder>/<file>")
                    check(paths.insert(file.path).inserted, "\(fileLabel): duplicate path")
                    check(file.size >= 0, "\(fileLabel): negative size")
                    check(Self.isSHA256Hex(file.sha256), "\(fileLabel): sha256 must be 64 lowercase hex digits")
                    if let language = file.language {
                        check(Self.isLanguageTag(language), "\(fileLabel): language \"\(language)\" is not a BCP 47 tag")
                        if let languages {
                            check(languages.contains(language), "\(fileLabel): language \"\(language)\" is not one of the package's languages")
                        }
                    }
                }
            }
        }

        if let tiles {
            check(tiles.path == PackageLayout.tilesPath, "tiles.path must be \(PackageLayout.tilesPath)")
            check(["png", "jpg", "jpeg", "webp", "pbf"].contains(tiles.format), "tiles.format \"\(tiles.format)\" is not png, jpg, webp or pbf")
            check(
                (0...30).contains(tiles.minZoom) && (0...30).contains(tiles.maxZoom) && tiles.minZoom <= tiles.maxZoom,
                "tiles: zoom range \(tiles.minZoom)-\(tiles.maxZoom) is invalid"
            )
            check(tiles.tileCount >= 0, "tiles.tileCount is negative")
            check(Self.isSHA256Hex(tiles.sha256), "tiles.sha256 must be 64 lowercase hex digits")
            if let size = tiles.size { check(size >= 0, "tiles.size is negative") }
            if let index = tiles.index {
                check(index.path == PackageLayout.tilesIndexPath, "tiles.index.path must be \(PackageLayout.tilesIndexPath)")
                check(Self.isSHA256Hex(index.sha256) && index.size >= 0, "tiles.index needs a size and a 64-digit lowercase hex SHA-256")
            }
        }
        if let basemap {
            check(basemap.path == PackageLayout.basemapPath, "basemap.path must be \(PackageLayout.basemapPath)")
            check(Self.isSHA256Hex(basemap.sha256) && basemap.size >= 0, "basemap needs a size and a 64-digit lowercase hex SHA-256")
            check(!basemap.attribution.isEmpty, "basemap.attribution must credit the data's source")
        }
        if let route {
            check(route.count >= 2, "route needs at least two points")
            check(
                route.allSatisfy { Self.isValid(Coordinates(latitude: $0.latitude, longitude: $0.longitude)) },
                "route holds an invalid latitude or longitude"
            )
        }
        if let minutes = estimatedDurationMinutes {
            check(minutes >= 0, "estimatedDurationMinutes is negative")
        }
        if let geoJSON {
            check(geoJSON.path == PackageLayout.geoJSONPath, "geoJSON.path must be \(PackageLayout.geoJSONPath)")
            check(geoJSON.size >= 0, "geoJSON.size is negative")
            check(Self.isSHA256Hex(geoJSON.sha256), "geoJSON.sha256 must be 64 lowercase hex digits")
        }
        return problems
    }

    static func isValid(_ point: Coordinates) -> Bool {
        point.latitude.isFinite && point.longitude.isFinite
            && (-90...90).contains(point.latitude) && (-180...180).contains(point.longitude)
    }

    /// Letters, digits and single hyphens, starting with 2–8 letters, at most 35 characters (`en`, `fr-CA`, `zh-Hant`).
    public static func isLanguageTag(_ value: String) -> Bool {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard value.utf8.count <= 35, let first = parts.first, (2...8).contains(first.count),
            first.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (1...8).contains(part.count) && part.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        }
    }

    static func isSHA256Hex(_ value: String) -> Bool {
        value.utf8.count == 64 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `type/subtype`, optionally followed by `; parameters` (printable ASCII).
    static func isPlausibleMimeType(_ value: String) -> Bool {
        guard value.utf8.count <= 255,
            value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F })
        else { return false }
        let essence = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return essence.unicodeScalars.allSatisfy { $0.value > 0x20 && !"()<>@,;:\\\"[]?={}".unicodeScalars.contains($0) }
    }

    static func hasControlCharacters(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}
