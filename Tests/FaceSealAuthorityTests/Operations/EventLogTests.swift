import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

@Suite("Logs: text or JSON, levels, one event per line with its request id, no secret")
struct EventLogTests {
    /// The server logs through the authority's log, as `faceseal serve` does.
    private func withLoggedAuthority(_ backend: StoreBackend, _ log: EventLog, _ body: (AuthorityHarness) async throws -> Void) async throws {
        try await withAuthority(backend, logger: log.requestLogger, configure: { $0.log = log }, body)
    }

    @Test("JSON lines carry the request id of the X-Request-Id header; bearers in paths and form secrets never appear",
          arguments: StoreBackend.underTest)
    func jsonLines(backend: StoreBackend) async throws {
        let lines = LogLines()
        try await withLoggedAuthority(backend, lines.log(level: .info, format: .json)) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            _ = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let health = try await harness.get(OperationsPaths.health)
            let bearerPath = try await harness.get("/device/v1/requests/secret-request-id-123")
            _ = try await TestApplication.start(harness, ceremony: false)
            await harness.store.close()
            let readiness = try await harness.get(OperationsPaths.readiness)

            let events = try lines.all.map { line -> JSONValue in
                #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
                return try JSONValue.parse(Array(line.utf8))
            }
            let healthEvent = try #require(events.first { $0["rid"]?.stringValue == health.headers["X-Request-Id"] })
            #expect(healthEvent["event"]?.stringValue == "http")
            #expect(healthEvent["level"]?.stringValue == "info")
            #expect(healthEvent["method"]?.stringValue == "GET")
            #expect(healthEvent["path"]?.stringValue == "/healthz")
            #expect(healthEvent["status"]?.doubleValue == 200)
            #expect(healthEvent["duration_ms"]?.doubleValue != nil)
            let bearerEvent = try #require(events.first { $0["rid"]?.stringValue == bearerPath.headers["X-Request-Id"] })
            #expect(bearerEvent["path"]?.stringValue == "/device/v1/requests/-")
            // The readiness failure's event names the request that found it.
            let rid = try #require(readiness.headers["X-Request-Id"])
            #expect(events.contains { $0["event"]?.stringValue == "readiness.database_failed" && $0["rid"]?.stringValue == rid })
            let everything = lines.all.joined()
            #expect(!everything.contains("secret-request-id-123"))
            #expect(!everything.contains(TestApplication.secret))
        }
    }

    @Test("text lines: time, level, event, request id; a level above info drops request lines", arguments: StoreBackend.underTest)
    func textLinesAndLevels(backend: StoreBackend) async throws {
        let text = LogLines()
        try await withLoggedAuthority(backend, text.log(level: .info, format: .text)) { harness in
            let response = try await harness.get(OperationsPaths.health)
            let rid = try #require(response.headers["X-Request-Id"])
            let line = try #require(text.all.first { $0.contains(rid) })
            let parts = line.split(separator: " ")
            #expect(parts.count == 8)
            #expect(parts[0].count == 20 && parts[0].hasSuffix("Z"))
            #expect(Array(parts[1...6]) == ["info", "http", "rid=\(rid)", "GET", "/healthz", "200"])
            #expect(parts[7].hasSuffix("ms\n"))
        }
        let quiet = LogLines()
        try await withLoggedAuthority(backend, quiet.log(level: .warn, format: .text)) { harness in
            _ = try await harness.get(OperationsPaths.health)
            harness.authority.log.event(.info, "dropped")
            harness.authority.log.event(.warn, "kept", ["field": "a b\nc"])
        }
        #expect(quiet.all.count == 1)
        #expect(quiet.all.first?.hasSuffix(" warn kept field=a%20b%0Ac\n") == true)
    }

    @Test("a JSON field cannot break its line or its object")
    func jsonEscaping() throws {
        let lines = LogLines()
        lines.log(format: .json).event(.error, "x", ["value": "\"}\n{\"forged\":1", "n": 3])
        let line = try #require(lines.all.first)
        #expect(line.filter { $0 == "\n" }.count == 1)
        let json = try JSONValue.parse(Array(line.utf8))
        #expect(json["value"]?.stringValue == "\"}\n{\"forged\":1")
        #expect(json["n"]?.doubleValue == 3)
        #expect(json["forged"] == nil)
    }
}
