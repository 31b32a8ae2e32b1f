import Foundation

/// The OpenAPI 3.1 description of every `/api/v1` route (served at `/api/v1/openapi.json`).
enum OpenAPIDocument {
    static func json(serverURL: String) -> String {
        template.replacingOccurrences(of: "__SERVER_URL__", with: serverURL)
    }

    static let template = #"{"openapi":"3.1.0","info":{"title":"Trail Companion API","version":"1.0.0"},"servers":[{"url":"__SERVER_URL__/api/v1"}],"paths":{}}"#
}
