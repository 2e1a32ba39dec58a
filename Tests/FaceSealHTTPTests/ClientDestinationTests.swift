import Foundation
import Synchronization
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// `HTTPClient.Destinations.publicOnly`: what a request whose URL a less trusted party chose may connect to.
@Suite struct ClientDestinationTests {
    /// Counts the requests that reached the server.
    final class Hits: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    static func countingRouter(_ hits: Hits) -> Router {
        var router = Router()
        router.get("/hit") { _ in
            hits.add()
            return .text("hit")
        }
        return router
    }

    @Test("a public-only client never connects to loopback, by address or by a name that resolves to it; an any client does")
    func loopbackIsRefusedBeforeAnyConnection() async throws {
        let hits = Hits()
        try await withServer(Self.countingRouter(hits)) { _, url in
            let port = try #require(url.port)
            let guarded = HTTPClient(configuration: HTTPClient.Configuration(destinations: .publicOnly))
            for host in ["127.0.0.1", "localhost", "127.1.2.3"] {
                let target = try #require(URL(string: "http://\(host):\(port)/hit"))
                await #expect(throws: HTTPClientError.destinationNotPublic("\(host):\(port)")) {
                    try await guarded.send(HTTPClientRequest(url: target, timeout: .seconds(5)))
                }
            }
            #expect(hits.value == 0)
            let open = HTTPClient(configuration: HTTPClient.Configuration(destinations: .any))
            #expect(try await open.send(HTTPClientRequest(url: url.path("/hit"))).status == .ok)
            #expect(hits.value == 1)
        }
    }

    /// Internal ranges are refused at once, without a connection attempt (nothing listens there, so a connection
    /// attempt would time out or fail otherwise); a public address is attempted (and fails some other way here).
    @Test(arguments: ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
                      "198.18.0.1", "224.0.0.1", "255.255.255.255", "[::1]", "[fd00::1]", "[fe80::1]", "[::ffff:10.0.0.1]",
                      "[::ffff:169.254.169.254]", "[64:ff9b::a00:1]", "[ff02::1]"])
    func internalAddressesAreRefused(_ host: String) async throws {
        let client = HTTPClient(configuration: HTTPClient.Configuration(destinations: .publicOnly))
        let target = try #require(URL(string: "http://\(host):9/"))
        await #expect(throws: HTTPClientError.destinationNotPublic("\(host):9")) {
            try await client.send(HTTPClientRequest(url: target, timeout: .seconds(30)))
        }
    }

    @Test(arguments: ["192.0.2.1", "172.32.0.1", "100.128.0.1", "[2001:db8::1]"])
    func publicAddressesAreAttempted(_ host: String) async throws {
        let client = HTTPClient(configuration: HTTPClient.Configuration(destinations: .publicOnly))
        let target = try #require(URL(string: "http://\(host):9/"))
        do {
            _ = try await client.send(HTTPClientRequest(url: target, timeout: .milliseconds(300)))
        } catch {
            #expect(error != .destinationNotPublic("\(host):9"))
        }
    }
}
