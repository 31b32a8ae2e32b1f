import Foundation
import Hummingbird
import TrailAPI

/// A site's map settings as a manager sends them: its home area (where a new tour's map opens; nil: none, and the
/// frame of the site's first tour stands in) and its time zone. Checked once here for the panel and the API alike.
struct SiteMapSettings: Sendable, Equatable {
    var home: Frame?
    var timeZone: String

    init(home: Frame?, timeZone: String) {
        self.home = home
        self.timeZone = timeZone
    }

    /// The system's time zone names (IANA, from its tz database), and UTC.
    static let timeZoneNames: [String] = Array(Set(TimeZone.knownTimeZoneIdentifiers + ["UTC"])).sorted()
    private static let knownTimeZones = Set(timeZoneNames)

    /// Each problem under its field: `north`, `south`, `east`, `west` (or `home` for the area as a whole), `timeZone`.
    func validate() -> ValidationErrors {
        var errors = ValidationErrors()
        if let home {
            for (key, value, limit) in [("north", home.north, 90.0), ("south", home.south, 90), ("east", home.east, 180), ("west", home.west, 180)]
            where !value.isFinite || abs(value) > limit {
                errors[key] = "Enter a \(limit == 90 ? "latitude" : "longitude") between −\(Int(limit)) and \(Int(limit))."
            }
            if errors.isEmpty, home.north <= home.south { errors["north"] = "The north edge must be north of the south edge." }
            if errors.isEmpty, home.east <= home.west { errors["east"] = "The east edge must be east of the west edge." }
        }
        if !Self.knownTimeZones.contains(timeZone) {
            errors["timeZone"] = "Enter a time zone this server knows, by its IANA name, like America/Los_Angeles or Europe/Paris."
        }
        return errors
    }
}

/// A site's settings page (`/sites/{slug}/settings`, managers) and its API route (`PATCH /api/v1/manage/sites/{slug}`):
/// the home area and the time zone.
struct SiteSettingsController: Sendable {
    let database: AppDatabase
    let pages: PageResponder

    /// The body of `PATCH /api/v1/manage/sites/{slug}`: a field left out stays; `"home": null` removes the home area.
    struct SitePatch: Decodable {
        let home: Frame?
        let homeSent: Bool
        let timeZone: String?

        enum CodingKeys: String, CodingKey { case home, timeZone }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            homeSent = container.contains(.home)
            home = try container.decodeIfPresent(Frame.self, forKey: .home)
            timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        }
    }

    struct SettingsPage: Sendable {
        let slug: String
        let name: String
        var form: [String: String]
        var errors: [String: String] = [:]
        /// What a new tour opens over while no home area is set (nil: nothing yet, a district of the demo park).
        let fallback: String?
        let timeZones: [String]
    }

    func addRoutes(site: some RouterMethods<SiteMemberContext>, manageSite: some RouterMethods<SiteMemberContext>) {
        site.get("settings", use: showSettings)
        site.post("settings", use: saveSettings)
        manageSite.patch(use: updateSite)
    }

    /// The settings form (managers).
    func showSettings(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        try context.access.require(.manage, to: "change its settings")
        let page = try await settingsPage(context.site, form: Self.savedFields(context.site))
        return await pages.render("site-settings", title: "Settings of \(context.site.name)", page: page, request: request, context: context)
    }

    /// Saves the home area (all four edges, or none) and the time zone; the form again with its errors (422).
    func saveSettings(_ request: Request, _ context: SiteMemberContext) async throws -> Response {
        let site = context.site
        try context.access.require(.manage, to: "change its settings")
        let form = try await request.decode(as: SiteSettingsForm.self, context: context)
        do {
            let settings = try form.settings()
            try await database.setSiteMapSettings(siteId: site.id, settings, user: context.user, actor: context.actor)
            return pages.redirect(to: PanelURL.siteSettings(site.slug), notice: "Settings saved.")
        } catch let errors as ValidationErrors {
            var page = try await settingsPage(site, form: form.typed)
            page.errors = errors.fields
            return await pages.render(
                "site-settings",
                title: "Settings of \(site.name)",
                page: page,
                request: request,
                context: context,
                status: .unprocessableContent
            )
        }
    }

    /// Changes what the body names (managers); 200 with the site's settings.
    func updateSite(_ request: Request, _ context: SiteMemberContext) async throws -> Components.Schemas.SiteSettings {
        try context.access.require(.manage, to: "change its settings")
        let body = try await request.decode(as: SitePatch.self, context: context)
        let site = context.site
        let settings = SiteMapSettings(home: body.homeSent ? body.home : site.home, timeZone: body.timeZone ?? site.timeZone)
        let saved = try await database.setSiteMapSettings(siteId: site.id, settings, user: context.user, actor: context.actor)
        let effective = try await database.homeArea(of: saved)
        return Components.Schemas.SiteSettings(
            slug: saved.slug,
            name: saved.name,
            home: saved.home.map(Components.Schemas.Frame.init),
            effectiveHome: effective.map(Components.Schemas.Frame.init),
            timeZone: saved.timeZone
        )
    }

    /// The form as the site's saved settings fill it.
    static func savedFields(_ site: Site) -> [String: String] {
        [
            "north": DisplayFormat.coordinate(site.homeNorth), "south": DisplayFormat.coordinate(site.homeSouth),
            "east": DisplayFormat.coordinate(site.homeEast), "west": DisplayFormat.coordinate(site.homeWest),
            "timeZone": site.timeZone,
        ]
    }

    func settingsPage(_ site: Site, form: [String: String]) async throws -> SettingsPage {
        let firstFrame = try await database.firstTourFrame(siteId: site.id)
        return SettingsPage(
            slug: site.slug,
            name: site.name,
            form: form,
            fallback: firstFrame.map(DisplayFormat.frame),
            timeZones: SiteMapSettings.timeZoneNames
        )
    }
}

/// The settings form of a site: the home area's four edges (all, or none) and the time zone.
struct SiteSettingsForm: PanelForm {
    @Field var north: String
    @Field var south: String
    @Field var east: String
    @Field var west: String
    @Field var timeZone: String

    /// The fields as typed (trimmed), for the form shown again with its messages.
    var typed: [String: String] {
        ["north": north.trimmed, "south": south.trimmed, "east": east.trimmed, "west": west.trimmed, "timeZone": timeZone.trimmed]
    }

    /// The form's settings: four empty edges are no home area; some but not all is a mistake named on the empty ones.
    func settings() throws -> SiteMapSettings {
        var errors = ValidationErrors()
        let edges = [("north", north), ("south", south), ("east", east), ("west", west)]
        var home: Frame?
        if edges.contains(where: { !$0.1.trimmed.isEmpty }) {
            let values = edges.map { TypedNumber.double($0.1) }
            for ((key, _), value) in zip(edges, values) where value == nil {
                errors[key] = "Enter this edge in decimal degrees, or leave all four empty for no home area."
            }
            if let north = values[0], let south = values[1], let east = values[2], let west = values[3] {
                home = Frame(north: north, south: south, east: east, west: west)
            }
        }
        let settings = SiteMapSettings(home: home, timeZone: timeZone.trimmed)
        errors.fields.merge(settings.validate().fields) { first, _ in first }
        try errors.throwIfAny()
        return settings
    }
}
