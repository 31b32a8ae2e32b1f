import Foundation
import SwiftCSV

/// A spreadsheet of points: a header row, then one waypoint a row. Quoting, separators inside quotes and line breaks
/// inside fields are SwiftCSV's job; this only picks the columns and checks the values.
enum CSVImport {
    static let latitudeNames = ["latitude", "lat", "y"]
    static let longitudeNames = ["longitude", "lon", "lng", "x"]

    static func parse(_ data: Data) throws -> ImportedTour {
        guard var text = String(data: data, encoding: .utf8) else {
            throw ImportRefused(message: "This file is not UTF-8 text, and not GeoJSON, GPX, KML, KMZ or CSV.")
        }
        // Spreadsheets often write a byte order mark; it is not part of the first column's name.
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ImportRefused(message: "The file is empty.") }
        let headerLine = String(text.prefix { $0 != "\n" && $0 != "\r" })
        let delimiter = Self.delimiter(headerLine: headerLine)
        let csv: EnumeratedCSV
        do {
            csv = try EnumeratedCSV(string: text, delimiter: delimiter, loadColumns: false)
        } catch {
            throw ImportRefused(message: "The CSV could not be read (\(error)). Check that every opening quote is closed.")
        }
        let header = csv.header.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
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
        for (index, row) in csv.rows.enumerated() {
            // Rows count from the first below the header, as a spreadsheet shows them (row 2 is the first point).
            let at = "Row \(index + 2)"
            func field(_ column: Int?) -> String {
                column.flatMap { $0 < row.count ? row[$0] : nil }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            }
            if row.allSatisfy({ $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) { continue }
            let rawLatitude = field(latitude)
            let rawLongitude = field(longitude)
            let pointName = String((field(name).nonEmpty ?? "Point \(index + 1)").prefix(120))
            if rawLatitude.isEmpty || rawLongitude.isEmpty {
                result.leftOut.append(.init(kind: "row", name: pointName, reason: "no coordinates (\(at))"))
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
            if order != nil, !field(order).isEmpty {
                guard let value = number(field(order)) else {
                    throw ImportRefused(message: "\(at), column “\(header[order!])”: “\(field(order).prefix(40))” is not a number.")
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

    /// Comma, semicolon or tab: whichever the header line uses most, outside quotes.
    static func delimiter(headerLine: String) -> CSVDelimiter {
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
