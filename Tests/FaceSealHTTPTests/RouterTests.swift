import Testing
@testable import FaceSealHTTP

@Suite struct RouterTests {
    static func echo(_ name: String) -> HTTPHandler {
        { request in
            let parameters = request.pathParameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return .text(([name] + parameters).joined(separator: " "))
        }
    }

    static let router: Router = {
        var router = Router()
        router.get("/devices", use: echo("list"))
        router.post("/devices", use: echo("create"))
        router.get("/devices/:id", use: echo("show"))
        router.delete("/devices/:id", use: echo("delete"))
        router.get("/devices/current", use: echo("current"))
        router.get("/devices/:id/keys/:kid", use: echo("key"))
        router.get("/devices/current/branding", use: echo("branding"))
        return router
    }()

    func call(_ method: HTTPMethod, _ path: String) async throws -> String {
        let response = try await Self.router.respond(to: HTTPRequest(method: method, path: path))
        return String(decoding: response.body, as: UTF8.self)
    }

    @Test func matchesLiteralsAndParameters() async throws {
        #expect(try await call(.get, "/devices") == "list")
        #expect(try await call(.post, "/devices") == "create")
        #expect(try await call(.get, "/devices/d1") == "show id=d1")
        #expect(try await call(.delete, "/devices/d1") == "delete id=d1")
        #expect(try await call(.get, "/devices/d1/keys/k9") == "key id=d1 kid=k9")
    }

    @Test func literalWinsButParameterStillMatchesDeeperPaths() async throws {
        #expect(try await call(.get, "/devices/current") == "current")
        #expect(try await call(.get, "/devices/current/branding") == "branding")
        // No literal route continues with /keys/…, so the parameter route takes "current".
        #expect(try await call(.get, "/devices/current/keys/k1") == "key id=current kid=k1")
    }

    @Test func parametersArePercentDecoded() async throws {
        #expect(try await call(.get, "/devices/a%2Fb%20c") == "show id=a/b c")
    }

    @Test func headFallsBackToGet() async throws {
        #expect(try await call(.head, "/devices/x") == "show id=x")
    }

    @Test func unknownPathIs404() async throws {
        for path in ["/", "/device", "/devices/", "/devices/a/b", "/devices//keys/x"] {
            await #expect(throws: HTTPError.notFound, "\(path)") { try await call(.get, path) }
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        do {
            _ = try await call(.put, "/devices/x")
            Issue.record("expected 405")
        } catch let error as HTTPError {
            #expect(error.status == .methodNotAllowed)
            #expect(error.headers["Allow"] == "DELETE, GET, HEAD")
        }
    }
}
