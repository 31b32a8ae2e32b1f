import Foundation

/// Naming and layout rules of a content package: fixed entry paths, waypoint folders, safe
/// file names, entry-path safety and which entries are deflated.
public enum PackageLayout: Sendable {
    public static let manifestPath = "manifest.json"
    public static let signaturePath = "manifest.sig"
    public static let geoJSONPath = "waypoints.geojson"
    public static let tilesPath = "tiles/map.mbtiles"
    /// Each tile's SHA-256 by its XYZ address, so that a reader without SQLite (the web player) can check single
    /// tiles against the signed manifest.
    public static let tilesIndexPath = "tiles/index.json"
    public static let waypointsFolder = "waypoints"

    /// Entry paths with a fixed meaning; media may not use them.
    /// The drawn map (optional addition): OpenStreetMap's features and the terrain's contours as GeoJSON.
    public static let basemapPath = "map/basemap.geojson"
    public static let reservedPaths: Set<String> = [manifestPath, signaturePath, geoJSONPath, tilesPath, tilesIndexPath, basemapPath]

    public static let maxSlugLength = 60
    public static let maxFileNameLength = 100
    /// Longest entry path (in UTF-8 bytes) that ``isSafeEntryPath(_:)`` accepts.
    public static let maxEntryPathLength = 1024

    // MARK: Slugs and folders

    /// A URL- and file-system-safe slug: lowercase ASCII letters, digits and single hyphens, at
    /// most 60 characters, never empty (`"waypoint"` when nothing is left).
    ///
    /// Accents are folded (`Café Ñandú` → `cafe-nandu`), a few letters without a decomposition
    /// are transliterated (`ß` → `ss`, `ø` → `o`, `æ` → `ae`, `ł` → `l`, ...), other scripts go
    /// through ICU's Any-Latin transform where Foundation has it (`東京` → `dong-jing`);
    /// apostrophes are dropped (`Devil's Punchbowl` → `devils-punchbowl`) and every other run of
    /// characters becomes one hyphen.
    public static func slug(_ name: String) -> String {
        let slug = asciiWords(name, allowUnderscore: false, maxLength: maxSlugLength)
        return slug.isEmpty ? "waypoint" : slug
    }

    /// `waypoints/<order, two digits at least>-<slug of name>`, e.g. `waypoints/01-fish-lake`.
    public static func waypointFolder(order: Int, name: String) -> String {
        let number = String(max(0, order))
        let padded = number.count < 2 ? "0" + number : number
        return "\(waypointsFolder)/\(padded)-\(slug(name))"
    }

    // MARK: File names

    /// A file name that is safe as the last component of a zip entry path and on every file
    /// system a client may extract to: lowercase ASCII letters, digits, `-` and `_`, one `.`
    /// before a 1-10 character alphanumeric extension, no leading dot, not a Windows reserved
    /// device name (`CON`, `NUL`, `COM1`, ...), at most 100 characters.
    ///
    /// Only the last path component of `original` is used (both `/` and `\` count as
    /// separators). The original extension is kept when it is sane; otherwise
    /// `fallbackExtension` is used (and `bin` if that is not sane either).
    public static func safeFileName(_ original: String, fallbackExtension: String) -> String {
        let lastComponent =
            original
            .split(whereSeparator: { $0 == "/" || $0 == "\\" })
            .last.map(String.init) ?? ""
        // Leading dots and spaces would make a hidden file or a Windows oddity: drop them.
        let trimmed = String(lastComponent.drop(while: { $0 == "." || $0.isWhitespace }))

        var stemSource = trimmed
        var fileExtension: String?
        if let dot = trimmed.lastIndex(of: ".") {
            fileExtension = sanitizedExtension(String(trimmed[trimmed.index(after: dot)...]))
            stemSource = String(trimmed[..<dot])
        }
        let ext = fileExtension ?? sanitizedExtension(fallbackExtension) ?? "bin"

        var stem = asciiWords(stemSource, allowUnderscore: true, maxLength: maxFileNameLength - 1 - ext.count)
        if stem.isEmpty { stem = "file" }
        if windowsReservedNames.contains(stem) { stem += "-file" }
        return "\(stem).\(ext)"
    }

    static let windowsReservedNames: Set<String> = {
        var names: Set<String> = ["con", "prn", "aux", "nul", "clock$", "conin$", "conout$"]
        for digit in 0...9 {
            names.insert("com\(digit)")
            names.insert("lpt\(digit)")
        }
        return names
    }()

    static func sanitizedExtension(_ candidate: String) -> String? {
        let lowered = candidate.lowercased()
        guard (1...10).contains(lowered.count),
            lowered.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else { return nil }
        return lowered
    }

    /// Single letters that neither case folding nor diacritic folding turns into ASCII.
    static let transliterations: [Unicode.Scalar: String] = [
        "æ": "ae", "ø": "o", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ħ": "h",
        "ı": "i", "ŧ": "t", "ŀ": "l", "ĸ": "k", "ŋ": "ng", "ſ": "s", "ß": "ss", "ə": "e",
    ]

    /// Lowercase ASCII words joined by single hyphens (and underscores kept when allowed),
    /// truncated to `maxLength` without a trailing separator.
    static func asciiWords(_ input: String, allowUnderscore: Bool, maxLength: Int) -> String {
        var text = input
        if !text.unicodeScalars.allSatisfy(\.isASCII) {
            // Other scripts to Latin (where ICU transforms are available), then fold case,
            // accents and width.
            if let latin = text.applyingTransform(.toLatin, reverse: false) { text = latin }
            text = text.folding(
                options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive],
                locale: Locale(identifier: "en_US_POSIX")
            )
        }
        var output = ""
        var pendingSeparator: Character?
        func append(_ character: Character) {
            if let separator = pendingSeparator, !output.isEmpty { output.append(separator) }
            pendingSeparator = nil
            output.append(character)
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9":
                append(Character(scalar))
            case "A"..."Z":
                append(Character(Unicode.Scalar(scalar.value + 32)!))
            case "'", "\u{2019}", "\u{2018}", "`", "\u{02BC}":
                continue  // apostrophes join words: "devil's" -> "devils"
            case "_" where allowUnderscore:
                if pendingSeparator == nil { pendingSeparator = "_" }
            default:
                if let replacement = transliterations[scalar] {
                    replacement.forEach(append)
                } else {
                    pendingSeparator = "-"
                }
            }
            if output.utf8.count > maxLength { break }
        }
        if output.utf8.count > maxLength {
            output = String(output.prefix(maxLength))
        }
        while let last = output.last, last == "-" || last == "_" { output.removeLast() }
        return output
    }

    // MARK: Entry paths

    /// True when `path` is safe as a zip entry path: relative (no leading `/`), no `\`, no `:`
    /// (drive letters), no empty, `.` or `..` component (nor one made only of dots), no control
    /// or invisible format characters (NUL, C0/C1 controls, bidi overrides, zero-width
    /// characters, line/paragraph separators), at most 1024 UTF-8 bytes.
    public static func isSafeEntryPath(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= maxEntryPathLength else { return false }
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\\", ":":
                return false
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return false }
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
                    return false
                default:
                    break
                }
            }
        }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            if component.isEmpty || component.allSatisfy({ $0 == "." }) { return false }
        }
        return true
    }

    // MARK: Compression

    /// Whether an entry of this MIME type is deflated (true) or stored (false).
    ///
    /// Deflated: text (`text/*`), JSON and XML (`application/json`, `application/geo+json`,
    /// `*+json`, `*+xml`, `application/xml`, `image/svg+xml`), SQLite/MBTiles, GPX/KML, and
    /// uncompressed media (WAV, AIFF, BMP, TIFF). Stored: everything else, in particular
    /// already-compressed media (video, MP3/AAC/Ogg/Opus/FLAC audio, JPEG/PNG/WebP/GIF/HEIC/AVIF
    /// images) and unknown types, for which deflate would cost time and save nothing.
    public static func shouldDeflate(mimeType: String) -> Bool {
        let essence =
            mimeType
            .split(separator: ";", maxSplits: 1).first.map(String.init)?
            .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let parts = essence.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return false }
        let (type, subtype) = (parts[0], parts[1])
        if type == "text" { return true }
        if subtype.hasSuffix("+json") || subtype.hasSuffix("+xml") { return true }
        let deflated: Set<String> = [
            "application/json", "application/geo+json", "application/xml", "application/javascript",
            "application/vnd.sqlite3", "application/x-sqlite3", "application/vnd.mbtiles", "application/x-mbtiles",
            "application/gpx+xml", "application/vnd.google-earth.kml+xml",
            "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave", "audio/aiff", "audio/x-aiff",
            "image/bmp", "image/x-ms-bmp", "image/tiff",
        ]
        return deflated.contains(essence)
    }

    /// MIME type used for `tiles/map.mbtiles` (deflated).
    public static let mbtilesMimeType = "application/vnd.sqlite3"
}
