import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealAuthority

/// A real authority on an ephemeral loopback port over a fresh database of one backend, with a manual clock.
struct AuthorityHarness: Sendable {
    let authority: Authority
    let store: SQLAuthorityStore
    let clock: ManualStoreClock
    let baseURL: URL
    let client: HTTPClient

    /// `baseURL` + `path`.
    func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }
}

/// Runs `body` against a started authority on `backend` (its requests logged to `logger`); stops the server and
/// removes the database after.
func withAuthority(
    _ backend: StoreBackend,
    logger: RequestLogger = .disabled,
    configure: (inout AuthorityConfiguration) -> Void = { _ in },
    _ body: (AuthorityHarness) async throws -> Void
) async throws {
    try await withStore(backend) { store, clock in
        var configuration = AuthorityConfiguration(issuer: "http://127.0.0.1", callbackDestinations: .any)
        configure(&configuration)
        let served = try LoopbackAuthority.start(store: store, configuration: configuration, logger: logger, clock: { clock.now() })
        let harness = AuthorityHarness(authority: served.authority, store: store, clock: clock, baseURL: served.baseURL, client: HTTPClient())
        do {
            try await body(harness)
        } catch {
            await served.stop()
            throw error
        }
        await served.stop()
    }
}

@Suite struct AuthorityHarnessTests {
    @Test(arguments: StoreBackend.underTest)
    func harnessServesTheRouter(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let response = try await harness.client.send(HTTPClientRequest(url: harness.url("/no-such-path")))
            #expect(response.status.code == 404)
        }
    }
}
