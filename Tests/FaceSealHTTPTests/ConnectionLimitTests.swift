import Foundation
import Testing
@testable import FaceSealHTTP

/// Issue 9 item 9: one client cannot take every connection. A per-address limit keeps the rest of the server's
/// connections for others, and a request head has a deadline that trickling bytes does not extend.
@Suite struct ConnectionLimitTests {
    static var router: Router {
        var router = Router()
        router.get("/ping") { _ in .text("pong") }
        return router
    }

    @Test("with 1,100 idle half-open connections from one address, a client from another is answered at once")
    func oneAddressCannotStarveOthers() async throws {
        try await withServer(Self.router) { server, _ in
            let port = try #require(server.port)
            let idle = try await blocking {
                try (0..<1_100).map { _ -> RawConnection in
                    let connection = try RawConnection(port: port)
                    // Connections over the per-address limit are closed at once; sending to them may fail.
                    try? connection.send("GET /ping HTTP/1.1\r\nHost: attacker\r\n")
                    return connection
                }
            }
            let response = try await blocking {
                let other = try RawConnection(port: port, source: "127.0.0.2")
                // Far below the 30 s idle timeout that would otherwise free a slot.
                other.setReceiveTimeout(milliseconds: 10_000)
                try other.send("GET /ping HTTP/1.1\r\nHost: other\r\n\r\n")
                return try other.readResponse()
            }
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "pong")
            withExtendedLifetime(idle) {}
        }
    }

    @Test("a request head that is not complete by its deadline loses its connection, long before the idle timeout")
    func requestHeadDeadline() async throws {
        let configuration = HTTPServer.Configuration(connectionTimeout: .seconds(60), requestHeadTimeout: .seconds(1))
        try await withServer(Self.router, configuration: configuration) { server, _ in
            let port = try #require(server.port)
            let closed = try await blocking {
                let slow = try RawConnection(port: port)
                slow.setReceiveTimeout(milliseconds: 30_000)
                try slow.send("GET /ping HTTP/1.1\r\nHost: slow\r\n")
                return slow.isClosedByPeer()
            }
            #expect(closed)
            #expect(server.requestHeadsTimedOut == 1)
            // A complete head in time is served, and its kept-alive connection gets a fresh deadline after the answer.
            let served = try await blocking {
                let quick = try RawConnection(port: port)
                quick.setReceiveTimeout(milliseconds: 30_000)
                try quick.send("GET /ping HTTP/1.1\r\nHost: quick\r\n\r\n")
                let response = try quick.readResponse()
                return (response.status, quick.isClosedByPeer())
            }
            #expect(served.0 == 200)
            #expect(served.1)
            #expect(server.requestHeadsTimedOut == 2)
        }
    }
}
