import CCurl
import Foundation

extension HTTPClient.Destinations {
    /// Whether a connection to `host` could be admitted, judged from the host's text alone: false for a loopback
    /// name (`localhost`, `*.localhost`) or an IP literal outside public unicast under `.publicOnly`; true otherwise.
    /// A name is only judged when connecting (after resolution); this lets a registration refuse at once what the
    /// egress guard would refuse at every send.
    public func mayAdmit(host: String) -> Bool {
        guard self == .publicOnly else { return true }
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name == "localhost" || name.hasSuffix(".localhost") { return false }
        return !Self.isInternalLiteral(name)
    }

    /// True when `text` is an IPv4 (any form `inet_aton` reads) or IPv6 literal that is not a public unicast address
    /// (the egress guard's classification, `fs_address_is_internal`).
    private static func isInternalLiteral(_ text: String) -> Bool {
        // No length cut-off: inet_aton reads any number of leading zeros (`000…0177.0.0.1`), and the URL around the
        // host is already at most 2048 bytes.
        var v4 = sockaddr_in()
        // inet_aton also reads the short and numeric forms getaddrinfo accepts (`127.1`, `0x7f000001`).
        if inet_aton(text, &v4.sin_addr) != 0 {
            v4.sin_family = sa_family_t(AF_INET)
            return withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { fs_address_is_internal($0) != 0 } }
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, text, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            return withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { fs_address_is_internal($0) != 0 } }
        }
        return false
    }
}
