import Foundation
import TourFormats

extension ImportRules {
    /// Rules of the kind an app sets, small enough to read in a test: a route of at least two points, the languages
    /// en, es, de and fr, a trigger radius of whole metres from 5 to 500, PNG pictures.
    static let forTests = ImportRules(
        maxBytes: 1 << 20,
        maxRoutePoints: 1_000,
        refuseRoute: { positions in positions.count < 2 ? "A route needs at least two points." : nil },
        refusePicture: { data in data.starts(with: [0x89, 0x50, 0x4E, 0x47]) ? nil : "not a PNG picture" },
        languageTag: { ["en", "es", "de", "fr"].contains($0.lowercased()) ? $0.lowercased() : nil },
        languageRefusal: { "“\($0)” is not one of this app's languages." },
        triggerRadius: { input in
            let value: Double? =
                switch input {
                case .number(let number): number
                case .text(let text): Double(text)
                }
            guard let value, value == value.rounded(), (5...500).contains(value) else { return nil }
            return Int(value)
        },
        triggerRadiusRule: "a whole number of metres from 5 to 500"
    )
}

extension TourImport {
    /// Bytes read under ``ImportRules/forTests``.
    static func parse(_ data: Data) throws -> ImportedTour { try parse(data, rules: .forTests) }
}
