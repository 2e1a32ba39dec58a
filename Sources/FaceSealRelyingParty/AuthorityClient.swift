import Foundation
import FaceSealCrypto
import FaceSealHTTPClient
import FaceSealWire
import Synchronization

/// The relying party's side of the authority's HTTP endpoints: discovery and JWKS (cached), the
/// backchannel authentication endpoint and the token endpoint, with client authentication.
final class AuthorityClient: Sendable {
    private struct Cached<Value: Sendable>: Sendable {
        var value: Value
        var fetchedAt: Date
    }

    /// The answer of one token request.
    enum TokenAnswer: Sendable {
        case tokens(TokenResponse)
        case error(OAuthErrorResponse)
    }

    let configuration: RelyingPartyConfiguration
    private let metadataCache = Mutex<Cached<ProviderMetadata>?>(nil)
    private let keysCache = Mutex<Cached<JWKSet>?>(nil)

    /// The largest answer of the backchannel or token endpoint read.
    static let maxAnswerBytes = 64 * 1024

    init(configuration: RelyingPartyConfiguration) {
        self.configuration = configuration
    }

    /// The discovery document, from the cache while it is fresh.
    func metadata() async throws(RelyingPartyError) -> ProviderMetadata {
        let now = configuration.clock.now()
        if let cached = metadataCache.withLock({ $0 }), now.timeIntervalSince(cached.fetchedAt) < configuration.metadataCacheLifetime {
            return cached.value
        }
        let issuer = configuration.issuerString
        guard let url = URL(string: issuer + "/.well-known/openid-configuration") else {
            throw .invalidConfiguration("issuer \(issuer) is not a URL")
        }
        let response = try await send(HTTPClientRequest(url: url, headers: ["Accept": "application/json"],
                                                        maxResponseBodySize: ProviderMetadata.maxBytes))
        guard response.status == .ok else { throw .discovery("discovery answered HTTP \(response.status.code)") }
        let metadata = try ProviderMetadata.parse(response.body, expectedIssuer: issuer,
                                                  authenticationMethod: configuration.authentication.methodName,
                                                  mode: configuration.tokenDeliveryMode)
        metadataCache.withLock { $0 = Cached(value: metadata, fetchedAt: now) }
        return metadata
    }

    /// The authority's ID-token keys; `refresh` skips the cache (a token named a key the cached set lacks).
    func keySet(refresh: Bool = false) async throws(RelyingPartyError) -> JWKSet {
        let now = configuration.clock.now()
        if !refresh, let cached = keysCache.withLock({ $0 }), now.timeIntervalSince(cached.fetchedAt) < configuration.metadataCacheLifetime {
            return cached.value
        }
        let metadata = try await metadata()
        let response = try await send(HTTPClientRequest(url: metadata.jwksURI, headers: ["Accept": "application/json"],
                                                        maxResponseBodySize: JWKSet.defaultMaximumSize))
        guard response.status == .ok else { throw .discovery("JWKS answered HTTP \(response.status.code)") }
        let keys: JWKSet
        do {
            keys = try JWKSet(json: response.body)
        } catch {
            throw .discovery("JWKS is malformed: \(error)")
        }
        keysCache.withLock { $0 = Cached(value: keys, fetchedAt: now) }
        return keys
    }

    /// POSTs a backchannel authentication request.
    func backchannel(_ request: BackchannelAuthenticationRequest) async throws(RelyingPartyError) -> BackchannelAuthenticationResponse {
        let metadata = try await metadata()
        let response = try await post(form: request.formItems, to: metadata.backchannelAuthenticationEndpoint, audience: metadata.issuer)
        if response.status.isSuccess {
            do {
                let answer = try BackchannelAuthenticationResponse.decodeLeniently(response.body)
                guard answer.expiresIn > 0, answer.authReqId.utf8.count >= 16, answer.authReqId.utf8.count <= 1024 else {
                    throw RelyingPartyError.unexpectedResponse("implausible auth_req_id or expires_in")
                }
                return answer
            } catch let error as RelyingPartyError {
                throw error
            } catch {
                throw .unexpectedResponse("backchannel answer: \(error)")
            }
        }
        throw Self.oauthError(response)
    }

    /// POSTs one token request for `authReqId`.
    func token(authReqId: String) async throws(RelyingPartyError) -> TokenAnswer {
        let metadata = try await metadata()
        let response = try await post(form: [("grant_type", CIBANames.grantType), ("auth_req_id", authReqId)],
                                      to: metadata.tokenEndpoint, audience: metadata.issuer)
        if response.status == .ok {
            do {
                return .tokens(try TokenResponse.decodeLeniently(response.body))
            } catch {
                throw .unexpectedResponse("token answer: \(error)")
            }
        }
        guard let error = try? OAuthErrorResponse.decodeLeniently(response.body) else {
            throw .unexpectedResponse("token endpoint answered HTTP \(response.status.code) without an OAuth error")
        }
        return .error(error)
    }

    /// POSTs the authorization code grant (RFC 6749 §4.1.3 with the PKCE verifier); an OAuth error is `.refused`.
    func token(code: String, redirectURI: String, verifier: String) async throws(RelyingPartyError) -> TokenResponse {
        let metadata = try await metadata()
        let response = try await post(
            form: [("grant_type", AuthorizationCodeNames.grantType), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)],
            to: metadata.tokenEndpoint, audience: metadata.issuer)
        guard response.status == .ok else { throw Self.oauthError(response) }
        do {
            return try TokenResponse.decodeLeniently(response.body)
        } catch {
            throw .unexpectedResponse("token answer: \(error)")
        }
    }

    private static func oauthError(_ response: HTTPClientResponse) -> RelyingPartyError {
        guard let error = try? OAuthErrorResponse.decodeLeniently(response.body) else {
            return .unexpectedResponse("HTTP \(response.status.code) without an OAuth error")
        }
        return .refused(error.error, error.errorDescription)
    }

    /// Adds client authentication to `form` and POSTs it.
    private func post(form items: [(String, String)], to url: URL, audience: String) async throws(RelyingPartyError) -> HTTPClientResponse {
        var items = items
        var headers: HTTPHeaders = ["Accept": "application/json"]
        let clientID = configuration.clientID
        switch configuration.authentication {
        case .clientSecretBasic(let secret):
            let user = FormEncoding.encode(clientID)
            let password = FormEncoding.encode(String(decoding: secret.copyBytes(), as: UTF8.self))
            headers["Authorization"] = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case .clientSecretPost(let secret):
            items.append(("client_id", clientID))
            items.append(("client_secret", String(decoding: secret.copyBytes(), as: UTF8.self)))
        case .privateKeyJWT(let signer, let keyID, let lifetime):
            let now = configuration.clock.now()
            let claims = JWTClaims(issuer: clientID, subject: clientID, audience: [audience], issuedAt: now,
                                   expiresAt: now.addingTimeInterval(lifetime), jwtID: Base64URL.encode(SecureRandom.bytes(count: 16)))
            let assertion: String
            do {
                assertion = try JWT.sign(claims, signer: signer, keyID: keyID)
            } catch {
                throw .invalidConfiguration("cannot sign the client assertion: \(error)")
            }
            items.append(("client_id", clientID))
            items.append(("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
            items.append(("client_assertion", assertion))
        }
        let form = FormParameters(items.map { FormParameters.Item(name: $0.0, value: $0.1) })
        var request = HTTPClientRequest.form(url: url, form: form, headers: headers)
        request.maxResponseBodySize = Self.maxAnswerBytes
        return try await send(request)
    }

    /// Sends `request`; a draining authority's `503` with a short `Retry-After` (it did not act on the request) is sent
    /// again, as it was, after that wait on the configured sleeper (`UnavailableRetry`). A `503` that remains is a
    /// transport failure (the poll loop tolerates a few), not the authority's answer.
    private func send(_ request: HTTPClientRequest) async throws(RelyingPartyError) -> HTTPClientResponse {
        let sleeper = configuration.sleeper
        do {
            let response = try await configuration.unavailableRetry.send(request, with: configuration.httpClient) {
                try await sleeper.sleep(seconds: $0)
            }
            guard response.status != .serviceUnavailable else { throw RelyingPartyError.transport("the authority is unavailable (HTTP 503)") }
            return response
        } catch let error as RelyingPartyError {
            throw error
        } catch let error as HTTPClientError {
            throw .transport(error.description)
        } catch {
            throw .transport("cancelled while waiting to retry")
        }
    }
}

/// `application/x-www-form-urlencoded` for one value (what HTTP Basic client credentials need, RFC 6749 §2.3.1).
enum FormEncoding {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "*"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out.append("+")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}

extension WireMessage {
    /// Decodes an answer of the authority, size-limited, ignoring fields this version does not know
    /// (OAuth servers may add members to token and error answers).
    static func decodeLeniently(_ bytes: [UInt8], limit: Int = AuthorityClient.maxAnswerBytes) throws -> Self {
        guard bytes.count <= limit else { throw RelyingPartyError.unexpectedResponse("answer exceeds \(limit) bytes") }
        let message = try JSONDecoder().decode(Self.self, from: Data(bytes))
        try message.checkRanges()
        return message
    }
}
