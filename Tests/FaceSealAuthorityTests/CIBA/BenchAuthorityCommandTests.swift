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
        let binary = try #require(AdminCLI.binary, "the faceseal binary is not built (swift build --build-tests builds it)")
        var variables: [String: String] = [:]
        if backend == .postgres {
            guard let url = StoreBackend.postgresURL else { throw StoreTestSetupError.postgresNotConfigured }
            variables["FACESEAL_TEST_POSTGRES_URL"] = url
        }
        let environment = variables
        let arguments = ["bench", "authority", "--database", backend.rawValue, "--concurrency", "2", "--seconds", "1", "--pending", "7"]
        let (status, output) = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let child = try SpawnedProcess(binary: binary.path, arguments: arguments, environment: environment)
                    let text = String(decoding: child.output.readDataToEndOfFile(), as: UTF8.self)
                    let errors = String(decoding: child.errors.readDataToEndOfFile(), as: UTF8.self)
                    return (child.wait(), text + errors)
                })
            }
        }
        #expect(status == 0, "\(output)")
        let modes = output.split(separator: "\n").filter { $0.hasPrefix("bench=authority db=\(backend.rawValue) mode=") && $0.contains(" ceremonies=") }
        #expect(modes.count == 2, "\(output)")
        for line in modes {
            #expect(line.contains("failures=0"), "\(line)")
            #expect(!line.contains(" ceremonies=0 "), "\(line)")
        }
        for step in ["backchannel", "link", "details", "token_download", "completion", "ping", "token"] {
            #expect(output.contains("step=\(step) p50_ms="), "no line for \(step)")
        }
        #expect(output.contains("rss_mb_after_preload="))
        #expect(output.contains("bench=ceiling server=faceseal-http-trivial"))
        #expect(output.contains("ratio="))
    }
}
