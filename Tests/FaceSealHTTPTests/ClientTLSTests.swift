import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealHTTP
@testable import FaceSealHTTPClient

/// HTTPS certificates are verified: a failed handshake or an untrusted certificate is `.tls` with the reason.
@Suite struct ClientTLSTests {
    @Test func httpsToAPlainHTTPServerIsATLSFailure() async throws {
        try await withServer(Router()) { _, url in
            let https = try #require(URL(string: url.absoluteString.replacingOccurrences(of: "http://", with: "https://") + "/"))
            await #expect {
                try await HTTPClient().send(HTTPClientRequest(url: https, timeout: .seconds(10)))
            } throws: { error in
                guard case .tls(let reason) = error as? HTTPClientError else { return false }
                return !reason.isEmpty
            }
        }
    }

    /// `openssl s_server` with a fresh self-signed certificate: the client refuses it and says why.
    @Test func aSelfSignedCertificateIsRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path, certificate = directory.appendingPathComponent("cert.pem").path
        let request = try SpawnedProcess(binary: "/usr/bin/openssl", arguments: [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ])
        #expect(try await blocking { request.wait() } == 0)
        let server = try SpawnedProcess(binary: "/usr/bin/openssl", arguments: [
            "s_server", "-accept", "0", "-cert", certificate, "-key", key, "-www",
        ])
        defer {
            // SIGKILL: the child inherits the test thread's blocked signals, SIGTERM included.
            kill(server.pid, SIGKILL)
            _ = server.wait()
        }
        let port = try #require(try await blocking { Self.acceptedPort(server.output) })
        let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
        await #expect {
            try await HTTPClient().send(HTTPClientRequest(url: url, timeout: .seconds(10)))
        } throws: { error in
            guard case .tls(let reason) = error as? HTTPClientError else { return false }
            return reason.contains("self-signed certificate")
        }
    }

    /// The port from s_server's `ACCEPT [::]:PORT` line (blocking: run it through `blocking`).
    private static func acceptedPort(_ output: FileHandle) -> Int? {
        var text = ""
        while true {
            if let line = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first(where: { $0.hasPrefix("ACCEPT") }),
               let colon = line.lastIndex(of: ":") {
                return Int(line[line.index(after: colon)...])
            }
            let data = output.availableData
            guard !data.isEmpty else { return nil }
            text += String(decoding: data, as: UTF8.self)
        }
    }
}
