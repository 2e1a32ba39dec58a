import FaceSealTestSupport
import Foundation
import Testing

/// `docs/openapi.yaml` against the server it describes: schemathesis (PyPI; `make setup` puts it in the cache) runs
/// every check it has over the management API of a live `faceseal serve` — loopback, an ephemeral port, SQLite — once
/// with the administrator key `serve` created and once with a tenant key. Deterministic generation and a bounded
/// number of examples per operation, so a run is repeatable and short. The settings are `Tests/Interop/schemathesis.toml`.
@Suite(.serialized) struct ManagementAPIConformanceTests {
    static var schemathesis: String { ReadmeWalkthroughTests.cache.appendingPathComponent("schemathesis/bin/schemathesis").path }

    /// Without schemathesis the test is skipped, except under CI, where it fails.
    static var runnable: Bool {
        FileManager.default.isExecutableFile(atPath: schemathesis) || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    static let examplesPerOperation = 25

    @Test(.enabled(if: runnable, "run `make setup`: schemathesis is missing"), .timeLimit(.minutes(5)))
    func theManagementAPIDoesWhatOpenAPIYamlSays() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.schemathesis), "run `make setup`: schemathesis is missing")
        let run = try Walkthrough()
        defer { run.stop() }
        let serve = try await run.run(#"faceseal serve --port 0 --data-dir data &    # ready when it prints "faceseal: listening on ""#)
        let listening = try #require(serve.split(separator: "\n").first { $0.hasPrefix("faceseal: listening on ") })
        run.environment.withLock { $0["AUTHORITY"] = String(listening.split(separator: " ").last ?? "") }

        // What the fixed path parameters name: a tenant with a user, an application, an invitation and two keys.
        for line in [
            "export FACESEAL_API_KEY=$(cat data/admin-api-key)",
            #"faceseal admin --url "$AUTHORITY" tenant create --id acme --name Acme --liveness-required false --password-mode none"#,
            #"FS_SUBJECT=$(faceseal admin --url "$AUTHORITY" --get subject user create --tenant acme --email ada@example.com)"#,
            #"FS_CLIENT=$(faceseal admin --url "$AUTHORITY" --get client_id app create --tenant acme --label Docs --delivery-endpoint http://127.0.0.1:9/faceseal/delivery)"#,
            #"FS_INVITATION=$(faceseal admin --url "$AUTHORITY" --get id invite create --tenant acme --email ada@example.com --client-id "$FS_CLIENT")"#,
            #"FS_TENANT_KEY=$(faceseal admin --url "$AUTHORITY" --get key apikey create --tenant acme --label conformance)"#,
            #"FS_SPARE_KEY=$(faceseal admin --url "$AUTHORITY" --get id apikey create --tenant acme --label spare)"#,
        ] {
            _ = try await run.run(line)
        }
        let settings = try String(contentsOf: FacesealBinary.packageRoot.appendingPathComponent("Tests/Interop/schemathesis.toml"), encoding: .utf8)
        let parameters = run.environment.withLock { variables in
            """

            [parameters]
            tenant = "acme"
            subject = "\(variables["FS_SUBJECT"] ?? "")"
            client = "\(variables["FS_CLIENT"] ?? "")"
            invitation = "\(variables["FS_INVITATION"] ?? "")"
            key = "\(variables["FS_SPARE_KEY"] ?? "")"
            enrolment = "enr_none"

            """
        }
        try (settings + parameters).write(to: run.directory.appendingPathComponent("fixed.toml"), atomically: true, encoding: .utf8)
        try settings.write(to: run.directory.appendingPathComponent("stateful.toml"), atomically: true, encoding: .utf8)

        let document = FacesealBinary.packageRoot.appendingPathComponent("docs/openapi.yaml").path
        for (key, scope) in [("$FACESEAL_API_KEY", "administrator"), ("$FS_TENANT_KEY", "tenant")] {
            for (config, phases) in [("fixed.toml", "examples,coverage,fuzzing"), ("stateful.toml", "stateful")] {
                let command = """
                    cd '\(run.directory.path)' && timeout 300 '\(Self.schemathesis)' --no-color --config-file \(config) run '\(document)' \
                    --url "$AUTHORITY/manage/v1" -H "Authorization: Bearer \(key)" --phases \(phases) --workers 1 \
                    --generation-deterministic --max-examples \(Self.examplesPerOperation) --request-timeout 10
                    """
                let result = try await CLIRun.shell(command, environment: run.environment.withLock { $0 })
                let output = result.stdout + result.stderr
                #expect(result.status == 0, "schemathesis (\(scope) key, \(phases)) exited \(result.status):\n\(output)")
                // It really ran: many cases, and the key was accepted (a tenant key meets 403 only on administrator routes).
                let generated = output.firstMatch(of: /(\d+) generated/).flatMap { Int($0.1) } ?? 0
                #expect(generated >= (phases == "stateful" ? 50 : 1000), "\(scope), \(phases): \(output)")
                #expect(!output.contains("401 Unauthorized ("), "\(scope), \(phases): \(output)")
                if scope == "administrator" { #expect(!output.contains("Authentication failed"), "\(phases): \(output)") }
            }
        }
    }
}
