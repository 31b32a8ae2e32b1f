import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import TrailServer

/// `--accel-redirect`: the download routes decide and nginx sends the bytes (`deploy/nginx.conf`'s internal location).
/// Through real nginx, `Tests/e2e/test_behind_nginx.py` downloads in ranges and resumes with If-Range.
@Suite(.scratch) struct AccelRedirectTests {
    @Test(
        "package and file downloads name the file for nginx, with the route's headers and count; 304, 416, HEAD and a stale If-Range stay the server's"
    )
    func downloadsAnswerWithXAccelRedirect() async throws {
        let env = try await TestEnv.publishing(requiredApprovals: 1, configure: { $0.accelRedirect = "/_trail_files/" })
        try await env.app.test(.router) { client in
            let released = try await env.releaseThroughAPI(client)
            let url = "/api/v1/packages/\(released.packageId)/download"
            let counted = { env.app.metric(#"trail_download_bytes_total{route="package"}"#) }
            let before = counted()

            let whole = try await client.execute(uri: url, method: .get)
            #expect(whole.status == .ok && whole.body.readableBytes == 0, "nginx sends the bytes")
            #expect(whole.headers[.xAccelRedirect] == "/_trail_files/packages/\(released.packageId)/\(released.version).zip")
            #expect(whole.headers[.eTag] == released.etag && whole.headers[.contentType] == "application/zip")
            #expect(whole.headers[.contentDisposition]?.hasPrefix("attachment;") == true && whole.headers[.packageVersion] == "\(released.version)")
            #expect(whole.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "the security headers are there for nginx to carry over")
            #expect(whole.headers[.contentLength] == "0" || whole.headers[.contentLength] == nil, "nginx sets the file's length")
            #expect(counted() == before + Double(released.size), "counted when the route hands the file to nginx")

            // One range (nginx applies the same Range header), also with an If-Range naming this version.
            let ranged = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=100-1099", .ifRange: released.etag])
            #expect(ranged.headers[.xAccelRedirect] != nil && ranged.headers[.contentRange] == nil)
            #expect(counted() == before + Double(released.size) + 1000)

            // Where nginx would judge otherwise, the server answers itself.
            let stale = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=10-", .ifRange: "\"old\""])
            #expect(stale.status == .ok && stale.headers[.xAccelRedirect] == nil && Int64(stale.body.readableBytes) == released.size)
            let several = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=0-1,5-9"])
            #expect(several.status == .ok && several.headers[.xAccelRedirect] == nil && Int64(several.body.readableBytes) == released.size)
            let outside = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=\(released.size)-"])
            #expect(outside.status == .rangeNotSatisfiable && outside.headers[.xAccelRedirect] == nil)
            let notModified = try await client.execute(uri: url, method: .get, headers: [.ifNoneMatch: released.etag])
            #expect(notModified.status == .notModified && notModified.headers[.xAccelRedirect] == nil)
            let head = try await client.execute(uri: url, method: .head)
            #expect(head.status == .ok && head.headers[.xAccelRedirect] == nil && head.headers[.contentLength] == "\(released.size)")

            // A served file by its hash: from the data folder too.
            let manifest = try await client.execute(uri: "/api/v1/packages/\(released.packageId)/versions/\(released.version)/manifest", method: .get)
            let hash = try #require(manifest.text.firstMatch(of: /"sha256"\s*:\s*"([0-9a-f]{64})"/)?.output.1)
            let file = try await client.execute(uri: "/api/v1/files/\(hash)", method: .get)
            #expect(file.status == .ok && file.body.readableBytes == 0, "\(file.status) \(file.text)")
            #expect(
                file.headers[.xAccelRedirect]?.hasPrefix("/_trail_files/") == true && file.headers[.xAccelRedirect]?.hasSuffix(String(hash)) == true
            )
        }
    }

    @Test("only server-made names inside the data folder are named to nginx")
    func locations() {
        let accel = AccelRedirect(prefix: "/_trail_files/", dataFolder: URL(fileURLWithPath: "/var/lib/trail"))
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail/packages/a-1/2.zip")) == "/_trail_files/packages/a-1/2.zip")
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail/assets/0f9a")) == "/_trail_files/assets/0f9a")
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail-other/packages/x.zip")) == nil, "a neighbour folder is outside")
        #expect(accel.location(of: URL(fileURLWithPath: "/etc/passwd")) == nil)
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail/packages/x y.zip")) == nil)
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail/.hidden")) == nil)
        #expect(accel.location(of: URL(fileURLWithPath: "/var/lib/trail/")) == nil)
    }

    @Test("the data folder: the owner's alone, or with --accel-redirect entered and its packages read by the service's group; keys and uploads never")
    func dataFolderModes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("accel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func mode(_ name: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)[.posixPermissions] as? NSNumber)?.intValue
                ?? -1
        }
        try DataFolder.prepare(folder, sharedWithProxy: nil)
        #expect(try mode("") == 0o700, "a new folder is the owner's")
        try DataFolder.prepare(folder, sharedWithProxy: true)
        #expect(try mode("") == 0o750 && mode("packages") == 0o750 && mode("assets") == 0o750)
        for name in ["keys", "uploads", "quarantine", "staging"] { #expect(try mode(name) == 0o700, "\(name)") }
        try DataFolder.prepare(folder, sharedWithProxy: nil)
        #expect(try mode("") == 0o750, "a CLI command leaves the modes serve chose")
        try DataFolder.prepare(folder, sharedWithProxy: false)
        #expect(try mode("") == 0o700 && mode("packages") == 0o700)
    }
}
