import Foundation

/// The OpenAPI 3.1 description of every `/api/v1` route, mobile and management, served at `/api/v1/openapi.json`.
///
/// The document is the file `openapi.json` in the root folder (`--root`, next to `Templates/`), the one place the
/// wire contract is written: the README links to it instead of repeating every field. `__SERVER_URL__` in it becomes
/// the server's public URL. The JSON answers are the types generated from this file (module TrailAPI, made by
/// `scripts/generate-openapi.sh`), so they cannot drift from it; request bodies are read by hand-written types and the
/// tus routes answer with headers (schemathesis checks the live answers against the file). `OpenAPITests` validates it
/// with `openapi-spec-validator` and checks that every `/api/v1` route of the router is described; `Tests/e2e/test_api_schemathesis.py` runs schemathesis against a live server with it.
enum OpenAPIDocument {
    /// The document with the server's URL filled in; nil when the file cannot be read.
    static func load(from file: URL, serverURL: String) -> String? {
        guard let template = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        return template.replacingOccurrences(of: "__SERVER_URL__", with: serverURL)
    }
}
