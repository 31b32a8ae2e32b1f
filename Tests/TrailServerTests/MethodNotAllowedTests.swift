import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TrailServer

/// A method the API's contract does not declare for a path that exists: 405 with `Allow`, as `openapi.json` lists.
@Suite struct MethodNotAllowedTests {
    @Test func undeclaredMethodsOfExistingPathsAre405WithAllow() async throws {
        let (app, seed) = try await TestApp.routeSeeded()
        try await app.test { client in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.init("TRACE")!, "/api/v1/catalog", "GET"),
                (.delete, "/api/v1/sites", "GET"),
                (.put, "/api/v1/packages/\(seed.packageId)/download", "GET, HEAD"),
                (.init("TRACE")!, "/api/v1/manage/tours", "GET, POST"),
                (.post, "/api/v1/signing-key", "GET"),
                // A path template matches whatever id it is given: the method is wrong for every tour.
                (.put, "/api/v1/manage/tours/999999", "DELETE, GET, PATCH"),
            ]
            for (method, path, allow) in cases {
                let response = try await client.execute(uri: path, method: method)
                #expect(response.status == .methodNotAllowed, "\(method) \(path): \(response.status)")
                #expect(response.headers[.allow] == allow, "\(method) \(path)")
                #expect(String(buffer: response.body).contains("\"code\":\"method_not_allowed\""))
            }
            // Paths the API does not have stay 404; declared methods go on as before.
            #expect(try await client.execute(uri: "/api/v1/no-such-thing", method: .init("TRACE")!).status == .notFound)
            #expect(try await client.execute(uri: "/api/v1/sites/", method: .delete).status == .notFound)
            #expect(try await client.execute(uri: "/api/v1/catalog", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/no/such/page", method: .init("TRACE")!).status == .notFound)
        }
    }

    @Test func theTableIsTheDocuments() throws {
        let api = APIMethods(document: #"{"paths": {"/a/{id}": {"get": {}, "parameters": []}, "/a/b": {"post": {}}}}"#)
        #expect(api.methods(for: "/api/v1/a/7") == [.get])
        #expect(api.methods(for: "/api/v1/a/b") == [.get, .post], "a literal segment and a parameter both match")
        #expect(api.methods(for: "/api/v1/a") == nil)
        #expect(api.methods(for: "/other/a/7") == nil)
        #expect(APIMethods(document: nil).methods(for: "/api/v1/a/7") == nil)
    }
}
