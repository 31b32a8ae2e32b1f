import Foundation

/// What a person (or an API client) sends to create or edit a tour.
public struct TourInput: Sendable {
    public var name: String
    public var description: String
    /// Empty means "derive from the name".
    public var mapName: String
    /// Walking pace for the duration estimate, km/h; nil keeps the tour's (4 for a new tour).
    public var paceKmh: Double?
    public init(name: String, description: String, mapName: String = "", paceKmh: Double? = nil) {
        self.name = name
        self.description = description
        self.mapName = mapName
        self.paceKmh = paceKmh
    }
}

/// Frame and zoom range as entered; nil numbers are fields left empty or not numbers.
public struct FrameInput: Sendable {
    public var north: Double?
    public var south: Double?
    public var east: Double?
    public var west: Double?
    public var minZoom: Int?
    public var maxZoom: Int?
    public init(north: Double?, south: Double?, east: Double?, west: Double?, minZoom: Int?, maxZoom: Int?) {
        self.north = north
        self.south = south
        self.east = east
        self.west = west
        self.minZoom = minZoom
        self.maxZoom = maxZoom
    }
}

public struct WaypointInput: Sendable {
    public var name: String
    public var description: String
    public var latitude: Double?
    public var longitude: Double?
    public var order: Int?
    public init(name: String, description: String, latitude: Double?, longitude: Double?, order: Int? = nil) {
        self.name = name
        self.description = description
        self.latitude = latitude
        self.longitude = longitude
        self.order = order
    }
}

enum TourValidation {
    static func validate(_ input: TourInput) -> ValidationErrors {
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
        return errors
    }

    /// Every rule of the frame editor, each message meant to sit next to its field.
    static func validate(_ input: FrameInput, maxAreaKm2: Double) -> (Frame?, ValidationErrors) {
        var errors = ValidationErrors()
        func latitude(_ value: Double?, _ field: String) {
            guard let value else { errors[field] = "Enter a latitude in degrees, e.g. 44.43."; return }
            if !value.isFinite || value < -90 || value > 90 { errors[field] = "Latitude must be between -90 and 90." }
        }
        func longitude(_ value: Double?, _ field: String) {
            guard let value else { errors[field] = "Enter a longitude in degrees, e.g. -122.20."; return }
            if !value.isFinite || value < -180 || value > 180 { errors[field] = "Longitude must be between -180 and 180." }
        }
        latitude(input.north, "north")
        latitude(input.south, "south")
        longitude(input.east, "east")
        longitude(input.west, "west")
        for (field, value) in [("minZoom", input.minZoom), ("maxZoom", input.maxZoom)] {
            guard let value else { errors[field] = "Enter a zoom level from 0 to 20."; continue }
            if value < 0 || value > 20 { errors[field] = "Zoom must be between 0 and 20." }
        }
        if errors["minZoom"] == nil, errors["maxZoom"] == nil, let min = input.minZoom, let max = input.maxZoom, min > max {
            errors["maxZoom"] = "The largest zoom must be at least the smallest zoom (\(min))."
        }
        guard errors["north"] == nil, errors["south"] == nil, errors["east"] == nil, errors["west"] == nil,
              let n = input.north, let s = input.south, let e = input.east, let w = input.west else { return (nil, errors) }
        if n <= s { errors["north"] = "North must be greater than south." }
        if e <= w {
            errors["east"] = "East must be greater than west (frames crossing the 180° meridian are not supported)."
        }
        guard errors.isEmpty else { return (nil, errors) }
        let frame = Frame(north: n, south: s, east: e, west: w)
        let area = frame.areaKm2
        if area < Frame.minimumAreaKm2 {
            errors["frame"] = "The frame is too small (\(Self.format(area)) km²); make it at least 100 m × 100 m."
        } else if area > maxAreaKm2 {
            errors["frame"] = "The frame covers \(Self.format(area)) km²; the largest allowed is \(Self.format(maxAreaKm2)) km²."
        }
        return (errors.isEmpty ? frame : nil, errors)
    }

    static func validate(_ input: WaypointInput, frame: Frame?) -> ValidationErrors {
        var errors = ValidationErrors()
        if input.name.trimmed.isEmpty || input.name.count > 120 { errors["name"] = "Enter a name of 1 to 120 characters." }
        if input.description.count > 20_000 { errors["description"] = "Keep the description under 20,000 characters." }
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
                    errors["latitude"] = "This place is outside the tour's frame (\(format(frame)))."
                }
            } else {
                errors["latitude"] = "Set the tour's map frame before placing waypoints."
            }
        }
        return errors
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }

    static func format(_ frame: Frame) -> String {
        String(format: "N %.5f, S %.5f, E %.5f, W %.5f", frame.north, frame.south, frame.east, frame.west)
    }
}
