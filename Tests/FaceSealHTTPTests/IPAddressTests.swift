import Foundation
import Testing
@testable import FaceSealHTTP

/// The source address a rate limit counts: numeric addresses only, IPv6 by /64, `X-Forwarded-For` only from a
/// trusted proxy and read from the right.
@Suite struct IPAddressTests {
    @Test("numeric IPv4 and IPv6 parse; names, ports, brackets and oversized text do not")
    func parsing() {
        #expect(IPAddress("192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("2001:DB8:0:0::1")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:192.0.2.1") == IPAddress("192.0.2.1"))
        for bad in ["", "localhost", "192.0.2.1:80", "[2001:db8::1]", "192.0.2.256", "2001:db8::1%eth0", String(repeating: "1", count: 4096)] {
            #expect(IPAddress(bad) == nil, "\(bad.prefix(20))")
        }
    }

    @Test("an IPv6 source is its /64 network; an IPv4 source is its address")
    func networks() {
        #expect(IPAddress("2001:db8:1:2::a")?.network == "2001:db8:1:2::/64")
        #expect(IPAddress("2001:db8:1:2:ffff::")?.network == IPAddress("2001:db8:1:2::a")?.network)
        #expect(IPAddress("2001:db8:1:3::a")?.network != IPAddress("2001:db8:1:2::a")?.network)
        #expect(IPAddress("198.51.100.7")?.network == "198.51.100.7")
    }

    @Test("X-Forwarded-For counts only from a trusted proxy: the rightmost entry that is not itself a trusted proxy")
    func forwardedFor() throws {
        func request(peer: String, _ forwarded: [String]) throws -> HTTPRequest {
            try HTTPRequest(method: .get, path: "/", headers: HTTPHeaders(forwarded.map { ("X-Forwarded-For", $0) }), remoteAddress: peer)
        }
        let proxies: Set<IPAddress> = [IPAddress("10.0.0.1")!, IPAddress("10.0.0.2")!]
        #expect(try request(peer: "203.0.113.5", ["198.51.100.1"]).clientAddress(trustedProxies: proxies) == IPAddress("203.0.113.5"))
        #expect(try request(peer: "10.0.0.1", ["192.0.2.9, 198.51.100.1"]).clientAddress(trustedProxies: proxies) == IPAddress("198.51.100.1"))
        #expect(try request(peer: "10.0.0.1", ["192.0.2.9", "198.51.100.1, 10.0.0.2"]).clientAddress(trustedProxies: proxies)
                == IPAddress("198.51.100.1"))
        // A proxy that sent no header, or a malformed entry, leaves the last trusted hop as the source.
        #expect(try request(peer: "10.0.0.1", []).clientAddress(trustedProxies: proxies) == IPAddress("10.0.0.1"))
        #expect(try request(peer: "10.0.0.1", ["192.0.2.9, unknown"]).clientAddress(trustedProxies: proxies) == IPAddress("10.0.0.1"))
        #expect(try request(peer: "10.0.0.1", ["192.0.2.9, 10.0.0.2, junk"]).clientAddress(trustedProxies: proxies) == IPAddress("10.0.0.1"))
    }
}
