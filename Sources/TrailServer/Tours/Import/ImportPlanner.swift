import Foundation
import PackageFormat
import TourFormats

extension TourImport {
    // MARK: Plan

    /// Matches by name (ignoring case): known names change, new names are added, points outside the frame are skipped.
    /// A tour without a frame gets one around the imported points.
    /// With `fitFrame`, the frame is set around the imported points (and route) even when the tour has one: the
    /// preview's "fit the frame to these points".
    static func plan(_ imported: ImportedTour, tour: Tour, existing: [Waypoint], maxAreaKm2: Double, fitFrame: Bool = false) -> ImportPlan {
        let languages = Set(tour.furtherLanguages)
        var plan = ImportPlan()
        plan.format = imported.format
        plan.leftOut = imported.leftOut
        plan.leftOutMore = imported.leftOutMore
        plan.folders = imported.folders
        plan.columns = imported.columns
        plan.notes = imported.notes
        var frame = tour.frame
        // Fitting only grows a frame: the tour's own waypoints, inside the old one, stay inside.
        let fitted = fittedFrame(imported).map { box in
            tour.frame.map {
                Frame(north: max($0.north, box.north), south: min($0.south, box.south), east: max($0.east, box.east), west: min($0.west, box.west))
            } ?? box
        }.flatMap { $0.areaKm2 <= maxAreaKm2 ? $0 : nil }
        if let fitted, frame == nil || fitFrame {
            frame = fitted
            plan.setsFrame = true
        }
        plan.frame = frame
        if let frame, !plan.setsFrame, let fitted {
            plan.outsideFrame = imported.points.filter { !frame.contains(latitude: $0.latitude, longitude: $0.longitude) }.count
            if plan.outsideFrame > 0 { plan.fittedFrame = fitted }
        }
        var seen = Set<String>()
        for point in imported.points {
            let key = point.name.lowercased()
            func item(_ action: ImportAction, _ reason: String? = nil) -> ImportPlan.Item {
                .init(action: action, name: point.name, latitude: point.latitude, longitude: point.longitude, reason: reason)
            }
            if seen.contains(key) {
                plan.waypoints.append(item(.skip, "the file names this waypoint twice"))
                continue
            }
            seen.insert(key)
            guard let frame, frame.contains(latitude: point.latitude, longitude: point.longitude) else {
                plan.waypoints.append(
                    item(.skip, frame == nil ? "the tour has no frame and the points span too large an area" : "outside the tour's frame")
                )
                continue
            }
            if let match = existing.first(where: { $0.name.lowercased() == key }) {
                let changes = Self.changes(from: match, to: point, languages: languages)
                plan.waypoints.append(
                    changes.isEmpty ? item(.skip, "already in the tour, unchanged") : item(.change, changes.joined(separator: "; "))
                )
            } else {
                plan.waypoints.append(item(.add))
            }
            if plan.waypoints.last?.action != .skip {
                plan.images += point.images.map { ImportPlan.Image(waypoint: point.name, file: $0.path, bytes: $0.data.count) }
            }
        }
        if let route = imported.routePath {
            plan.routePoints = route.points.count
            plan.routeLengthMeters = route.lengthMeters
        }
        return plan
    }

    /// What applying the point would change in the waypoint of the same name, in words for the preview; empty when
    /// nothing would.
    static func changes(from waypoint: Waypoint, to point: ImportedTour.Point, languages: Set<String>) -> [String] {
        var changes: [String] = []
        if abs(waypoint.latitude - point.latitude) >= 1e-7 || abs(waypoint.longitude - point.longitude) >= 1e-7 {
            let moved = Geo.distance(
                RoutePoint(longitude: waypoint.longitude, latitude: waypoint.latitude),
                RoutePoint(longitude: point.longitude, latitude: point.latitude)
            )
            changes.append(moved < 1 ? "moves less than 1 m" : "moves \(DisplayFormat.grouped(Int(moved.rounded()))) m")
        }
        if !point.description.isEmpty, waypoint.description != point.description { changes.append("new description") }
        if let radius = point.triggerRadiusMeters, radius != waypoint.triggerRadiusMeters {
            changes.append("trigger zone \(waypoint.triggerRadiusMeters) m → \(radius) m")
        }
        let texts = point.localized.filter { languages.contains($0.key) && waypoint.localized[$0.key] != $0.value.localizedText }.keys.sorted()
        if !texts.isEmpty { changes.append("new text in \(texts.joined(separator: ", "))") }
        return changes
    }

    /// The box around the imported points and route, with a margin (a tenth of each side, at least about 200 m), so
    /// no point sits on the frame's edge.
    static func fittedFrame(_ imported: ImportedTour) -> Frame? {
        let points = imported.points.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) } + (imported.routePath?.points ?? [])
        guard !points.isEmpty else { return nil }
        let box = TourExport.bounds(of: [], route: RoutePath(points: points))
        let padLat = max(0.002, (box.north - box.south) * 0.1)
        let padLon = max(0.002, (box.east - box.west) * 0.1)
        return Frame(
            north: min(90, box.north + padLat),
            south: max(-90, box.south - padLat),
            east: min(180, box.east + padLon),
            west: max(-180, box.west - padLon)
        )
    }
}
