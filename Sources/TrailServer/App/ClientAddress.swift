import Foundation
import HTTPTypes
import Hummingbird

/// The reverse proxies whose `X-Forwarded-For` is believed (`--trusted-proxies 127.0.0.1/32,10.0.0.0/8,::1`).
/// Behind a proxy every connection comes from the proxy: without this, the per-address sign-in limit would lock out
/// everyone at once and the audit log would name only the proxy. From any other peer the header is ignored, since a
/// client can send whatever it likes.
package struct TrustedProxies: Sendable, Equatable {
    struct Network: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for index in bytes.indices where left > 0 {
                let bits = min(8, left)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                left -= bits
            }
            return true
        }
    }

    let networks: [Network]

    static let none = TrustedProxies(networks: [])

    init(networks: [Network]) { self.networks = networks }

    /// Comma-separated addresses or CIDR ranges, IPv4 or IPv6; an empty text trusts no one.
    package init(parsing text: String) throws {
        var networks: [Network] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let parts = item.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.bytes(parts[0]) else {
                throw TrustedProxiesError(message: "“\(item)” is not an IP address or CIDR range (e.g. 10.0.0.0/8, 127.0.0.1, ::1)")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...(bytes.count * 8)).contains(prefix) else {
                throw TrustedProxiesError(message: "“\(item)” has a prefix length outside 0–\(bytes.count * 8)")
            }
            networks.append(Network(bytes: bytes, prefix: prefix))
        }
        self.networks = networks
    }

    var isEmpty: Bool { networks.isEmpty }

    func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client's address: the peer itself unless it is a trusted proxy; then `X-Forwarded-For` read from the right,
    /// skipping further trusted proxies, so that a value the client put in front of the list is never taken.
    func clientAddress(peer: String?, forwardedFor: [String]) -> String? {
        guard let peer, contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            guard Self.bytes(hop) != nil else { break }
            client = hop
            if !contains(hop) { break }
        }
        return client
    }

    /// 4 or 16 bytes; IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is read as IPv4.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
            return bytes
        }
        return nil
    }
}

/// What a per-address limit counts. An IPv6 client is handed a whole /64 (RFC 6177 even suggests /48 to /56), so it can
/// change address at every request: per /64, its guesses are counted together. IPv4 (and IPv4-mapped IPv6) addresses
/// count alone; anything unreadable counts as given.
enum ThrottleAddress {
    static func key(_ address: String) -> String {
        guard let bytes = TrustedProxies.bytes(address) else { return address }
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

struct TrustedProxiesError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Sets the request's client address from `X-Forwarded-For` when the peer is a trusted proxy (see `TrustedProxies`).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let trusted: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !trusted.isEmpty else { return try await next(request, context) }
        var context = context
        context.remoteAddress = trusted.clientAddress(peer: context.remoteAddress, forwardedFor: request.headers[values: .xForwardedFor])
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
