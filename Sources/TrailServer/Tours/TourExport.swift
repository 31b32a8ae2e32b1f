import Foundation
import GRDB
import HTTPTypes
import PackageFormat

/// GeoJSON out (RFC 7946, the same document as a package's `waypoints.geojson`). What comes in is `Import/`.
enum TourExport {
    /// A framed tour is exported through the package's own manifest code (waypoints with their asset paths and
    /// distances, the route with the duration estimate): byte for byte the `waypoints.geojson` a build of the tour as it
    /// is now would contain. A tour without a frame yet gets the same layout around its points, without package data.
    static func geoJSON(_ db: Database, tour: Tour, site: Site) throws -> Data {
        try TourGeoJSON.make(manifest: manifest(db, tour: tour, site: site))
    }

    /// The manifest the exports are written from: a build's, or for a tour without a frame the same layout around its
    /// points. Both carry the trail facts' heights.
    static func manifest(_ db: Database, tour: Tour, site: Site) throws -> Manifest {
        guard let frame = tour.frame else {
            let waypoints = try Waypoint.inTour(tour.id).fetchAll(db)
            return manifest(tour: tour, waypoints: waypoints, siteName: site.name, terrain: try AppDatabase.terrainFacts(db, tourId: tour.id))
        }
        let snapshot = try AppDatabase.snapshot(db, tour: tour, frame: frame, site: site)
        return ManifestMaker.manifest(packageId: "tour-\(tour.id)", version: 0, createdAt: tour.updatedAt, snapshot: snapshot)
    }

    static func geoJSON(tour: Tour, waypoints: [Waypoint], siteName: String) throws -> Data {
        try TourGeoJSON.make(manifest: manifest(tour: tour, waypoints: waypoints, siteName: siteName, terrain: nil))
    }

    static func manifest(tour: Tour, waypoints: [Waypoint], siteName: String, terrain: TerrainFacts?) -> Manifest {
        let frame = tour.frame ?? Self.bounds(of: waypoints, route: tour.route)
        let manifest = Manifest(
            packageId: "tour-\(tour.id)",
            version: 0,
            createdAt: Manifest.timestamp(tour.updatedAt),
            packageName: tour.name,
            park: siteName,
            mapName: tour.mapName,
            bounds: Manifest.Bounds(north: frame.north, south: frame.south, east: frame.east, west: frame.west),
            description: tour.description,
            waypoints: waypoints.map {
                var stop = Manifest.Waypoint(
                    name: $0.name,
                    order: $0.position,
                    coordinates: .init(latitude: $0.latitude, longitude: $0.longitude),
                    description: $0.description,
                    assets: [],
                    triggerRadiusMeters: $0.triggerRadiusMeters,
                    localized: $0.localized.isEmpty
                        ? nil : $0.localized.mapValues { Manifest.WaypointText(name: $0.name, description: $0.description) }
                )
                stop.elevationMeters = terrain?.elevation(ofWaypoint: $0.id)
                return stop
            },
            route: tour.route.map { ManifestMaker.routePoints($0, terrain: terrain) }
        )
        return manifest
    }

    /// GPX 1.1 (what GPS units, hiking apps and GIS tools read): the stops as waypoints and the route as a track, each
    /// point with its `<ele>` where the trail facts know the height.
    static func gpx(_ manifest: Manifest) -> Data {
        func escape(_ text: String) -> String { HTMLText.escape(text) }
        func coordinate(_ value: Double) -> String { String(format: "%.7f", value) }
        func elevation(_ value: Double?) -> String { value.map { String(format: "<ele>%.1f</ele>", $0) } ?? "" }
        var gpx = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Trail Companion" xmlns="http://www.topografix.com/GPX/1/1">
            <metadata><name>\(escape(manifest.packageName))</name><desc>\(escape(manifest.description))</desc></metadata>

            """
        for stop in manifest.waypoints.sorted(by: { $0.order < $1.order }) {
            gpx += "<wpt lat=\"\(coordinate(stop.coordinates.latitude))\" lon=\"\(coordinate(stop.coordinates.longitude))\">"
            gpx += "\(elevation(stop.elevationMeters))<name>\(escape(stop.name))</name><desc>\(escape(stop.description))</desc></wpt>\n"
        }
        if let route = manifest.route, !route.isEmpty {
            gpx += "<trk><name>\(escape(manifest.packageName))</name><trkseg>\n"
            for point in route {
                gpx += "<trkpt lat=\"\(coordinate(point.latitude))\" lon=\"\(coordinate(point.longitude))\">\(elevation(point.elevation))</trkpt>\n"
            }
            gpx += "</trkseg></trk>\n"
        }
        return Data((gpx + "</gpx>\n").utf8)
    }

    static func bounds(of waypoints: [Waypoint], route: RoutePath?) -> Frame {
        let points = waypoints.map { RoutePoint(longitude: $0.longitude, latitude: $0.latitude) } + (route?.points ?? [])
        guard let first = points.first else { return Frame(north: 0, south: 0, east: 0, west: 0) }
        return points.reduce(Frame(north: first.latitude, south: first.latitude, east: first.longitude, west: first.longitude)) {
            Frame(
                north: max($0.north, $1.latitude),
                south: min($0.south, $1.latitude),
                east: max($0.east, $1.longitude),
                west: min($0.west, $1.longitude)
            )
        }
    }
}
