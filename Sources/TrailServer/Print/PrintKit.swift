import Foundation
import PackageFormat

/// The sizes of a trailhead sign that print shops take, portrait. The names are the query values of `?size=`.
enum SignSize: String, CaseIterable, Sendable {
    case inches24x36 = "24x36in"
    case inches18x24 = "18x24in"
    case a1
    case a2

    static let standard = SignSize.inches24x36

    /// Width and height in PDF points (1/72 in; ISO sizes from millimetres).
    var points: (width: Double, height: Double) {
        switch self {
        case .inches24x36: (24 * 72, 36 * 72)
        case .inches18x24: (18 * 72, 24 * 72)
        case .a1: (594 * PrintKit.pointsPerMillimetre, 841 * PrintKit.pointsPerMillimetre)
        case .a2: (420 * PrintKit.pointsPerMillimetre, 594 * PrintKit.pointsPerMillimetre)
        }
    }

    var label: String {
        switch self {
        case .inches24x36: "24 × 36 in"
        case .inches18x24: "18 × 24 in"
        case .a1: "A1"
        case .a2: "A2"
        }
    }
}

/// A booklet's paper, portrait. The names are the query values of `?paper=`.
enum BookletPaper: String, CaseIterable, Sendable {
    case letter
    case a4

    static let standard = BookletPaper.letter

    var points: (width: Double, height: Double) {
        switch self {
        case .letter: (612, 792)
        case .a4: (210 * PrintKit.pointsPerMillimetre, 297 * PrintKit.pointsPerMillimetre)
        }
    }

    var label: String {
        switch self {
        case .letter: "US letter"
        case .a4: "A4"
        }
    }
}

enum PrintKit {
    static let pointsPerMillimetre = 72 / 25.4

    /// A stop's own link: the player opens with that stop open (docs/visitors.md).
    static func stopURL(playerURL: String, order: Int) -> String { "\(playerURL)?stop=\(order)" }

    /// The link as printed beneath its code: without `https://`, which nobody types.
    static func shortURL(_ url: String) -> String {
        for scheme in ["https://", "http://"] where url.hasPrefix(scheme) { return String(url.dropFirst(scheme.count)) }
        return url
    }

    /// The short link in lines that break where a reader expects (after the path, before the query), so a narrow
    /// column never hides the stop number behind an ellipsis: "tours.example.org/visit/", the package id, "?stop=3".
    static func printedURL(_ url: String) -> String {
        var text = shortURL(url)
        var query = ""
        if let mark = text.firstIndex(of: "?") {
            query = "\n" + text[mark...]
            text = String(text[..<mark])
        }
        if let slash = text.lastIndex(of: "/"), slash != text.index(before: text.endIndex) {
            text = text[...slash] + "\n" + text[text.index(after: slash)...]
        }
        return text + query
    }

    /// The answer to an unknown `?size=`, naming every size.
    static func unknownSize(_ value: String) -> ValidationErrors {
        let sizes = SignSize.allCases.map { "\($0.rawValue) (\($0.label)\($0 == .standard ? ", the default" : ""))" }
        return ValidationErrors(["size": "“\(value)” is not a sign size. Choose one of: \(sizes.joined(separator: ", "))."])
    }

    /// The answer to an unknown `?paper=`, naming every paper.
    static func unknownPaper(_ value: String) -> ValidationErrors {
        let papers = BookletPaper.allCases.map { "\($0.rawValue) (\($0.label)\($0 == .standard ? ", the default" : ""))" }
        return ValidationErrors(["paper": "“\(value)” is not a booklet paper. Choose one of: \(papers.joined(separator: ", "))."])
    }
}

/// Everything a print file shows, taken from the published manifest (what visitors get) and the alerts in force.
struct PrintedTour: Sendable {
    struct Stop: Sendable {
        let order: Int
        let name: String
        let description: String
        let url: String
        let latitude: Double
        let longitude: Double
        /// The closure that closes it now (its title), if any.
        let closedBy: String?
    }

    struct Notice: Sendable {
        let severity: AlertSeverity
        let title: String
        let message: String
        /// "Stops 2, 5" when it closes stops of this tour.
        let stops: String?
    }

    let name: String
    let park: String
    let description: String
    let playerURL: String
    let version: Int
    let bounds: Manifest.Bounds
    let route: [Manifest.RoutePoint]
    let stops: [Stop]
    let facts: String?
    let accessibility: [String]
    /// Closures and warnings in force when printed (information notes are left to the player: a sign stays up for
    /// months, and only what stops or endangers a walk is worth its room).
    let notices: [Notice]
    let printedOn: String
    /// A proof: "DRAFT" across every page.
    let draft: Bool
    /// What the map is drawn over: the package's tiles and its drawn open-data map, when it has them and they were
    /// read (``PrintController`` fills it in on the drawing thread).
    var map = PrintMapLayers()

    init(manifest: Manifest, packageId: String, park: String, publicURL: String, alerts: [Alert], draft: Bool, now: Date = Date()) {
        name = manifest.packageName
        self.park = park
        description = manifest.description
        playerURL = VisitController.playerURL(publicURL: publicURL, packageId: packageId)
        version = manifest.version
        bounds = manifest.bounds
        route = manifest.route ?? []
        let shown = alerts.filter { $0.severity != .info }.sorted {
            ($0.severity == .closure ? 0 : 1, $0.id) < ($1.severity == .closure ? 0 : 1, $1.id)
        }
        var closedBy: [Int64: String] = [:]
        for alert in shown where alert.severity == .closure {
            for id in alert.closedWaypointIds where closedBy[id] == nil { closedBy[id] = alert.title }
        }
        let waypoints = manifest.waypoints.sorted { $0.order < $1.order }
        let player = playerURL
        stops = waypoints.map { waypoint in
            Stop(
                order: waypoint.order,
                name: waypoint.name,
                description: waypoint.description,
                url: PrintKit.stopURL(playerURL: player, order: waypoint.order),
                latitude: waypoint.coordinates.latitude,
                longitude: waypoint.coordinates.longitude,
                closedBy: waypoint.id.flatMap { closedBy[$0] }
            )
        }
        notices = shown.map { alert in
            let orders = waypoints.filter { waypoint in waypoint.id.map { alert.closedWaypointIds.contains($0) } ?? false }.map { String($0.order) }
            return Notice(
                severity: alert.severity,
                title: alert.title,
                message: alert.message,
                stops: orders.isEmpty ? nil : (orders.count == 1 ? "Stop " : "Stops ") + orders.joined(separator: ", ")
            )
        }
        facts = manifest.trail.map(TrailFactsCard.words)
        accessibility = TrailFactsCard.accessibilityLines(manifest.trail?.accessibility)
        printedOn = DisplayFormat.date(now)
        self.draft = draft
    }
}
