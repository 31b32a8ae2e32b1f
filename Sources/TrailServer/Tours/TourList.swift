import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// What a tour list is narrowed to: the management API's `state` and `q`, and the site page's search box and state
/// filter. Both read the same keyset query (`AppDatabase.tourList`), so both page the same way.
struct TourListFilter: Sendable, Equatable {
    var state: TourState?
    /// Part of the name, matched case-insensitively (ASCII, as SQLite's LIKE); "" matches every tour.
    var query: String = ""

    /// `q` as sent: trimmed; at most 100 characters (a name is at most 100), longer is refused.
    static let maxQueryLength = 100

    /// `%text%` for `LIKE … ESCAPE '\'`: a `%`, `_` or `\` typed in a search box matches itself.
    static func likePattern(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: #"\"#, with: #"\\"#).replacingOccurrences(of: "%", with: #"\%"#)
            .replacingOccurrences(of: "_", with: #"\_"#)
        return "%\(escaped)%"
    }

    /// The filter a request names (`state`, `q`); each refusal names its field (422).
    static func read(state: String?, query: String?, errors: inout ValidationErrors) -> TourListFilter {
        var filter = TourListFilter()
        if let state, !state.isEmpty {
            if let value = TourState(rawValue: state) {
                filter.state = value
            } else {
                errors["state"] = "Choose draft, inReview or published."
            }
        }
        let query = (query ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if query.count > maxQueryLength {
            errors["q"] = "Search for at most \(maxQueryLength) characters of a name."
        } else {
            filter.query = query
        }
        return filter
    }
}

/// Where a page of a list starts or ends: the (name, id) of a tour, the list's order (name without regard to case,
/// then id, so two tours of the same name keep one order).
struct TourListPosition: Sendable, Equatable {
    let name: String
    let id: Int64
}

/// One tour in a list: what the API's summary and the site page's row show, with its counts, read in the same query.
struct TourListRow: Sendable, Equatable {
    let id: Int64
    let name: String
    let mapName: String
    let state: TourState
    let updatedAt: Date
    let hasFrame: Bool
    let waypointCount: Int
    let assetCount: Int

    var position: TourListPosition { TourListPosition(name: name, id: id) }
}

/// A list's opaque position token (`cursor` in the API, `after`/`before` on the pages): the fields of a position, and
/// the listing it belongs to (site and filters), with a checksum over both.
///
/// It is no secret and grants nothing: every request is authorized as usual, and a position only says where in a list
/// the caller may read anyway to start. The checksum makes an edited or cut token a 422 instead of a page that starts
/// somewhere unexpected, and the listing it names makes a token reused with other filters a 422 too.
enum ListCursor {
    /// `base64url(JSON array of the fields) . first 16 hex digits of SHA-256(listing \n JSON)`.
    static func make(_ fields: [String], listing: String) -> String {
        let payload = (try? JSONEncoder().encode(fields)) ?? Data("[]".utf8)
        return base64URL(payload) + "." + checksum(payload, listing: listing)
    }

    /// The fields, or nil when the token is malformed, was edited, or belongs to another listing.
    static func read(_ token: String, listing: String, count: Int) -> [String]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 1024, parts.count == 2, let payload = data(base64URL: String(parts[0])),
            checksum(payload, listing: listing) == parts[1],
            let fields = try? JSONDecoder().decode([String].self, from: payload), fields.count == count
        else { return nil }
        return fields
    }

    static func checksum(_ payload: Data, listing: String) -> String {
        var hash = SHA256()
        hash.update(data: Data("trail-list-cursor\n\(listing)\n".utf8))
        hash.update(data: payload)
        // `hexString` and `SecretToken.base64URL` write bytes by table: `String(format:)` per byte and three
        // `replacingOccurrences` were most of a page link's cost, and every page of a list makes two.
        return Array(hash.finalize().prefix(8)).hexString
    }

    static func base64URL(_ data: Data) -> String { SecretToken.base64URL(Array(data)) }

    static func data(base64URL text: String) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var value = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while value.count % 4 != 0 { value += "=" }
        return Data(base64Encoded: value)
    }

    /// A tour list's position token; the listing is the site and the filters.
    static func tour(_ position: TourListPosition, siteId: Int64, filter: TourListFilter) -> String {
        make([position.name, String(position.id)], listing: tourListing(siteId: siteId, filter: filter))
    }

    static func tourPosition(_ token: String, siteId: Int64, filter: TourListFilter) -> TourListPosition? {
        guard let fields = read(token, listing: tourListing(siteId: siteId, filter: filter), count: 2), let id = Int64(fields[1]) else { return nil }
        return TourListPosition(name: fields[0], id: id)
    }

    static func tourListing(siteId: Int64, filter: TourListFilter) -> String {
        "tours site=\(siteId) state=\(filter.state?.rawValue ?? "") q=\(filter.query)"
    }
}

/// A query string read as a form (`application/x-www-form-urlencoded`): `+` is a space, as browsers send a GET form's
/// search box and as most HTTP libraries encode spaces. (Hummingbird's `queryParameters` keeps `+` as is.) The first
/// value of a repeated name wins.
struct QueryForm: Sendable {
    let values: [String: String]

    init(_ request: Request) {
        var values: [String: String] = [:]
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), values[name] == nil else { continue }
            values[name] = parts.count > 1 ? decode(parts[1]) ?? String(parts[1]) : ""
        }
        self.values = values
    }

    subscript(name: String) -> String? { values[name] }

    /// `Link` (RFC 8288), which HTTPTypes names no constant for.
    static let link = HTTPField.Name("Link")!

    /// `path?name=value&…`, each value percent-encoded (a cursor's `-` and `_` and a search's spaces included).
    static func url(_ path: String, _ query: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let pairs = query.map { name, value in "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }
}
