import Foundation
import Synchronization
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// How a handler's task meets its connection: it starts on libmicrohttpd's polling thread; one that answers without
/// suspending is answered by the call that started it, one that suspends has its connection suspended until the task
/// (on any thread) resumes it. Over real HTTP on loopback.
@Suite struct ServerDispatchTests {
    /// Holds the server for a handler that needs it (set once, after the server is created).
    final class ServerBox: Sendable {
        let server = Mutex<HTTPServer?>(nil)
    }

    static func router(box: ServerBox? = nil) -> Router {
        var router = Router()
        router.get("/inline/:n") { request in .text("inline \(request.pathParameter("n"))") }
        router.get("/yield/:n") { request in
            // Suspends and resumes on the concurrency pool, racing the polling thread that is about to suspend the
            // connection: both orders must answer.
            await Task.yield()
            return .text("yield \(request.pathParameter("n"))")
        }
        router.get("/thread/:n") { request in
            // Resumed by a thread that is neither libmicrohttpd's nor the concurrency pool's.
            let n = request.pathParameter("n")
            let answer = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                Thread { continuation.resume(returning: "thread \(n)") }.start()
            }
            return .text(answer)
        }
        router.get("/drain") { _ in
            // Synchronous, so it runs on the polling thread inside libmicrohttpd's callback.
            box?.server.withLock { $0 }?.beginDraining()
            return .text("drained")
        }
        return router
    }

    @Test("requests whose handlers answer at once, after a yield, or from another thread, 64 connections at once, all answered in order")
    func manyConcurrentRequestsOverEveryPathAreAnsweredInOrder() async throws {
        try await withServer(Self.router()) { server, _ in
            let port = try #require(server.port)
            try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                for connectionIndex in 0..<64 {
                    group.addTask {
                        try await blocking {
                            let connection = try RawConnection(port: port)
                            var bodies: [String] = []
                            for index in 0..<12 {
                                let kind = ["inline", "yield", "thread"][(connectionIndex + index) % 3]
                                try connection.send("GET /\(kind)/\(connectionIndex)-\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
                                let response = try connection.readResponse()
                                bodies.append("\(response.status) " + String(decoding: response.body, as: UTF8.self))
                            }
                            // Pipelined: three requests in one write, one of each kind, answered in order.
                            try connection.send((["thread", "inline", "yield"].map { "GET /\($0)/\(connectionIndex)-p HTTP/1.1\r\nHost: x\r\n\r\n" }).joined())
                            for _ in 0..<3 {
                                let response = try connection.readResponse()
                                bodies.append("\(response.status) " + String(decoding: response.body, as: UTF8.self))
                            }
                            return (connectionIndex, bodies)
                        }
                    }
                }
                var answered = 0
                for try await (connectionIndex, bodies) in group {
                    var expected = (0..<12).map { index in
                        "200 \(["inline", "yield", "thread"][(connectionIndex + index) % 3]) \(connectionIndex)-\(index)"
                    }
                    expected += ["thread", "inline", "yield"].map { "200 \($0) \(connectionIndex)-p" }
                    #expect(bodies == expected)
                    answered += bodies.count
                }
                #expect(answered == 64 * 15)
            }
        }
    }

    @Test("a handler that begins draining from the polling thread still gets its answer out; the next request is refused 503")
    func drainingFromAHandlerThatNeverSuspends() async throws {
        let box = ServerBox()
        let server = HTTPServer(logger: .disabled, router: Self.router(box: box))
        box.server.withLock { $0 = server }
        try server.start()
        let port = try #require(server.port)
        let (first, second) = try await blocking {
            let connection = try RawConnection(port: port)
            try connection.send("GET /drain HTTP/1.1\r\nHost: x\r\n\r\n")
            let first = try connection.readResponse()
            let other = try RawConnection(port: port)
            try other.send("GET /inline/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            return (first, try other.readResponse())
        }
        #expect(first.status == 200)
        #expect(String(decoding: first.body, as: UTF8.self) == "drained")
        #expect(second.status == 503)
        #expect(second.headers["retry-after"] == String(HTTPError.unavailableRetryAfter))
        box.server.withLock { $0 = nil }
        await server.stop()
        #expect(server.port == nil)
    }
}
