import FaceSealAuthority
package import FaceSealHTTP
import FaceSealWire
package import Foundation

/// An application of an authority as a relying party plays it over HTTP: a CIBA client with its credentials. Its own
/// endpoints (delivery, ping) are a `LoopbackServer`, whose router is set once their URLs are known.
package struct ApplicationHarness: Sendable {
    /// How the client authenticates at the token and backchannel endpoints.
    package enum Authentication: Sendable {
        /// `client_secret_basic`.
        case basic
        /// `client_secret_post`.
        case post
    }

    /// The authority's base URL, without a trailing slash.
    package let authority: String
    /// The client id.
    package let clientID: String
    /// The client secret.
    package let secret: String
    /// How the secret is sent.
    package let authentication: Authentication
    private let http = HTTPClient()

    /// A client `clientID` of the authority at `authority`.
    package init(authority: URL, clientID: String, secret: String, authentication: Authentication = .basic) {
        var base = authority.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.authority = base
        self.clientID = clientID
        self.secret = secret
        self.authentication = authentication
    }

    /// `POST /backchannel` with `parameters` (and the credentials).
    package func backchannel(_ parameters: [(String, String)]) async throws -> HTTPClientResponse {
        try await post(CIBAPaths.backchannel, parameters)
    }

    /// `POST /token` redeeming `authReqID` (the CIBA grant).
    package func token(_ authReqID: String) async throws -> HTTPClientResponse {
        try await post(CIBAPaths.token, [("grant_type", CIBANames.grantType), ("auth_req_id", authReqID)])
    }

    private func post(_ path: String, _ parameters: [(String, String)]) async throws -> HTTPClientResponse {
        var pairs = parameters
        var headers = HTTPHeaders()
        switch authentication {
        case .basic: headers["Authorization"] = "Basic " + Data("\(clientID):\(secret)".utf8).base64EncodedString()
        case .post: pairs += [("client_id", clientID), ("client_secret", secret)]
        }
        let form = FormParameters(pairs.map { FormParameters.Item(name: $0.0, value: $0.1) })
        return try await http.send(.form(url: URL(string: authority + path)!, form: form, headers: headers))
    }
}
