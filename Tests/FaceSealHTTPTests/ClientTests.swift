import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// The libcurl client against FaceSealHTTP's own server over loopback.
@Suite struct ClientTests {
    static func router(gate: Gate, arrived: Gate = Gate()) -> Router {
        var router = Router()
        router.get("/big/:n") { request in
            HTTPResponse(body: Array(repeating: 0x61, count: Int(request.pathParameter("n")) ?? 0))
        }
        router.get("/slow") { _ in
            await arrived.open()
            await gate.wait()
            return .text("late")
        }
        router.get("/redirect") { _ in .empty(.found, headers: ["Location": "http://127.0.0.1:1/elsewhere"]) }
        router.put("/echo") { request in
            HTTPResponse(headers: ["Content-Type": request.headers["Content-Type"] ?? "", "X-Method": request.method.rawValue], body: request.body)
        }
        for method in [HTTPMethod.get, .post, .put, .patch, .delete] {
            router.on(method, "/inspect") { request in
                try .json([
                    "method": request.method.rawValue,
                    "content-length": request.headers["Content-Length"] ?? "-",
                    "content-type": request.headers["Content-Type"] ?? "-",
                    "expect": request.headers["Expect"] ?? "-",
                    "authorization": request.headers["Authorization"] ?? "-",
                    "empty": request.headers["X-Empty"] ?? "-",
                    "body": String(decoding: request.body, as: UTF8.self),
                ])
            }
        }
        router.get("/headers/:n") { request in
            let count = Int(request.pathParameter("n")) ?? 0
            return .text("ok", headers: HTTPHeaders((0..<count).map { ("X-Filler-\($0)", String(repeating: "f", count: 100)) }))
        }
        router.get("/close") { _ in .text("bye", headers: ["Connection": "close"]) }
        return router
    }

    @Test func sendsMethodHeadersAndBodyAndReadsThemBack() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient()
            let response = try await client.send(HTTPClientRequest(
                method: .put, url: url.path("/echo"), headers: ["Content-Type": "application/octet-stream"], body: [0, 1, 2, 255]))
            #expect(response.status == .ok)
            #expect(response.body == [0, 1, 2, 255])
            #expect(response.headers["x-method"] == "PUT")
            #expect(response.headers["CONTENT-TYPE"] == "application/octet-stream")
        }
    }

    /// Each method goes out as itself, a body with an exact Content-Length and no libcurl defaults
    /// (no form Content-Type, no `Expect: 100-continue`).
    @Test(arguments: [(HTTPMethod.get, ""), (.post, "{}"), (.post, ""), (.put, "x"), (.patch, "patch"), (.delete, "")])
    func methodsGoOutAsWritten(_ method: HTTPMethod, _ body: String) async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let response = try await HTTPClient().send(HTTPClientRequest(method: method, url: url.path("/inspect"), body: Array(body.utf8)))
            let seen = try response.decodeJSON([String: String].self)
            #expect(seen["method"] == method.rawValue)
            #expect(seen["body"] == body)
            #expect(seen["content-type"] == "-")
            #expect(seen["expect"] == "-")
            let carriesBody = !body.isEmpty || method == .post || method == .put || method == .patch
            #expect(seen["content-length"] == (carriesBody ? String(body.utf8.count) : "-"))
        }
    }

    /// One client reuses its easy handles: a request's method, body, headers and limits never reach the next one.
    @Test func optionsOfOneRequestNeverReachTheNext() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient(configuration: .init(maxResponseBodySize: 4096, maxConnectionsPerHost: 1))
            func inspect(_ method: HTTPMethod, _ body: String = "", headers: HTTPHeaders = [:]) async throws -> [String: String] {
                try await client.send(HTTPClientRequest(method: method, url: url.path("/inspect"), headers: headers, body: Array(body.utf8)))
                    .decodeJSON([String: String].self)
            }
            let posted = try await inspect(.post, "secret=1", headers: ["Authorization": "Bearer t", "Content-Type": "text/plain"])
            #expect(posted["method"] == "POST" && posted["body"] == "secret=1" && posted["authorization"] == "Bearer t")
            let head = try await client.send(HTTPClientRequest(method: .head, url: url.path("/big/5000")))
            #expect(head.status == .ok && head.body.isEmpty)
            for (method, body) in [(HTTPMethod.get, ""), (.patch, "p"), (.delete, ""), (.post, ""), (.get, "")] {
                let seen = try await inspect(method, body)
                #expect(seen["method"] == method.rawValue)
                #expect(seen["body"] == body)
                #expect(seen["authorization"] == "-")
                #expect(seen["content-type"] == "-")
                #expect(seen["content-length"] == (body.isEmpty && method != .post ? "-" : String(body.utf8.count)))
            }
            // The HEAD request's lifted body limit is not left behind either.
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 4096)) {
                try await client.send(HTTPClientRequest(url: url.path("/big/5000")))
            }
            #expect(try await client.send(HTTPClientRequest(url: url.path("/big/4096"))).body.count == 4096)
        }
    }

    @Test func emptyHeaderValueIsSentAndCallerFramingHeadersAreReplaced() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let request = HTTPClientRequest(method: .post, url: url.path("/inspect"),
                                            headers: ["X-Empty": "", "Content-Length": "999", "Content-Type": "text/plain"], body: Array("abc".utf8))
            let seen = try await HTTPClient().send(request).decodeJSON([String: String].self)
            #expect(seen["empty"] == "")
            #expect(seen["content-length"] == "3")
            #expect(seen["content-type"] == "text/plain")
            #expect(seen["body"] == "abc")
        }
    }

    @Test func headResponseHasNoBody() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let response = try await HTTPClient(configuration: .init(maxResponseBodySize: 10))
                .send(HTTPClientRequest(method: .head, url: url.path("/big/5000")))
            #expect(response.status == .ok)
            #expect(response.body.isEmpty)
            #expect(response.headers["Content-Length"] == "5000")
        }
    }

    @Test func responseOverTheLimitIsRefused() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient(configuration: .init(maxResponseBodySize: 1024))
            let fits = try await client.send(HTTPClientRequest(url: url.path("/big/1024")))
            #expect(fits.body.count == 1024)
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 1024)) {
                try await client.send(HTTPClientRequest(url: url.path("/big/1025")))
            }
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 1024)) {
                try await client.send(HTTPClientRequest(url: url.path("/big/3000000")))
            }
            // A per-request limit overrides the client's, both ways.
            let raised = try await client.send(HTTPClientRequest(url: url.path("/big/4096"), maxResponseBodySize: 4096))
            #expect(raised.body.count == 4096)
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 10)) {
                try await client.send(HTTPClientRequest(url: url.path("/big/11"), maxResponseBodySize: 10))
            }
            // The client still works after refusing.
            let after = try await client.send(HTTPClientRequest(url: url.path("/big/3")))
            #expect(after.body == Array("aaa".utf8))
        }
    }

    @Test func responseHeadOverTheLimitIsRefused() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient(configuration: .init(maxResponseHeadSize: 4096))
            let fits = try await client.send(HTTPClientRequest(url: url.path("/headers/20")))
            #expect(fits.headers["X-Filler-19"]?.count == 100)
            await #expect(throws: HTTPClientError.responseHeadTooLarge(limit: 4096)) {
                try await client.send(HTTPClientRequest(url: url.path("/headers/60")))
            }
        }
    }

    @Test func largeBodiesTravelBothWaysIntact() async throws {
        let configuration = HTTPServer.Configuration(maxBodySize: 8 << 20)
        try await withServer(Self.router(gate: Gate()), configuration: configuration) { _, url in
            var generator = SystemRandomNumberGenerator()
            let payload = (0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let response = try await HTTPClient().send(HTTPClientRequest(
                method: .put, url: url.path("/echo"), headers: ["Content-Type": "application/octet-stream"], body: payload))
            #expect(response.body.count == payload.count)
            #expect(response.body == payload)
        }
    }

    @Test func keepAliveConnectionIsReused() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient()
            for n in 1...5 {
                let response = try await client.send(HTTPClientRequest(url: url.path("/big/\(n)")))
                #expect(response.body.count == n)
            }
            #expect(client.connectionsOpened == 1)
            // A server that closes the connection makes the next request open a new one.
            _ = try await client.send(HTTPClientRequest(url: url.path("/close")))
            _ = try await client.send(HTTPClientRequest(url: url.path("/big/1")))
            #expect(client.connectionsOpened == 2)
        }
    }

    @Test func deadlinePassingIsATimeout() async throws {
        let gate = Gate()
        try await withServer(Self.router(gate: gate)) { _, url in
            let client = HTTPClient()
            await #expect(throws: HTTPClientError.timeout) {
                try await client.send(HTTPClientRequest(url: url.path("/slow"), timeout: .milliseconds(200)))
            }
            await gate.open()
        }
    }

    /// More requests at once than connections to one host: each waits its turn in the client's own queue and is
    /// answered, over no more connections than allowed. (libcurl 7.88's queue, used before, left the last few of
    /// such a burst unsent until their deadline, about one run in fifteen of the 64-request server test.)
    @Test func requestsBeyondTheConnectionLimitWaitTheirTurn() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let client = HTTPClient(configuration: .init(maxConnectionsPerHost: 2))
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 1...40 {
                    group.addTask { try await client.send(HTTPClientRequest(url: url.path("/big/\(n)"), timeout: .seconds(10))).body.count }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes.sorted() == Array(1...40))
            #expect(client.connectionsOpened <= 2)
        }
    }

    /// Transfers the server holds open (as the outbox's long polls are) cost the others nothing and hold none of them
    /// up: with 24 held, 200 more are answered on the same client; the held ones complete once the server lets them go.
    @Test func heldTransfersDoNotHoldUpTheOthers() async throws {
        let gate = Gate(), arrivals = Arrivals()
        var router = Self.router(gate: Gate())
        router.get("/held") { _ in
            await arrivals.arrive()
            await gate.wait()
            return .text("late")
        }
        try await withServer(router) { _, url in
            let client = HTTPClient(configuration: .init(maxConnectionsPerHost: 64))
            let held = (0..<24).map { _ in Task { try await client.send(HTTPClientRequest(url: url.path("/held"), timeout: .seconds(30))) } }
            await arrivals.wait(for: 24)
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 1...200 {
                    group.addTask { try await client.send(HTTPClientRequest(url: url.path("/big/\(n % 40 + 1)"), timeout: .seconds(10))).body.count }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes.sorted() == (1...200).map { $0 % 40 + 1 }.sorted())
            await gate.open()
            for task in held { #expect(try await task.value.body == Array("late".utf8)) }
            #expect(client.connectionsOpened <= 64)
        }
    }

    @Test func aRequestWaitingForAConnectionKeepsItsOwnDeadline() async throws {
        let gate = Gate()
        let arrived = Gate()
        try await withServer(Self.router(gate: gate, arrived: arrived)) { _, url in
            let client = HTTPClient(configuration: .init(maxConnectionsPerHost: 1))
            let held = Task { try await client.send(HTTPClientRequest(url: url.path("/slow"), timeout: .seconds(30))) }
            await arrived.wait()
            await #expect(throws: HTTPClientError.timeout) {
                try await client.send(HTTPClientRequest(url: url.path("/big/1"), timeout: .milliseconds(200)))
            }
            await gate.open()
            let late = try await held.value
            #expect(late.body == Array("late".utf8))
            let after = try await client.send(HTTPClientRequest(url: url.path("/big/3")))
            #expect(after.body.count == 3)
        }
    }

    @Test func closedPortIsConnectionRefused() async throws {
        // Take a port the kernel just gave out, then release it: nothing listens there now.
        let server = HTTPServer(logger: .disabled) { _ in .empty() }
        try server.start()
        let url = try #require(server.baseURL)
        await server.stop()
        let port = try #require(url.port)
        await #expect(throws: HTTPClientError.connectionRefused("127.0.0.1:\(port)")) {
            try await HTTPClient().send(HTTPClientRequest(url: url.path("/"), timeout: .seconds(5)))
        }
    }

    @Test func unknownHostIsHostNotFound() async throws {
        // `.invalid` never resolves (RFC 6761 §6.4).
        let url = try #require(URL(string: "http://faceseal-test.invalid/x"))
        await #expect(throws: HTTPClientError.hostNotFound("faceseal-test.invalid")) {
            try await HTTPClient().send(HTTPClientRequest(url: url, timeout: .seconds(20)))
        }
    }

    @Test func redirectsAreNotFollowed() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let response = try await HTTPClient().send(HTTPClientRequest(url: url.path("/redirect"), headers: ["Authorization": "Bearer t"]))
            #expect(response.status == .found)
            #expect(response.headers["Location"] == "http://127.0.0.1:1/elsewhere")
        }
    }

    @Test func cancellationBeforeSendingIsReported() async throws {
        let gate = Gate()
        try await withServer(Self.router(gate: gate)) { _, url in
            let client = HTTPClient()
            let task = Task { try await client.send(HTTPClientRequest(url: url.path("/slow"))) }
            task.cancel()
            await #expect(throws: HTTPClientError.cancelled) { try await task.value }
            await gate.open()
        }
    }

    /// The request is on the wire and the server holds it; cancelling the task aborts the transfer at once
    /// (long before its 60 s deadline, which would end it as `.timeout`), and the client goes on working.
    @Test func cancellationAbortsATransferInFlight() async throws {
        let gate = Gate(), arrived = Gate()
        try await withServer(Self.router(gate: gate, arrived: arrived)) { _, url in
            let client = HTTPClient()
            let task = Task { try await client.send(HTTPClientRequest(url: url.path("/slow"), timeout: .seconds(60))) }
            await arrived.wait()
            task.cancel()
            await #expect(throws: HTTPClientError.cancelled) { try await task.value }
            await gate.open()
            let after = try await client.send(HTTPClientRequest(url: url.path("/big/2")))
            #expect(after.body.count == 2)
        }
    }

    @Test func ipv6LiteralURLIsUsed() async throws {
        try await withServer(Self.router(gate: Gate()), configuration: HTTPServer.Configuration(host: "::1")) { server, _ in
            let port = try #require(server.port)
            let url = try #require(URL(string: "http://[::1]:\(port)/big/4"))
            let response = try await HTTPClient().send(HTTPClientRequest(url: url))
            #expect(response.body.count == 4)
        }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "http:///nohost", "gopher://127.0.0.1:70/"])
    func nonHTTPURLIsRefused(_ text: String) async throws {
        let url = try #require(URL(string: text))
        await #expect(throws: HTTPClientError.invalidURL(text)) { try await HTTPClient().send(HTTPClientRequest(url: url)) }
    }

    @Test func headersThatWouldSplitTheRequestAreRefusedBeforeConnecting() async throws {
        try await withScriptedServer(.hangUp) { server in
            let client = HTTPClient()
            for headers: HTTPHeaders in [["X-A": "1\r\nX-Injected: 1"], ["X-A": "1\nX-B: 2"], ["Bad Name": "1"], ["": "1"], ["X-A": "a\u{0}b"]] {
                await #expect(throws: HTTPClientError.self) { try await client.send(HTTPClientRequest(url: server.url(), headers: headers)) }
            }
            await #expect(throws: HTTPClientError.invalidRequest("method GET / HTTP/1.1 is not a token")) {
                try await client.send(HTTPClientRequest(method: HTTPMethod(rawValue: "GET / HTTP/1.1"), url: server.url()))
            }
            #expect(server.accepted == 0)
        }
    }
}

/// Counts arrivals; `wait(for:)` suspends until that many arrived (a clockless way to know handlers are held).
actor Arrivals {
    private var count = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func arrive() {
        count += 1
        waiters.removeAll { entry in
            guard entry.0 <= count else { return false }
            entry.1.resume()
            return true
        }
    }

    func wait(for target: Int) async {
        if count >= target { return }
        await withCheckedContinuation { waiters.append((target, $0)) }
    }
}
