import FaceSealTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `faceseal bench authority`, the built binary, for a second per mode: every ceremony it runs — the real authority
/// in a `faceseal serve` child, devices enrolled over the device API, sign-ins in poll and ping mode through to a
/// verified ID token — succeeds, and it prints its figure lines. (What the figures are is the benchmark's business,
/// never a test's.)
@Suite struct BenchAuthorityCommandTests {
    @Test("poll and ping ceremonies all succeed and every figure line is printed", arguments: StoreBackend.underTest)
    func ceremoniesSucceed(backend: StoreBackend) async throws {
        let (status, output) = try await Self.bench(backend, ["--concurrency", "2", "--seconds", "1", "--pending", "7"])
        #expect(status == 0, "\(output)")
        let modes = output.split(separator: "\n").filter { $0.hasPrefix("bench=authority db=\(backend.rawValue) mode=") && $0.contains(" ceremonies=") }
        #expect(modes.count == 2, "\(output)")
        for line in modes {
            #expect(line.contains("failures=0"), "\(line)")
            #expect(!line.contains(" ceremonies=0 "), "\(line)")
        }
        for step in ["backchannel", "link", "details", "token_download", "completion", "ping", "token", "all"] {
            #expect(output.contains("step=\(step) p50_ms="), "no line for \(step)")
        }
        #expect(output.contains("rss_mb_after_preload="))
        #expect(output.contains("bench=ceiling server=faceseal-http-trivial"))
        #expect(output.contains("ratio="))
    }

    /// Each device long-polls another `faceseal serve` process than the one its application starts the request at:
    /// a ceremony completes within the one-second window only if the link queued by one process wakes the poll
    /// waiting in the other (without the wake-up the poll would answer at its 30 s deadline). The applications are
    /// registered for EdDSA ID tokens (`--id-token-alg`), which the load generator verifies against `/jwks`.
    @Test("two authority processes on one PostgreSQL: every link crosses processes and wakes the waiting poll",
          arguments: SharedDatabaseTests.shared)
    func linksCrossProcesses(backend: StoreBackend) async throws {
        let (status, output) = try await Self.bench(backend, ["--instances", "2", "--concurrency", "2", "--seconds", "1", "--modes", "poll",
                                                              "--id-token-alg", "EdDSA"])
        #expect(status == 0, "\(output)")
        let line = output.split(separator: "\n").first { $0.hasPrefix("bench=authority db=postgres mode=poll id_token_alg=EdDSA instances=2") }
        #expect(line?.contains("failures=0") == true, "\(output)")
        #expect(line?.contains(" ceremonies=0 ") == false, "\(output)")
    }

    /// The small version of `make chaos`: a few SIGKILLs of the authority during ceremonies lose and duplicate nothing.
    @Test("the authority killed during ceremonies: nothing lost, nothing duplicated, no device locked out", arguments: StoreBackend.underTest)
    func killedAuthorityLosesNothing(backend: StoreBackend) async throws {
        let (status, output) = try await Self.bench(backend, ["--kills", "3", "--concurrency", "4"], command: "chaos")
        #expect(status == 0, "\(output)")
        let line = output.split(separator: "\n").first { $0.hasPrefix("chaos db=\(backend.rawValue) kills=3 ") }
        #expect(line?.contains(" lost=0 duplicated=0 id_tokens_without_completion=0 locked_out=0") == true, "\(output)")
        #expect(line?.contains(" ceremonies=0 ") == false, "\(output)")
    }

    /// SPEC §9's rolling restart: two `faceseal serve` processes on one PostgreSQL under load; each in turn gets SIGTERM,
    /// drains (503 + Retry-After to new requests, which the clients honour; in-flight ones finish; long polls end at
    /// once), exits 0 and is started again. Every ceremony started is completed and redeemed.
    @Test("a rolling restart of two authority processes on one PostgreSQL under load loses and abandons no ceremony",
          arguments: SharedDatabaseTests.shared)
    func rollingRestartLosesNothing(backend: StoreBackend) async throws {
        let (status, output) = try await Self.bench(backend, ["--rolling-restarts", "2", "--concurrency", "4"], command: "chaos")
        #expect(status == 0, "\(output)")
        let line = output.split(separator: "\n").first { $0.hasPrefix("restart db=postgres instances=2 restarts=2 ") }
        #expect(line?.contains(" lost=0 duplicated=0 id_tokens_without_completion=0 locked_out=0 abandoned=0 graceful_exits=2 ") == true,
                "\(output)")
        #expect(line?.contains(" ceremonies=0 ") == false, "\(output)")
    }

    /// Runs `faceseal bench <command> --database <backend> <arguments>`; its exit status and output.
    static func bench(_ backend: StoreBackend, _ arguments: [String], command: String = "authority") async throws -> (Int32, String) {
        let binary = try FacesealBinary.path
        var variables: [String: String] = [:]
        if backend == .postgres {
            guard let url = StoreBackend.postgresURL else { throw StoreTestSetupError.postgresNotConfigured }
            variables["FACESEAL_TEST_POSTGRES_URL"] = url
        }
        let environment = variables
        let arguments = ["bench", command, "--database", backend.rawValue] + arguments
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let child = try SpawnedProcess(binary: binary, arguments: arguments, environment: environment)
                    let text = String(decoding: child.output.readDataToEndOfFile(), as: UTF8.self)
                    let errors = String(decoding: child.errors.readDataToEndOfFile(), as: UTF8.self)
                    return (child.wait(), text + errors)
                })
            }
        }
    }
}
