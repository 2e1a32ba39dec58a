import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A numeric IPv4 or IPv6 address, as a server's peer address or a proxy's `X-Forwarded-For` entry names it.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address bytes: 4 for IPv4 (also for an IPv4-mapped IPv6 address), 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses a numeric address (no brackets, port or zone); nil for anything else, e.g. a host name.
    public init?(_ text: some StringProtocol) {
        guard (2...45).contains(text.utf8.count) else { return nil }
        let string = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, string, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, string, &v6) == 1 else { return nil }
        let raw = withUnsafeBytes(of: &v6) { Array($0) }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        bytes = Array(raw.prefix(12)) == mappedPrefix ? Array(raw.suffix(4)) : raw
    }

    /// The address in its canonical text form (IPv6 as `inet_ntop` writes it).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What one party controls: the IPv4 address itself, or the /64 network of an IPv6 address (a single host is
    /// routinely given a whole /64, so counting single IPv6 addresses would count nothing).
    public var network: String {
        bytes.count == 4 ? description : IPAddress(bytes: Array(bytes.prefix(8)) + Array(repeating: 0, count: 8)).description + "/64"
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }
}

extension HTTPRequest {
    /// The most `X-Forwarded-For` entries read (from the right); a longer chain is cut there.
    static let maxForwardedEntries = 16

    /// The address of the party that sent the request: the peer of the connection, unless that is one of
    /// `trustedProxies`, in which case the rightmost `X-Forwarded-For` entry not itself a trusted proxy (what the
    /// nearest trusted proxy saw; entries further left are the client's own word). A malformed entry stops the walk
    /// at the proxy that wrote it. Nil only when the server did not know its peer.
    public func clientAddress(trustedProxies: Set<IPAddress>) -> IPAddress? {
        guard var current = remoteAddress.flatMap({ IPAddress($0) }) else { return nil }
        guard trustedProxies.contains(current) else { return current }
        let entries = headers.values(for: "X-Forwarded-For").joined(separator: ",").split(separator: ",")
        for entry in entries.reversed().prefix(Self.maxForwardedEntries) {
            guard let address = IPAddress(entry.trimmingCharacters(in: .whitespaces)) else { return current }
            current = address
            if !trustedProxies.contains(address) { return address }
        }
        return current
    }
}
