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
        guard tour.frame != nil else {
            let waypoints = try Waypoint.inTour(tour.id).fetchAll(db)
            return try geoJSON(tour: tour, waypoints: waypoints, siteName: site.name)
        }
        let snapshot = try AppDatabase.snapshot(db, tour: tour, site: site)
        let manifest = ManifestMaker.manifest(packageId: "tour-\(tour.id)", version: 0, createdAt: tour.updatedAt, snapshot: snapshot)
        return try TourGeoJSON.make(manifest: manifest)
    }

    static func geoJSON(tour: Tour, waypoints: [Waypoint], siteName: String) throws -> Data {
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
                Manifest.Waypoint(
                    name: $0.name,
                    order: $0.position,
                    coordinates: .init(latitude: $0.latitude, longitude: $0.longitude),
                    description: $0.description,
                    assets: [],
                    triggerRadiusMeters: $0.triggerRadiusMeters,
                    localized: $0.localized.isEmpty
                        ? nil : $0.localized.mapValues { Manifest.WaypointText(name: $0.name, description: $0.description) }
                )
            },
            route: tour.route?.points.map { Manifest.RoutePoint(longitude: $0.longitude, latitude: $0.latitude) }
        )
        return try TourGeoJSON.make(manifest: manifest)
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
