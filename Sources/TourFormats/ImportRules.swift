import Foundation

/// What the app that imports a tour accepts beyond what each format requires. The formats ask these as they read, so
/// a refusal still names the feature or line at fault, while the rules themselves (how a route is checked, which
/// languages there are, how large a trigger zone may be) stay the app's.
package struct ImportRules: Sendable {
    /// A GeoJSON waypoint's `triggerRadiusMeters`, as the file writes it.
    package enum TriggerRadius: Sendable, Equatable {
        case number(Double)
        case text(String)
    }

    /// The largest file read, in bytes.
    package var maxBytes: Int
    /// The most points a route may have: a track is refused as soon as it has more, before it is all read.
    package var maxRoutePoints: Int
    /// Nil when the app takes a route of these positions (`[longitude, latitude(, elevation)]`), else why not
    /// ("Route point 3 has coordinates out of range.").
    package var refuseRoute: @Sendable ([[Double]]) -> String?
    /// Nil when the app takes these bytes as a picture (a KMZ's, for its waypoint), else why not ("not a JPEG, PNG,
    /// WebP or GIF picture").
    package var refusePicture: @Sendable (Data) -> String?
    /// A language tag (GeoJSON's `name:<tag>`) as the app writes it, or nil when it is not one the app offers.
    package var languageTag: @Sendable (String) -> String?
    /// Why a tag is not taken (the refusal names it).
    package var languageRefusal: @Sendable (String) -> String
    /// A trigger radius in whole metres, or nil when the app does not take it.
    package var triggerRadius: @Sendable (TriggerRadius) -> Int?
    /// The trigger radius the app takes, in words ("a whole number of metres from 5 to 500").
    package var triggerRadiusRule: String

    package init(
        maxBytes: Int,
        maxRoutePoints: Int,
        refuseRoute: @escaping @Sendable ([[Double]]) -> String?,
        refusePicture: @escaping @Sendable (Data) -> String?,
        languageTag: @escaping @Sendable (String) -> String?,
        languageRefusal: @escaping @Sendable (String) -> String,
        triggerRadius: @escaping @Sendable (TriggerRadius) -> Int?,
        triggerRadiusRule: String
    ) {
        self.maxBytes = maxBytes
        self.maxRoutePoints = maxRoutePoints
        self.refuseRoute = refuseRoute
        self.refusePicture = refusePicture
        self.languageTag = languageTag
        self.languageRefusal = languageRefusal
        self.triggerRadius = triggerRadius
        self.triggerRadiusRule = triggerRadiusRule
    }
}
