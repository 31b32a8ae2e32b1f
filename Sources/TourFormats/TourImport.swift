import Foundation

/// Reads an import file: tells the formats apart by their bytes and hands them to their reader. Bytes in, an
/// ``ImportedTour`` out: it knows no database and no tour, and asks the app's ``ImportRules`` where a format does.
package enum TourImport {
    package static let maxWaypoints = 2_000

    /// The kinds of file told apart by their first bytes.
    package enum Kind {
        case zip, json, xml, text
    }

    /// Reads a stored import file: a KMZ is read from disk through the zip reader (its entries are never all in memory
    /// at once beyond the limits), a CSV a chunk at a time (``CSVImport``); GeoJSON, GPX and KML as bytes.
    package static func parse(fileAt url: URL, rules: ImportRules) throws -> ImportedTour {
        let size = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= rules.maxBytes else { throw ImportRefused(message: "The file is larger than \(Wording.megabytes(rules.maxBytes)).") }
        let handle = try FileHandle(forReadingFrom: url)
        let head = try handle.read(upToCount: 512) ?? Data()
        try? handle.close()
        switch try kind(of: head) {
        case .zip: return try KMZArchive.read(url, rules: rules)
        case .text: return try CSVImport.parse(fileAt: url)
        case .json, .xml: return try parse(try Data(contentsOf: url), rules: rules)
        }
    }

    package static func parse(_ data: Data, rules: ImportRules) throws -> ImportedTour {
        guard data.count <= rules.maxBytes else { throw ImportRefused(message: "The file is larger than \(Wording.megabytes(rules.maxBytes)).") }
        var result = try parseFormat(data, rules: rules)
        if result.format == .gpx || result.format == .geoJSON, result.points.isEmpty, result.route == nil {
            result.notes.append("The file holds no waypoints and no route.")
        }
        return result
    }

    /// Tells the formats apart by their bytes, never by the file's name.
    package static func kind(of data: Data) throws -> Kind {
        if KMZArchive.isZip(data.prefix(4)) { return .zip }
        let start = data.prefix(512)
        // UTF-8 only: our DOCTYPE check reads UTF-8 bytes, so a UTF-16 or UTF-32 file could hide a DTD from it.
        if start.starts(with: [0xFE, 0xFF]) || start.starts(with: [0xFF, 0xFE]) || start.contains(0) {
            throw ImportRefused(message: "Import files must be UTF-8 text (this one looks like UTF-16 or binary).")
        }
        let text = String(decoding: start, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}"))
        )
        if text.isEmpty { throw ImportRefused(message: "The file is empty.") }
        if text.hasPrefix("{") { return .json }
        if text.hasPrefix("<") { return .xml }
        return .text
    }

    static func parseFormat(_ data: Data, rules: ImportRules) throws -> ImportedTour {
        switch try kind(of: data) {
        case .zip:
            // A KMZ handed over as bytes (tests, the fuzzer): the zip reader works on a file.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).kmz")
            try data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            return try KMZArchive.read(file, rules: rules)
        case .json:
            var tour = try parseGeoJSON(data, rules: rules)
            tour.format = .geoJSON
            return tour
        case .xml:
            if KMLImport.isHTMLPage(data) {
                throw ImportRefused(
                    message: "This is a web page (HTML), not KML or GPX: save the map itself (in Google Earth: Save Place As… KML or KMZ)."
                )
            }
            if KMLImport.isKML(data) { return try KMLImport.parse(data, rules: rules) }
            var tour = try parseGPX(data, rules: rules)
            tour.format = .gpx
            return tour
        case .text:
            return try CSVImport.parse(data)
        }
    }
}
