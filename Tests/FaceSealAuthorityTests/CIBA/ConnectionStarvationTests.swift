import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FaceSealAuthority

/// Issue 9 item 9 against the authority itself: one address holding 1,100 half-open connections (a request head
/// begun and never finished) does not starve anyone else.
@Suite("Connections: one address cannot exhaust them")
struct ConnectionStarvationTests {
    @Test("with 1,100 half-open connections from 127.0.0.1, a client from 127.0.0.2 gets discovery at once",
          arguments: StoreBackend.underTest)
    func halfOpenConnectionsFromOneAddress(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let port = try #require(harness.baseURL.port)
            let discovery = harness.url("/.well-known/openid-configuration")
            let response = try await onItsOwnThread { () throws -> HTTPClientResponse in
                var held: [Int32] = []
                defer { held.forEach { close($0) } }
                for _ in 0..<1_100 {
                    let descriptor = try RawHTTPClient.connected(host: "127.0.0.1", port: port)
                    held.append(descriptor)
                    // Connections over the per-address limit are closed at once; a write to them may fail.
                    let partial = Array("GET /jwks HTTP/1.1\r\nHost: attacker\r\n".utf8)
                    _ = send(descriptor, partial, partial.count, Int32(MSG_NOSIGNAL))
                }
                return try RawHTTPClient.exchange(HTTPClientRequest(url: discovery), source: "127.0.0.2")
            }
            #expect(response.status == .ok)
            #expect(try JSONValue.parse(response.body)["issuer"] != nil)
        }
    }
}
