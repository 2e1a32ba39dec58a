import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal serve --admin-port 0 --log-format json`, the built binary: the loopback admin listener answers
/// `/metrics` without credentials while the public port refuses it, and every log line is one JSON event.
@Suite struct ServeOperationsTests {
    struct Observed: Sendable {
        var publicMetrics: Int?
        var publicHealth: Int?
        var adminMetrics: Int?
        var adminMetricsBody = ""
        var adminHost: String?
        var stderr = ""
        var status: Int32 = -1
    }

    private static func run(_ arguments: [String]) throws -> Observed {
        let binary = try FacesealBinary.path
        let child = try SpawnedProcess(binary: binary, arguments: ["serve"] + arguments)
        var output = Data()
        while !String(decoding: output, as: UTF8.self).contains("listening on") {
            let chunk = child.output.availableData
            if chunk.isEmpty { break }
            output += chunk
        }
        let text = String(decoding: output, as: UTF8.self)
        func url(after marker: String) -> URL? {
            text.range(of: marker).flatMap { URL(string: String(text[$0.upperBound...].prefix { !$0.isNewline })) }
        }
        var observed = Observed()
        if let base = url(after: "listening on "), let admin = url(after: "admin listener on ") {
            observed.adminHost = admin.host
            observed.publicMetrics = try? RawHTTPClient.exchange(HTTPClientRequest(url: base.appendingPathComponent("metrics"))).status.code
            observed.publicHealth = try? RawHTTPClient.exchange(HTTPClientRequest(url: base.appendingPathComponent("healthz"))).status.code
            if let response = try? RawHTTPClient.exchange(HTTPClientRequest(url: admin.appendingPathComponent("metrics"))) {
                observed.adminMetrics = response.status.code
                observed.adminMetricsBody = String(decoding: response.body, as: UTF8.self)
            }
        }
        kill(child.pid, SIGTERM)
        _ = child.output.readDataToEndOfFile()
        observed.stderr = String(decoding: child.errors.readDataToEndOfFile(), as: UTF8.self)
        observed.status = child.wait()
        return observed
    }

    @Test func adminListenerAndJSONLogs() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let arguments = ["--port", "0", "--admin-port", "0", "--log-format", "json", "--data-dir", root.appendingPathComponent("data").path]
        let observed = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try Self.run(arguments) }) }
        }
        #expect(observed.status == 0, "stderr: \(observed.stderr)")
        #expect(observed.adminHost == "127.0.0.1")
        #expect(observed.publicMetrics == 401)
        #expect(observed.publicHealth == 200)
        #expect(observed.adminMetrics == 200)
        #expect(observed.adminMetricsBody.contains(#"faceseal_http_requests_total{method="GET",route="/metrics",status="401"} 1"#))
        let lines = observed.stderr.split(separator: "\n")
        #expect(lines.count >= 3)
        for line in lines {
            let event = try JSONValue.parse(Array(line.utf8))
            #expect(event["rid"]?.stringValue?.utf8.count == 32, "\(line)")
            #expect(event["level"]?.stringValue == "info")
        }
    }

    @Test func badOperationsFlagsAreRefused() async throws {
        for (arguments, message) in [(["--log-format", "xml"], "expected text or json"), (["--log-level", "loud"], "expected debug"),
                                     (["--admin-port", "70000"], "--admin-port")] {
            let observed = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try Self.run(arguments) }) }
            }
            #expect(observed.status == 64, "\(arguments)")
            #expect(observed.stderr.contains(message), "\(arguments): \(observed.stderr)")
        }
    }
}
