import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// A ping-mode application end to end: backchannel request, the device completes over the device API, the authority
/// pings the application, which fetches an ID token whose `sub` is the identity id the device enrolled with.
@Suite struct PingOverDeviceAPITests {
    static let clientID = "rp-ping"
    static let secret = "rp-ping-secret-0123456789"

    @Test(arguments: StoreBackend.underTest)
    func deviceCompletionPingsTheApplicationWhichThenGetsItsIDToken(_ backend: StoreBackend) async throws {
        let receiver = try PingReceiver()
        let endpoint = try #require(receiver.server.baseURL).absoluteString + "/notify"
        try await withAuthority(backend) { harness in
            try await seedDeviceWorld(harness, policy: TenantPolicy(passwordPolicy: PasswordPolicy(mode: .optional), furtherDeviceApproval: .none))
            _ = try await harness.store.createApplication(ApplicationRecord(
                clientID: Self.clientID, tenantID: "acme", label: "Ping RP", credential: .secretHash(ClientSecret.hash(Self.secret)),
                deliveryMode: .ping, notificationEndpoint: endpoint, deliveryEndpoint: "https://rp.example/delivery",
                idTokenSignedResponseAlg: "ML-DSA-65"))
            let (device, enrolment) = try await TestDevice.enrolled(in: harness, subject: "user-1", clientID: Self.clientID,
                                                                    tokenPassword: "open sesame")
            #expect(enrolment.identityId == harness.authority.pairwiseSubject(userSubject: "user-1", clientID: Self.clientID))

            let auth = TestClientAuth.post(Self.clientID, Self.secret)
            let ack = try await harness.startRequest(AuthorityHarness.signCeremony.map { $0.0 == "client_notification_token" ? ($0.0, "ping-me") : $0 },
                                                     auth: auth)
            expectCIBAError(try await harness.token(ack.authReqId, auth: auth), .authorizationPending)

            let delivered = receipt("the exact delivery body")
            let completion = try TestDevice.completion(rid: ack.authReqId, from: try await downloadToken(device, ack.authReqId),
                                                       receipt: delivered, password: "open sesame")
            #expect(try await device.post(DevicePaths.completion(ack.authReqId), completion).status == 200)

            let ping = try #require(await receiver.next())
            #expect(ping.headers["Authorization"] == "Bearer ping-me")
            #expect(try PingCallback.decode(ping.body) == PingCallback(authReqId: ack.authReqId))

            let response = try await harness.token(ack.authReqId, auth: auth)
            #expect(response.status.code == 200)
            let tokens = try TokenResponse.decode(response.body)
            let jwks = try JWKSet(json: try await harness.get(CIBAPaths.jwks).body)
            let (header, claims) = try JWT.verify(tokens.idToken, keySet: jwks, factory: .includingMLDSA65,
                                                  validation: JWTValidation(now: harness.clock.now(), audience: Self.clientID))
            #expect(header.algorithm == .mlDSA65)
            #expect(claims.subject == enrolment.identityId)
            #expect(claims[CIBANames.receiptClaim]?.stringValue == Base64URL.encode(delivered))
            #expect(claims["amr"] == .array([.string("face"), .string("hwk"), .string("pwd")]))
        }
        await receiver.server.stop()
    }
}
