import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps the build-time tile fetcher off the server's own network: a tile URL (typed by an admin, or one the tile
/// server redirects to) whose host is, or resolves to, a loopback, private (RFC 1918), carrier-grade NAT, link-local,
/// unique-local or unspecified address is refused, unless the operator allows private tile servers
/// (`--tile-allow-private`, for an agency's own tile server on its LAN).
///
/// What it cannot do: URLSession resolves the host again when it connects, so a DNS answer that changes between the
/// two lookups (DNS rebinding) could still reach a private address. Redirects are checked one by one as they come.
public enum TileHostGuard {
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let host: String
        public let address: String
        public var description: String {
            "the tile server \(host) is at \(address), an address of this server's own network; an administrator can allow that with --tile-allow-private"
        }
    }

    /// Throws ``Refusal`` when `host` is or resolves to a non-public address. A host that does not resolve passes
    /// here (the fetch then fails with its own error).
    public static func check(host: String) throws {
        for address in addresses(of: host) where !isPublic(address) {
            throw Refusal(host: host, address: address)
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
                found.append(String(cString: buffer))
            }
            cursor = entry.pointee.ai_next
        }
        return found
    }

    /// False for loopback, private, CGNAT, link-local, unique-local, multicast and unspecified addresses (IPv4, IPv6,
    /// and IPv4-mapped IPv6).
    static func isPublic(_ address: String) -> Bool {
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

/// Refuses a redirect whose target is refused by ``TileHostGuard`` (the 3xx answer then reaches the fetcher, which
/// fails with its status): a public tile server cannot bounce the fetcher onto the server's own network.
final class TileRedirectGuard: NSObject, URLSessionTaskDelegate, Sendable {
    let allowPrivate: Bool
    init(allowPrivate: Bool) { self.allowPrivate = allowPrivate }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        guard !allowPrivate else { return completionHandler(request) }
        guard let host = request.url?.host, (try? TileHostGuard.check(host: host)) != nil else { return completionHandler(nil) }
        completionHandler(request)
    }
}
