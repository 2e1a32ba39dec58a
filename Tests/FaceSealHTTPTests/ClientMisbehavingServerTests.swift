import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// The client against servers that misbehave at the byte level (a scripted loopback TCP server).
@Suite struct ClientMisbehavingServerTests {
    static func answer(_ text: String) -> ScriptedServer.Script { .answer(Array(text.utf8)) }

    @Test func aServerThatAcceptsAndNeverAnswersIsATimeout() async throws {
        try await withScriptedServer(.silent) { server in
            await #expect(throws: HTTPClientError.timeout) {
                try await HTTPClient().send(HTTPClientRequest(url: server.url(), timeout: .milliseconds(300)))
            }
            #expect(server.accepted == 1)
        }
    }

    /// Cancelling while the silent server holds the request: prompt, typed, and the connection is given up.
    @Test func cancellationAbortsAWaitOnASilentServer() async throws {
        try await withScriptedServer(.silent) { server in
            let client = HTTPClient()
            let task = Task { try await client.send(HTTPClientRequest(url: server.url("/wait"), timeout: .seconds(60))) }
            var heads = server.heads.makeAsyncIterator()
            #expect(await heads.next()?.hasPrefix("GET /wait HTTP/1.1\r\n") == true)
            task.cancel()
            await #expect(throws: HTTPClientError.cancelled) { try await task.value }
        }
    }

    @Test func hangingUpWithoutAnAnswerIsATransportError() async throws {
        try await withScriptedServer(.hangUp) { server in
            await #expect {
                try await HTTPClient().send(HTTPClientRequest(url: server.url()))
            } throws: { error in
                guard case .transport(let reason) = error as? HTTPClientError else { return false }
                return reason.contains("Empty reply")
            }
        }
    }

    /// No Content-Length: the cap holds while the body streams in.
    @Test func aChunkedBodyOverTheLimitIsRefusedWhileStreaming() async throws {
        let chunk = String(repeating: "z", count: 4096)
        let chunks = String(repeating: "1000\r\n\(chunk)\r\n", count: 8)
        try await withScriptedServer(Self.answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(chunks)0\r\n\r\n")) { server in
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 10_000)) {
                try await HTTPClient().send(HTTPClientRequest(url: server.url(), maxResponseBodySize: 10_000))
            }
            let whole = try await HTTPClient().send(HTTPClientRequest(url: server.url(), maxResponseBodySize: 8 * 4096))
            #expect(whole.body.count == 8 * 4096)
        }
    }

    @Test func endlessInterimResponsesHitTheHeadLimit() async throws {
        let interim = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 400)
        try await withScriptedServer(Self.answer(interim + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) { server in
            await #expect(throws: HTTPClientError.responseHeadTooLarge(limit: 4096)) {
                try await HTTPClient(configuration: .init(maxResponseHeadSize: 4096)).send(HTTPClientRequest(url: server.url()))
            }
        }
    }

    @Test func interimResponsesAreDroppedAndFoldedAndRepeatedFieldsKept() async throws {
        let text = "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 201 Created\r\nX-Twice: a\r\nX-Twice: b\r\n"
            + "X-Folded: first\r\n  second\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        try await withScriptedServer(Self.answer(text)) { server in
            let response = try await HTTPClient().send(HTTPClientRequest(method: .post, url: server.url(), body: [1]))
            #expect(response.status.code == 201)
            #expect(response.headers["X-Interim"] == nil)
            #expect(response.headers.values(for: "x-twice") == ["a", "b"])
            #expect(response.headers["X-Folded"] == "first second")
            #expect(response.body == Array("ok".utf8))
        }
    }

    @Test func aMalformedStatusLineIsATransportError() async throws {
        try await withScriptedServer(Self.answer("SMTP ready\r\n\r\n")) { server in
            await #expect(throws: HTTPClientError.self) { try await HTTPClient().send(HTTPClientRequest(url: server.url())) }
        }
    }

    /// Proxies named by the environment are not used, and `~/.netrc` is never read: the request goes straight
    /// to the server, without credentials.
    @Test func environmentProxiesAndNetrcAreIgnored() async throws {
        try await withScriptedServer(.hangUp) { proxy in
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-netrc-\(getpid())")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: home) }
            try Data("machine 127.0.0.1 login netrc-user password netrc-secret\n".utf8).write(to: home.appendingPathComponent(".netrc"))
            let saved = ["http_proxy", "https_proxy", "all_proxy", "ALL_PROXY", "HOME"].map { ($0, ProcessInfo.processInfo.environment[$0]) }
            for name in ["http_proxy", "https_proxy", "all_proxy", "ALL_PROXY"] { setenv(name, "http://127.0.0.1:\(proxy.port)", 1) }
            setenv("HOME", home.path, 1)
            defer {
                for (name, value) in saved {
                    if let value { setenv(name, value, 1) } else { unsetenv(name) }
                }
            }
            try await withServer(ClientTests.router(gate: Gate())) { _, url in
                let seen = try await HTTPClient().send(HTTPClientRequest(url: url.path("/inspect"))).decodeJSON([String: String].self)
                #expect(seen["authorization"] == "-")
            }
            #expect(proxy.accepted == 0)
        }
    }
}
