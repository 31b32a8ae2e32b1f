import Foundation

/// View models for the tour pages: plain strings and flags, never records.
struct TourFormPage: Sendable {
    let siteSlug: String
    let siteName: String
    let action: String
    let isNew: Bool
    let cancelURL: String
    var form: [String: String]
    var errors: [String: String] = [:]
    /// An existing tour's languages form and its language tabs (nil for a new tour).
    var languages: LanguagesForm? = nil
    var languageTabs: [LanguageTab] = []
    var hasLanguageTabs = false
    /// The open tab's form when it is a further language (else the tour's own form shows).
    var translation: TranslationForm? = nil
}

/// One tab per language above a tour's or waypoint's texts: links (`?lang=es`), so they work without JavaScript.
struct LanguageTab: Sendable {
    let tag: String
    let label: String
    let url: String
    let isActive: Bool
    let isDefault: Bool

    static func tabs(languages: [String], base: String, active: String?) -> [LanguageTab] {
        languages.enumerated().map { index, tag in
            LanguageTab(
                tag: tag,
                label: LanguageTag.label(tag) + (index == 0 ? " · default" : ""),
                url: index == 0 ? base : "\(base)?lang=\(tag)",
                isActive: (active ?? languages.first) == tag,
                isDefault: index == 0
            )
        }
    }
}

/// The name and description in one further language, with the default language's beside them for reference.
struct TranslationForm: Sendable {
    let tag: String
    let language: String
    let action: String
    var name: String
    var description: String
    let defaultName: String
    let defaultDescription: String
    let defaultLanguage: String
    var errors: [String: String] = [:]
}

/// A tour's languages as the edit page offers them: the default (a select) and the further ones (checkboxes).
struct LanguagesForm: Sendable {
    struct Option: Sendable {
        let tag: String
        let label: String
        let isDefault: Bool
        let isFurther: Bool
    }
    let action: String
    let options: [Option]
    var error: String? = nil
    /// After a refused removal: the confirmation box, ticked by the ranger to delete the texts.
    var needsConfirmation = false

    static func make(_ tour: Tour, chosen: [String]? = nil) -> LanguagesForm {
        let tags = chosen ?? tour.languages
        return LanguagesForm(
            action: PanelURL.tourLanguages(tour.id),
            options: LanguageTag.known.map {
                Option(tag: $0.tag, label: LanguageTag.label($0.tag), isDefault: tags.first == $0.tag, isFurther: tags.dropFirst().contains($0.tag))
            }
        )
    }
}

struct WaypointRow: Sendable, Encodable {
    let id: Int64
    let order: Int
    let name: String
    let latitude: String
    let longitude: String
    let triggerRadiusMeters: Int
    /// Its trigger zone overlaps another's.
    let overlaps: Bool
    let isFirst: Bool
    let isLast: Bool
}

/// What the map script needs, serialised into a `data-` attribute (escaped like any other text).
struct TourMapData: Encodable {
    struct Point: Encodable {
        let id: Int64
        let order: Int
        let name: String
        let latitude: Double
        let longitude: Double
        let url: String
        let triggerRadiusMeters: Int
        /// Drawn in the warning colour: an app would trigger this stop and another at once.
        let overlaps: Bool
    }
    let frame: Frame?
    let waypoints: [Point]
    /// The route as [[lon, lat], ...] (GeoJSON order).
    var route: [[Double]] = []
    var routeURL: String = ""
    let editable: Bool
    let tileURL: String?
    let moveURLTemplate: String
    let orderURL: String
    let newWaypointURL: String
    /// Zoom levels the tiles exist at (a package's own tiles), and their credit.
    var tileMinZoom: Int? = nil
    var tileMaxZoom: Int? = nil
    var tileAttribution: String? = nil
    /// Where the credit links to (OpenStreetMap's licence page).
    var tileAttributionURL: String? = nil
    /// The frame's drawn map (`/tours/{id}/basemap.geojson`), drawn when the tiles are off or fail to load; the place
    /// search's names (`/places`).
    var basemapURL: String? = nil
    var placesURL: String? = nil
    /// True when `basemapURL` is a package's own map (the review page): drawn always, over any tiles.
    var basemapShips: Bool? = nil
    /// Largest frame the server accepts: the page refuses a bigger one before sending it.
    var maxAreaKm2: Double? = nil
    /// The tour in the management API: the panel beside the map reads a waypoint's texts and files there and saves
    /// them through its waypoint and asset routes, as a script would.
    var apiTourURL: String = ""
    /// The duration and publishing card alone, re-read after a change made without a page load.
    var statusURL: String = ""
    /// The largest file one upload may be, checked before any byte is sent, and the same in words (MiB).
    var maxUploadBytes: Int64? = nil
    var maxUploadSize: String? = nil
    /// Where a tour without a frame or waypoints opens: its site's home area, else the frame of the site's first tour.
    var home: Frame? = nil
}

struct TourPage: Sendable {
    let id: Int64
    let name: String
    let description: String
    let mapName: String
    let siteSlug: String
    let siteName: String
    let stateLabel: String
    let stateBadge: String
    let isLocked: Bool
    let reviewComment: String?
    let canEdit: Bool
    let hasFrame: Bool
    let frameSummary: String
    /// Nil without a frame: "Current: not set", with no area after it.
    let areaKm2: String?
    let maxAreaKm2: String
    let frameForm: [String: String]
    let frameErrors: [String: String]
    let waypoints: [WaypointRow]
    let hasWaypoints: Bool
    let waypointForm: [String: String]
    let waypointErrors: [String: String]
    let mapJSON: String
    let checklist: [String]
    /// Worth a look before submitting, but no obstacle (overlapping trigger zones).
    let warnings: [String]
    let hasWarnings: Bool
    let routeSummary: String?
    let durationSummary: String
    let isReady: Bool
    var canSubmit: Bool
    let openRequestId: String?
    let openRequestLabel: String
    let packageId: String?
    /// The "Map tiles" card (set by the tours controller).
    var tiles: TourTilesModel? = nil
    /// The visitor player's public address, once a version is released (with its QR code for signs).
    var playerURL: String? = nil
    /// Which map visitors will get (tiles, the drawn map, both or none), in a sentence, and its kind for the tests.
    var visitorMap = ""
    var visitorMapKind = ""
    /// The media's download size as uploaded and as it ships, with the slow-link estimate (nil: no files).
    var mediaSizeSummary: String? = nil
    var playerIsVisible = false
    /// Beside the visitor link and its QR code when `--public-url` names an address phones cannot reach.
    var publicURLWarning: String? = nil
    /// The print kit's files of the published version (proofs marked DRAFT while the public address is not one
    /// phones reach); nil while the tour is not published.
    var printSignURL: String? = nil
    var printBookletURL: String? = nil
    var printIsDraft = false
    /// The open request once it has its approvals (`ready`): the tour page releases it through the request's own route.
    var readyRequestId: String? = nil
    var readyVersion: Int = 0
    /// The user may release it (the request's author or a manager of the site, the rule the request page follows).
    var canRelease = false
    /// A published tour whose working copy is what was released: submitting again would ship the same tour.
    var isUnchangedSinceRelease = false
    /// Why an import file was refused, shown under the import field.
    var importError: String? = nil
    /// A refused frame or waypoint form: every error at the top of the page, each linking to its field.
    var errorSummary: ErrorSummary? = nil
    /// The alerts that apply to the tour now (`Templates/tour-alerts.mustache`).
    var alerts: TourAlertsCard? = nil
    /// Length, heights, profile and accessibility (`Templates/trail-facts.mustache`).
    var trailFacts: TrailFactsCard? = nil
}

/// The error summary at the top of a page whose form was refused (`Templates/error-summary.mustache`): the page
/// takes the focus there, so a screen reader reads every error at once and a keyboard reaches each field by its link.
struct ErrorSummary: Sendable {
    struct Item: Sendable {
        let fieldId: String
        let message: String
    }
    let items: [Item]

    /// The errors in the order of the form's fields (`fields`: error key and the field's element id); an error whose
    /// key is no field (a whole-form one) links to `fallbackId`. Nil when there is no error.
    init?(_ errors: [String: String], fields: KeyValuePairs<String, String>, fallbackId: String) {
        let known = Set(fields.map(\.key))
        let others = errors.keys.filter { !known.contains($0) }.sorted().map { Item(fieldId: fallbackId, message: errors[$0]!) }
        let listed = fields.compactMap { key, id in errors[key].map { Item(fieldId: id, message: $0) } }
        guard !(others + listed).isEmpty else { return nil }
        items = others + listed
    }

    static let frameFields: KeyValuePairs<String, String> = [
        "north": "north", "south": "south", "west": "west", "east": "east", "minZoom": "minZoom", "maxZoom": "maxZoom",
    ]
    static let accessibilityFields: KeyValuePairs<String, String> = [
        "surface": "access-surface", "minWidthCm": "access-width", "notes": "access-notes",
    ]
    static let waypointFields: KeyValuePairs<String, String> = [
        "name": "wp-name", "latitude": "wp-latitude", "longitude": "wp-longitude", "triggerRadiusMeters": "wp-radius",
        "description": "wp-description",
    ]
}

struct WaypointPage: Sendable {
    let tourId: Int64
    let tourName: String
    let id: Int64
    let order: Int
    let canEdit: Bool
    let isLocked: Bool
    var form: [String: String]
    var errors: [String: String] = [:]
    let mapJSON: String
    var assets: [AssetRow]
    let hasAssets: Bool
    let isAdmin: Bool
    let maxUploadSize: String
    let maxUploadBytes: Int64
    let acceptedTypes: String
    var languageTabs: [LanguageTab] = []
    var hasLanguageTabs = false
    var translation: TranslationForm? = nil
    /// For each file's language select: the tour's languages (only when it has more than one).
    var languageOptions: [LanguageOption] = []
    var hasLanguageOptions = false
}

struct LanguageOption: Sendable {
    let tag: String
    let label: String
}

enum TourPageBuilder {
    static func mapJSON(
        tour: Tour,
        waypoints: [Waypoint],
        editable: Bool,
        basemap: EditorBasemap?,
        overlapping: Set<Int64> = [],
        maxAreaKm2: Double? = nil,
        maxUploadBytes: Int64? = nil,
        home: Frame? = nil
    ) -> String {
        var data = TourMapData(
            frame: tour.frame,
            waypoints: waypoints.map {
                .init(
                    id: $0.id,
                    order: $0.position,
                    name: $0.name,
                    latitude: $0.latitude,
                    longitude: $0.longitude,
                    url: PanelURL.waypoint(tourId: tour.id, $0.id),
                    triggerRadiusMeters: $0.triggerRadiusMeters,
                    overlaps: overlapping.contains($0.id)
                )
            },
            editable: editable,
            tileURL: basemap?.template,
            moveURLTemplate: PanelURL.waypointMoveTemplate(tourId: tour.id),
            orderURL: PanelURL.waypointOrder(tourId: tour.id),
            newWaypointURL: PanelURL.waypoints(tourId: tour.id)
        )
        data.route = tour.route?.points.map { [$0.longitude, $0.latitude] } ?? []
        data.routeURL = PanelURL.tourRoute(tour.id)
        data.tileAttribution = basemap?.attribution
        data.tileAttributionURL = basemap?.attributionURL
        data.maxAreaKm2 = maxAreaKm2
        data.basemapURL = tour.frame == nil ? nil : PanelURL.tourBasemap(tour.id)
        data.placesURL = PanelURL.places
        data.apiTourURL = APIURL.manageTour(tour.id)
        data.statusURL = PanelURL.tourStatus(tour.id)
        data.maxUploadBytes = maxUploadBytes
        data.maxUploadSize = maxUploadBytes.map(ByteFormat.string)
        data.home = home
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(data: encoder.encode(data), encoding: .utf8)) ?? "{}"
    }

    static func frameForm(_ tour: Tour) -> [String: String] {
        [
            "north": DisplayFormat.coordinate(tour.frameNorth), "south": DisplayFormat.coordinate(tour.frameSouth),
            "east": DisplayFormat.coordinate(tour.frameEast), "west": DisplayFormat.coordinate(tour.frameWest),
            "minZoom": "\(tour.minZoom)", "maxZoom": "\(tour.maxZoom)",
        ]
    }

    static func rows(_ waypoints: [Waypoint], overlapping: Set<Int64> = []) -> [WaypointRow] {
        waypoints.enumerated().map { index, waypoint in
            WaypointRow(
                id: waypoint.id,
                order: waypoint.position,
                name: waypoint.name,
                latitude: DisplayFormat.coordinate(waypoint.latitude),
                longitude: DisplayFormat.coordinate(waypoint.longitude),
                triggerRadiusMeters: waypoint.triggerRadiusMeters,
                overlaps: overlapping.contains(waypoint.id),
                isFirst: index == 0,
                isLast: index == waypoints.count - 1
            )
        }
    }

    /// The checklist's warnings about trigger zones, one per overlapping pair, and the waypoints concerned.
    static func overlapWarnings(_ waypoints: [Waypoint]) -> (warnings: [String], waypointIds: Set<Int64>) {
        let pairs = TriggerZone.overlaps(waypoints)
        let warnings = pairs.map { first, second in
            "The trigger zones of “\(first.name)” (\(first.triggerRadiusMeters) m) and “\(second.name)” (\(second.triggerRadiusMeters) m) "
                + "overlap: an app would start both stops at once there. Make a radius smaller or move a waypoint."
        }
        return (warnings, Set(pairs.flatMap { [$0.0.id, $0.1.id] }))
    }
}

/// Whether the server's public address (`--public-url`, else `http://<hostname>:<port>`) can be opened by a visitor's
/// phone: a loopback or private address in a QR code on a sign leads nowhere, and nothing else would tell the ranger.
enum PublicAddress {
    /// The warning for the tour page, or nil when the address is a public one.
    static func warning(for publicURL: String) -> String? {
        guard let host = host(of: publicURL), let kind = kind(of: host) else { return nil }
        let reach =
            kind == .loopback
            ? "it points at the server's own machine, so only a browser on that machine can open it"
            : "it is a private network address, reachable at most from the same local network"
        return "Visitors' phones cannot reach this link or its QR code: the server's public address \(publicURL) is "
            + "\(kind.name), and \(reach). Set the public address to one phones reach over the internet with "
            + "--public-url (or TRAIL_PUBLIC_URL), for example https://tours.example.org, before you print a sign."
    }

    enum Kind: Equatable {
        case loopback, privateNetwork, linkLocal
        var name: String {
            switch self {
            case .loopback: "a loopback address"
            case .privateNetwork: "a private address"
            case .linkLocal: "a link-local address"
            }
        }
    }

    /// The URL's host without IPv6 brackets, lowercased.
    static func host(of url: String) -> String? {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty else { return nil }
        return host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    }

    /// Loopback (127.0.0.0/8, ::1, localhost, 0.0.0.0/8), private (10/8, 172.16/12, 192.168/16, fc00::/7) or
    /// link-local (169.254/16, fe80::/10); nil for any other address or name.
    static func kind(of host: String) -> Kind? {
        let host = host.hasSuffix(".") ? String(host.dropLast()) : host
        if host == "localhost" || host.hasSuffix(".localhost") { return .loopback }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            let bytes = withUnsafeBytes(of: v4.s_addr) { Array($0) }  // network order: the first octet first
            switch (bytes[0], bytes[1]) {
            case (127, _), (0, _): return .loopback
            case (10, _), (172, 16...31), (192, 168): return .privateNetwork
            case (169, 254): return .linkLocal
            default: return nil
            }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && (bytes[15] == 1 || bytes[15] == 0) { return .loopback }  // ::1, ::
            if bytes[0] & 0xFE == 0xFC { return .privateNetwork }
            if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }
            // An IPv4-mapped address (::ffff:a.b.c.d) is judged as its IPv4 address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return kind(of: bytes[12..<16].map(String.init).joined(separator: "."))
            }
        }
        return nil
    }
}
