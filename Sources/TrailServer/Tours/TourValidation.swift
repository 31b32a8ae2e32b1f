import Foundation

/// What a person (or an API client) sends to create or edit a tour.
struct TourInput: Sendable {
    var name: String
    var description: String
    /// Empty means "derive from the name".
    var mapName: String
    /// Walking pace for the duration estimate, km/h; nil keeps the tour's (4 for a new tour).
    var paceKmh: Double?
    init(name: String, description: String, mapName: String = "", paceKmh: Double? = nil) {
        self.name = name
        self.description = description
        self.mapName = mapName
        self.paceKmh = paceKmh
    }
}

/// Frame and zoom range as entered; nil numbers are fields left empty or not numbers.
struct FrameInput: Sendable {
    var north: Double?
    var south: Double?
    var east: Double?
    var west: Double?
    var minZoom: Int?
    var maxZoom: Int?
    init(north: Double?, south: Double?, east: Double?, west: Double?, minZoom: Int?, maxZoom: Int?) {
        self.north = north
        self.south = south
        self.east = east
        self.west = west
        self.minZoom = minZoom
        self.maxZoom = maxZoom
    }
}

struct WaypointInput: Sendable {
    var name: String
    var description: String
    var latitude: Double?
    var longitude: Double?
    var order: Int?
    /// nil: keep the waypoint's radius (a new one gets the default).
    var triggerRadius: TriggerZone.Input?
    init(
        name: String,
        description: String,
        latitude: Double?,
        longitude: Double?,
        order: Int? = nil,
        triggerRadius: TriggerZone.Input? = nil
    ) {
        self.name = name
        self.description = description
        self.latitude = latitude
        self.longitude = longitude
        self.order = order
        self.triggerRadius = triggerRadius
    }
}

/// A tour's details once every rule holds: trimmed, the map name derived from the name when none was given.
struct ValidTour: Sendable {
    let name: String
    let description: String
    let mapName: String
    /// nil keeps the tour's pace (a new tour gets `Tour.defaultPaceKmh`).
    let paceKmh: Double?
}

/// A frame and zoom range once every rule holds.
struct ValidFrame: Sendable {
    let frame: Frame
    let minZoom: Int
    let maxZoom: Int
}

/// A waypoint's details once every rule holds: trimmed, the place there and in the frame, the radius in whole metres.
/// The rules that need the tour's other waypoints (a name taken, the order's range) are checked with it in the write.
struct ValidWaypoint: Sendable {
    let name: String
    let description: String
    let latitude: Double
    let longitude: Double
    let order: Int?
    /// nil keeps the waypoint's radius (a new one gets `TriggerZone.defaultRadius`).
    let triggerRadiusMeters: Int?
}

/// The circle around a waypoint within which an app plays its media, and the rules for its radius (written once:
/// the panel, the API, the import and the migration's CHECK all say 5 to 500 whole metres).
enum TriggerZone {
    static let defaultRadius = 30
    static let radiusRange = 5...500

    /// A radius as it arrived: a JSON number, or the text of a form field or a GeoJSON property.
    enum Input: Sendable, Equatable {
        case number(Double)
        case text(String)
    }

    static let rule =
        "Enter the trigger radius as a whole number of metres from \(radiusRange.lowerBound) to \(radiusRange.upperBound), e.g. \(defaultRadius)."

    /// The radius in whole metres, or the message for the field.
    static func radius(_ input: Input) -> Result<Int, ValidationErrors> {
        let value: Double
        switch input {
        case .number(let number): value = number
        case .text(let text):
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)) else {
                return .failure(ValidationErrors(["triggerRadiusMeters": rule]))
            }
            value = number
        }
        // The range on the Double first: Int(1e300) would trap (a crash any author could send).
        guard value.isFinite, value == value.rounded(),
            (Double(radiusRange.lowerBound)...Double(radiusRange.upperBound)).contains(value)
        else {
            return .failure(ValidationErrors(["triggerRadiusMeters": rule]))
        }
        return .success(Int(value))
    }

    /// Pairs of waypoints whose zones overlap (the distance between them is less than the two radii together), in
    /// tour order: shown on the map and listed as a warning before submission (an app would trigger both at once).
    static func overlaps(_ waypoints: [Waypoint]) -> [(Waypoint, Waypoint)] {
        var pairs: [(Waypoint, Waypoint)] = []
        for (index, first) in waypoints.enumerated() {
            for second in waypoints[(index + 1)...] {
                let distance = Geo.distance(
                    RoutePoint(longitude: first.longitude, latitude: first.latitude),
                    RoutePoint(longitude: second.longitude, latitude: second.latitude)
                )
                if distance < Double(first.triggerRadiusMeters + second.triggerRadiusMeters) { pairs.append((first, second)) }
            }
        }
        return pairs
    }
}

/// Each rule of the tour and waypoint forms (the panel's and the API's), its message meant to sit next to its field;
/// what passes comes back as a valid value whose fields need no unwrapping.
enum TourValidation {
    static func validate(_ input: TourInput) -> Result<ValidTour, ValidationErrors> {
        var errors = ValidationErrors()
        if input.name.trimmed.isEmpty || input.name.count > 120 { errors["name"] = "Enter a name of 1 to 120 characters." }
        if input.description.count > 20_000 { errors["description"] = "Keep the description under 20,000 characters." }
        let mapName = input.mapName.trimmed
        if !mapName.isEmpty && !Slug.isValid(mapName) {
            errors["mapName"] = "Use 2 to 60 lowercase letters, digits and single hyphens, like santiam-wagon-road."
        }
        if let pace = input.paceKmh, !(pace.isFinite && pace >= 0.5 && pace <= 20) {
            errors["paceKmh"] = "Enter a walking pace between 0.5 and 20 km/h."
        }
        guard errors.isEmpty else { return .failure(errors) }
        return .success(
            ValidTour(
                name: input.name.trimmed,
                description: input.description.trimmed,
                mapName: mapName.isEmpty ? Slug.make(from: input.name) : mapName,
                paceKmh: input.paceKmh
            )
        )
    }

    /// Every rule of the frame editor, each message meant to sit next to its field.
    static func validate(_ input: FrameInput, maxAreaKm2: Double) -> Result<ValidFrame, ValidationErrors> {
        var errors = ValidationErrors()
        func latitude(_ value: Double?, _ field: String) {
            guard let value else {
                errors[field] = "Enter a latitude in degrees, e.g. 44.43."
                return
            }
            if !value.isFinite || value < -90 || value > 90 { errors[field] = "Latitude must be between -90 and 90." }
        }
        func longitude(_ value: Double?, _ field: String) {
            guard let value else {
                errors[field] = "Enter a longitude in degrees, e.g. -122.20."
                return
            }
            if !value.isFinite || value < -180 || value > 180 { errors[field] = "Longitude must be between -180 and 180." }
        }
        latitude(input.north, "north")
        latitude(input.south, "south")
        longitude(input.east, "east")
        longitude(input.west, "west")
        for (field, value) in [("minZoom", input.minZoom), ("maxZoom", input.maxZoom)] {
            guard let value else {
                errors[field] = "Enter a zoom level from 0 to 20."
                continue
            }
            if value < 0 || value > 20 { errors[field] = "Zoom must be between 0 and 20." }
        }
        if errors["minZoom"] == nil, errors["maxZoom"] == nil, let min = input.minZoom, let max = input.maxZoom, min > max {
            errors["maxZoom"] = "The largest zoom must be at least the smallest zoom (\(min))."
        }
        guard errors["north"] == nil, errors["south"] == nil, errors["east"] == nil, errors["west"] == nil,
            let n = input.north, let s = input.south, let e = input.east, let w = input.west
        else { return .failure(errors) }
        if n <= s { errors["north"] = "North must be greater than south." }
        if e <= w {
            errors["east"] = "East must be greater than west (frames crossing the 180° meridian are not supported)."
        }
        guard errors.isEmpty else { return .failure(errors) }
        let frame = Frame(north: n, south: s, east: e, west: w)
        let area = frame.areaKm2
        if area < Frame.minimumAreaKm2 {
            errors["frame"] = "The frame is too small (\(DisplayFormat.area(area)) km²); make it at least 100 m × 100 m."
        } else if area > maxAreaKm2 {
            errors["frame"] = "The frame covers \(DisplayFormat.area(area)) km²; the largest allowed is \(DisplayFormat.area(maxAreaKm2)) km²."
        }
        guard errors.isEmpty, let minZoom = input.minZoom, let maxZoom = input.maxZoom else { return .failure(errors) }
        return .success(ValidFrame(frame: frame, minZoom: minZoom, maxZoom: maxZoom))
    }

    static func validate(_ input: WaypointInput, frame: Frame?) -> Result<ValidWaypoint, ValidationErrors> {
        var errors = ValidationErrors()
        if input.name.trimmed.isEmpty || input.name.count > 120 { errors["name"] = "Enter a name of 1 to 120 characters." }
        if input.description.count > 20_000 { errors["description"] = "Keep the description under 20,000 characters." }
        var radius: Int?
        if let asked = input.triggerRadius {
            switch TriggerZone.radius(asked) {
            case .success(let metres): radius = metres
            case .failure(let problem): errors["triggerRadiusMeters"] = problem["triggerRadiusMeters"]
            }
        }
        if let lat = input.latitude {
            if !lat.isFinite || lat < -90 || lat > 90 { errors["latitude"] = "Latitude must be between -90 and 90." }
        } else {
            errors["latitude"] = "Enter a latitude in degrees, e.g. 44.40."
        }
        if let lng = input.longitude {
            if !lng.isFinite || lng < -180 || lng > 180 { errors["longitude"] = "Longitude must be between -180 and 180." }
        } else {
            errors["longitude"] = "Enter a longitude in degrees, e.g. -122.00."
        }
        if errors["latitude"] == nil, errors["longitude"] == nil, let lat = input.latitude, let lng = input.longitude {
            if let frame {
                if !frame.contains(latitude: lat, longitude: lng) {
                    errors["latitude"] = "This place is outside the tour's frame (\(DisplayFormat.frame(frame)))."
                }
            } else {
                errors["latitude"] = "Set the tour's map frame before placing waypoints."
            }
        }
        guard errors.isEmpty, let latitude = input.latitude, let longitude = input.longitude else { return .failure(errors) }
        return .success(
            ValidWaypoint(
                name: input.name.trimmed,
                description: input.description.trimmed,
                latitude: latitude,
                longitude: longitude,
                order: input.order,
                triggerRadiusMeters: radius
            )
        )
    }
}
