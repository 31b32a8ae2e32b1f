import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import TrailServer

/// #14 item 9: a tile URL cannot make the server fetch from its own network unless the operator allows it.
@Suite struct TileHostGuardTests {
    @Test("loopback, private, CGNAT, link-local (metadata), unique-local, multicast and mapped addresses are not public")
    func classification() {
        for address in ["127.0.0.1", "10.2.3.4", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.169.254", "0.0.0.0",
                        "224.0.0.1", "255.255.255.255", "::1", "::", "fd12::1", "fc00::5", "fe80::1%eth0", "ff02::1", "::ffff:192.168.0.1",
                        "::ffff:127.0.0.1"] {
            #expect(!TileHostGuard.isPublic(address), "\(address)")
        }
        for address in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "193.0.14.129", "2001:4860:4860::8888", "::ffff:8.8.8.8"] {
            #expect(TileHostGuard.isPublic(address), "\(address)")
        }
    }

    @Test("host names are resolved: localhost and a private literal are refused, with the flag named")
    func hostsResolve() throws {
        for host in ["localhost", "127.0.0.1", "[::1]", "169.254.169.254"] {
            #expect(throws: TileHostGuard.Refusal.self, "\(host)") { try TileHostGuard.check(host: host) }
        }
        do { try TileHostGuard.check(host: "localhost") } catch let refusal as TileHostGuard.Refusal {
            #expect(refusal.description.contains("--tile-allow-private"))
        }
        try TileHostGuard.check(host: "8.8.8.8")
    }

    @Test("a build against a tile server on loopback fails before any request unless private servers are allowed")
    func buildRefusesPrivateServer() async throws {
        let env = try await TilesEnv.make { config in config.tileFetch.allowPrivateAddresses = false }
        defer { env.remove() }
        try env.setZooms(10...11)
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            try env.useTileServer(template)
            let request = try await env.submitAndBuild()
            #expect(request.state == .failed)
            let reason = request.failureReason ?? ""
            #expect(reason.contains("127.0.0.1") && reason.contains("--tile-allow-private"), "\(reason)")
            #expect(state.requests == 0, "nothing was fetched")
        }
    }

    @Test("a redirect to a private address is not followed")
    func redirectsAreChecked() async {
        final class Box: @unchecked Sendable { var followed: URLRequest?? = .none }
        for (allow, target, followed) in [(false, "http://127.0.0.1/tile.png", false), (false, "http://8.8.8.8/tile.png", true),
                                          (true, "http://127.0.0.1/tile.png", true)] {
            let box = Box()
            let guardDelegate = TileRedirectGuard(allowPrivate: allow)
            let task = URLSession.shared.dataTask(with: URL(string: "http://8.8.4.4/0/0/0.png")!)
            let response = HTTPURLResponse(url: URL(string: "http://8.8.4.4/0/0/0.png")!, statusCode: 302, httpVersion: nil, headerFields: nil)!
            guardDelegate.urlSession(URLSession.shared, task: task, willPerformHTTPRedirection: response,
                                     newRequest: URLRequest(url: URL(string: target)!)) { box.followed = .some($0) }
            #expect((box.followed.flatMap { $0 } != nil) == followed, "\(target) allow=\(allow)")
        }
    }
}
