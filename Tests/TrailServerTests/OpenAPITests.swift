import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import TrailServer

/// `/api/v1/openapi.json`: a valid OpenAPI 3.1 document (checked by `openapi-spec-validator` from PyPI, see
/// `Tests/requirements.txt`) that describes every `/api/v1` route the router has, and nothing it does not have (the
/// router's own table, `router.routes`, against the document's paths: no list in between to forget).
/// Whether the answers match the schemas is checked against a live server by `Tests/e2e/test_api_schemathesis.py`.
@Suite struct OpenAPITests {
    static let methods = ["get", "head", "post", "put", "patch", "delete", "options", "trace"]

    /// `/a/{id}/b` → `/a/{}/b`: the document and the router may name a parameter differently.
    static func normalized(_ path: String) -> String {
        path.replacingOccurrences(of: #"\{[^}/]*\}"#, with: "{}", options: .regularExpression)
    }

    /// The document as the server serves it, parsed.
    static func fetchDocument(_ app: TestApp) async throws -> (text: String, json: [String: Any]) {
        /// Written once inside the awaited test closure, read after it returned.
        final class Received: @unchecked Sendable { var text: String? }
        let received = Received()
        try await app.test { client in
            let response = try await client.execute(uri: "/api/v1/openapi.json", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            received.text = String(buffer: response.body)
        }
        let text = try #require(received.text)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "the body is not a JSON object")
        return (text, json)
    }

    @Test("openapi-spec-validator accepts the served document as OpenAPI 3.1")
    func documentIsValidOpenAPI31() async throws {
        let app = try await TestApp.make { $0.publicURL = "https://trails.example.org" }
        let (text, json) = try await Self.fetchDocument(app)
        #expect(json["openapi"] as? String == "3.1.0")
        #expect(!text.contains("__SERVER_URL__"), "the server URL was not substituted")
        let servers = try #require(json["servers"] as? [[String: Any]])
        #expect(servers.first?["url"] as? String == "https://trails.example.org/api/v1")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString.prefix(8)).json")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import json, sys
            try:
                from openapi_spec_validator import validate
                from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
            except ImportError as error:
                sys.exit(f"openapi-spec-validator is missing ({error}): python3 -m pip install -r Tests/requirements.txt")
            with open(sys.argv[1]) as f:
                document = json.load(f)
            try:
                validate(document)
            except OpenAPIValidationError as error:
                sys.exit(f"invalid OpenAPI document: {error}")
            print("valid")
            """
        let output = try await Python.run(["-c", script, file.path])
        #expect(output.status == 0, "openapi-spec-validator failed (\(output.status)):\n\(output.stderr)\(output.stdout)")
        #expect(output.stdout.contains("valid"))
    }

    @Test("the validator is not a check that cannot fail: a broken document is refused")
    func validatorRejectsABrokenDocument() async throws {
        // The same pipeline as above on a document with a dangling $ref and a path parameter that is not declared.
        let broken = #"""
            {"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "paths": {"/a/{id}": {"get": {"responses": {"200": {
             "description": "x", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Missing"}}}}}}}}}
            """#
        let output = try await Python.run([
            "-c",
            """
            import json, sys
            from openapi_spec_validator import validate
            validate(json.loads(sys.argv[1]))
            """, broken,
        ])
        #expect(output.status != 0, "openapi-spec-validator accepted a broken document:\n\(output.stdout)")
    }

    @Test("every /api/v1 route of the router is in the document, with its method, and the document has no others")
    func everyRouteIsDocumented() async throws {
        let app = try await TestApp.make()
        let (_, json) = try await Self.fetchDocument(app)
        let documented = try Self.documentedRoutes(json)
        let registered = Self.registeredRoutes(app)
        #expect(registered.count >= 30, "the router lists only \(registered.count) /api/v1 routes")
        for route in registered.subtracting(documented).sorted() {
            Issue.record("\(route) is registered under /api/v1 but not in the OpenAPI document")
        }
        for route in documented.subtracting(registered).sorted() {
            Issue.record("the OpenAPI document describes \(route), which the router does not have")
        }
    }

    /// `METHOD /path` of every operation in the document (parameters written `{}`).
    static func documentedRoutes(_ json: [String: Any]) throws -> Set<String> {
        let paths = try #require(json["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, item) in paths {
            for method in methods where item[method] != nil {
                documented.insert("\(method.uppercased()) \(normalized(path))")
            }
        }
        return documented
    }

    /// `METHOD /path` (below /api/v1) of every /api/v1 route of the router's own table.
    static func registeredRoutes(_ app: TestApp) -> Set<String> {
        let router = buildRouter(app.dependencies)
        return Set(
            router.routes.compactMap { route -> String? in
                let path = route.path.description
                guard path.hasPrefix("/api/v1/") else { return nil }
                return "\(route.method.rawValue) \(normalized(String(path.dropFirst("/api/v1".count))))"
            }
        )
    }

    @Test("every operation has an operationId, JSON errors use the Error schema, and /manage needs the bearer token")
    func operationsAreComplete() async throws {
        let app = try await TestApp.make()
        let (_, json) = try await Self.fetchDocument(app)
        let paths = try #require(json["paths"] as? [String: [String: Any]])
        let components = try #require(json["components"] as? [String: Any])
        let responses = try #require(components["responses"] as? [String: [String: Any]])
        var operationIds = Set<String>()
        for (path, item) in paths {
            for method in Self.methods {
                guard let operation = item[method] as? [String: Any] else { continue }
                let name = "\(method.uppercased()) \(path)"
                let id = try #require(operation["operationId"] as? String, "\(name) has no operationId")
                #expect(operationIds.insert(id).inserted, "operationId \(id) is used twice")
                let answers = try #require(operation["responses"] as? [String: Any], "\(name) has no responses")
                #expect(answers.keys.contains { $0.hasPrefix("2") }, "\(name) documents no success status")
                // Every 4xx answer with a body is the Error object.
                for (status, answer) in answers where status.hasPrefix("4") {
                    var resolved = answer as? [String: Any] ?? [:]
                    if let ref = resolved["$ref"] as? String {
                        resolved = try #require(responses[String(ref.split(separator: "/").last!)], "\(name) \(status): dangling \(ref)")
                    }
                    guard let content = resolved["content"] as? [String: Any] else {
                        #expect(method == "head", "\(name) \(status) has no body; only HEAD answers may do without")
                        continue
                    }
                    let schema = (content["application/json"] as? [String: Any])?["schema"] as? [String: Any]
                    #expect(schema?["$ref"] as? String == "#/components/schemas/Error", "\(name) \(status) does not use the Error schema")
                }
                let security = operation["security"] as? [[String: Any]]
                if path.hasPrefix("/manage/") && !(path == "/manage/uploads" && method == "options") {
                    #expect(security?.first?["bearerAuth"] != nil, "\(name) does not require the bearer token")
                    #expect(answers["401"] != nil, "\(name) does not document 401")
                } else {
                    #expect(security == nil || security?.isEmpty == true, "\(name) must not require a token")
                }
            }
        }
        #expect(operationIds.count == Self.registeredRoutes(app).count)
    }

    /// `python3 arguments…` through the tests' one subprocess runner.
    private enum Python {
        static func run(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> ChildProcess.Output {
            try await ChildProcess.run("python3", arguments, timeout: timeout)
        }
    }
}
