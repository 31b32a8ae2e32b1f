import Foundation
import PackageFormat

/// The tour page's "Trail facts" card (`Templates/trail-facts.mustache`): the totals in words, the elevation profile
/// as an SVG drawn here, the same numbers as a table, the grade bands, and the ranger's accessibility form. No fact is
/// told by colour alone: every band and total is a word and a number.
struct TrailFactsCard: Sendable {
    struct Row: Sendable {
        let place: String
        let distance: String
        let elevation: String
    }
    struct Grade: Sendable {
        let label: String
        let range: String
        let share: String
    }
    struct Option: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }

    let summary: String
    let source: String
    /// Why there are no heights, or what is wrong with the server's terrain model.
    let note: String?
    let hasProfile: Bool
    let profileSVG: String
    let rows: [Row]
    let grades: [Grade]
    let maxGrade: String?
    let accessibility: [String]
    let hasAccessibility: Bool
    // The form.
    let canEdit: Bool
    let surfaces: [Option]
    let stepFreeChoices: [Option]
    let minWidth: String
    let notes: String
    var errors: [String: String] = [:]

    static let gradeLabels = [
        ("Flat", "up to 1 %"), ("Gentle", "over 1 % to 5 %"), ("Moderate", "over 5 % to 8.33 % (1:12)"),
        ("Steep", "over 8.33 % to 12 %"), ("Very steep", "over 12 %"),
    ]

    static func make(
        tour: Tour,
        terrain: TerrainFacts?,
        estimate: DurationEstimate,
        waypoints: [Waypoint],
        terrainProblem: String?,
        canEdit: Bool,
        form: AccessibilityInput? = nil,
        errors: [String: String] = [:]
    ) -> TrailFactsCard {
        let facts = terrain.map { TrailFacts(terrain: $0, walkingMinutes: estimate.totalMinutes, accessibility: tour.accessibility) }
        var stops: [(order: Int, distance: Double, elevation: Double?)] = []
        var along = 0.0
        for (index, waypoint) in waypoints.enumerated() {
            along += index < estimate.distancesFromPrevious.count ? estimate.distancesFromPrevious[index] : 0
            stops.append((waypoint.position, along, terrain?.elevation(ofWaypoint: waypoint.id)))
        }
        let hasProfile = (facts?.profile.count ?? 0) >= 2
        var rows: [Row] = []
        var profileSVG = ""
        if let facts, hasProfile {
            rows = profileRows(facts, stops: stops, names: Dictionary(uniqueKeysWithValues: waypoints.map { ($0.position, $0.name) }))
            profileSVG = ElevationProfileSVG.render(facts, stops: stops, title: "Elevation profile of \(tour.name)")
        }
        let grades: [Grade] =
            facts?.grades.map { grades in
                zip(gradeLabels, [grades.flat, grades.gentle, grades.moderate, grades.steep, grades.verySteep]).map { label, share in
                    Grade(label: label.0, range: label.1, share: percent(share))
                }
            } ?? []
        let current =
            form
            ?? AccessibilityInput(
                surface: tour.accessSurface?.rawValue,
                minWidthCm: tour.accessMinWidthCm.map(String.init),
                stepFree: tour.accessStepFree,
                notes: tour.accessNotes
            )
        return TrailFactsCard(
            summary: facts.map(words) ?? "The facts are being worked out.",
            source: terrain.map { $0.hasHeights ? $0.sourceText : "" } ?? "",
            note: terrainProblem ?? (terrain?.hasHeights == false ? terrain?.note : nil),
            hasProfile: hasProfile,
            profileSVG: profileSVG,
            rows: rows,
            grades: grades,
            maxGrade: facts?.maxGradePercent.map { String(format: "The steepest 25 m climb or descend at %.1f %%.", $0) },
            accessibility: accessibilityLines(tour.accessibility),
            hasAccessibility: tour.accessibility != nil,
            canEdit: canEdit,
            surfaces: [Option(value: "", label: "Not known", selected: (current.surface ?? "").isEmpty)]
                + TrailSurface.allCases.map { Option(value: $0.rawValue, label: $0.label, selected: current.surface == $0.rawValue) },
            stepFreeChoices: [
                Option(value: "", label: "Not known", selected: current.stepFree == nil),
                Option(value: "yes", label: "Yes, no steps anywhere", selected: current.stepFree == true),
                Option(value: "no", label: "No, there are steps", selected: current.stepFree == false),
            ],
            minWidth: current.minWidthCm ?? "",
            notes: current.notes ?? "",
            errors: errors
        )
    }

    /// "2.4 km, 120 m up and 118 m down, between 140 and 260 m above sea level. About 55 min on foot with the stops."
    static func words(_ facts: TrailFacts) -> String {
        var sentence = String(format: "%.1f km", facts.lengthMeters / 1000)
        if let ascent = facts.ascentMeters, let descent = facts.descentMeters {
            sentence += String(format: ", %.0f m up and %.0f m down", ascent, descent)
        }
        if let low = facts.minElevationMeters, let high = facts.maxElevationMeters {
            sentence += String(format: ", between %.0f and %.0f m above sea level", low, high)
        }
        let minutes = facts.walkingMinutes
        let time = minutes >= 60 ? "\(minutes / 60) h \(minutes % 60) min" : "\(minutes) min"
        return sentence + ". About \(time) on foot with the stops."
    }

    static func accessibilityLines(_ value: TrailFacts.Accessibility?) -> [String] {
        guard let value else { return [] }
        var lines: [String] = []
        if let surface = value.surface.flatMap(TrailSurface.init(rawValue:)) { lines.append("Surface: \(surface.label.lowercased()).") }
        if let width = value.minWidthCm { lines.append("Narrowest width: \(width) cm.") }
        if let stepFree = value.stepFree { lines.append(stepFree ? "Step-free: no steps anywhere." : "Not step-free: there are steps.") }
        if let notes = value.notes { lines.append(notes) }
        return lines
    }

    static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }

    /// The start, every tenth of the way, each stop and the end, in order of distance.
    static func profileRows(_ facts: TrailFacts, stops: [(order: Int, distance: Double, elevation: Double?)], names: [Int: String]) -> [Row] {
        let profile = facts.profile
        guard let last = profile.last else { return [] }
        let length = last[0]
        func height(at distance: Double) -> Double {
            guard let after = profile.firstIndex(where: { $0[0] >= distance }) else { return last[1] }
            guard after > 0 else { return profile[0][1] }
            let (a, b) = (profile[after - 1], profile[after])
            return b[0] > a[0] ? a[1] + (b[1] - a[1]) * (distance - a[0]) / (b[0] - a[0]) : a[1]
        }
        var entries: [(distance: Double, place: String, elevation: Double)] = (0...10).map { tenth in
            let distance = length * Double(tenth) / 10
            return (distance, tenth == 0 ? "Start" : tenth == 10 ? "End" : "", height(at: distance))
        }
        for stop in stops {
            entries.append((stop.distance, "Stop \(stop.order): \(names[stop.order] ?? "")", stop.elevation ?? height(at: stop.distance)))
        }
        return entries.sorted { $0.distance < $1.distance }.map {
            Row(place: $0.place, distance: String(format: "%.2f km", $0.distance / 1000), elevation: String(format: "%.0f m", $0.elevation))
        }
    }
}

/// The elevation profile as an SVG, drawn on the server: the profile's line and area, the stops as numbered marks, and
/// the axes labelled in metres and kilometres. Text and lines, so it prints and scales; `role="img"` with a title,
/// and the table beside it carries the same numbers for a screen reader.
enum ElevationProfileSVG {
    static func render(_ facts: TrailFacts, stops: [(order: Int, distance: Double, elevation: Double?)], title: String) -> String {
        let (width, height) = (640.0, 200.0)
        let (left, right, top, bottom) = (48.0, 12.0, 12.0, 32.0)
        let profile = facts.profile
        let heights = profile.map { $0[1] }
        guard let last = profile.last, var low = heights.min(), var high = heights.max() else { return "" }
        let length = max(last[0], 1)
        // At least 20 m of height shown, so a flat walk looks flat rather than a jagged line of noise.
        if high - low < 20 {
            let middle = (high + low) / 2
            (low, high) = (middle - 10, middle + 10)
        }
        func x(_ distance: Double) -> Double { left + distance / length * (width - left - right) }
        func y(_ elevation: Double) -> Double { top + (high - elevation) / (high - low) * (height - top - bottom) }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }
        let line = profile.map { "\(f(x($0[0]))),\(f(y($0[1])))" }.joined(separator: " ")
        let base = height - bottom
        var svg = """
            <svg data-elevation-profile class="elevation-profile" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" \
            aria-labelledby="profile-title" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">\
            <title id="profile-title">\(HTMLText.escape(title)): \(HTMLText.escape(TrailFactsCard.words(facts)))</title>\
            <polygon class="profile-area" points="\(f(x(0))),\(f(base)) \(line) \(f(x(length))),\(f(base))"/>\
            <polyline class="profile-line" points="\(line)"/>\
            <line class="profile-axis" x1="\(f(left))" y1="\(f(base))" x2="\(f(width - right))" y2="\(f(base))"/>\
            <line class="profile-axis" x1="\(f(left))" y1="\(f(top))" x2="\(f(left))" y2="\(f(base))"/>\
            <text class="profile-label" x="\(f(left - 4))" y="\(f(y(high) + 4))" text-anchor="end">\(Int(high.rounded())) m</text>\
            <text class="profile-label" x="\(f(left - 4))" y="\(f(y(low)))" text-anchor="end">\(Int(low.rounded())) m</text>\
            <text class="profile-label" x="\(f(left))" y="\(f(height - 10))">0 km</text>\
            <text class="profile-label" x="\(f(width - right))" y="\(f(height - 10))" text-anchor="end">\(String(format: "%.1f km", length / 1000))</text>
            """
        for stop in stops {
            let sx = x(min(stop.distance, length))
            svg += """
                <g class="profile-stop"><line x1="\(f(sx))" y1="\(f(top))" x2="\(f(sx))" y2="\(f(base))"/>\
                <text x="\(f(sx))" y="\(f(height - 20))" text-anchor="middle">\(stop.order)</text></g>
                """
        }
        return svg + "</svg>"
    }
}
