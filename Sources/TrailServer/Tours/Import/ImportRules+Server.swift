import Foundation
import TourFormats

extension ImportRules {
    /// The server's rules for what an import brings: a route as a tour keeps it (`RoutePath`), the languages it
    /// offers (`LanguageTag`), a trigger zone's radius (`TriggerZone`), the pictures a waypoint takes (`FileTypeDetector`).
    static func server(maxBytes: Int = AppConfig().importMaxSize) -> ImportRules {
        ImportRules(
            maxBytes: maxBytes,
            maxRoutePoints: RoutePath.maxPoints,
            refuseRoute: { positions in
                do {
                    _ = try RoutePath(positions: positions)
                    return nil
                } catch let errors as ValidationErrors {
                    return errors["route"] ?? "The route is invalid."
                } catch {
                    return "The route is invalid."
                }
            },
            refusePicture: { data in
                // Pictures only: no text file is one, so the UTF-8 check is never needed.
                let header = Array(data.prefix(FileTypeDetector.headerLength))
                let detected = FileTypeDetector.detect(header: header, fileSize: Int64(data.count)) { false }
                return detected?.kind == .image ? nil : "not a JPEG, PNG, WebP or GIF picture"
            },
            languageTag: { LanguageTag.canonical($0) },
            languageRefusal: { LanguageTag.refusal($0) },
            triggerRadius: { input in
                let value: TriggerZone.Input =
                    switch input {
                    case .number(let number): .number(number)
                    case .text(let text): .text(text)
                    }
                return try? TriggerZone.radius(value).get()
            },
            triggerRadiusRule: "a whole number of metres from \(TriggerZone.radiusRange.lowerBound) to \(TriggerZone.radiusRange.upperBound)"
        )
    }
}

extension TourImport {
    /// A stored import file, read under the server's rules.
    static func parse(fileAt url: URL, maxBytes: Int = AppConfig().importMaxSize) throws -> ImportedTour {
        try parse(fileAt: url, rules: .server(maxBytes: maxBytes))
    }

    /// An import file's bytes, read under the server's rules.
    static func parse(_ data: Data, maxBytes: Int = AppConfig().importMaxSize) throws -> ImportedTour {
        try parse(data, rules: .server(maxBytes: maxBytes))
    }
}

extension ImportedTour {
    /// The route as the tour keeps it; its positions passed the same check (`ImportRules.server`'s `refuseRoute`).
    var routePath: RoutePath? { route.flatMap { try? RoutePath(positions: $0) } }
}

extension ImportedTour.Text {
    var localizedText: LocalizedText { LocalizedText(name: name, description: description) }
}
