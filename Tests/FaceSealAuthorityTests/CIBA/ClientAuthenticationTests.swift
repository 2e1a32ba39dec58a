import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Client authentication at both endpoints: each method succeeding, and `invalid_client` for each.
@Suite struct ClientAuthenticationTests {
    @Test(arguments: StoreBackend.underTest)
    func clientSecretBasicSucceedsAtBothEndpoints(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest(auth: .secretBasic)
            try await harness.complete(ack.authReqId)
            #expect(try await harness.token(ack.authReqId, auth: .secretBasic).status.code == 200)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func clientSecretPostSucceedsAtBothEndpoints(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest(auth: .secretPost)
            try await harness.complete(ack.authReqId)
            #expect(try await harness.token(ack.authReqId, auth: .secretPost).status.code == 200)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func privateKeyJWTSucceedsAtBothEndpoints(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            // aud = the issuer at one endpoint, the endpoint URL at the other (CIBA Core §7.1 accepts both).
            let ack = try await harness.startRequest(auth: .assertion(try CIBAFixture.assertion(harness), clientID: nil))
            try await harness.complete(ack.authReqId)
            let tokenAssertion = try CIBAFixture.assertion(harness, audience: harness.baseURL.absoluteString + CIBAPaths.token)
            let response = try await harness.token(ack.authReqId, auth: .assertion(tokenAssertion, clientID: CIBAFixture.jwtClient))
            #expect(response.status.code == 200)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidClientForClientSecretBasic(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            for auth in [TestClientAuth.basic(CIBAFixture.secretClient, "wrong"), .basic("no-such-client", CIBAFixture.secret),
                         .basic(CIBAFixture.jwtClient, CIBAFixture.secret)] {
                let response = try await harness.backchannel(auth: auth)
                expectCIBAError(response, .invalidClient)
                #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
                let token = try await harness.token("any", auth: auth)
                expectCIBAError(token, .invalidClient)
                #expect(token.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
            }
            var malformed = HTTPClientRequest(method: .post, url: harness.url(CIBAPaths.token),
                                              headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic !!!"],
                                              body: Array("grant_type=x".utf8))
            expectCIBAError(try await harness.client.send(malformed), .invalidClient)
            malformed.headers["Authorization"] = nil
            expectCIBAError(try await harness.client.send(malformed), .invalidClient)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidClientForClientSecretPost(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            for auth in [TestClientAuth.post(CIBAFixture.secretClient, "wrong"), .post("no-such-client", CIBAFixture.secret),
                         .post("nul\u{0}client", CIBAFixture.secret)] {
                expectCIBAError(try await harness.backchannel(auth: auth), .invalidClient)
                expectCIBAError(try await harness.token("any", auth: auth), .invalidClient)
            }
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidClientForPrivateKeyJWT(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let stranger = P256.Signing.PrivateKey()
            let cases: [String] = [
                try CIBAFixture.assertion(harness, key: stranger),                          // not the client's key
                try CIBAFixture.assertion(harness, audience: "https://elsewhere.example"),  // another audience
                try CIBAFixture.assertion(harness, lifetime: -120),                         // expired
                try CIBAFixture.assertion(harness, lifetime: 3600),                         // lives too long
                try CIBAFixture.assertion(harness, clientID: CIBAFixture.secretClient),     // client without a JWKS
                "not-a-jwt",
            ]
            for assertion in cases {
                expectCIBAError(try await harness.backchannel(auth: .assertion(assertion, clientID: nil)), .invalidClient)
            }
            // A long jti with control characters is just a jti.
            let odd = try CIBAFixture.assertion(harness, jti: String(repeating: "j\u{1}", count: 128))
            #expect(try await harness.backchannel(auth: .assertion(odd, clientID: nil)).status.code == 200)
            // A replayed jti: accepted once, refused the second time.
            let once = try CIBAFixture.assertion(harness, jti: "jti-once")
            #expect(try await harness.backchannel(auth: .assertion(once, clientID: nil)).status.code == 200)
            expectCIBAError(try await harness.backchannel(auth: .assertion(once, clientID: nil)), .invalidClient)
            // A client_id that contradicts the assertion.
            expectCIBAError(try await harness.backchannel(auth: .assertion(try CIBAFixture.assertion(harness),
                                                                            clientID: CIBAFixture.secretClient)), .invalidClient)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func twoMethodsAtOnceAreRefused(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            var request = HTTPClientRequest.form(
                url: harness.url(CIBAPaths.backchannel),
                form: FormParameters([.init(name: "scope", value: "openid"), .init(name: "login_hint", value: CIBAFixture.userEmail),
                                      .init(name: "client_id", value: CIBAFixture.secretClient),
                                      .init(name: "client_secret", value: CIBAFixture.secret)]))
            request.headers["Authorization"] = "Basic " + Data("\(CIBAFixture.secretClient):\(CIBAFixture.secret)".utf8).base64EncodedString()
            expectCIBAError(try await harness.client.send(request), .invalidRequest)
        }
    }

    @Test func secretsAreHashedWithSHA256() throws {
        #expect(ClientSecret.hash("abc") == SHA256.hash(data: Array("abc".utf8)).bytes)
        let secret = ClientSecret.generate()
        #expect(try Base64URL.decode(secret).count == 32)
        #expect(ClientSecret.generate() != secret)
    }
}
