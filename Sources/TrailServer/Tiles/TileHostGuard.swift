import Foundation
import NIOPosix

/// Keeps the build-time tile fetcher off the server's own network: a tile URL (typed by an admin, or one the tile
/// server redirects to) whose host is, or resolves to, a loopback, private (RFC 1918), carrier-grade NAT, link-local,
/// unique-local or unspecified address is refused, unless the operator allows private tile servers
/// (`--tile-allow-private`, for an agency's own tile server on its LAN).
///
/// The check and the connection use the same answer: ``pin(host:allowPrivate:resolve:)`` resolves once and returns the
/// address the fetcher then connects to (async-http-client's `dnsOverride`, which keeps the host name for TLS: SNI and
/// the certificate check). A DNS server that answers a public address for the check and a private one a moment later
/// (DNS rebinding) therefore never gets the fetcher onto the private one. Redirects are pinned the same way, hop by hop.
public enum TileHostGuard {
    /// Looks a host name up: every numeric address it has (blocking; call it off the event loops).
    public typealias Resolver = @Sendable (String) -> [String]

    /// A host could not be resolved (there is nothing to check, and nothing to connect to).
    public struct Unresolvable: Error, CustomStringConvertible {
        public let host: String
        public var description: String { "the name \(host) cannot be resolved" }
    }

    /// The address to connect to for `host`: resolved once with `resolve` (on the thread pool: getaddrinfo blocks), each
    /// address checked with `isAllowed` (``isPublic(_:)``; tests name their own) unless `allowPrivate`. Throws ``Refusal``
    /// or ``Unresolvable``.
    public static func pin(host: String, allowPrivate: Bool, resolve: @escaping Resolver = addresses(of:),
                           isAllowed: @Sendable (String) -> Bool = isPublic) async throws -> String {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let found = try await NIOThreadPool.singleton.runIfActive { resolve(name) }
        guard !found.isEmpty else { throw Unresolvable(host: host) }
        if !allowPrivate {
            for address in found where !isAllowed(address) { throw Refusal(host: host, address: address) }
        }
        // IPv4 first: a server with a AAAA record but no IPv6 route is common; the reverse is rare.
        return found.first { !$0.contains(":") } ?? found[0]
    }

    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let host: String
        public let address: String
        public var description: String {
            "the tile server \(host) is at \(address), an address of this server's own network; an administrator can allow that with --tile-allow-private"
        }
    }

    /// Numeric addresses of a host name (or the literal itself), IPv4 and IPv6.
    public static func addresses(of host: String) -> [String] {
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

    /// False for loopback, private, CGNAT, link-local, unique-local, multicast and unspecified addresses (IPv4, IPv6,
    /// and IPv4-mapped IPv6).
    public static func isPublic(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isPublicV4(withUnsafeBytes(of: v4.s_addr) { Array($0) })
        }
        var v6 = in6_addr()
        let text = address.split(separator: "%").first.map(String.init) ?? address  // a zone index
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return isPublicV4(Array(bytes[12..<16])) }
        if bytes.allSatisfy({ $0 == 0 }) { return false }                               // ::
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return false }      // ::1
        if bytes[0] & 0xFE == 0xFC { return false }                                      // fc00::/7 unique local
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return false }                  // fe80::/10 link local
        if bytes[0] == 0xFF { return false }                                             // multicast
        return true
    }

    static func isPublicV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false       // carrier-grade NAT
        case (169, 254): return false            // link local (and cloud metadata at 169.254.169.254)
        case (172, 16...31): return false
        case (192, 168): return false
        case (224...255, _): return false        // multicast, reserved, broadcast
        default: return true
        }
    }
}
