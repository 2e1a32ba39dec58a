import Foundation
import Synchronization
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// Everything here runs over real HTTP on an ephemeral loopback port.
@Suite struct ServerTests {
    struct Echo: Codable, Equatable {
        var name: String
        var count: Int
        var tags: [String]
    }

    struct Conflict: HTTPResponseConvertible {
        var httpResponse: HTTPResponse { .text("already there", status: .conflict, headers: ["X-Why": "dup"]) }
    }

    struct SecretFailure: Error, CustomStringConvertible {
        var description: String { "db password is hunter2" }
    }

    static func router(gate: Gate? = nil, arrived: Gate? = nil, barrier: Barrier? = nil) -> Router {
        var router = Router()
        router.get("/devices/:id") { request in .text("device \(request.pathParameter("id"))") }
        router.get("/devices/current") { _ in .text("current device") }
        router.post("/echo") { request in
            var echo = try request.decodeJSON(Echo.self)
            echo.count += 1
            return try .json(echo)
        }
        router.post("/form") { request in
            let form = try request.formParameters()
            return try .json(["grant_type": form.required("grant_type"), "scope": form.optional("scope") ?? "-"])
        }
        router.get("/search") { request in try .json(request.query.values(for: "q")) }
        router.get("/headers") { request in
            try .json([
                "custom": request.headers["X-CUSTOM-HEADER"] ?? "",
                "lower": request.headers["x-custom-header"] ?? "",
                "id": request.id,
                "remote": request.remoteAddress ?? "",
            ])
        }
        router.get("/ping") { _ in .text("pong") }
        router.get("/long-poll") { _ in
            // Waits for an event that never comes; only cancellation ends it.
            await arrived?.open()
            let (events, _) = AsyncStream<Int>.makeStream()
            for await _ in events {}
            return .text(Task.isCancelled ? "cancelled" : "event", status: Task.isCancelled ? .serviceUnavailable : .ok)
        }
        router.post("/size") { request in .text(String(request.body.count)) }
        router.get("/conflict") { _ in throw Conflict() }
        router.get("/http-error") { _ in throw HTTPError(.forbidden, code: "access_denied", description: "denied") }
        router.get("/secret-failure") { _ in throw SecretFailure() }
        router.get("/bad-header") { _ in .text("x", headers: ["X-Injected": "a\r\nSet-Cookie: evil=1"]) }
        router.get("/gated") { _ in
            await arrived?.open()
            await gate?.wait()
            return .text("released")
        }
        router.get("/together/:n") { request in
            await barrier?.arriveAndWait()
            return .text(request.pathParameter("n"))
        }
        return router
    }

    let client = HTTPClient()

    func get(_ url: URL, headers: HTTPHeaders = [:]) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(url: url, headers: headers))
    }

    func errorCode(_ response: HTTPClientResponse) throws -> String? {
        try response.decodeJSON([String: String].self)["error"]
    }

    @Test func routesWithPathParameters() async throws {
        try await withServer(Self.router()) { _, url in
            let device = try await get(url.path("/devices/d%2042"))
            #expect(device.status == .ok)
            #expect(String(decoding: device.body, as: UTF8.self) == "device d 42")
            let current = try await get(url.path("/devices/current"))
            #expect(String(decoding: current.body, as: UTF8.self) == "current device")
        }
    }

    @Test func unknownPathIs404AndWrongMethodIs405() async throws {
        try await withServer(Self.router()) { _, url in
            let missing = try await get(url.path("/nope"))
            #expect(missing.status == .notFound)
            #expect(try errorCode(missing) == "not_found")
            let wrong = try await client.send(HTTPClientRequest(method: .delete, url: url.path("/echo")))
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers["allow"] == "POST")
        }
    }

    @Test func jsonRoundTrip() async throws {
        try await withServer(Self.router()) { _, url in
            let sent = Echo(name: "ünïcode/✓", count: 41, tags: ["a", "b"])
            let response = try await client.send(.json(url: url.path("/echo"), value: sent))
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(try response.decodeJSON(Echo.self) == Echo(name: sent.name, count: 42, tags: sent.tags))
            // Sorted keys: the bytes are stable.
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"count":42,"name":"ünïcode/✓","tags":["a","b"]}"#)
        }
    }

    @Test func malformedJSONIs400WithTypedError() async throws {
        try await withServer(Self.router()) { _, url in
            let broken = try await client.send(HTTPClientRequest(
                method: .post, url: url.path("/echo"), headers: ["Content-Type": "application/json"], body: Array("{\"name\":".utf8)))
            #expect(broken.status == .badRequest)
            #expect(try broken.decodeJSON([String: String].self) == JSONDecodingError.invalidJSON.httpResponseFields)

            let missing = try await client.send(.json(url: url.path("/echo"), value: ["name": "x"]))
            #expect(missing.status == .badRequest)
            #expect(try missing.decodeJSON([String: String].self) == JSONDecodingError.missingField("count").httpResponseFields)

            let wrongType = try await client.send(HTTPClientRequest(
                method: .post, url: url.path("/echo"), headers: ["Content-Type": "text/plain"], body: Array("{}".utf8)))
            #expect(wrongType.status == .unsupportedMediaType)
        }
    }

    @Test func bodyOverLimitIs413BeforeTheHandler() async throws {
        let logs = LogCollector()
        let configuration = HTTPServer.Configuration(maxBodySize: 1024)
        try await withServer(Self.router(), configuration: configuration, logs: logs) { server, url in
            let fits = try await client.send(HTTPClientRequest(method: .post, url: url.path("/size"), body: Array(repeating: 7, count: 1024)))
            #expect(fits.status == .ok)
            #expect(String(decoding: fits.body, as: UTF8.self) == "1024")

            let tooBig = try await client.send(HTTPClientRequest(method: .post, url: url.path("/size"), body: Array(repeating: 7, count: 1025)))
            #expect(tooBig.status == .contentTooLarge)
            #expect(tooBig.headers["X-Request-Id"] != nil)

            // A declared length far beyond the limit is refused from the headers alone: the body is never sent.
            let port = try #require(server.port)
            let raw = try await blocking {
                let connection = try RawConnection(port: port)
                try connection.send("POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(raw.status == 413)
        }
        #expect(logs.all.filter { $0.status == 413 }.count == 2)
    }

    @Test func chunkedBodyOverLimitLosesItsConnection() async throws {
        let configuration = HTTPServer.Configuration(maxBodySize: 1024)
        try await withServer(Self.router(), configuration: configuration) { server, _ in
            let port = try #require(server.port)
            let closed = try await blocking {
                let connection = try RawConnection(port: port)
                try connection.send("POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                let chunk = String(repeating: "z", count: 2048)
                try connection.send("800\r\n\(chunk)\r\n")
                return connection.isClosedByPeer()
            }
            #expect(closed)
        }
    }

    @Test func chunkedBodyWithinLimitIsReassembled() async throws {
        try await withServer(Self.router()) { server, _ in
            let port = try #require(server.port)
            let response = try await blocking {
                let connection = try RawConnection(port: port)
                try connection.send("POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "11")
        }
    }

    @Test func formParsingAndDuplicateDetection() async throws {
        try await withServer(Self.router()) { _, url in
            let form = FormParameters([.init(name: "grant_type", value: "urn:openid:params:grant-type:ciba"), .init(name: "scope", value: "openid email")])
            let ok = try await client.send(.form(url: url.path("/form"), form: form))
            #expect(ok.status == .ok)
            #expect(try ok.decodeJSON([String: String].self) == ["grant_type": "urn:openid:params:grant-type:ciba", "scope": "openid email"])

            let duplicate = try await client.send(HTTPClientRequest(
                method: .post, url: url.path("/form"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("grant_type=a&grant_type=b".utf8)))
            #expect(duplicate.status == .badRequest)
            #expect(try duplicate.decodeJSON([String: String].self)["error_description"] == "parameter 'grant_type' is repeated")

            let missing = try await client.send(.form(url: url.path("/form"), form: FormParameters([.init(name: "scope", value: "x")])))
            #expect(missing.status == .badRequest)

            let json = try await client.send(.json(url: url.path("/form"), value: ["grant_type": "x"]))
            #expect(json.status == .unsupportedMediaType)
        }
    }

    @Test func queryIsParsedAndMalformedQueryIs400() async throws {
        try await withServer(Self.router()) { _, url in
            let response = try await get(url.path("/search?q=a+b&q=%C3%A9"))
            #expect(try response.decodeJSON([String].self) == ["a b", "é"])
            let malformed = try await get(url.path("/search?q=%E0%A4"))
            #expect(malformed.status == .badRequest)
        }
    }

    @Test func sixtyFourConcurrentRequestsAllAnsweredCorrectly() async throws {
        try await withServer(Self.router()) { _, url in
            let client = self.client
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let sent = Echo(name: "request-\(index)", count: index, tags: [String(index)])
                        let response = try await client.send(.json(url: url.path("/echo"), value: sent))
                        return response.status == .ok
                            && (try? response.decodeJSON(Echo.self)) == Echo(name: sent.name, count: index + 1, tags: sent.tags)
                    }
                }
                var correct = 0
                for try await ok in group where ok { correct += 1 }
                #expect(correct == 64)
            }
        }
    }

    @Test func handlersRunConcurrently() async throws {
        // Each handler waits until all 16 are inside: this only completes if they overlap.
        let barrier = Barrier(count: 16)
        try await withServer(Self.router(barrier: barrier)) { _, url in
            let client = self.client
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        String(decoding: try await client.send(HTTPClientRequest(url: url.path("/together/\(index)"))).body, as: UTF8.self)
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(answers == Set((0..<16).map(String.init)))
        }
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await withServer(Self.router()) { server, _ in
            let port = try #require(server.port)
            let responses = try await blocking {
                let connection = try RawConnection(port: port)
                var responses: [RawConnection.Response] = []
                for index in 0..<3 {
                    try connection.send("GET /devices/k\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
                    responses.append(try connection.readResponse())
                }
                // Pipelined: two requests in one write, two responses in order.
                try connection.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\nGET /devices/last HTTP/1.1\r\nHost: x\r\n\r\n")
                responses.append(try connection.readResponse())
                responses.append(try connection.readResponse())
                return responses
            }
            #expect(responses.map(\.status) == [200, 200, 200, 200, 200])
            #expect(responses.map { String(decoding: $0.body, as: UTF8.self) } == ["device k0", "device k1", "device k2", "pong", "device last"])
            #expect(responses.allSatisfy { $0.headers["connection"]?.lowercased() != "close" })
        }
    }

    @Test func headersAreCaseInsensitiveAndRequestIdIsReturnedAndLogged() async throws {
        let logs = LogCollector()
        try await withServer(Self.router(), logs: logs) { _, url in
            let response = try await get(url.path("/headers"), headers: ["x-CuStOm-HeAdEr": "v1", "Authorization": "Bearer top-secret"])
            let seen = try response.decodeJSON([String: String].self)
            #expect(seen["custom"] == "v1")
            #expect(seen["lower"] == "v1")
            #expect(seen["remote"] == "127.0.0.1")
            let id = try #require(response.headers["x-request-id"])
            #expect(id.count == 32)
            #expect(seen["id"] == id)
            let other = try await get(url.path("/headers"))
            #expect(other.headers["X-Request-Id"] != id)
        }
        let entries = logs.all
        #expect(entries.count == 2)
        let first = try #require(entries.first)
        #expect(first.method == "GET")
        #expect(first.path == "/headers")
        #expect(first.status == 200)
        #expect(!entries.map(\.line).joined().contains("top-secret"))
    }

    @Test func logNeverContainsQueryOrBody() async throws {
        let logs = LogCollector()
        try await withServer(Self.router(), logs: logs) { _, url in
            _ = try await get(url.path("/search?q=secret-query"))
            _ = try await client.send(.json(url: url.path("/echo"), value: Echo(name: "secret-body", count: 1, tags: [])))
        }
        let lines = logs.all.map(\.line).joined(separator: "\n")
        #expect(logs.all.map(\.path) == ["/search", "/echo"])
        #expect(!lines.contains("secret"))
    }

    @Test func thrownErrorsMapToTheirResponses() async throws {
        try await withServer(Self.router()) { _, url in
            let conflict = try await get(url.path("/conflict"))
            #expect(conflict.status == .conflict)
            #expect(conflict.headers["X-Why"] == "dup")
            #expect(String(decoding: conflict.body, as: UTF8.self) == "already there")
            #expect(conflict.headers["X-Request-Id"] != nil)

            let denied = try await get(url.path("/http-error"))
            #expect(denied.status == .forbidden)
            #expect(try denied.decodeJSON([String: String].self) == ["error": "access_denied", "error_description": "denied"])
            #expect(denied.headers["Cache-Control"] == "no-store")
        }
    }

    @Test func unknownErrorIs500WithoutDetails() async throws {
        let logs = LogCollector()
        try await withServer(Self.router(), logs: logs) { _, url in
            let response = try await get(url.path("/secret-failure"))
            #expect(response.status == .internalServerError)
            #expect(try response.decodeJSON([String: String].self) == ["error": "server_error", "error_description": "internal error"])
            #expect(!String(decoding: response.body, as: UTF8.self).contains("hunter2"))
        }
        let entry = try #require(logs.all.first)
        #expect(entry.status == 500)
        #expect(entry.errorType?.hasSuffix("SecretFailure") == true)
        #expect(!entry.line.contains("hunter2"))
    }

    @Test func headerInjectionBecomes500() async throws {
        try await withServer(Self.router()) { _, url in
            let response = try await get(url.path("/bad-header"))
            #expect(response.status == .internalServerError)
            #expect(response.headers["Set-Cookie"] == nil)
        }
    }

    @Test func stopWaitsForInFlightHandlersThenRefusesConnections() async throws {
        let gate = Gate(), arrived = Gate()
        let server = HTTPServer(logger: .disabled, router: Self.router(gate: gate, arrived: arrived))
        try server.start()
        let url = try #require(server.baseURL)
        let port = try #require(server.port)
        let client = self.client

        // A second, kept-alive connection observes when stopping begins (its requests turn 503).
        let observer = try await blocking { try RawConnection(port: port) }
        let gated = Task { try await client.send(HTTPClientRequest(url: url.path("/gated"))) }
        await arrived.wait()
        let stopped = Flag()
        let stopping = Task {
            await server.stop()
            stopped.set()
        }
        var status = 200
        while status == 200 {
            status = try await blocking {
                try observer.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                return try observer.readResponse().status
            }
        }
        #expect(status == 503)
        #expect(!stopped.isSet, "stop() returned while a handler was still running")

        await gate.open()
        let response = try await gated.value
        #expect(response.status == .ok)
        #expect(String(decoding: response.body, as: UTF8.self) == "released")
        await stopping.value
        #expect(stopped.isSet)
        #expect(server.port == nil)
        await #expect(throws: HTTPClientError.self) { try await client.send(HTTPClientRequest(url: url.path("/ping"), timeout: .seconds(5))) }
    }

    /// The graceful stop: a request in flight when draining begins completes; a new one, on a new connection, is
    /// answered at once with 503, `Retry-After` and `Connection: close` (the server still accepts, so the client hears
    /// why); then the server stops.
    @Test func drainingFinishesInFlightRequestsAndRefusesNewOnesWithRetryAfter() async throws {
        let gate = Gate(), arrived = Gate()
        let server = HTTPServer(logger: .disabled, router: Self.router(gate: gate, arrived: arrived))
        try server.start()
        let url = try #require(server.baseURL)
        let client = self.client
        let gated = Task { try await client.send(HTTPClientRequest(url: url.path("/gated"))) }
        await arrived.wait()
        let stopped = Flag()
        server.beginDraining()
        let stopping = Task {
            await server.stop(gracePeriod: .seconds(3600))
            stopped.set()
        }
        let refused = try await HTTPClient().send(HTTPClientRequest(url: url.path("/ping")))
        #expect(refused.status == .serviceUnavailable)
        #expect(refused.headers.retryAfterSeconds == HTTPError.unavailableRetryAfter)
        #expect(refused.headers["Connection"]?.lowercased() == "close")
        #expect(try refused.decodeJSON([String: String].self)["error"] == "temporarily_unavailable")
        #expect(!stopped.isSet, "the drain ended while a request was in flight")

        await gate.open()
        let response = try await gated.value
        #expect(response.status == .ok)
        #expect(String(decoding: response.body, as: UTF8.self) == "released")
        await stopping.value
        #expect(server.port == nil)
    }

    /// Past the grace period the handlers still running are cancelled: a long poll answers at once.
    @Test func drainingPastTheGracePeriodCancelsWhatStillRuns() async throws {
        let arrived = Gate()
        let server = HTTPServer(logger: .disabled, router: Self.router(arrived: arrived))
        try server.start()
        let url = try #require(server.baseURL)
        let client = self.client
        let poll = Task { try await client.send(HTTPClientRequest(url: url.path("/long-poll"))) }
        await arrived.wait()
        await server.stop(gracePeriod: .zero)
        let response = try await poll.value
        #expect(response.status == .serviceUnavailable)
        #expect(String(decoding: response.body, as: UTF8.self) == "cancelled")
    }

    @Test func retryAfterIsReadAsDelaySecondsOnly() {
        let cases: [(String, Int?)] = [("1", 1), (" 30 ", 30), ("0", 0), ("86400", 86_400), ("86401", nil), ("-1", nil), ("1.5", nil),
                                       ("", nil), ("1 2", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("999999999999", nil)]
        for (value, expected) in cases {
            #expect(HTTPHeaders([("Retry-After", value)]).retryAfterSeconds == expected, "\(value)")
        }
        #expect(HTTPHeaders().retryAfterSeconds == nil)
    }

    @Test func stopCancellingHandlersEndsLongPolls() async throws {
        let arrived = Gate()
        let server = HTTPServer(logger: .disabled, router: Self.router(arrived: arrived))
        try server.start()
        let url = try #require(server.baseURL)
        let client = self.client
        let poll = Task { try await client.send(HTTPClientRequest(url: url.path("/long-poll"))) }
        await arrived.wait()
        await server.stop(cancellingHandlers: true)
        let response = try await poll.value
        #expect(response.status == .serviceUnavailable)
        #expect(String(decoding: response.body, as: UTF8.self) == "cancelled")
    }

    @Test func releasingARunningServerAnswersInFlightRequestsAndDoesNotCrash() async throws {
        let gate = Gate(), arrived = Gate()
        var server: HTTPServer? = HTTPServer(logger: .disabled, router: Self.router(gate: gate, arrived: arrived))
        try server?.start()
        let url = try #require(server?.baseURL)
        let client = self.client
        let gated = Task { try? await client.send(HTTPClientRequest(url: url.path("/gated"), timeout: .seconds(10))) }
        await arrived.wait()
        server = nil
        // The handler finishes after the daemon is gone: its late response must be dropped safely.
        await gate.open()
        let response = await gated.value
        #expect(response == nil || response?.status == .serviceUnavailable)
    }

    /// Handlers resume their suspended connections after their own lock: a server released while many finish at once
    /// waits for those resumes before it stops the daemon (libmicrohttpd aborts the process on a connection resumed
    /// after it stopped). Every request gets its answer, a 503, or its connection closed.
    @Test func releasingAServerWhileHandlersFinishDoesNotCrash() async throws {
        let client = self.client
        for _ in 0..<8 {
            let handlers = 12  // within the client's 16 connections to one host, so every request reaches its handler
            let barrier = Barrier(count: handlers + 1)
            var router = Router()
            router.get("/burst") { _ in
                await barrier.arriveAndWait()
                return .text("done")
            }
            var server: HTTPServer? = HTTPServer(logger: .disabled, router: router)
            try server?.start()
            let url = try #require(server?.baseURL)
            let requests = (0..<handlers).map { _ in
                Task { try? await client.send(HTTPClientRequest(url: url.path("/burst"), timeout: .seconds(10))) }
            }
            // Every handler waits in the barrier; this arrival lets them all finish while the server is released.
            await barrier.arriveAndWait()
            server = nil
            for request in requests {
                let status = await request.value?.status
                #expect(status == nil || status == .ok || status == .serviceUnavailable)
            }
        }
    }

    @Test func idleConnectionIsClosedAfterTheTimeout() async throws {
        let configuration = HTTPServer.Configuration(connectionTimeout: .milliseconds(300))
        try await withServer(Self.router(), configuration: configuration) { server, _ in
            let port = try #require(server.port)
            let clock = ContinuousClock()
            let start = clock.now
            // Blocks in recv until the server closes the idle connection (bounded by SO_RCVTIMEO).
            let closed = try await blocking { try RawConnection(port: port).isClosedByPeer() }
            #expect(closed)
            #expect(clock.now - start < .seconds(15), "closed by the server's timeout, not the test's receive bound")
        }
    }

    @Test func connectionsBeyondTheLimitWaitForAFreeSlot() async throws {
        let configuration = HTTPServer.Configuration(connectionLimit: 2, threadPoolSize: 1)
        try await withServer(Self.router(), configuration: configuration) { server, _ in
            let port = try #require(server.port)
            let (servedWhileFull, servedAfterwards) = try await blocking {
                // A request on each proves the server has accepted both before the third arrives.
                let a = try RawConnection(port: port), b = try RawConnection(port: port)
                for connection in [a, b] {
                    try connection.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                    _ = try connection.readResponse()
                }
                // At the limit libmicrohttpd stops accepting: the third waits in the kernel backlog.
                let third = try RawConnection(port: port)
                try third.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                third.setReceiveTimeout(milliseconds: 300)
                let servedWhileFull = (try? third.readResponse()) != nil
                // Closing one admitted connection frees a slot and the third is served.
                shutdown(a.fd, Int32(SHUT_RDWR))
                third.setReceiveTimeout(milliseconds: 20_000)
                let servedAfterwards = try third.readResponse().status
                withExtendedLifetime(b) {}
                return (servedWhileFull, servedAfterwards)
            }
            #expect(!servedWhileFull)
            #expect(servedAfterwards == 200)
        }
    }

    @Test func oversizedRequestHeadIsRefusedWithoutReachingAHandler() async throws {
        let logs = LogCollector()
        try await withServer(Self.router(), logs: logs) { server, _ in
            let port = try #require(server.port)
            let longPath = "/devices/" + String(repeating: "a", count: 64 * 1024)
            let status = try await blocking { () -> Int? in
                let connection = try RawConnection(port: port)
                try? connection.send("GET \(longPath) HTTP/1.1\r\nHost: x\r\n\r\n")
                return try? connection.readResponse().status
            }
            // libmicrohttpd answers 414 (or drops the connection); either way no handler ran.
            #expect(status == nil || status == 414)
        }
        #expect(logs.all.isEmpty)
    }

    @Test func headIsAnsweredByTheGetRouteWithoutABody() async throws {
        try await withServer(Self.router()) { server, _ in
            let port = try #require(server.port)
            let response = try await blocking {
                let connection = try RawConnection(port: port)
                try connection.send("HEAD /ping HTTP/1.1\r\nHost: x\r\n\r\nGET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                // The HEAD response announces 4 bytes but carries none: read its head, then the GET.
                var head = try connection.readHead()
                let get = try connection.readResponse()
                head.body = get.body
                return (head, get)
            }
            #expect(response.0.status == 200)
            #expect(response.0.headers["content-length"] == "4")
            #expect(String(decoding: response.1.body, as: UTF8.self) == "pong")
        }
    }

    /// Why the HEAD test above once failed about one run in three under load: when both answers reached the socket
    /// before the client read, one read took them both and the raw client then waited for bytes that never came.
    /// Here both answers always arrive in one write, then the connection closes.
    @Test func rawClientReadsPipelinedAnswersThatArriveInOneRead() async throws {
        let answers = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n" + "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"
        try await withScriptedServer(.answer(Array(answers.utf8))) { server in
            let (head, get) = try await blocking {
                let connection = try RawConnection(port: server.port)
                try connection.send("HEAD /ping HTTP/1.1\r\nHost: x\r\n\r\n")
                return (try connection.readHead(), try connection.readResponse())
            }
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(String(decoding: get.body, as: UTF8.self) == "pong")
        }
    }

    /// Containers often run without IPv6; the IPv6 test needs a `::1` on loopback.
    static let hasIPv6Loopback = (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?
        .contains("00000000000000000000000000000001") ?? false

    @Test(.enabled(if: hasIPv6Loopback)) func servesIPv6() async throws {
        try await withServer(Self.router(), configuration: .init(host: "::1")) { server, url in
            #expect(url.absoluteString.hasPrefix("http://[::1]:"))
            // swift-corelibs-foundation's URLSession refuses IPv6-literal URLs, so a raw socket it is.
            let port = try #require(server.port)
            let response = try await blocking {
                let connection = try RawConnection(port: port, host: "::1")
                try connection.send("GET /headers HTTP/1.1\r\nHost: x\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(try JSONBody.decode([String: String].self, from: response.body)["remote"] == "::1")
        }
    }

    @Test func startFailsOnInvalidHostAndBusyPort() async throws {
        let bad = HTTPServer(configuration: .init(host: "localhost"), logger: .disabled) { _ in .empty() }
        #expect(throws: HTTPServerError.invalidHost("localhost")) { try bad.start() }

        try await withServer(Self.router()) { server, _ in
            let port = try #require(server.port)
            let second = HTTPServer(configuration: .init(port: port), logger: .disabled) { _ in .empty() }
            #expect {
                try second.start()
            } throws: { error in
                guard case .startFailed(_, let failedPort, let code) = error as? HTTPServerError else { return false }
                return failedPort == port && code == EADDRINUSE
            }
            #expect(throws: HTTPServerError.alreadyStarted) { try server.start() }
        }
    }
}

extension JSONDecodingError {
    /// The error body this error produces, for comparing with what came over the wire.
    var httpResponseFields: [String: String] {
        (try? JSONBody.decode([String: String].self, from: httpResponse.body)) ?? [:]
    }
}
