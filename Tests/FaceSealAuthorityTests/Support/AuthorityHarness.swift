import FaceSealCrypto
import FaceSealHTTP
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

/// Runs `body` against a started authority on `backend`; stops the server and removes the database after.
func withAuthority(
    _ backend: StoreBackend,
    configure: (inout AuthorityConfiguration) -> Void = { _ in },
    _ body: (AuthorityHarness) async throws -> Void
) async throws {
    try await withStore(backend) { store, clock in
        var configuration = AuthorityConfiguration(issuer: "http://127.0.0.1", callbackDestinations: .any)
        configure(&configuration)
        let keys = try AuthorityKeys(deviceKey: Curve25519.Signing.PrivateKey(), masterKey: SymmetricKey(size: .bits256))
        // The issuer must be the served URL, so the router is built after the port is known.
        let box = RouterBox()
        let server = HTTPServer(logger: .disabled) { request in try await box.router().respond(to: request) }
        try server.start()
        let baseURL = server.baseURL!
        configuration.issuer = baseURL.absoluteString
        let authority = Authority(configuration: configuration, store: store, keys: keys, clock: { clock.now() })
        box.set(authority.makeRouter())
        let harness = AuthorityHarness(authority: authority, store: store, clock: clock, baseURL: baseURL, client: HTTPClient())
        do {
            try await body(harness)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

import Synchronization

/// Holds the router that is set once the server's port is known.
final class RouterBox: Sendable {
    private let slot = Mutex<Router?>(nil)
    func set(_ router: Router) { slot.withLock { $0 = router } }
    func router() throws -> Router {
        guard let router = slot.withLock({ $0 }) else { throw HTTPServerError.invalidConfiguration("router not set") }
        return router
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
