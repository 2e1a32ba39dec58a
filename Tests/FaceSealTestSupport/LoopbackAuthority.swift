package import FaceSealAuthority
import FaceSealCrypto
package import FaceSealHTTP
package import FaceSealWire
package import Foundation

/// A real authority served on an ephemeral loopback port over a store the test owns, its issuer the served URL: what
/// `AuthorityService` starts for `faceseal serve`, without the data directory, the master key file and the signals,
/// with fresh keys and the test's clock. `AuthorityProcess` is the same over the built binary.
package struct LoopbackAuthority: Sendable {
    /// The authority being served.
    package let authority: Authority
    /// Its server.
    package let server: LoopbackServer

    /// Serves an authority over `store`; `configuration.issuer` becomes the served URL.
    /// The default configuration lets callbacks reach loopback (`callbackDestinations: .any`): every test endpoint is there.
    package static func start(store: any AuthorityStore, configuration: AuthorityConfiguration = AuthorityConfiguration(issuer: "http://127.0.0.1", callbackDestinations: .any),
                              keys: AuthorityKeys? = nil, logger: RequestLogger = .disabled,
                              clock: any WallClock = SystemWallClock()) throws -> LoopbackAuthority {
        let server = try LoopbackServer(logger: logger)
        var configuration = configuration
        configuration.issuer = server.baseURL.absoluteString
        let authority = Authority(configuration: configuration, store: store,
                                  keys: try keys ?? AuthorityKeys(deviceKey: Curve25519.Signing.PrivateKey(), masterKey: SymmetricKey(size: .bits256)),
                                  clock: clock)
        server.serve(authority.makeRouter())
        return LoopbackAuthority(authority: authority, server: server)
    }

    /// The served URL (the issuer), with its trailing slash.
    package var baseURL: URL { server.baseURL }

    /// The issuer without a trailing slash + `path`.
    package func url(_ path: String) -> URL { server.url(path) }

    /// Stops serving (the store stays open: it is the caller's).
    package func stop() async { await server.stop() }
}
