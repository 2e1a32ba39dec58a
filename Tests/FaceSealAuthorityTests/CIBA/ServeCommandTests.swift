import FaceSealHTTP
import FaceSealTestSupport
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

    /// Runs `faceseal serve <arguments>`; once it prints its URL, GETs discovery and sends SIGTERM.
    static func serve(_ arguments: [String]) async throws -> Run {
        let binary = try #require(AdminCLI.binary, "the faceseal binary is not built (swift build --build-tests builds it)")
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runServe(binary: binary.path, arguments: ["serve"] + arguments) })
            }
        }
    }

    /// Blocking: spawns the binary, waits for its URL, asks for discovery, signals, collects the outcome.
    private static func runServe(binary: String, arguments: [String]) throws -> Run {
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
            #expect(FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("authority.sqlite").path))
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
        for (arguments, message) in [(["--bogus"], "unknown option '--bogus'"), (["--port"], "option --port needs a value"),
                                     (["--port", "70000"], "--port must be a number"), (["--database", "mysql://x"], "--database")] {
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
}
