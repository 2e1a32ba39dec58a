import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal serve`, the built binary: starts with nothing but a data directory, answers discovery, writes its
/// secrets owner-only, stops cleanly on SIGTERM; typed refusals of bad command lines.
@Suite struct ServeCommandTests {
    struct Run: Sendable {
        var status: Int32 = -1
        var stdout = ""
        var stderr = ""
        var discoveryStatus: Int?
        var discoveryBody = ""
    }

    /// Runs `faceseal serve <arguments>`; once it prints its URL, GETs discovery (and `probe`) and sends SIGTERM.
    static func serve(_ arguments: [String], probe: String? = nil) async throws -> Run {
        let binary = try FacesealBinary.path
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runServe(binary: binary, arguments: ["serve"] + arguments, probe: probe) })
            }
        }
    }

    /// Blocking: spawns the binary, waits for its URL, asks for discovery, signals, collects the outcome.
    private static func runServe(binary: String, arguments: [String], probe: String?) throws -> Run {
        let child = try SpawnedProcess(binary: binary, arguments: arguments)
        var run = Run()
        var output = Data()
        while !String(decoding: output, as: UTF8.self).contains("listening on") {
            let chunk = child.output.availableData
            if chunk.isEmpty { break }
            output += chunk
        }
        let text = String(decoding: output, as: UTF8.self)
        if let range = text.range(of: "listening on "), let url = URL(string: String(text[range.upperBound...].prefix { !$0.isNewline })) {
            if let response = try? RawHTTPClient.exchange(HTTPClientRequest(url: url.appendingPathComponent(".well-known/openid-configuration"))) {
                run.discoveryStatus = response.status.code
                run.discoveryBody = String(decoding: response.body, as: UTF8.self)
            }
            if let probe, let target = URL(string: url.absoluteString + probe) {
                _ = try? RawHTTPClient.exchange(HTTPClientRequest(url: target))
            }
            kill(child.pid, SIGTERM)
        }
        output += child.output.readDataToEndOfFile()
        run.stderr = String(decoding: child.errors.readDataToEndOfFile(), as: UTF8.self)
        run.status = child.wait()
        run.stdout = String(decoding: output, as: UTF8.self)
        return run
    }

    private func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func mode(_ path: URL) throws -> Int? {
        (try FileManager.default.attributesOfItem(atPath: path.path)[.posixPermissions] as? Int).map { $0 & 0o777 }
    }

    @Test(arguments: StoreBackend.underTest)
    func startsOnAFreshDataDirectoryAnswersDiscoveryAndStopsOnSIGTERM(_ backend: StoreBackend) async throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let dataDirectory = root.appendingPathComponent("data")
        var arguments = ["--port", "0", "--data-dir", dataDirectory.path]
        var schema: String?
        if backend == .postgres {
            let url = try #require(StoreBackend.postgresURL)
            // A schema of its own, so the run starts from an empty database.
            let name = "serve_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            schema = name
            arguments += ["--database", url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"]
            let database = try await PostgresDatabase(url: url, schema: name, poolSize: 1)
            await database.close()
        }
        let run = try await Self.serve(arguments)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.discoveryStatus == 200)
        #expect(run.discoveryBody.contains("\"backchannel_authentication_endpoint\""))
        #expect(run.stdout.contains("faceseal: listening on http://127.0.0.1:"))
        #expect(run.stdout.contains("faceseal: stopping"))
        #expect(try mode(dataDirectory) == 0o700)
        #expect(try mode(dataDirectory.appendingPathComponent("master-key")) == 0o600)
        #expect(try mode(dataDirectory.appendingPathComponent("admin-api-key")) == 0o600)
        #expect(run.stdout.contains(dataDirectory.appendingPathComponent("admin-api-key").path))
        if backend == .sqlite {
            // The database and its journals are owner-only from the start (umask before open).
            let files = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.path).filter { $0.hasPrefix("authority.sqlite") }
            #expect(files.contains("authority.sqlite"))
            for file in files { #expect(try mode(dataDirectory.appendingPathComponent(file)) == 0o600, "\(file)") }
        }
        // A second start reuses the key and the database: no new admin key.
        let again = try await Self.serve(arguments)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(again.discoveryStatus == 200)
        #expect(!again.stdout.contains("admin-api-key"))
        if let schema, let url = StoreBackend.postgresURL, let database = try? await PostgresDatabase(url: url, schema: nil, poolSize: 1) {
            try? await database.executeStandalone("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
            await database.close()
        }
    }

    @Test func badCommandLinesAreRefusedWithUsage() async throws {
        for (arguments, message) in [(["--bogus"], "unknown option --bogus."), (["--port"], "--port needs a value."),
                                     (["--port", "70000"], "--port '70000' is not valid: expected a whole number from 0 to 65535."),
                                     (["--database", "mysql://x"], "--database (value not shown) is not valid")] {
            let run = try await Self.serve(arguments)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }

    @Test func aMasterKeyFileOthersCanReadIsRefused() async throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let keyFile = root.appendingPathComponent("master.key")
        _ = FileManager.default.createFile(atPath: keyFile.path, contents: Data(repeating: 9, count: 32), attributes: [.posixPermissions: 0o640])
        let run = try await Self.serve(["--port", "0", "--data-dir", root.appendingPathComponent("data").path, "--master-key-file", keyFile.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("chmod 600"))
        #expect(run.discoveryStatus == nil)
    }

    @Test func aDataDirectoryOthersCanReadIsRefused() async throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o750])
        let run = try await Self.serve(["--port", "0", "--data-dir", data.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("chmod 700"), "stderr: \(run.stderr)")
        #expect(run.discoveryStatus == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).isEmpty)
    }

    @Test func theRequestLogCarriesNoInvitationID() async throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let secret = "inv_" + UUID().uuidString
        let run = try await Self.serve(["--port", "0", "--data-dir", root.appendingPathComponent("data").path],
                                       probe: DevicePaths.enrolment(secret))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("GET /.well-known/openid-configuration 200"), "stderr: \(run.stderr)")
        #expect(run.stderr.contains("GET /device/v1/enrolments/- 404"), "stderr: \(run.stderr)")
        #expect(!run.stderr.contains(secret))
    }
}
