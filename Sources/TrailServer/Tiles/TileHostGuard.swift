import Foundation
import NIOPosix

/// Keeps the build-time tile fetcher off the server's own network: a tile URL (typed by an admin, or one the tile
/// server redirects to) whose host is, or resolves to, an address that is not the public internet (loopback, private,
/// carrier-grade NAT, link-local, unique-local, site-local, benchmarking, multicast, unspecified; or an IPv6 address
/// that carries such an IPv4 address: mapped, compatible, NAT64, 6to4) is refused, unless the operator allows private tile servers
/// (`--tile-allow-private`, for an agency's own tile server on its LAN).
///
/// The check and the connection use the same answer: ``pin(host:allowPrivate:resolve:)`` resolves once and returns the
/// address the fetcher then connects to (async-http-client's `dnsOverride`, which keeps the host name for TLS: SNI and
/// the certificate check). A DNS server that answers a public address for the check and a private one a moment later
/// (DNS rebinding) therefore never gets the fetcher onto the private one. Redirects are pinned the same way, hop by hop.
enum TileHostGuard {
    /// Looks a host name up: every numeric address it has (blocking; call it off the event loops).
    typealias Resolver = @Sendable (String) -> [String]

    /// A host could not be resolved (there is nothing to check, and nothing to connect to).
    struct Unresolvable: Error, CustomStringConvertible {
        let host: String
        var description: String { "the name \(host) cannot be resolved" }
    }

    /// The address to connect to for `host`: resolved once with `resolve` (on the thread pool: getaddrinfo blocks), each
    /// address checked with `isAllowed` (``isPublic(_:)``; tests name their own) unless `allowPrivate`. Throws ``Refusal``
    /// or ``Unresolvable``.
    static func pin(
        host: String,
        allowPrivate: Bool,
        resolve: @escaping Resolver = addresses(of:),
        isAllowed: @Sendable (String) -> Bool = isPublic
    ) async throws -> String {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let found = try await BlockingWork.short { resolve(name) }
        guard !found.isEmpty else { throw Unresolvable(host: host) }
        if !allowPrivate {
            for address in found where !isAllowed(address) { throw Refusal(host: host, address: address) }
        }
        // IPv4 first: a server with a AAAA record but no IPv6 route is common; the reverse is rare.
        return found.first { !$0.contains(":") } ?? found[0]
    }

    struct Refusal: Error, Equatable, CustomStringConvertible {
        let host: String
        let address: String
        var description: String {
            "the tile server \(host) is at \(address), an address of this server's own network; an administrator can allow that with --tile-allow-private"
        }
    }

    /// Numeric addresses of a host name (or the literal itself), IPv4 and IPv6.
    static func addresses(of host: String) -> [String] {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                found.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            cursor = entry.pointee.ai_next
        }
        return found
    }

    /// A block of addresses: the first `length` bits of `prefix` (4 bytes for IPv4, 16 for IPv6).
    struct Block: Sendable, CustomStringConvertible {
        let name: String
        /// The first address, as written.
        let text: String
        let prefix: [UInt8]
        let length: Int
        /// For IPv6 blocks that carry an IPv4 address: the byte where its four bytes start.
        let embeddedV4At: Int?

        init(_ name: String, _ text: String, _ length: Int, embeddedV4At: Int? = nil) {
            self.name = name
            self.text = text
            self.prefix = TileHostGuard.bytes(of: text)!
            self.length = length
            self.embeddedV4At = embeddedV4At
        }

        func contains(_ bytes: [UInt8]) -> Bool {
            guard bytes.count == prefix.count else { return false }
            for bit in 0..<length where (bytes[bit / 8] ^ prefix[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
            return true
        }

        var description: String { "\(text)/\(length) (\(name))" }
    }

    /// IPv4 blocks that are not the public internet (IANA's special-purpose registry, the ones not globally reachable).
    static let refusedV4: [Block] = [
        Block("this network", "0.0.0.0", 8),
        Block("private", "10.0.0.0", 8),
        Block("carrier-grade NAT", "100.64.0.0", 10),
        Block("loopback", "127.0.0.0", 8),
        Block("link local, cloud metadata", "169.254.0.0", 16),
        Block("private", "172.16.0.0", 12),
        Block("IETF protocol assignments", "192.0.0.0", 24),
        Block("documentation", "192.0.2.0", 24),
        Block("6to4 relay anycast", "192.88.99.0", 24),
        Block("private", "192.168.0.0", 16),
        Block("benchmarking", "198.18.0.0", 15),
        Block("documentation", "198.51.100.0", 24),
        Block("documentation", "203.0.113.0", 24),
        Block("multicast, reserved, broadcast", "224.0.0.0", 3),
    ]

    /// IPv6 blocks that carry an IPv4 address a packet ends up at (or that a host stack treats as that IPv4 address):
    /// an address in one is as public as the IPv4 address it carries, so `64:ff9b::7f00:1` is loopback.
    static let embeddingV4: [Block] = [
        Block("IPv4-mapped", "::ffff:0:0", 96, embeddedV4At: 12),
        Block("IPv4-translated", "::ffff:0:0:0", 96, embeddedV4At: 12),
        Block("IPv4-compatible (with :: and ::1)", "::", 96, embeddedV4At: 12),
        Block("NAT64 well-known prefix", "64:ff9b::", 96, embeddedV4At: 12),
        Block("6to4", "2002::", 16, embeddedV4At: 2),
    ]

    /// IPv6 blocks refused whole.
    static let refusedV6: [Block] = [
        Block("NAT64 local use", "64:ff9b:1::", 48),
        Block("discard only", "100::", 64),
        Block("Teredo", "2001::", 32),
        Block("documentation", "2001:db8::", 32),
        Block("unique local", "fc00::", 7),
        Block("link local", "fe80::", 10),
        Block("site local", "fec0::", 10),
        Block("multicast", "ff00::", 8),
    ]

    /// False for every address in ``refusedV4`` and ``refusedV6``, and for an address in ``embeddingV4`` whose IPv4
    /// address is refused. Anything that does not read as a numeric address is refused too.
    static func isPublic(_ address: String) -> Bool {
        let text = address.split(separator: "%", omittingEmptySubsequences: false).first.map(String.init) ?? address  // a zone index
        guard let bytes = bytes(of: text) else { return false }
        if bytes.count == 4 { return isPublicV4(bytes) }
        if let block = embeddingV4.first(where: { $0.contains(bytes) }), let start = block.embeddedV4At {
            return isPublicV4(Array(bytes[start..<start + 4]))
        }
        return !refusedV6.contains { $0.contains(bytes) }
    }

    static func isPublicV4(_ bytes: [UInt8]) -> Bool {
        !refusedV4.contains { $0.contains(bytes) }
    }

    /// The 4 or 16 bytes of a numeric IPv4 or IPv6 address; nil for anything else.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
