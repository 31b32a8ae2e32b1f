import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import TrailServer

/// A tile URL cannot make the server fetch from its own network unless the operator allows it.
@Suite(.scratch) struct TileHostGuardTests {
    @Test("loopback, private, CGNAT, link-local (metadata), unique-local, multicast and mapped addresses are not public")
    func classification() {
        for address in [
            "127.0.0.1", "10.2.3.4", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.169.254", "0.0.0.0",
            "224.0.0.1", "255.255.255.255", "::1", "::", "fd12::1", "fc00::5", "fe80::1%eth0", "ff02::1", "::ffff:192.168.0.1",
            "::ffff:127.0.0.1",
        ] {
            #expect(!TileHostGuard.isPublic(address), "\(address)")
        }
        for address in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "193.0.14.129", "2001:4860:4860::8888", "::ffff:8.8.8.8"] {
            #expect(TileHostGuard.isPublic(address), "\(address)")
        }
    }

    /// One block of the guard: its first, last and an inner address are refused; the addresses just outside it are
    /// allowed (nil where the neighbour belongs to another refused block, or there is none).
    struct Row: Sendable, CustomStringConvertible {
        let block: String, first: String, last: String, inner: [String], before: String?, after: String?
        var description: String { block }
    }

    static let refusedRows: [Row] = [
        Row(block: "0.0.0.0/8", first: "0.0.0.0", last: "0.255.255.255", inner: ["0.1.2.3"], before: nil, after: "1.0.0.0"),
        Row(block: "10.0.0.0/8", first: "10.0.0.0", last: "10.255.255.255", inner: ["10.2.3.4"], before: "9.255.255.255", after: "11.0.0.0"),
        Row(
            block: "100.64.0.0/10",
            first: "100.64.0.0",
            last: "100.127.255.255",
            inner: ["100.100.1.1"],
            before: "100.63.255.255",
            after: "100.128.0.0"
        ),
        Row(block: "127.0.0.0/8", first: "127.0.0.0", last: "127.255.255.255", inner: ["127.0.0.1"], before: "126.255.255.255", after: "128.0.0.0"),
        Row(
            block: "169.254.0.0/16",
            first: "169.254.0.0",
            last: "169.254.255.255",
            inner: ["169.254.169.254"],
            before: "169.253.255.255",
            after: "169.255.0.0"
        ),
        Row(
            block: "172.16.0.0/12",
            first: "172.16.0.0",
            last: "172.31.255.255",
            inner: ["172.20.1.1"],
            before: "172.15.255.255",
            after: "172.32.0.0"
        ),
        Row(block: "192.0.0.0/24", first: "192.0.0.0", last: "192.0.0.255", inner: ["192.0.0.170"], before: "191.255.255.255", after: "192.0.1.0"),
        Row(block: "192.0.2.0/24", first: "192.0.2.0", last: "192.0.2.255", inner: ["192.0.2.33"], before: "192.0.1.255", after: "192.0.3.0"),
        Row(
            block: "192.88.99.0/24",
            first: "192.88.99.0",
            last: "192.88.99.255",
            inner: ["192.88.99.1"],
            before: "192.88.98.255",
            after: "192.88.100.0"
        ),
        Row(
            block: "192.168.0.0/16",
            first: "192.168.0.0",
            last: "192.168.255.255",
            inner: ["192.168.1.1"],
            before: "192.167.255.255",
            after: "192.169.0.0"
        ),
        Row(
            block: "198.18.0.0/15",
            first: "198.18.0.0",
            last: "198.19.255.255",
            inner: ["198.18.5.5", "198.19.0.1"],
            before: "198.17.255.255",
            after: "198.20.0.0"
        ),
        Row(
            block: "198.51.100.0/24",
            first: "198.51.100.0",
            last: "198.51.100.255",
            inner: ["198.51.100.7"],
            before: "198.51.99.255",
            after: "198.51.101.0"
        ),
        Row(
            block: "203.0.113.0/24",
            first: "203.0.113.0",
            last: "203.0.113.255",
            inner: ["203.0.113.9"],
            before: "203.0.112.255",
            after: "203.0.114.0"
        ),
        Row(
            block: "224.0.0.0/3",
            first: "224.0.0.0",
            last: "255.255.255.255",
            inner: ["239.1.1.1", "240.0.0.1"],
            before: "223.255.255.255",
            after: nil
        ),
        Row(
            block: "64:ff9b:1::/48",
            first: "64:ff9b:1::",
            last: "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            inner: ["64:ff9b:1:abcd::8.8.8.8"],
            before: "64:ff9b:0:ffff:ffff:ffff:ffff:ffff",
            after: "64:ff9b:2::"
        ),
        Row(
            block: "100::/64",
            first: "100::",
            last: "100::ffff:ffff:ffff:ffff",
            inner: ["100::1"],
            before: "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            after: "100:0:0:1::"
        ),
        Row(
            block: "2001::/32",
            first: "2001::",
            last: "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
            inner: ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
            before: "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            after: "2001:1::"
        ),
        Row(
            block: "2001:db8::/32",
            first: "2001:db8::",
            last: "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            inner: ["2001:db8::1"],
            before: "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
            after: "2001:db9::"
        ),
        Row(
            block: "fc00::/7",
            first: "fc00::",
            last: "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            inner: ["fd12::1"],
            before: "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            after: "fe00::"
        ),
        Row(
            block: "fe80::/10",
            first: "fe80::",
            last: "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            inner: ["fe80::1%eth0"],
            before: "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            after: nil
        ),
        Row(block: "fec0::/10", first: "fec0::", last: "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", inner: ["fec0::1"], before: nil, after: nil),
        Row(block: "ff00::/8", first: "ff00::", last: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", inner: ["ff02::1"], before: nil, after: nil),
    ]

    /// An IPv6 block that carries an IPv4 address: `prefix(v4)` writes one. Private IPv4 inside is refused, public
    /// allowed, and the neighbours of the block are plain (allowed) IPv6 addresses.
    struct EmbeddingRow: Sendable, CustomStringConvertible {
        let block: String, prefix: @Sendable (String) -> String, before: String?, after: String
        var description: String { block }
    }

    static let embeddingRows: [EmbeddingRow] = [
        EmbeddingRow(block: "::ffff:0:0/96", prefix: { "::ffff:\($0)" }, before: "::fffe:ffff:ffff", after: "::1:0:0:0"),
        EmbeddingRow(block: "::ffff:0:0:0/96", prefix: { "::ffff:0:\($0)" }, before: "::fffe:ffff:ffff:ffff", after: "::ffff:1:0:0"),
        EmbeddingRow(block: "::/96", prefix: { "::\($0)" }, before: nil, after: "::1:0:0"),
        EmbeddingRow(block: "64:ff9b::/96", prefix: { "64:ff9b::\($0)" }, before: "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", after: "64:ff9b::1:0:0"),
        EmbeddingRow(
            block: "2002::/16",
            prefix: { v4 in
                let b = v4.split(separator: ".").map { UInt8($0)! }
                return String(format: "2002:%02x%02x:%02x%02x::1", Int(b[0]), Int(b[1]), Int(b[2]), Int(b[3]))
            },
            before: "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            after: "2003::"
        ),
    ]

    @Test("the guard's blocks are exactly the ones this table tests")
    func everyBlockIsTested() {
        let guarded = (TileHostGuard.refusedV4 + TileHostGuard.refusedV6 + TileHostGuard.embeddingV4).map { "\($0.text)/\($0.length)" }
        let tested = Self.refusedRows.map(\.block) + Self.embeddingRows.map(\.block)
        #expect(guarded.sorted() == tested.sorted())
    }

    @Test("each refused block: first, last and inner addresses refused; the neighbours just outside allowed", arguments: refusedRows)
    func refusedBlock(_ row: Row) {
        for address in [row.first, row.last] + row.inner {
            #expect(!TileHostGuard.isPublic(address), "\(address) in \(row.block)")
        }
        for address in [row.before, row.after].compactMap({ $0 }) {
            #expect(TileHostGuard.isPublic(address), "\(address) next to \(row.block)")
        }
    }

    @Test(
        "IPv6 blocks that carry an IPv4 address are checked by that IPv4 address: mapped, translated, compatible, NAT64, 6to4",
        arguments: embeddingRows
    )
    func embeddedIPv4(_ row: EmbeddingRow) {
        let refused = [
            "0.0.0.0", "255.255.255.255", "127.0.0.1", "10.0.0.1", "169.254.169.254", "192.168.1.1", "172.16.0.1",
            "100.64.0.1", "192.0.0.170", "198.18.0.1", "224.0.0.1",
        ]
        for v4 in refused {
            #expect(!TileHostGuard.isPublic(row.prefix(v4)), "\(row.prefix(v4)) carries \(v4)")
        }
        for v4 in ["8.8.8.8", "193.0.14.129", "1.1.1.1"] {
            #expect(TileHostGuard.isPublic(row.prefix(v4)), "\(row.prefix(v4)) carries \(v4)")
        }
        for address in [row.before, row.after].compactMap({ $0 }) {
            #expect(TileHostGuard.isPublic(address), "\(address) next to \(row.block)")
        }
    }

    @Test("the unspecified and loopback IPv6 addresses, and text that is no address, are refused")
    func specialIPv6() {
        for address in [
            "::", "::1", "0:0:0:0:0:0:0:1", "64:ff9b::7f00:1", "2002:7f00:1::", "::127.0.0.1", "not-an-address", "", "1.2.3", "::ffff:999.1.1.1",
        ] {
            #expect(!TileHostGuard.isPublic(address), "\(address)")
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
        let env = try await TestEnv.tiles { config in config.tileFetch.allowPrivateAddresses = false }
        try await env.setZooms(10...11)
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            try await env.useTileServer(template)
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
        init(first: [String], later: [String]) {
            self.first = first
            self.later = later
        }
        var names: [String] { calls.withLockedValue { $0 } }
        func resolve(_ name: String) -> [String] {
            let count = calls.withLockedValue {
                $0.append(name)
                return $0.count
            }
            return count == 1 ? first : later
        }
    }

    /// The tiles of zoom 1 through a fetcher that treats only 127.0.0.1 as public (the tests' stand-in for the
    /// internet: 127.0.0.2 and 127.0.0.3 are "the server's own network", and nothing listens there).
    static func fetchZoom1(template: String, resolve: @escaping TileHostGuard.Resolver) async throws -> TileFetcher.Summary {
        var options = TileFetchOptions()
        options.allowPrivateAddresses = false
        options.attempts = 1
        // Generous: the refusals do not wait for it, and under the parallel test run a loaded machine took over 5 s.
        options.requestTimeout = 30
        options.concurrency = 2
        let cache = TestScratch.folder("rebind")
        defer { try? FileManager.default.removeItem(at: cache) }
        let fetcher = TileFetcher(
            template: template,
            cacheRoot: cache,
            options: options,
            userAgent: "TrailCompanion/test",
            resolve: resolve,
            isAllowedAddress: { $0 == "127.0.0.1" }
        )
        return try await fetcher.fetch((0..<2).flatMap { x in (0..<2).map { y in TileID(z: 1, x: x, y: y) } })
    }

    @Test("DNS rebinding: the address that was checked is the one connected to; a later, different answer is never used")
    func rebindingIsPinned() async throws {
        let state = TileServerState(mode: .normal)
        try await TestTileServer.with(state) { template in
            // tiles.rebind.test does not exist in any DNS: the fetch works only through the answer we checked.
            let resolver = RebindingResolver(first: ["127.0.0.1"], later: ["127.0.0.2"])
            let summary = try await Self.fetchZoom1(
                template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.rebind.test"),
                resolve: resolver.resolve
            )
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
                _ = try await Self.fetchZoom1(
                    template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.mixed.test"),
                    resolve: resolver.resolve
                )
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
            let summary = try await Self.fetchZoom1(
                template: template.replacingOccurrences(of: "127.0.0.1", with: "tiles.test"),
                resolve: { _ in ["127.0.0.1"] }
            )
            #expect(summary.fetched == 4)
            #expect(followedState.requests == 8, "each tile: a redirect, then the tile")
        }
    }
}
