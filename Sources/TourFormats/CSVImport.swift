import Foundation

/// A spreadsheet of points: a header row, then one waypoint a row. Read as a stream, one row at a time: holding every
/// row of a file (as `[[String]]`) cost about 80 times the file's size, and a 19 MiB file of empty rows took the
/// server from 93 to 1,653 MiB. Now a row is dropped once read, and only the points and the first
/// ``ImportedTour/LeftOutList/limit`` rows left out are kept.
package enum CSVImport {
    static let latitudeNames = ["latitude", "lat", "y"]
    static let longitudeNames = ["longitude", "lon", "lng", "x"]
    /// Rows read below the header, blank ones included. Five times the waypoint limit: room for a spreadsheet's
    /// trailing blank rows and rows without coordinates, while a file of millions of empty rows is refused after a few
    /// kilobytes instead of being read to its end.
    package static let maxRows = 5 * TourImport.maxWaypoints
    /// Bytes kept of one field: more than the longest text kept (a description of 20,000 characters, 4 bytes each at
    /// most), so a field is never cut short of what is used; the rest of a longer field is read and dropped.
    static let maxFieldBytes = 100_000
    /// Bytes read from the file at a time.
    static let chunkBytes = 256 * 1024

    /// A CSV in memory (tests, the fuzzer, a file handed over as bytes).
    static func parse(_ data: Data) throws -> ImportedTour {
        var offset = data.startIndex
        return try parse {
            guard offset < data.endIndex else { return nil }
            let end = min(offset + chunkBytes, data.endIndex)
            defer { offset = end }
            return [UInt8](data[offset..<end])
        }
    }

    /// A CSV file, read a chunk at a time.
    static func parse(fileAt url: URL) throws -> ImportedTour {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try parse { try handle.read(upToCount: chunkBytes).flatMap { $0.isEmpty ? nil : [UInt8]($0) } }
    }

    /// `nextChunk` hands the file's bytes on in order, nil at the end.
    static func parse(nextChunk: @escaping () throws -> [UInt8]?) throws -> ImportedTour {
        var first = try nextChunk() ?? []
        // Spreadsheets often write a byte order mark; it is not part of the first column's name.
        if first.starts(with: [0xEF, 0xBB, 0xBF]) { first.removeFirst(3) }
        let headerLine = String(decoding: first.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
        let delimiter = Self.delimiter(headerLine: headerLine)
        var records = CSVRecords(delimiter: delimiter.rawValue, first: first, next: nextChunk)
        guard let headerFields = try records.next() else { throw ImportRefused(message: "The file is empty.") }
        let header = try headerFields.map { try text($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        if header.allSatisfy(\.isEmpty) {
            // Blank lines first: the file is empty unless something follows them (within the row limit).
            var blank = true
            var count = 0
            while blank, count < maxRows, let row = try records.next() {
                count += 1
                blank = try row.allSatisfy { try text($0).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
            }
            if blank, records.atEnd { throw ImportRefused(message: "The file is empty.") }
        }
        let keys = header.map { $0.lowercased() }
        func column(_ names: [String]) -> Int? { names.lazy.compactMap { keys.firstIndex(of: $0) }.first }
        guard let latitude = column(latitudeNames), let longitude = column(longitudeNames) else {
            let found = header.prefix(12).map { "“\($0.prefix(40))”" }.joined(separator: ", ")
            throw ImportRefused(
                message:
                    "The CSV has no coordinate columns: name them latitude (or lat, y) and longitude (or lon, lng, x) in the header row. Found: \(found.isEmpty ? "no columns" : found)."
            )
        }
        let name = column(["name"])
        let description = column(["description"])
        let order = column(["order"])
        var result = ImportedTour(format: .csv)
        result.columns = ["latitude": header[latitude], "longitude": header[longitude]]
        if let name { result.columns["name"] = header[name] }
        if let description { result.columns["description"] = header[description] }
        if let order { result.columns["order"] = header[order] }
        let unused = header.indices.filter { ![latitude, longitude, name, description, order].contains($0) && !header[$0].isEmpty }
        if !unused.isEmpty {
            result.notes.append("Columns not imported: \(unused.prefix(20).map { "“\(header[$0])”" }.joined(separator: ", ")).")
        }
        // A semicolon file usually comes from a spreadsheet that writes decimal commas ("44,41").
        let decimalComma = delimiter == .semicolon
        func number(_ raw: String) -> Double? {
            var value = raw.trimmingCharacters(in: .whitespaces)
            if decimalComma, !value.contains("."), value.filter({ $0 == "," }).count == 1 { value = value.replacingOccurrences(of: ",", with: ".") }
            return Double(value).flatMap { $0.isFinite ? $0 : nil }
        }
        var rows: [(order: Double?, point: ImportedTour.Point)] = []
        var index = 0
        while let row = try records.next() {
            defer { index += 1 }
            guard index < maxRows else {
                throw ImportRefused(
                    message:
                        "The CSV has more than \(Wording.grouped(maxRows)) rows below its header (blank rows count too); a tour can take at most \(Wording.grouped(TourImport.maxWaypoints)) waypoints. Remove the empty rows, or split the file."
                )
            }
            // Rows count from the first below the header, as a spreadsheet shows them (row 2 is the first point).
            let at = "Row \(index + 2)"
            // Every field is checked as UTF-8, used or not: the file is text, or it is refused.
            let fields = try row.map(text)
            func field(_ column: Int?) -> String {
                column.flatMap { $0 < fields.count ? fields[$0] : nil }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            }
            if fields.allSatisfy({ $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) { continue }
            let rawLatitude = field(latitude)
            let rawLongitude = field(longitude)
            let pointName = String((field(name).nonEmpty ?? "Point \(index + 1)").prefix(120))
            if rawLatitude.isEmpty || rawLongitude.isEmpty {
                result.leftOutList.append(.init(kind: "row", name: pointName, reason: "no coordinates (\(at))"))
                continue
            }
            guard let lat = number(rawLatitude) else {
                throw ImportRefused(message: "\(at), column “\(header[latitude])”: “\(rawLatitude.prefix(40))” is not a number.")
            }
            guard let lon = number(rawLongitude) else {
                throw ImportRefused(message: "\(at), column “\(header[longitude])”: “\(rawLongitude.prefix(40))” is not a number.")
            }
            guard (-90...90).contains(lat) else { throw ImportRefused(message: "\(at): latitude \(rawLatitude.prefix(40)) is outside ±90.") }
            guard (-180...180).contains(lon) else { throw ImportRefused(message: "\(at): longitude \(rawLongitude.prefix(40)) is outside ±180.") }
            var position: Double?
            if let order, !field(order).isEmpty {
                guard let value = number(field(order)) else {
                    throw ImportRefused(message: "\(at), column “\(header[order])”: “\(field(order).prefix(40))” is not a number.")
                }
                position = value
            }
            rows.append(
                (position, ImportedTour.Point(name: pointName, description: String(field(description).prefix(20_000)), latitude: lat, longitude: lon))
            )
            guard rows.count <= TourImport.maxWaypoints else {
                throw ImportRefused(
                    message: "The CSV has more than \(TourImport.maxWaypoints) points; a tour can take at most \(TourImport.maxWaypoints) waypoints."
                )
            }
        }
        // With an order column, points are taken in that order (rows without one keep their place after those with one).
        let sorted =
            order == nil
            ? rows
            : rows.enumerated().sorted { a, b in
                switch (a.element.order, b.element.order) {
                case let (x?, y?): return x != y ? x < y : a.offset < b.offset
                case (_?, nil): return true
                case (nil, _?): return false
                case (nil, nil): return a.offset < b.offset
                }
            }.map(\.element)
        result.points = sorted.map(\.point)
        return result
    }

    /// A field's bytes as text; anything but UTF-8 is refused.
    static func text(_ bytes: [UInt8]) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ImportRefused(message: "This file is not UTF-8 text, and not GeoJSON, GPX, KML, KMZ or CSV.")
        }
        return text
    }

    enum Delimiter: UInt8 {
        case comma = 0x2C
        case semicolon = 0x3B
        case tab = 0x09
    }

    /// Comma, semicolon or tab: whichever the header line uses most, outside quotes.
    static func delimiter(headerLine: String) -> Delimiter {
        var counts: [Character: Int] = [:]
        var quoted = false
        for character in headerLine {
            if character == "\"" { quoted.toggle() } else if !quoted, [",", ";", "\t"].contains(character) { counts[character, default: 0] += 1 }
        }
        let comma = counts[",", default: 0]
        let semicolon = counts[";", default: 0]
        let tab = counts["\t", default: 0]
        if semicolon > comma, semicolon >= tab { return .semicolon }
        if tab > comma, tab > semicolon { return .tab }
        return .comma
    }
}

/// RFC 4180 records, one at a time, from bytes that arrive in chunks: fields separated by the delimiter, records by
/// LF, CRLF or CR; a field that starts with a quote runs to its closing quote (delimiters and line breaks inside are
/// text, `""` is one quote). Only the record being read is held, each field to ``CSVImport/maxFieldBytes``.
struct CSVRecords {
    let delimiter: UInt8
    private let nextChunk: () throws -> [UInt8]?
    private var chunk: [UInt8]
    private var position = 0
    /// Records read so far, for the message about an unclosed quote.
    private var count = 0
    private(set) var atEnd = false

    private static let quote = UInt8(ascii: "\"")
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    init(delimiter: UInt8, first: [UInt8], next: @escaping () throws -> [UInt8]?) {
        self.delimiter = delimiter
        self.chunk = first
        self.nextChunk = next
    }

    private mutating func peek() throws -> UInt8? {
        while position == chunk.count {
            guard !atEnd, let more = try nextChunk() else {
                atEnd = true
                return nil
            }
            chunk = more
            position = 0
        }
        return chunk[position]
    }

    private mutating func take() throws -> UInt8? {
        guard let byte = try peek() else { return nil }
        position += 1
        return byte
    }

    /// The next record's fields as bytes; nil at the end of the file.
    mutating func next() throws -> [[UInt8]]? {
        guard try peek() != nil else { return nil }
        count += 1
        var fields: [[UInt8]] = []
        var field: [UInt8] = []
        var quoted = false
        var startedQuoted = false
        func add(_ byte: UInt8) { if field.count < CSVImport.maxFieldBytes { field.append(byte) } }
        while let byte = try take() {
            if quoted {
                if byte != Self.quote {
                    add(byte)
                } else if try peek() == Self.quote {
                    position += 1
                    add(Self.quote)
                } else {
                    quoted = false
                }
            } else if byte == Self.quote, field.isEmpty, !startedQuoted {
                quoted = true
                startedQuoted = true
            } else if byte == delimiter {
                fields.append(field)
                field = []
                startedQuoted = false
            } else if byte == Self.lineFeed || byte == Self.carriageReturn {
                if byte == Self.carriageReturn, try peek() == Self.lineFeed { position += 1 }
                fields.append(field)
                return fields
            } else {
                add(byte)
            }
        }
        if quoted {
            throw ImportRefused(
                message: "The CSV could not be read: a quote opened in row \(count) is never closed. Check that every opening quote is closed."
            )
        }
        fields.append(field)
        return fields
    }
}
