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

    @Test("a request head not complete by its deadline loses its connection: trickled bytes do not extend it")
    func requestHeadDeadline() async throws {
        var configuration = HTTPServer.Configuration(connectionTimeout: .seconds(60), requestHeadTimeout: .seconds(10))
        configuration.requestHeadClock = .manual
        try await withServer(Self.router, configuration: configuration) { server, _ in
            let port = try #require(server.port)
            let slow = try RawConnection(port: port)
            try slow.send("GET /ping HTTP/1.1\r\n")
            #expect(try await blocking { server.awaitRequestHeadsWatched(1) })
            server.advanceRequestHeadClock(by: .seconds(6))
            try slow.send("Host: slow\r\n")
            server.advanceRequestHeadClock(by: .milliseconds(3_999))
            #expect(server.requestHeadsTimedOut == 0)
            #expect(slow.isOpenWithoutData())
            server.advanceRequestHeadClock(by: .milliseconds(1))
            #expect(server.requestHeadsTimedOut == 1)
            #expect(try await blocking { slow.isClosedByPeer() })

            // A complete head in time is served, and its kept-alive connection gets a fresh deadline after the answer.
            let quick = try RawConnection(port: port)
            let response = try await blocking {
                try quick.send("GET /ping HTTP/1.1\r\nHost: quick\r\n\r\n")
                return try quick.readResponse()
            }
            #expect(response.status == 200)
            #expect(try await blocking { server.awaitRequestHeadsWatched(1) })
            server.advanceRequestHeadClock(by: .milliseconds(9_999))
            #expect(server.requestHeadsTimedOut == 1)
            #expect(quick.isOpenWithoutData())
            server.advanceRequestHeadClock(by: .milliseconds(1))
            #expect(server.requestHeadsTimedOut == 2)
            #expect(try await blocking { quick.isClosedByPeer() })
        }
    }
}
