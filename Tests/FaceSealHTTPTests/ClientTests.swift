import Foundation
import Testing
@testable import FaceSealHTTP

@Suite struct ClientTests {
    static func router(gate: Gate) -> Router {
        var router = Router()
        router.get("/big/:n") { request in
            HTTPResponse(body: Array(repeating: 0x61, count: Int(request.pathParameter("n")) ?? 0))
        }
        router.get("/slow") { _ in
            await gate.wait()
            return .text("late")
        }
        router.get("/redirect") { _ in .empty(.found, headers: ["Location": "http://127.0.0.1:1/elsewhere"]) }
        router.put("/echo") { request in
            HTTPResponse(headers: ["Content-Type": request.headers["Content-Type"] ?? "", "X-Method": request.method.rawValue], body: request.body)
        }
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

    @Test func closedPortIsUnreachable() async throws {
        // Take a port the kernel just gave out, then release it: nothing listens there now.
        let server = HTTPServer(logger: .disabled) { _ in .empty() }
        try server.start()
        let url = try #require(server.baseURL)
        await server.stop()
        let client = HTTPClient()
        await #expect {
            try await client.send(HTTPClientRequest(url: url.path("/"), timeout: .seconds(5)))
        } throws: { error in
            guard case .unreachable = error as? HTTPClientError else { return false }
            return true
        }
    }

    @Test func redirectsAreNotFollowed() async throws {
        try await withServer(Self.router(gate: Gate())) { _, url in
            let response = try await HTTPClient().send(HTTPClientRequest(url: url.path("/redirect"), headers: ["Authorization": "Bearer t"]))
            #expect(response.status == .found)
            #expect(response.headers["Location"] == "http://127.0.0.1:1/elsewhere")
        }
    }

    @Test func cancellationIsReported() async throws {
        let gate = Gate()
        try await withServer(Self.router(gate: gate)) { _, url in
            let client = HTTPClient()
            let task = Task { try await client.send(HTTPClientRequest(url: url.path("/slow"))) }
            task.cancel()
            await #expect(throws: HTTPClientError.cancelled) { try await task.value }
            await gate.open()
        }
    }

    #if os(Linux)
    @Test func ipv6LiteralURLIsReportedAsInvalidOnLinux() async throws {
        // A known swift-corelibs-foundation limitation, surfaced as a typed error, not a crash.
        let url = try #require(URL(string: "http://[::1]:9/x"))
        await #expect(throws: HTTPClientError.invalidURL("http://[::1]:9/x")) { try await HTTPClient().send(HTTPClientRequest(url: url)) }
    }
    #endif

    @Test func nonHTTPURLIsRefused() async throws {
        let url = try #require(URL(string: "file:///etc/passwd"))
        await #expect(throws: HTTPClientError.invalidURL("file:///etc/passwd")) { try await HTTPClient().send(HTTPClientRequest(url: url)) }
    }
}
