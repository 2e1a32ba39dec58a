package import FaceSealHTTP
package import Foundation

/// An HTTP server on an ephemeral loopback port whose router is set once its URL is known (an authority's issuer, an
/// application's delivery and ping endpoints name the bound port): `503` until then (`RouterSlot`).
package final class LoopbackServer: Sendable {
    /// The running server.
    package let server: HTTPServer
    /// `http://127.0.0.1:PORT`.
    package let baseURL: URL
    private let slot = RouterSlot()

    /// Binds and starts answering (`503` until `serve(_:)`).
    package init(logger: RequestLogger = .disabled) throws {
        let slot = self.slot
        server = HTTPServer(logger: logger) { request in try await slot.router().respond(to: request) }
        try server.start()
        guard let baseURL = server.baseURL else { throw SetupError("the loopback server has no address") }
        self.baseURL = baseURL
    }

    /// Serves `router` from now on.
    package func serve(_ router: Router) { slot.set(router) }

    /// The base URL without its trailing slash.
    package var base: String {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// `base` + `path`.
    package func url(_ path: String) -> URL { URL(string: base + path)! }

    /// Stops the server.
    package func stop() async { await server.stop() }
}
