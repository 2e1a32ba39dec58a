import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// The benchmark's loopback client (`LoopbackHTTPClient`): against FaceSealHTTP's server and against scripted servers
/// that misbehave, and its parser on its own.
@Suite struct LoopbackClientTests {
    static func head(_ text: String) -> [UInt8] { Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8) }

    /// `request` on a client of its own, stopped afterwards.
    static func once(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let client = LoopbackHTTPClient()
        defer { client.stop() }
        return try await client.send(request)
    }

    // MARK: Against the server

    @Test func sendsMethodHeadersAndBodyAsHTTPClientDoes() async throws {
        try await withServer(ClientTests.router(gate: Gate())) { _, url in
            let client = LoopbackHTTPClient()
            defer { client.stop() }
            let echoed = try await client.send(HTTPClientRequest(
                method: .put, url: url.path("/echo"), headers: ["Content-Type": "application/octet-stream"], body: [0, 1, 2, 255]))
            #expect(echoed.status == .ok)
            #expect(echoed.body == [0, 1, 2, 255])
            #expect(echoed.headers["x-method"] == "PUT")
            for (method, body, length) in [(HTTPMethod.get, "", "-"), (.post, "", "0"), (.post, "{}", "2"), (.delete, "", "-")] {
                let response = try await client.send(HTTPClientRequest(method: method, url: url.path("/inspect"), body: Array(body.utf8)))
                let seen = try JSONDecoder().decode([String: String].self, from: Data(response.body))
                #expect(seen["method"] == method.rawValue)
                #expect(seen["content-length"] == length)
                #expect(seen["content-type"] == "-")
                #expect(seen["expect"] == "-")
                #expect(seen["body"] == body)
            }
        }
    }

    /// Requests in turn share one connection; one the server marks `Connection: close` is not kept.
    @Test func keepsConnectionsAliveUnlessTheServerCloses() async throws {
        try await withServer(ClientTests.router(gate: Gate())) { _, url in
            let client = LoopbackHTTPClient()
            defer { client.stop() }
            for _ in 0..<20 {
                let response = try await client.send(HTTPClientRequest(url: url.path("/big/10")))
                #expect(response.body.count == 10)
            }
            #expect(client.connectionsOpened == 1)
            let closing = try await client.send(HTTPClientRequest(url: url.path("/close")))
            #expect(closing.body == Array("bye".utf8))
            let next = try await client.send(HTTPClientRequest(url: url.path("/big/3")))
            #expect(next.body.count == 3)
            #expect(client.connectionsOpened == 2)
        }
    }

    /// 64 senders at once, bodies larger than one read: every response whole, to its own sender.
    @Test func concurrentSendersGetTheirOwnResponses() async throws {
        try await withServer(ClientTests.router(gate: Gate())) { _, url in
            let client = LoopbackHTTPClient()
            defer { client.stop() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        for round in 0..<5 {
                            let size = 1 + (index * 997 + round * 50_021) % 200_000
                            let response = try await client.send(HTTPClientRequest(url: url.path("/big/\(size)")))
                            #expect(response.body.count == size)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(client.connectionsOpened <= 64 + 8)
        }
    }

    @Test func aBodyOverTheRequestsLimitIsRefused() async throws {
        let refused = try await withServer(ClientTests.router(gate: Gate())) { _, url in
            do {
                _ = try await Self.once(HTTPClientRequest(url: url.path("/big/101"), maxResponseBodySize: 100))
                return nil as LoopbackHTTPError?
            } catch let error as LoopbackHTTPError {
                return error
            }
        }
        #expect(refused == .responseTooLarge(limit: 100))
    }

    // MARK: Against misbehaving servers

    @Test func aSilentServerIsATimeout() async throws {
        try await withScriptedServer(.silent) { server in
            await #expect(throws: LoopbackHTTPError.timeout) {
                try await Self.once(HTTPClientRequest(url: server.url(), timeout: .milliseconds(300)))
            }
        }
    }

    @Test func cancellationEndsAWaitOnASilentServer() async throws {
        try await withScriptedServer(.silent) { server in
            let client = LoopbackHTTPClient()
            defer { client.stop() }
            let task = Task { try await client.send(HTTPClientRequest(url: server.url("/wait"), timeout: .seconds(60))) }
            var heads = server.heads.makeAsyncIterator()
            #expect(await heads.next()?.hasPrefix("GET /wait HTTP/1.1\r\nHost: 127.0.0.1:") == true)
            task.cancel()
            await #expect(throws: LoopbackHTTPError.cancelled) { try await task.value }
        }
    }

    /// `stop()` fails what waits and what comes after, and the thread ends.
    @Test func stoppingFailsWhatWaitsAndWhatFollows() async throws {
        try await withScriptedServer(.silent) { server in
            let client = LoopbackHTTPClient()
            let task = Task { try await client.send(HTTPClientRequest(url: server.url("/wait"), timeout: .seconds(60))) }
            var heads = server.heads.makeAsyncIterator()
            _ = await heads.next()
            client.stop()
            await #expect(throws: LoopbackHTTPError.cancelled) { try await task.value }
            await #expect(throws: LoopbackHTTPError.cancelled) { try await client.send(HTTPClientRequest(url: server.url())) }
        }
    }

    @Test func hangingUpWithoutAnAnswerIsAnError() async throws {
        try await withScriptedServer(.hangUp) { server in
            await #expect(throws: LoopbackHTTPError.closedBeforeResponse) {
                try await Self.once(HTTPClientRequest(url: server.url()))
            }
        }
    }

    /// The scripted server answers (keep-alive) and closes: the kept connection is gone by the next request, which is
    /// sent on a new one.
    @Test func aKeptConnectionTheServerClosedIsReplaced() async throws {
        try await withScriptedServer(.answer(Self.head("HTTP/1.1 200 OK\nContent-Length: 2\n\nok"))) { server in
            let client = LoopbackHTTPClient()
            defer { client.stop() }
            for _ in 0..<3 {
                let response = try await client.send(HTTPClientRequest(url: server.url()))
                #expect(response.body == Array("ok".utf8))
            }
            #expect(server.accepted == 3)
        }
    }

    // MARK: The parser and the request

    @Test func parsesACompleteResponseAndWaitsForAnIncompleteOne() throws {
        let whole = Self.head("HTTP/1.1 201 Created\nX-A:  one \nContent-Length: 5\n\n") + Array("hello".utf8)
        let (response, keepAlive) = try #require(try LoopbackHTTPClient.parse(whole, isHead: false, maxBodySize: 100))
        #expect(response.status.code == 201)
        #expect(response.headers["x-a"] == "one")
        #expect(response.body == Array("hello".utf8))
        #expect(keepAlive)
        for cut in [0, 10, whole.count - 6, whole.count - 1] {
            #expect(try LoopbackHTTPClient.parse(Array(whole[..<cut]), isHead: false, maxBodySize: 100) == nil)
        }
        let closing = Self.head("HTTP/1.1 204 No Content\nConnection: close\n\n")
        #expect(try LoopbackHTTPClient.parse(closing, isHead: false, maxBodySize: 100)?.keepAlive == false)
        let head = Self.head("HTTP/1.0 200 OK\nContent-Length: 9\n\n")
        #expect(try LoopbackHTTPClient.parse(head, isHead: true, maxBodySize: 0)?.keepAlive == false)
    }

    @Test(arguments: [
        "HTTP/2 200 OK\nContent-Length: 0\n\n", "HTTP/1.1 20 OK\nContent-Length: 0\n\n", "HTTP/1.1 2000 OK\nContent-Length: 0\n\n",
        "HTTP/1.1 999 Odd\nContent-Length: 0\n\n", "HTTP/1.1 100 Continue\n\n", "HTTP/1.1 200 OK\n\n",
        "HTTP/1.1 200 OK\nContent-Length: -1\n\n", "HTTP/1.1 200 OK\nContent-Length: 1e3\n\n",
        "HTTP/1.1 200 OK\nContent-Length: 99999999999999999999\n\n", "HTTP/1.1 200 OK\nContent-Length: 1\nContent-Length: 2\n\nab",
        "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n0\n\n", "HTTP/1.1 200 OK\n folded: x\nContent-Length: 0\n\n",
        "HTTP/1.1 200 OK\nno colon\nContent-Length: 0\n\n", "HTTP/1.1 200 OK\nContent-Length: 1\n\nab",
    ])
    func refusesMalformedResponses(_ text: String) {
        #expect(throws: LoopbackHTTPError.self) { try LoopbackHTTPClient.parse(Self.head(text), isHead: false, maxBodySize: 1 << 20) }
    }

    /// 20,000 mutations of a valid response (bytes flipped, inserted, dropped, cut): each parses, waits for more or is
    /// refused with a typed error, and what parses has a body within the limit.
    @Test func mutatedResponsesNeverCrashTheParser() {
        let valid = Self.head("HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 13\nX-A: b\n\n") + Array(#"{"ok":"yes!"}"#.utf8)
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x0D, 0x0A, 0x3A, 0x20, 0x30, 0x39, 0x2D, 0x00, 0xFF, 0x80]
        for _ in 0..<20_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<max(bytes.count, 1), using: &generator)
                let byte = Bool.random(using: &generator) ? interesting.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where !bytes.isEmpty: bytes[position] = byte
                case 1: bytes.insert(byte, at: min(position, bytes.count))
                case 2 where !bytes.isEmpty: bytes.remove(at: position)
                default: bytes = Array(bytes.prefix(position))
                }
            }
            do {
                if let (response, _) = try LoopbackHTTPClient.parse(bytes, isHead: false, maxBodySize: 64) {
                    #expect(response.body.count <= 64)
                    #expect((200...599).contains(response.status.code))
                }
            } catch {
                // A typed refusal is an answer too.
            }
        }
    }

    @Test func refusesAnOversizedHeadBeforeItEnds() {
        let endless = Array("HTTP/1.1 200 OK\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: LoopbackHTTPClient.maxHeadSize)
        #expect(throws: LoopbackHTTPError.self) { try LoopbackHTTPClient.parse(endless, isHead: false, maxBodySize: 100) }
    }

    @Test func writesTheRequestAsLibcurlDoes() throws {
        let url = URL(string: "http://127.0.0.1:8080/a/b?c=d#frag")!
        let origin = try LoopbackOrigin(url)
        let request = HTTPClientRequest(method: .post, url: url, headers: ["X-One": " 1 ", "X-Empty": "", "X-Semi": "a;", "X-Colon": "a:", "Content-Length": "99"],
                                        body: Array("xy".utf8))
        #expect(String(decoding: try LoopbackHTTPClient.prepare(request, origin: origin).bytes, as: UTF8.self)
                == "POST /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nX-One: 1\r\nX-Empty:\r\nX-Semi: a;\r\nX-Colon: a:\r\nContent-Length: 2\r\n\r\nxy")
        #expect(try LoopbackHTTPClient.prepare(HTTPClientRequest(url: url), origin: origin).maxBodySize == 1 << 20)
        #expect(try LoopbackHTTPClient.prepare(HTTPClientRequest(url: url, maxResponseBodySize: 7), origin: origin).maxBodySize == 7)
        #expect(throws: LoopbackHTTPError.self) {
            try LoopbackHTTPClient.prepare(HTTPClientRequest(url: url, headers: ["X-Bad": "a\r\nX-Injected: 1"]), origin: origin)
        }
        #expect(throws: LoopbackHTTPError.self) {
            try LoopbackHTTPClient.prepare(HTTPClientRequest(url: url, headers: ["Bad Name": "a"]), origin: origin)
        }
    }

    @Test(arguments: ["https://127.0.0.1:1/", "http://localhost:80/", "http://127.0.0.1/", "http://127.0.0.1:0/",
                      "http://127.0.0.1:65536/", "http://127.0.0.256:80/", "http://[::1]:80/", "http://1.2.3:80/"])
    func refusesWhatIsNotAnIPv4LiteralWithAPort(_ text: String) {
        #expect(throws: LoopbackHTTPError.self) { try LoopbackOrigin(URL(string: text)!) }
    }
}
