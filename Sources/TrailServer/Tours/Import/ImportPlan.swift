import Foundation
import HTTPTypes
import TourFormats

/// What applying an import does with one waypoint of the file; the raw value is the preview's and the API's word.
enum ImportAction: String, Sendable, CaseIterable, CustomStringConvertible {
    case add, change, skip

    var description: String { rawValue }
}

/// The preview: what would be added, changed or skipped, and why.
struct ImportPlan: Sendable {
    struct Item: Sendable {
        let action: ImportAction
        let name: String
        let latitude: Double
        let longitude: Double
        let reason: String?
    }
    /// A KMZ picture that applying attaches to a waypoint.
    struct Image: Sendable {
        let waypoint: String
        let file: String
        let bytes: Int
    }
    var format: ImportFormat?
    var waypoints: [Item] = []
    var routePoints: Int = 0
    var routeLengthMeters: Double?
    var frame: Frame?
    var setsFrame = false
    /// Points that fall outside the tour's frame, and the frame around all of them (with a margin) that would take them.
    var outsideFrame = 0
    var fittedFrame: Frame?
    var leftOut: [ImportedTour.LeftOut] = []
    /// Left out beyond the list (``ImportedTour/LeftOutList``): the preview and the API say "and N more".
    var leftOutMore = 0
    var folders: [String] = []
    var columns: [String: String] = [:]
    var images: [Image] = []
    var notes: [String] = []
    var added: Int { waypoints.filter { $0.action == .add }.count }
    var changed: Int { waypoints.filter { $0.action == .change }.count }
    var skipped: Int { waypoints.filter { $0.action == .skip }.count }
}

/// A refused import file is answered as a form error on the `file` field (422).
extension ImportRefused: AppError {
    package var status: HTTPResponse.Status { .unprocessableContent }
    var fieldMessages: [String: String]? { ["file": message] }
}
