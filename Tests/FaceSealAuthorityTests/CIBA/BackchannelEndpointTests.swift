import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// The backchannel authentication endpoint over real HTTP: each CIBA error code by its own test, and what a
/// successful request stores.
@Suite struct BackchannelEndpointTests {
    @Test(arguments: StoreBackend.underTest)
    func signInRequestIsStoredAndAcknowledged(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let response = try await harness.backchannel()
            #expect(response.status.code == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            let ack = try BackchannelAuthenticationResponse.decode(response.body)
            #expect(ack.expiresIn == 300)
            #expect(ack.interval == 5)
            // ≥ 128 bits of randomness, base64url.
            #expect(try Base64URL.decode(ack.authReqId).count >= 16)
            let stored = try await harness.store.request(authReqID: ack.authReqId)
            #expect(stored.state == .pending)
            #expect(stored.kind == .login)
            #expect(stored.subject == CIBAFixture.user)
            #expect(stored.clientID == CIBAFixture.secretClient)
            #expect(stored.expiresAt == harness.clock.now().addingTimeInterval(300))
            let second = try await harness.startRequest()
            #expect(second.authReqId != ack.authReqId)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func loginHintMayBeTheSubject(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let response = try await harness.backchannel(hint: ("login_hint", CIBAFixture.user))
            #expect(response.status.code == 200)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func ceremonyIsStoredWithItsParameters(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let ack = try await harness.startRequest(AuthorityHarness.signCeremony + [("pki_context", "invoice-42")])
            let stored = try await harness.store.request(authReqID: ack.authReqId)
            #expect(stored.kind == .ceremony)
            #expect(stored.pkiKind == "sign")
            #expect(stored.pkiData == Array("message".utf8))
            #expect(stored.pkiContext == Array("invoice-42".utf8))
            #expect(stored.bindingMessage == "Sign the contract")
            #expect(stored.clientNotificationToken == "bearer-token-123")
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func requestedExpiryIsBoundedByTheTenantPolicy(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, policy: TenantPolicy(requestLifetimeSeconds: 120))
            let shorter = try await harness.startRequest([("requested_expiry", "60")])
            #expect(shorter.expiresIn == 60)
            let longer = try await harness.startRequest([("requested_expiry", "3600")])
            #expect(longer.expiresIn == 120)
            let unasked = try await harness.startRequest()
            #expect(unasked.expiresIn == 120)
        }
    }

    // MARK: Each CIBA error of the authentication endpoint

    @Test(arguments: StoreBackend.underTest)
    func invalidRequest(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            // No scope.
            expectCIBAError(try await harness.backchannel(scope: nil), .invalidRequest)
            // An over-long scope, a scope with a NUL.
            expectCIBAError(try await harness.backchannel(scope: "openid " + String(repeating: "s", count: 3000)), .invalidRequest)
            expectCIBAError(try await harness.backchannel(scope: "openid x\u{0}"), .invalidRequest)
            // Two hints.
            expectCIBAError(try await harness.backchannel([("id_token_hint", "x.y.z")]), .invalidRequest)
            // Bad requested_expiry, bad pki_data, ceremony without client_notification_token.
            for expiry in ["soon", "0", "-1", "86401", "9223372036854775807", "-9223372036854775808", "9223372036854775808"] {
                expectCIBAError(try await harness.backchannel([("requested_expiry", expiry)]), .invalidRequest)
            }
            expectCIBAError(try await harness.backchannel([("pki_kind", "sign"), ("pki_data", "not base64url!"),
                                                           ("binding_message", "x"), ("client_notification_token", "t")]), .invalidRequest)
            expectCIBAError(try await harness.backchannel([("pki_kind", "public_keys"), ("binding_message", "Share keys")]), .invalidRequest)
            // A signed request object is not supported.
            expectCIBAError(try await harness.backchannel([("request", "eyJ.eyJ.sig")]), .invalidRequest)
            // Repeated parameter, wrong content type, malformed encoding.
            expectCIBAError(try await harness.backchannel([("scope", "openid")]), .invalidRequest)
            var wrongType = HTTPClientRequest(method: .post, url: harness.url(CIBAPaths.backchannel),
                                              headers: ["Content-Type": "application/json"], body: Array(#"{"scope":"openid"}"#.utf8))
            wrongType.headers["Authorization"] = "Basic " + Data("\(CIBAFixture.secretClient):\(CIBAFixture.secret)".utf8).base64EncodedString()
            expectCIBAError(try await harness.client.send(wrongType), .invalidRequest)
            var badEncoding = wrongType
            badEncoding.headers["Content-Type"] = "application/x-www-form-urlencoded"
            badEncoding.body = Array("scope=openid&login_hint=%zz".utf8)
            expectCIBAError(try await harness.client.send(badEncoding), .invalidRequest)
            // An oversized form.
            let huge = Base64URL.encode([UInt8](repeating: 1, count: 100_000))
            expectCIBAError(try await harness.backchannel(AuthorityHarness.signCeremony.filter { $0.0 != "pki_data" } + [("pki_data", huge)]),
                            .invalidRequest)
            // Nothing was stored by any of them.
            let count = try await requestCount(harness)
            #expect(count == 0)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidScope(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            expectCIBAError(try await harness.backchannel(scope: "profile email"), .invalidScope)
        }
    }

    /// FaceSeal does not accept login hint tokens at all (no hint-token issuer to trust), so it never needs
    /// `expired_login_hint_token`: any `login_hint_token` is refused with `invalid_request`, which names it.
    @Test(arguments: StoreBackend.underTest)
    func loginHintTokenIsRefusedInsteadOfExpiredLoginHintToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let response = try await harness.backchannel(hint: ("login_hint_token", "eyJhbGciOiJub25lIn0.e30."))
            expectCIBAError(response, .invalidRequest)
            let body = try OAuthErrorResponse.decode(response.body)
            #expect(body.errorDescription?.contains("login_hint_token is not supported") == true)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func unknownUserId(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            expectCIBAError(try await harness.backchannel(hint: ("login_hint", "nobody@example.com")), .unknownUserId)
            expectCIBAError(try await harness.backchannel(hint: ("login_hint", "user-1\u{0}@example.com")), .unknownUserId)
            expectCIBAError(try await harness.backchannel(hint: ("login_hint", String(repeating: "u", count: 1000))), .unknownUserId)
            // A user of another tenant is unknown to this client, by email and by subject.
            expectCIBAError(try await harness.backchannel(hint: ("login_hint", "stranger@example.com")), .unknownUserId)
            expectCIBAError(try await harness.backchannel(hint: ("login_hint", CIBAFixture.foreignUser)), .unknownUserId)
            // An id_token_hint this authority did not issue.
            let forged = try JWT.sign(JWTClaims(issuer: harness.baseURL.absoluteString, subject: "x", audience: [CIBAFixture.secretClient]),
                                      signer: Curve25519.Signing.PrivateKey())
            expectCIBAError(try await harness.backchannel(hint: ("id_token_hint", forged)), .unknownUserId)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func unauthorizedClient(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            // A ceremony needs a delivery endpoint registered for the client.
            let response = try await harness.backchannel(AuthorityHarness.signCeremony,
                                                         auth: .basic(CIBAFixture.noDeliveryClient, CIBAFixture.secret))
            expectCIBAError(response, .unauthorizedClient)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func pingModeRequiresAClientNotificationToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness, deliveryMode: .ping, notificationEndpoint: "http://127.0.0.1:9/ping")
            expectCIBAError(try await harness.backchannel(), .invalidRequest)
            #expect(try await harness.backchannel([("client_notification_token", "abc")]).status.code == 200)
        }
    }

    /// FaceSeal has no user codes (`backchannel_user_code_parameter_supported: false`): no request ever lacks one, so
    /// `missing_user_code` is never answered — a request without `user_code` is accepted.
    @Test(arguments: StoreBackend.underTest)
    func missingUserCodeIsNeverAnswered(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let response = try await harness.backchannel()
            #expect(response.status.code == 200)
        }
    }

    /// …and since no user code can be right, a request that carries one gets `invalid_user_code` rather than being
    /// silently accepted (a client relying on a user code must learn that it protects nothing here).
    @Test(arguments: StoreBackend.underTest)
    func invalidUserCode(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            expectCIBAError(try await harness.backchannel([("user_code", "1234")]), .invalidUserCode)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func invalidBindingMessage(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            expectCIBAError(try await harness.backchannel([("binding_message", String(repeating: "x", count: 65))]), .invalidBindingMessage)
            expectCIBAError(try await harness.backchannel([("binding_message", "line\nbreak")]), .invalidBindingMessage)
            // A ceremony without a binding message.
            expectCIBAError(try await harness.backchannel([("pki_kind", "public_keys"), ("client_notification_token", "t")]),
                            .invalidBindingMessage)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func idTokenHintNamesTheUserOfAnIssuedToken(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let first = try await harness.startRequest()
            try await harness.complete(first.authReqId)
            let tokens = try TokenResponse.decode(try await harness.token(first.authReqId).body)
            let response = try await harness.backchannel(hint: ("id_token_hint", tokens.idToken))
            #expect(response.status.code == 200)
            let ack = try BackchannelAuthenticationResponse.decode(response.body)
            #expect(try await harness.store.request(authReqID: ack.authReqId).subject == CIBAFixture.user)
            // The same token presented by another client names nobody.
            let other = try await harness.backchannel(hint: ("id_token_hint", tokens.idToken),
                                                      auth: .basic(CIBAFixture.noDeliveryClient, CIBAFixture.secret))
            expectCIBAError(other, .unknownUserId)
            // Once the user is deleted, a token issued to them names nobody either (the same answer as any unknown user).
            _ = try await harness.store.deleteUser(subject: CIBAFixture.user, actor: nil)
            expectCIBAError(try await harness.backchannel(hint: ("id_token_hint", tokens.idToken)), .unknownUserId)
        }
    }

    private func requestCount(_ harness: AuthorityHarness) async throws -> Int {
        // Past every possible expiry, the sweep moves (and counts) every pending request.
        harness.clock.advance(by: 200_000)
        return try await harness.store.expireOverdueRequests().count
    }
}
