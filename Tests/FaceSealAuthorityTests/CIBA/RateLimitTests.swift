import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 9 item 10: the rate limits where an attacker profits — failed client authentications per client id, failed
/// device signatures per key id (each per source address and in total), pending requests per user and client — over
/// real HTTP from several loopback addresses, counted in the database. Nobody's failures lock out a valid credential
/// from an address that has not failed.
@Suite("Rate limits")
struct RateLimitTests {
    static func limits(_ edit: @escaping (inout RateLimits) -> Void) -> (inout AuthorityConfiguration) -> Void {
        { configuration in edit(&configuration.rateLimits) }
    }

    /// Expects `response` to be the 429 of a spent client-authentication budget, with a `Retry-After` within `window`.
    static func expectClientRateLimited(_ response: HTTPClientResponse, window: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status.code == 429, sourceLocation: sourceLocation)
        #expect((try? OAuthErrorResponse.decode(response.body).error) == .invalidClient, sourceLocation: sourceLocation)
        #expect(response.headers["Retry-After"].flatMap { Int($0) }.map { (1...window).contains($0) } == true, sourceLocation: sourceLocation)
    }

    @Test("a flood of wrong secrets from one address is refused after its budget; the right secret passes from that address and others",
          arguments: StoreBackend.underTest)
    func clientSecretFlood(_ backend: StoreBackend) async throws {
        let configure = Self.limits {
            $0.clientAuthenticationFailures = .init(limit: 3, window: 60, totalLimit: 5)
            $0.pendingRequestsPerUser = 0
        }
        try await withAuthority(backend, configure: configure) { harness in
            try await CIBAFixture.seed(harness)
            let wrong = TestClientAuth.post(CIBAFixture.secretClient, "wrong")
            let flooder = "127.0.0.3"
            for _ in 0..<3 { expectCIBAError(try await harness.token("any", auth: wrong, source: flooder), .invalidClient) }
            for _ in 0..<3 { Self.expectClientRateLimited(try await harness.token("any", auth: wrong, source: flooder)) }
            // The genuine client is let through from the flooding address, from another one and from the default one.
            for source in [flooder, "127.0.0.2", nil] {
                #expect(try await harness.backchannel(auth: .secretPost, source: source).status.code == 200)
            }
            // Two failures from a second address spend the total budget: its failing attempts are refused from then
            // on, and so is the first failure of a third address; the right secret still passes from all of them.
            for _ in 0..<2 { expectCIBAError(try await harness.token("any", auth: wrong, source: "127.0.0.4"), .invalidClient) }
            Self.expectClientRateLimited(try await harness.token("any", auth: wrong, source: "127.0.0.4"))
            Self.expectClientRateLimited(try await harness.token("any", auth: wrong, source: "127.0.0.5"))
            for source in [flooder, "127.0.0.4", "127.0.0.5", "127.0.0.6"] {
                #expect(try await harness.backchannel(auth: .secretBasic, source: source).status.code == 200)
            }
            // Unknown client ids are never counted: nothing an attacker sends creates rows.
            for _ in 0..<5 { expectCIBAError(try await harness.token("any", auth: .post("no-such-client", "x")), .invalidClient) }
            let unknown = RateSubject.clientAuthentication(clientID: "no-such-client")
            #expect(try await harness.store.failureWindows(keys: [unknown.totalKey, unknown.key(from: "127.0.0.1")]).isEmpty)

            harness.clock.advance(by: 61)
            expectCIBAError(try await harness.token("any", auth: wrong, source: flooder), .invalidClient)
        }
    }

    @Test("forged client assertions: each address makes the authority verify at most its budget; a valid assertion from elsewhere passes",
          arguments: StoreBackend.underTest)
    func clientAssertionFlood(_ backend: StoreBackend) async throws {
        let configure = Self.limits {
            $0.clientAuthenticationFailures = .init(limit: 3, window: 60, totalLimit: 5)
            $0.pendingRequestsPerUser = 0
        }
        try await withAuthority(backend, configure: configure) { harness in
            try await CIBAFixture.seed(harness)
            let forger = P256.Signing.PrivateKey()
            func forged(from source: String) async throws -> HTTPClientResponse {
                try await harness.token("any", auth: .assertion(try CIBAFixture.assertion(harness, key: forger), clientID: nil), source: source)
            }
            func genuine(from source: String) async throws -> HTTPClientResponse {
                try await harness.backchannel(auth: .assertion(try CIBAFixture.assertion(harness), clientID: nil), source: source)
            }
            func verifications() -> Int { harness.authority.clientKeySets.counts.verifications }

            let flooder = "127.0.0.3"
            for _ in 0..<3 { expectCIBAError(try await forged(from: flooder), .invalidClient) }
            #expect(verifications() == 3)
            for _ in 0..<5 { Self.expectClientRateLimited(try await forged(from: flooder)) }
            #expect(verifications() == 3)
            #expect(try await genuine(from: "127.0.0.2").status.code == 200)
            #expect(verifications() == 4)

            // A second address spends the total budget; then an address that failed is refused unverified, one that
            // did not is verified once, and a valid assertion from an address without failures still passes.
            for _ in 0..<2 { expectCIBAError(try await forged(from: "127.0.0.4"), .invalidClient) }
            Self.expectClientRateLimited(try await forged(from: "127.0.0.4"))
            #expect(verifications() == 6)
            Self.expectClientRateLimited(try await forged(from: "127.0.0.5"))
            Self.expectClientRateLimited(try await forged(from: "127.0.0.5"))
            #expect(verifications() == 7)
            #expect(try await genuine(from: "127.0.0.2").status.code == 200)
            #expect(try await genuine(from: "127.0.0.6").status.code == 200)
            // The price of the bound: an assertion from the flooding address itself is not verified until its window ends.
            Self.expectClientRateLimited(try await genuine(from: flooder))

            harness.clock.advance(by: 61)
            #expect(try await genuine(from: flooder).status.code == 200)
        }
    }

    @Test("X-Forwarded-For names the source only from a trusted proxy; an IPv6 /64 counts as one source",
          arguments: StoreBackend.underTest)
    func forwardedSources(_ backend: StoreBackend) async throws {
        let configure = Self.limits {
            $0.clientAuthenticationFailures = .init(limit: 2, window: 60, totalLimit: 0)
            $0.trustedProxies = [IPAddress("127.0.0.1")!]
        }
        try await withAuthority(backend, configure: configure) { harness in
            try await CIBAFixture.seed(harness)
            let wrong = TestClientAuth.post(CIBAFixture.secretClient, "wrong")
            // Through the proxy: each forwarded address has its own budget, and a /64 is one address.
            for host in ["2001:db8:1:2::a", "2001:db8:1:2::b"] {
                expectCIBAError(try await harness.token("any", auth: wrong, forwardedFor: "198.51.100.9, \(host)"), .invalidClient)
            }
            Self.expectClientRateLimited(try await harness.token("any", auth: wrong, forwardedFor: "2001:db8:1:2::c"))
            expectCIBAError(try await harness.token("any", auth: wrong, forwardedFor: "2001:db8:1:3::a"), .invalidClient)
            // Not through the proxy: the header is the client's own word, and the peer address is counted.
            for index in 0..<2 {
                expectCIBAError(try await harness.token("any", auth: wrong, source: "127.0.0.2", forwardedFor: "192.0.2.\(index)"), .invalidClient)
            }
            Self.expectClientRateLimited(try await harness.token("any", auth: wrong, source: "127.0.0.2", forwardedFor: "192.0.2.99"))
        }
    }

    @Test("forged device signatures: the source is refused rate_limited (429, Retry-After) after its budget, unverified; the device passes from elsewhere",
          arguments: StoreBackend.underTest)
    func deviceSignatureFailures(_ backend: StoreBackend) async throws {
        let configure = Self.limits {
            $0.deviceSignatureFailures = .init(limit: 3, window: 60)
            $0.trustedProxies = [IPAddress("127.0.0.1")!]
        }
        try await withAuthority(backend, configure: configure) { harness in
            try await seedDeviceWorld(harness)
            let (device, _) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: "app-1")
            let forger = P256.Signing.PrivateKey()
            let flooder = "203.0.113.7"
            func forged() async throws -> HTTPClientResponse {
                let signature = try DeviceRequestSignature.make(method: "GET", path: DevicePaths.outbox, body: [], kid: device.ambientKID,
                                                                signer: forger, now: device.now)
                return try await harness.client.send(HTTPClientRequest(method: .get, url: harness.url(DevicePaths.outbox), headers: [
                    DeviceSigning.requestHeader: signature.header, DeviceSigning.protocolHeader: String(ProtocolVersion.current),
                    "X-Forwarded-For": flooder,
                ]))
            }
            for _ in 0..<3 {
                let response = try await forged()
                #expect(response.status.code == 401)
                #expect(try DeviceErrorResponse.decode(response.body).error == .invalidSignature)
            }
            let refused = try await forged()
            #expect(refused.status.code == 429)
            #expect(try DeviceErrorResponse.decode(refused.body).error == .rateLimited)
            #expect(refused.headers["Retry-After"].flatMap { Int($0) }.map { (1...60).contains($0) } == true)
            // The genuine device, from its own address, is not affected; from the flooding address it waits.
            #expect(try await device.send(.get, DevicePaths.outbox).status == 200)
            #expect(try await device.sendUnverified(.get, DevicePaths.outbox, forwardedFor: "203.0.113.8").status.code == 200)
            #expect(try await device.sendUnverified(.get, DevicePaths.outbox, forwardedFor: flooder).status.code == 429)
            // The other key of the same device is not affected.
            #expect(try await device.send(.get, DevicePaths.outbox, as: .userPresent).status == 200)

            harness.clock.advance(by: 61)
            #expect(try await device.sendUnverified(.get, DevicePaths.outbox, forwardedFor: flooder).status.code == 200)
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
