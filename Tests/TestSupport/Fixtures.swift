import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Deterministic pseudo-random bytes (xorshift64), so fixtures are the same on every run; they cannot plausibly
/// contain the 34-byte signed part of the EICAR test string, so a file made of them scans clean.
public func fillerBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    var bytes = [UInt8](repeating: 0, count: max(0, count))
    bytes.withUnsafeMutableBufferPointer { buffer in
        for index in buffer.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            buffer[index] = UInt8(truncatingIfNeeded: state)
        }
    }
    return bytes
}

/// Deterministic pseudo-random numbers and bytes (SplitMix64): reproducible cases and fixtures.
public struct SeededBytes: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func bytes(_ count: Int) -> Data {
        var data = Data(capacity: count + 8)
        while data.count < count {
            var value = next()
            withUnsafeBytes(of: &value) { data.append(contentsOf: $0) }
        }
        return data.prefix(count)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }

    public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
}

/// A 127.0.0.1 TCP port nobody listens on right now.
public func freeLocalPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}
