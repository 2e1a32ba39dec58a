import FaceSealTestSupport
import Foundation
import Testing

/// `faceseal serve --config FILE`, `FACESEAL_*` and `--print-config` as the built binary runs them, and the files of
/// `deploy/`: the systemd unit's `ExecStart` line runs through the real parser with the sample configuration.
@Suite struct ServeConfigurationCLITests {
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The `value  # source` of `key` in a `--print-config` output.
    static func setting(_ key: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(key + " = ") }.map { String($0.dropFirst(key.count + 3)) }
    }

    @Test func flagsWinOverEnvironmentOverFile() async throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("faceseal.conf").path
        try "port = 9000\ndata-dir = /srv/from-file\nrequest-head-timeout = 20\n".write(toFile: file, atomically: true, encoding: .utf8)
        let environment = ["FACESEAL_PORT": "9001", "FACESEAL_REQUEST_HEAD_TIMEOUT": "30",
                           "FACESEAL_DATABASE": "postgres://faceseal:hunter2@db/faceseal"]
        let run = try await CLIRun.faceseal(["serve", "--config", file, "--port", "9002", "--print-config"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.setting("port", in: run.stdout) == "9002  # --port")
        #expect(Self.setting("request-head-timeout", in: run.stdout) == "30  # FACESEAL_REQUEST_HEAD_TIMEOUT")
        #expect(Self.setting("data-dir", in: run.stdout) == "/srv/from-file  # \(file):2")
        #expect(Self.setting("host", in: run.stdout) == "127.0.0.1  # default")
        #expect(Self.setting("database", in: run.stdout) == "postgres://faceseal:REDACTED@db/faceseal  # FACESEAL_DATABASE")
        #expect(!run.stdout.contains("hunter2"))
        // FACESEAL_CONFIG names the file when --config does not.
        let fromEnvironment = try await CLIRun.faceseal(["serve", "--print-config"], environment: ["FACESEAL_CONFIG": file])
        #expect(Self.setting("port", in: fromEnvironment.stdout) == "9000  # \(file):1")
        // --print-config starts nothing: no data directory was created.
        #expect(!FileManager.default.fileExists(atPath: "/srv/from-file"))
    }

    @Test func aBadConfigurationIsRefusedWithWhereItCameFrom() async throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("bad.conf").path
        try "# comment\nport = 9000\nlisten = 0.0.0.0\n".write(toFile: file, atomically: true, encoding: .utf8)
        for (arguments, environment, message) in [
            (["--config", file], [:], "\(file):3: there is no setting 'listen'."),
            (["--config", root.appendingPathComponent("missing.conf").path], [:], "Cannot read the configuration file"),
            ([], ["FACESEAL_PORT": "eighty"], "FACESEAL_PORT 'eighty' is not valid: expected a whole number from 0 to 65535."),
            ([], ["FACESEAL_DATABASE": "mysql://root:hunter2@db"], "FACESEAL_DATABASE (value not shown) is not valid"),
        ] as [([String], [String: String], String)] {
            let run = try await CLIRun.faceseal(["serve"] + arguments + ["--print-config"], environment: environment)
            #expect(run.status == 64, "\(arguments) \(environment): \(run.stderr)")
            #expect(run.stderr.hasPrefix("faceseal serve: " + message), "\(run.stderr)")
            #expect(!run.stderr.contains("hunter2"))
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func theSystemdUnitsExecStartParsesWithTheSampleConfiguration() async throws {
        let deploy = FacesealBinary.packageRoot.appendingPathComponent("deploy")
        let unit = try String(contentsOf: deploy.appendingPathComponent("faceseal.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        for directive in ["DynamicUser=yes", "StateDirectory=faceseal", "ConfigurationDirectory=faceseal", "ProtectSystem=strict",
                          "ProtectHome=yes", "NoNewPrivileges=yes", "PrivateTmp=yes", "CapabilityBoundingSet=", "UMask=0077"] {
            #expect(lines.contains(directive), "the unit lacks \(directive)")
        }
        let execStart = try #require(lines.first { $0.hasPrefix("ExecStart=") })
        var words = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(words.first == "/usr/local/bin/faceseal")
        // What systemd substitutes: the configuration directory is deploy/, the state directory a fresh one.
        let state = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        words = words.dropFirst().map {
            $0.replacingOccurrences(of: "${CONFIGURATION_DIRECTORY}", with: deploy.path).replacingOccurrences(of: "${STATE_DIRECTORY}", with: state.path)
        }
        let run = try await CLIRun.faceseal(words + ["--print-config"])
        #expect(run.status == 0, "\(words): \(run.stderr)")
        let sample = deploy.appendingPathComponent("faceseal.conf").path
        #expect(Self.setting("data-dir", in: run.stdout) == "\(state.path)  # --data-dir")
        #expect(Self.setting("issuer", in: run.stdout)?.hasPrefix("https://id.example.com  # \(sample):") == true, "\(run.stdout)")
        #expect(Self.setting("max-connections-per-address", in: run.stdout)?.hasPrefix("0  # \(sample):") == true)
        #expect(Self.setting("port", in: run.stdout)?.hasPrefix("8080  # \(sample):") == true)
    }
}
