import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenMap

/// The drawn map for the panel: a tour's frame drawn from open data (`basemap.geojson`, which the editor shows when
/// its tiles are off or fail to load), and the place search over the extract's names. Panel routes (signed in) and
/// the same under `/api/v1/manage`; handlers are named after their operationId.
struct DrawnMapController: Sendable {
    let authorization: Authorization
    let openMap: OpenDataMap

    func addRoutes(to router: some RouterMethods<SignedInContext>) {
        router.tourGroup(authorization, .view, malformedID: .notFound).get("basemap.geojson", use: getTourBasemap)
        router.get("/places", use: searchPlaces)
    }

    /// The frame's map as GeoJSON, as the next build would ship it; 409 without a frame, 404 when nothing can be drawn
    /// there (with the reason).
    func getTourBasemap(_ request: Request, _ context: TourContext) async throws -> Response {
        let tour = context.tour
        guard let frame = tour.frame else { throw Conflict("This tour has no frame yet: set the frame, and its map can be drawn.") }
        switch await openMap.basemap(frame: frame, maxZoom: tour.maxZoom) {
        case .drawn(let map, _):
            return Response(
                status: .ok,
                headers: [.contentType: "application/geo+json", .cacheControl: "private, no-cache"],
                body: .init(byteBuffer: ByteBuffer(bytes: map.data))
            )
        case .nothing(let reason):
            throw NoDrawnMap(message: "No map can be drawn for this frame. \(reason)")
        }
    }

    /// Named places of the OpenStreetMap extract (`?q=`, 2 to 100 characters): those whose name starts with it first.
    func searchPlaces(_ request: Request, _ context: SignedInContext) async throws -> PlacesAnswer {
        let query = (QueryForm(request)["q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (2...100).contains(query.count) else {
            throw ValidationErrors(["q": "Type 2 to 100 characters of a place's name."])
        }
        let places = openMap.places(matching: query).map {
            PlacesAnswer.Place(name: $0.name, kind: $0.kind.name, latitude: $0.latitude, longitude: $0.longitude)
        }
        return PlacesAnswer(places: places, searched: openMap.canSearchPlaces)
    }
}

/// `GET /places`: what the place search found.
struct PlacesAnswer: ResponseEncodable, Sendable {
    struct Place: Codable, Sendable {
        let name: String
        let kind: String
        let latitude: Double
        let longitude: Double
    }

    let places: [Place]
    /// False when the server has no indexed OpenStreetMap extract, so an empty list does not mean "no such place".
    let searched: Bool
}

/// Nothing can be drawn for the frame (no open data, or none that covers it): 404, with the reason.
struct NoDrawnMap: AppError {
    let message: String
    var status: HTTPResponse.Status { .notFound }
}

extension OpenDataMap {
    /// Whether the place search has an index to read.
    var canSearchPlaces: Bool {
        if case .ready = indexState { return true }
        return false
    }
}
