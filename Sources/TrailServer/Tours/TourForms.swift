import Foundation

// The forms of the tour and waypoint pages, as their handlers in `ToursController` decode them. Every field a person
// types is text here: `TourValidation` parses it and puts its message next to the field.

/// A tour's details (the new-tour form and the edit form).
struct TourForm: PanelForm {
    @Field var name: String
    @Field var description: String
    @Field var mapName: String
    @Field var paceKmh: String

    var input: TourInput {
        // An empty pace keeps the tour's; text that is not a number is refused (NaN fails the range check).
        let pace = paceKmh.trimmed
        return TourInput(
            name: name,
            description: description,
            mapName: mapName,
            paceKmh: pace.isEmpty ? nil : TypedNumber.double(pace) ?? .nan
        )
    }

    /// The fields as typed, for the form shown again with its messages.
    var typed: [String: String] { ["name": name, "description": description, "mapName": mapName, "paceKmh": paceKmh] }
}

/// The tour's languages: the default one and a checkbox group of further ones (`language[]`).
struct TourLanguagesForm: PanelForm {
    @Field var defaultLanguage: String
    var language: [String] = []
    @Field var confirmRemoval: String

    /// The default language first, then the further ones ticked.
    var chosen: [String] { [defaultLanguage] + language.filter { $0 != defaultLanguage } }
}

/// A name and description in one further language (a tour's or a waypoint's).
struct LocalizedTextForm: PanelForm {
    @Field var name: String
    @Field var description: String

    var text: LocalizedText { LocalizedText(name: name, description: description) }
}

/// The map frame and zoom levels.
struct FrameForm: PanelForm {
    @Field var north: String
    @Field var south: String
    @Field var east: String
    @Field var west: String
    @Field var minZoom: String
    @Field var maxZoom: String

    var input: FrameInput {
        FrameInput(
            north: TypedNumber.double(north),
            south: TypedNumber.double(south),
            east: TypedNumber.double(east),
            west: TypedNumber.double(west),
            minZoom: TypedNumber.int(minZoom),
            maxZoom: TypedNumber.int(maxZoom)
        )
    }

    var typed: [String: String] {
        ["north": north, "south": south, "east": east, "west": west, "minZoom": minZoom, "maxZoom": maxZoom]
    }
}

/// The ranger's accessibility fields; `stepFree` is "yes", "no" or anything else for not known.
struct AccessibilityForm: PanelForm {
    @Field var surface: String
    @Field var minWidthCm: String
    @Field var stepFree: String
    @Field var notes: String

    var input: AccessibilityInput {
        AccessibilityInput(
            surface: surface,
            minWidthCm: minWidthCm,
            stepFree: stepFree == "yes" ? true : stepFree == "no" ? false : nil,
            notes: notes
        )
    }
}

/// A waypoint's details (the map's new-waypoint form and the waypoint page).
struct WaypointForm: PanelForm {
    @Field var name: String
    @Field var description: String
    @Field var latitude: String
    @Field var longitude: String
    @Field var triggerRadiusMeters: String

    var input: WaypointInput {
        WaypointInput(
            name: name,
            description: description,
            latitude: TypedNumber.double(latitude),
            longitude: TypedNumber.double(longitude),
            triggerRadius: triggerRadiusMeters.isEmpty ? nil : .text(triggerRadiusMeters)
        )
    }

    var typed: [String: String] {
        [
            "name": name, "description": description, "latitude": latitude, "longitude": longitude,
            "triggerRadiusMeters": triggerRadiusMeters,
        ]
    }
}

/// The new order of the tour's waypoints (`ids[]`, from the map's drag and drop or the page's form).
struct WaypointOrderForm: PanelForm {
    var ids: [String] = []
}

/// A waypoint dragged to a new place on the map.
struct WaypointMoveForm: PanelForm {
    @Field var latitude: String
    @Field var longitude: String
}
