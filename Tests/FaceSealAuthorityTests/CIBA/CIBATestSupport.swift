import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Clients and users of the CIBA tests, set up directly through the store.
enum CIBAFixture {
    /// The secret of every secret-authenticated test client.
    static let secret = "s3cret-of-the-relying-party-0123456789"
    /// A client authenticated with `client_secret_*`, poll mode, with a delivery endpoint.
    static let secretClient = "rp-secret"
    /// A client authenticated with `private_key_jwt`.
    static let jwtClient = "rp-jwt"
    /// A client without a delivery endpoint (no ceremonies).
    static let noDeliveryClient = "rp-nodelivery"
    /// The enrolled user (face token at generation 1) of tenant `acme`.
    static let user = "user-1"
    static let userEmail = "user-1@example.com"
    /// A user of another tenant.
    static let foreignUser = "stranger"

    /// The `private_key_jwt` client's key.
    static let clientKey = P256.Signing.PrivateKey()
    static var clientKeyID: String { "rp-jwt-key-1" }

    /// Seeds tenant `acme` (with `policy`), the enrolled user, and the three clients; `secretClient` gets `alg`,
    /// `deliveryMode` and `notificationEndpoint`.
    static func seed(
        _ harness: AuthorityHarness, alg: String = "RS256", deliveryMode: DeliveryMode = .poll,
        notificationEndpoint: String? = nil, policy: TenantPolicy = TenantPolicy()
    ) async throws {
        let store = harness.store
        try await StoreFixtures.seedEnrolled(store, clock: harness.clock, policy: policy)
        _ = try await store.createApplication(ApplicationRecord(
            clientID: secretClient, tenantID: "acme", label: "Secret RP", credential: .secretHash(ClientSecret.hash(secret)),
            deliveryMode: deliveryMode, notificationEndpoint: notificationEndpoint, deliveryEndpoint: "https://rp.example/deliver",
            idTokenSignedResponseAlg: alg
        ))
        var jwk = JWK(publicKey: clientKey.publicKey, keyID: clientKeyID)
        jwk.use = "sig"
        _ = try await store.createApplication(ApplicationRecord(
            clientID: jwtClient, tenantID: "acme", label: "JWT RP",
            credential: .jwks(String(decoding: JWKSet(keys: [jwk]).jsonData, as: UTF8.self)),
            deliveryEndpoint: "https://rp-jwt.example/deliver", idTokenSignedResponseAlg: "ES256"
        ))
        _ = try await store.createApplication(ApplicationRecord(
            clientID: noDeliveryClient, tenantID: "acme", label: "No delivery RP", credential: .secretHash(ClientSecret.hash(secret))
        ))
        // The user's device keys for each client (a device key acts only for its enrolment's application).
        for client in [secretClient, jwtClient, noDeliveryClient] {
            _ = try await store.createInvitation(StoreFixtures.invitation("inv-\(client)", clock: harness.clock, clientID: client))
            _ = try await store.enrol(StoreFixtures.enrolmentRequest(invitationID: "inv-\(client)", enrolmentID: "enr-\(client)",
                                                                     deviceID: "device-1", keyPrefix: client, token: nil))
        }
        _ = try await store.createTenant(TenantRecord(id: "other", name: "Other"))
        _ = try await store.createUser(UserRecord(subject: foreignUser, tenantID: "other", email: "stranger@example.com"))
    }

    /// A signed `private_key_jwt` assertion.
    static func assertion(
        _ harness: AuthorityHarness, clientID: String = jwtClient, key: P256.Signing.PrivateKey = clientKey,
        audience: String? = nil, jti: String = UUID().uuidString, lifetime: TimeInterval = 60
    ) throws -> String {
        let now = harness.clock.now()
        let claims = JWTClaims(issuer: clientID, subject: clientID, audience: [audience ?? harness.baseURL.absoluteString],
                               issuedAt: now, expiresAt: now.addingTimeInterval(lifetime), jwtID: jti)
        return try JWT.sign(claims, signer: key, keyID: clientKeyID)
    }
}

/// How a test request authenticates its client.
enum TestClientAuth {
    case basic(String, String)
    case post(String, String)
    case assertion(String, clientID: String?)
    case none

    static var secretBasic: TestClientAuth { .basic(CIBAFixture.secretClient, CIBAFixture.secret) }
    static var secretPost: TestClientAuth { .post(CIBAFixture.secretClient, CIBAFixture.secret) }
}

extension AuthorityHarness {
    /// POSTs a form to `path` with the client authentication applied; with `source`, from that local address
    /// (127.0.0.2… play other clients); with `forwardedFor`, naming that address in `X-Forwarded-For`.
    func postForm(_ path: String, _ parameters: [(String, String)], auth: TestClientAuth, source: String? = nil,
                  forwardedFor: String? = nil) async throws -> HTTPClientResponse {
        var items = parameters.map { FormParameters.Item(name: $0.0, value: $0.1) }
        var headers: HTTPHeaders = [:]
        switch auth {
        case .basic(let id, let secret):
            let encode: (String) -> String = { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }
            headers["Authorization"] = "Basic " + Data("\(encode(id)):\(encode(secret))".utf8).base64EncodedString()
        case .post(let id, let secret):
            items += [FormParameters.Item(name: "client_id", value: id), FormParameters.Item(name: "client_secret", value: secret)]
        case .assertion(let jwt, let clientID):
            items += [FormParameters.Item(name: "client_assertion_type", value: Authority.jwtBearerAssertionType),
                      FormParameters.Item(name: "client_assertion", value: jwt)]
            if let clientID { items.append(FormParameters.Item(name: "client_id", value: clientID)) }
        case .none:
            break
        }
        if let forwardedFor { headers["X-Forwarded-For"] = forwardedFor }
        var request = HTTPClientRequest.form(url: url(path), form: FormParameters(items), headers: headers)
        // Generous: the build machine is shared and heavily loaded; a slow answer is not a failure here.
        request.timeout = .seconds(120)
        if let source { return try await onItsOwnThread { [request] in try RawHTTPClient.exchange(request, source: source) } }
        return try await client.send(request)
    }

    /// GETs `path` (with the same generous timeout).
    func get(_ path: String) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(url: url(path), timeout: .seconds(120)))
    }

    /// A sign-in request for the enrolled user.
    func backchannel(_ extra: [(String, String)] = [], hint: (String, String) = ("login_hint", CIBAFixture.userEmail),
                     scope: String? = "openid", auth: TestClientAuth = .secretBasic, source: String? = nil) async throws -> HTTPClientResponse {
        var parameters: [(String, String)] = []
        if let scope { parameters.append(("scope", scope)) }
        parameters.append(hint)
        return try await postForm(CIBAPaths.backchannel, parameters + extra, auth: auth, source: source)
    }

    /// Starts a request that must succeed; returns its acknowledgement.
    func startRequest(_ extra: [(String, String)] = [], auth: TestClientAuth = .secretBasic,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> BackchannelAuthenticationResponse {
        let response = try await backchannel(extra, auth: auth)
        try #require(response.status.code == 200, "backchannel answered \(response.status.code): \(String(decoding: response.body, as: UTF8.self))",
                     sourceLocation: sourceLocation)
        return try BackchannelAuthenticationResponse.decode(response.body)
    }

    /// A ceremony's extra parameters.
    static var signCeremony: [(String, String)] {
        [("pki_kind", "sign"), ("pki_data", Base64URL.encode(Array("message".utf8))), ("binding_message", "Sign the contract"),
         ("client_notification_token", "bearer-token-123")]
    }

    /// A token request.
    func token(_ authReqID: String, auth: TestClientAuth = .secretBasic, grantType: String = CIBANames.grantType,
               source: String? = nil, forwardedFor: String? = nil) async throws -> HTTPClientResponse {
        try await postForm(CIBAPaths.token, [("grant_type", grantType), ("auth_req_id", authReqID)], auth: auth, source: source,
                           forwardedFor: forwardedFor)
    }

    /// Downloads a request's face token through the store, as the device API would, with the user-present key of the
    /// request's application; answers the commit that completes from that download.
    func download(_ authReqID: String, marker: UInt8 = 7) async throws -> CompletionCommit {
        let keyID = try await store.request(authReqID: authReqID).clientID + "-present"
        let token = try await store.downloadFaceToken(authReqID: authReqID, keyID: keyID)
        var commit = StoreFixtures.completion(authReqID, expected: token.generation, marker: marker)
        commit.keyID = keyID
        return commit
    }

    /// Downloads and completes a request through the store, as the device API would, with a receipt of `marker` bytes.
    @discardableResult
    func complete(_ authReqID: String, marker: UInt8 = 7, passwordUsed: Bool = false) async throws -> CompletionOutcome {
        var commit = try await download(authReqID, marker: marker)
        commit.passwordUsed = passwordUsed
        return try await store.complete(commit)
    }
}

/// Expects an OAuth error response with `code`, the status CIBA gives it, and `Cache-Control: no-store`.
func expectCIBAError(_ response: HTTPClientResponse, _ code: CIBAErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status.code == code.httpStatus, sourceLocation: sourceLocation)
    let body = try? OAuthErrorResponse.decode(response.body)
    #expect(body?.error == code, "body: \(String(decoding: response.body, as: UTF8.self))", sourceLocation: sourceLocation)
    #expect(response.headers["Cache-Control"] == "no-store", sourceLocation: sourceLocation)
}
