import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// The application side of these tests: a confidential client `rp` of tenant `acme` with a known secret.
struct TestApplication {
    static let clientID = "rp"
    static let secret = "rp-secret-0123456789"

    static func register(_ harness: AuthorityHarness) async throws {
        _ = try await harness.store.createApplication(ApplicationRecord(
            clientID: clientID, tenantID: "acme", label: "Relying Party", credential: .secretHash(ClientSecret.hash(secret)),
            deliveryEndpoint: "https://rp.example/delivery", idTokenSignedResponseAlg: "EdDSA"))
    }

    static func form(_ pairs: [(String, String)]) -> FormParameters {
        FormParameters((pairs + [("client_id", clientID), ("client_secret", secret)]).map { FormParameters.Item(name: $0.0, value: $0.1) })
    }

    /// This application's client of `harness` (`client_secret_post`).
    static func client(_ harness: AuthorityHarness) -> ApplicationHarness {
        ApplicationHarness(authority: harness.baseURL, clientID: clientID, secret: secret, authentication: .post)
    }

    /// Starts a ceremony (`sign`) or a sign-in for `user-1`; answers the `auth_req_id`.
    static func start(_ harness: AuthorityHarness, ceremony: Bool) async throws -> String {
        var pairs = [("scope", "openid"), ("login_hint", "user-1@example.com"), ("client_notification_token", "bearer-token-1")]
        if ceremony {
            pairs += [("pki_kind", "sign"), ("pki_data", Base64URL.encode(Array("invoice 114".utf8))), ("binding_message", "Sign invoice 114")]
        }
        let response = try await client(harness).backchannel(pairs)
        guard response.status.code == 200 else { throw TestDeviceError.refused(response.status.code, nil) }
        return try BackchannelAuthenticationResponse.decode(response.body).authReqId
    }

    /// One token request's error answer (nil for a success).
    static func tokenError(_ harness: AuthorityHarness, _ authReqID: String) async throws -> OAuthErrorResponse? {
        let response = try await client(harness).token(authReqID)
        return response.status.code == 200 ? nil : try OAuthErrorResponse.decode(response.body)
    }

    /// One token request: the error code, or the ID token.
    static func token(_ harness: AuthorityHarness, _ authReqID: String) async throws -> (error: String?, idToken: String?) {
        let response = try await client(harness).token(authReqID)
        if response.status.code == 200 { return (nil, try TokenResponse.decode(response.body).idToken) }
        return (try OAuthErrorResponse.decode(response.body).error.rawValue, nil)
    }
}

@Suite("Device API with the CIBA endpoints: link to ID token, stale token, abort")
struct DeviceEndToEndTests {
    @Test("a ceremony's link reaches the outbox; the device completes; the ID token carries the receipt",
          arguments: StoreBackend.underTest)
    func ceremonyToIDToken(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let rid = try await TestApplication.start(harness, ceremony: true)

            let links = try await device.send(.get, DevicePaths.outbox + "?wait=5").decode(OutboxResponse.self).links
            #expect(links.count == 1)
            let link = try LinkSignature.parse(Array(links[0].utf8)).verify(with: device.authorityKey, now: device.now)
            #expect(link.rid == rid)
            #expect(link.kind == .ceremony)
            let details = try await device.send(.get, DevicePaths.request(rid)).decode(RequestDetails.self)
            #expect(details.nonce == link.nonce)
            #expect(details.bindingMessage == "Sign invoice 114")

            let delivered = receipt("the delivery body")
            let completion = try TestDevice.completion(rid: rid, from: try await downloadToken(device, rid), receipt: delivered)
            #expect(try await device.post(DevicePaths.completion(rid), completion).status == 200)

            let (error, idToken) = try await TestApplication.token(harness, rid)
            #expect(error == nil)
            let claims = try JWTClaims(payload: try JWS.parse(try #require(idToken)).payload)
            #expect(claims[CIBANames.receiptClaim]?.stringValue == Base64URL.encode(delivered))
        }
    }

    @Test("the losing completion is stale_token for the device and for the application's token request",
          arguments: StoreBackend.underTest)
    func staleTokenReachesTheApplication(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let ceremony = try await TestApplication.start(harness, ceremony: true)
            let login = try await TestApplication.start(harness, ceremony: false)
            let ceremonyCompletion = try TestDevice.completion(rid: ceremony, from: try await downloadToken(device, ceremony), receipt: receipt("d"))
            let loginCompletion = try TestDevice.completion(rid: login, from: try await downloadToken(device, login), receipt: nil)

            #expect(try await device.post(DevicePaths.completion(login), loginCompletion).status == 200)
            expectDeviceError(try await device.post(DevicePaths.completion(ceremony), ceremonyCompletion), .staleToken)
            #expect(try await TestApplication.token(harness, ceremony).error == "stale_token")
            #expect(try await TestApplication.token(harness, login).idToken != nil)
        }
    }

    @Test("an abort makes the application's token request answer access_denied at once", arguments: StoreBackend.underTest)
    func abortIsAccessDenied(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness)
            try await TestApplication.register(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: TestApplication.clientID)
            let rid = try await TestApplication.start(harness, ceremony: true)
            #expect(try await TestApplication.token(harness, rid).error == "authorization_pending")
            #expect(try await device.post(DevicePaths.abort(rid), AbortRequest(rid: rid, reason: .userCancelled)).status == 204)
            harness.clock.advance(by: 5)
            #expect(try await TestApplication.token(harness, rid).error == "access_denied")
        }
    }
}
