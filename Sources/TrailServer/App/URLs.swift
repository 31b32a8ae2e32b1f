/// Every URL the server writes into a redirect, a page model or a `Location` header, built in one place. The routes
/// that answer them are registered with patterns (`/tours/{id}`) in the controllers; a URL that changes here changes
/// for every page and redirect at once, and `RouteTable` in the tests checks each pattern is served.
///
/// The templates still write the links of list rows (`/tours/{{id}}`) themselves: those are the view's, one per row.
enum PanelURL {
    /// A section of the tour page, the fragment a redirect lands on.
    enum TourSection: Sendable {
        case publish, waypoints, tiles, trailFacts
        case waypoint(Int64)

        var fragment: String {
            switch self {
            case .publish: "publish"
            case .waypoints: "waypoints"
            case .tiles: "tiles"
            case .trailFacts: "trail-facts"
            case .waypoint(let id): "waypoint-\(id)"
            }
        }
    }

    /// A section of the waypoint page.
    enum WaypointSection: Sendable {
        case assets
        case asset(Int64)

        var fragment: String {
            switch self {
            case .assets: "assets"
            case .asset(let id): "asset-\(id)"
            }
        }
    }

    static let sites = "/sites"

    static func site(_ slug: String) -> String { "/sites/\(slug)" }
    static func siteMembers(_ slug: String) -> String { "\(site(slug))/members" }
    static func siteAlerts(_ slug: String) -> String { "\(site(slug))/alerts" }
    /// The site's home area and time zone (managers).
    static func siteSettings(_ slug: String) -> String { "\(site(slug))/settings" }
    static func siteStats(_ slug: String) -> String { "\(site(slug))/stats" }
    /// Where the new-tour form posts.
    static func siteTours(_ slug: String) -> String { "\(site(slug))/tours" }

    static func tour(_ id: Int64, at section: TourSection? = nil) -> String {
        "/tours/\(id)" + (section.map { "#\($0.fragment)" } ?? "")
    }

    static func tourEdit(_ id: Int64, language: String? = nil) -> String {
        "\(tour(id))/edit" + (language.map { "?lang=\($0)" } ?? "")
    }

    static func tourLanguages(_ id: Int64) -> String { "\(tour(id))/languages" }
    static func tourText(_ id: Int64, language: String) -> String { "\(tour(id))/text/\(language)" }
    static func tourRoute(_ id: Int64) -> String { "\(tour(id))/route" }
    static func tourBasemap(_ id: Int64) -> String { "\(tour(id))/basemap.geojson" }
    static let places = "/places"
    /// Where the trail facts card's accessibility form posts.
    static func tourAccessibility(_ id: Int64) -> String { "\(tour(id))/accessibility" }
    /// The published tour's print files; `draft` asks for a proof marked DRAFT (what a server without a public address prints).
    static func tourSign(_ id: Int64, draft: Bool = false) -> String { "\(tour(id))/print/sign.pdf" + (draft ? "?draft=1" : "") }
    static func tourBooklet(_ id: Int64, draft: Bool = false) -> String { "\(tour(id))/print/booklet.pdf" + (draft ? "?draft=1" : "") }
    /// The tour page's duration and publishing card alone, which the page re-reads after a change made in place.
    static func tourStatus(_ id: Int64) -> String { "\(tour(id))/status" }
    static func tourImport(_ id: Int64, importId: String) -> String { "\(tour(id))/import/\(importId)" }
    /// Where the map's click posts a new waypoint.
    static func waypoints(tourId: Int64) -> String { "\(tour(tourId))/waypoints" }
    static func waypointOrder(tourId: Int64) -> String { "\(waypoints(tourId: tourId))/order" }
    /// The map's drag target; the script puts the waypoint's id in for `{id}`.
    static func waypointMoveTemplate(tourId: Int64) -> String { "\(waypoints(tourId: tourId))/{id}/move" }

    static func waypoint(tourId: Int64, _ id: Int64, language: String? = nil, at section: WaypointSection? = nil) -> String {
        "\(waypoints(tourId: tourId))/\(id)" + (language.map { "?lang=\($0)" } ?? "") + (section.map { "#\($0.fragment)" } ?? "")
    }

    static func assetContent(_ id: Int64) -> String { "/assets/\(id)/content" }

    static func request(_ id: String) -> String { "/requests/\(id)" }
    static func requestPreview(_ id: String) -> String { "\(request(id))/preview" }
    /// The tile template of a request's preview map (Leaflet fills `{z}/{x}/{y}`).
    static func requestTiles(_ id: String) -> String { "\(request(id))/tiles/{z}/{x}/{y}" }
    static func requestBasemap(_ id: String) -> String { "\(request(id))/basemap.geojson" }
    static func packageVersionBasemap(_ id: String, version: Int) -> String { "\(package(id))/versions/\(version)/basemap.geojson" }
    static func requestCompanion(_ id: String, asset index: Int, role: String) -> String { "\(request(id))/assets/\(index)/\(role)" }

    static func package(_ id: String) -> String { "/packages/\(id)" }
    static func packageVersionPreview(_ id: String, version: Int) -> String { "\(package(id))/versions/\(version)/preview" }
    /// The tile template of a released version's preview map.
    static func packageVersionTiles(_ id: String, version: Int) -> String { "\(package(id))/versions/\(version)/tiles/{z}/{x}/{y}" }
}

/// The API's URLs the server hands out: `Location` headers and the links in answers (`publicURL` is the server's
/// public origin where an absolute URL is needed).
enum APIURL {
    static func packageDownload(_ id: String) -> String { "/api/v1/packages/\(id)/download" }

    static func download(_ publicURL: String, packageId: String, version: Int) -> String {
        "\(publicURL)/api/v1/packages/\(packageId)/versions/\(version)/download"
    }

    static func manifest(_ publicURL: String, packageId: String, version: Int) -> String {
        "\(publicURL)/api/v1/packages/\(packageId)/versions/\(version)/manifest"
    }

    static func file(_ publicURL: String, sha256: String) -> String { "\(publicURL)/api/v1/files/\(sha256)" }

    static func manageAsset(_ id: Int64) -> String { "/api/v1/manage/assets/\(id)" }
    static func manageUpload(_ id: String) -> String { "/api/v1/manage/uploads/\(id)" }
    static func managePublishRequest(_ id: String) -> String { "/api/v1/manage/publish-requests/\(id)" }
    static func manageTourTiles(_ id: Int64) -> String { "/api/v1/manage/tours/\(id)/tiles" }
    static func manageTour(_ id: Int64) -> String { "/api/v1/manage/tours/\(id)" }
}
