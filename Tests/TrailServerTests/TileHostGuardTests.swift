import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import TrailServer

/// A tile URL cannot make the server fetch from its own network unless the operator allows it.
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

    @Test("host names are resolved: localhost and private literals are refused, with the flag named; a public one is pinned")
    func hostsResolve() async throws {
        for host in ["localhost", "127.0.0.1", "[::1]", "169.254.169.254"] {
            await #expect(throws: TileHostGuard.Refusal.self, "\(host)") { _ = try await TileHostGuard.pin(host: host, allowPrivate: false) }
        }
        do { _ = try await TileHostGuard.pin(host: "localhost", allowPrivate: false) } catch let refusal as TileHostGuard.Refusal {
            #expect(refusal.description.contains("--tile-allow-private"))
        }
        #expect(try await TileHostGuard.pin(host: "8.8.8.8", allowPrivate: false) == "8.8.8.8")
        #expect(try await TileHostGuard.pin(host: "[::1]", allowPrivate: true) == "::1", "allowed: pinned all the same")
        await #expect(throws: TileHostGuard.Unresolvable.self) { _ = try await TileHostGuard.pin(host: "nowhere.invalid", allowPrivate: true) }
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

    /// A resolver that answers `first` once and `later` ever after, counting its calls (a DNS server rebinding a name).
    final class RebindingResolver: Sendable {
        let first: [String], later: [String]
        private let calls = NIOLockedValueBox<[String]>([])
        init(first: [String], later: [String]) { self.first = first; self.later = later }
        var names: [String] { calls.withLockedValue { $0 } }
        func resolve(_ name: String) -> [String] {
            let count = calls.withLockedValue { $0.append(name); return $0.count }
            return count == 1 ? first : later
        }
    }

    /// The tiles of zoom 1 through a fetcher that treats only 127.0.0.1 as public (the tests' stand-in for the
    /// internet: 127.0.0.2 and 127.0.0.3 are "the server's own network", and nothing listens there).
    static func fetchZoom1(template: String, resolve: @escaping TileHostGuard.Resolver) async throws -> TileFetcher.Summary {
        var options = TileFetchOptions()
        options.allowPrivateAddresses = false
        options.attempts = 1
        options.requestTimeout = 5
        options.concurrency = 2
        let cache = TestScratch.folder("rebind")
        defer { try? FileManager.default.removeItem(at: cache) }
        let fetcher = TileFetcher(template: template, cacheRoot: cache, options: options, userAgent: "TrailCompanion/test",
                                  resolve: resolve, isAllowedAddress: { $0 == "127.0.0.1" })
        return try await fetcher.fetch((0..<2).flatMap { x in (0..<2).map { y in TileID(z: 1, x: x, y: y) } })
    }

    @Test("DNS rebinding: the address that was checked is the one connected to; a later, different answer is never used")
    func rebindingIsPinned() async throws {
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            // tiles.rebind.test does not exist in any DNS: the fetch works only through the answer we checked.
            let resolver = RebindingResolver(first: ["127.0.0.1"], later: ["127.0.0.2"])
            let summary = try await Self.fetchZoom1(template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.rebind.test"),
                                                    resolve: resolver.resolve)
            #expect(summary.fetched == 4 && summary.outcomes.values.allSatisfy { if case .file = $0 { true } else { false } })
            #expect(resolver.names == ["tiles.rebind.test"], "one lookup for the whole fetch: \(resolver.names)")
            #expect(state.requests == 4)
        }
    }

    @Test("a name with a private address among its answers is refused before any request")
    func mixedAnswersAreRefused() async throws {
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            let resolver = RebindingResolver(first: ["127.0.0.1", "127.0.0.3"], later: ["127.0.0.1"])
            do {
                _ = try await Self.fetchZoom1(template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.mixed.test"),
                                              resolve: resolver.resolve)
                Issue.record("the fetch went through")
            } catch let failure as TileBuildFailure {
                #expect(failure.message.contains("127.0.0.3") && failure.message.contains("--tile-allow-private"), "\(failure)")
            }
            #expect(state.requests == 0)
        }
    }

    @Test("redirects are pinned hop by hop: one to the server's own network is refused, one to a public host is followed")
    func redirectsAreChecked() async throws {
        let refusedState = TileServerState(mode: .redirect(toHost: "inside.test"))
        try await TestTileServer.with(refusedState) { template in
            let resolver: TileHostGuard.Resolver = { $0 == "inside.test" ? ["127.0.0.3"] : ["127.0.0.1"] }
            do {
                _ = try await Self.fetchZoom1(template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.test"), resolve: resolver)
                Issue.record("the redirect was followed")
            } catch let failure as TileBuildFailure {
                #expect(failure.message.contains("redirected") && failure.message.contains("127.0.0.3"), "\(failure)")
            }
            #expect(refusedState.served.isEmpty, "no tile was served")
        }
        let followedState = TileServerState(mode: .redirect(toHost: "mirror.test"))
        try await TestTileServer.with(followedState) { template in
            let summary = try await Self.fetchZoom1(template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.test"),
                                                    resolve: { _ in ["127.0.0.1"] })
            #expect(summary.fetched == 4)
            #expect(followedState.requests == 8, "each tile: a redirect, then the tile")
        }
    }
}
