import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 9 item 10: the rate limits where an attacker profits — failed client authentications per client id, failed
/// device signatures per key id, pending requests per user and client — over real HTTP, counted in the database.
@Suite("Rate limits")
struct RateLimitTests {
    static func limits(_ edit: @escaping (inout RateLimits) -> Void) -> (inout AuthorityConfiguration) -> Void {
        { configuration in edit(&configuration.rateLimits) }
    }

    @Test("failed client authentications: the limit answers 429 with Retry-After, even the right secret, until the window ends",
          arguments: StoreBackend.underTest)
    func clientAuthenticationFailures(_ backend: StoreBackend) async throws {
        let configure = Self.limits { $0.clientAuthenticationFailures = .init(limit: 3, window: 60) }
        try await withAuthority(backend, configure: configure) { harness in
            try await CIBAFixture.seed(harness)
            let wrong = TestClientAuth.post(CIBAFixture.secretClient, "wrong")
            for _ in 0..<3 { expectCIBAError(try await harness.token("any", auth: wrong), .invalidClient) }
            for auth in [wrong, .secretPost] {
                let refused = try await harness.backchannel(auth: auth)
                #expect(refused.status.code == 429)
                #expect(try OAuthErrorResponse.decode(refused.body).error == .invalidClient)
                let retryAfter = try #require(refused.headers["Retry-After"].flatMap { Int($0) })
                #expect((1...60).contains(retryAfter))
            }
            // Unknown client ids are never counted: nothing an attacker sends creates rows.
            for _ in 0..<5 { expectCIBAError(try await harness.token("any", auth: .post("no-such-client", "x")), .invalidClient) }
            #expect(try await harness.store.failureWindow(key: RateKey.clientAuthentication(clientID: "no-such-client").storeKey) == nil)

            harness.clock.advance(by: 61)
            #expect(try await harness.backchannel(auth: .secretPost).status.code == 200)
        }
    }

    @Test("failed device signatures: the limit answers rate_limited (429, Retry-After) for the key id until the window ends",
          arguments: StoreBackend.underTest)
    func deviceSignatureFailures(_ backend: StoreBackend) async throws {
        let configure = Self.limits { $0.deviceSignatureFailures = .init(limit: 3, window: 60) }
        try await withAuthority(backend, configure: configure) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let forger = P256.Signing.PrivateKey()
            func forged() async throws -> HTTPClientResponse {
                let signature = try DeviceRequestSignature.make(method: "GET", path: DevicePaths.outbox, body: [], kid: device.ambientKID,
                                                                signer: forger, now: device.now)
                return try await harness.client.send(HTTPClientRequest(method: .get, url: harness.url(DevicePaths.outbox), headers: [
                    DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: String(ProtocolVersion.current),
                ]))
            }
            for _ in 0..<3 {
                let response = try await forged()
                #expect(response.status.code == 401)
                #expect(try DeviceErrorResponse.decode(response.body).error == .invalidSignature)
            }
            #expect(try await forged().status.code == 429)
            let genuine = try await device.sendUnverified(.get, DevicePaths.outbox)
            #expect(genuine.status.code == 429)
            #expect(try DeviceErrorResponse.decode(genuine.body).error == .rateLimited)
            #expect(genuine.headers["Retry-After"].flatMap { Int($0) }.map { (1...60).contains($0) } == true)
            // The other key of the same device is not affected.
            #expect(try await device.send(.get, DevicePaths.outbox, as: .userPresent).status == 200)

            harness.clock.advance(by: 61)
            #expect(try await device.send(.get, DevicePaths.outbox).status == 200)
        }
    }

    @Test("pending requests per user and client: one more is access_denied with Retry-After; other clients and freed slots pass",
          arguments: StoreBackend.underTest)
    func pendingRequestsPerUser(_ backend: StoreBackend) async throws {
        let configure = Self.limits { $0.pendingRequestsPerUser = 2 }
        try await withAuthority(backend, configure: configure) { harness in
            try await CIBAFixture.seed(harness)
            let first = try await harness.startRequest()
            _ = try await harness.startRequest()
            let refused = try await harness.backchannel()
            expectCIBAError(refused, .accessDenied)
            let retryAfter = try #require(refused.headers["Retry-After"].flatMap { Int($0) })
            #expect(retryAfter >= 1 && retryAfter <= first.expiresIn)
            // Another application of the same user has its own allowance.
            _ = try await harness.startRequest(auth: .post(CIBAFixture.noDeliveryClient, CIBAFixture.secret))
            // A finished request frees its slot.
            try await harness.complete(first.authReqId)
            _ = try await harness.startRequest()
            expectCIBAError(try await harness.backchannel(), .accessDenied)
            // So does expiry.
            harness.clock.advance(by: TimeInterval(first.expiresIn + 1))
            _ = try await harness.startRequest()
        }
    }
}
