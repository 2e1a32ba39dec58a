import Foundation
import FaceSealCrypto
import FaceSealHTTP
import FaceSealWire
import Testing
@testable import FaceSealRelyingParty

/// Token retrieval (poll, slow_down, ping), ID-token verification and the receipt check, stale_token retries.
@Suite struct TokenTests {
    let user = "ada@example.com"
    let context = "mail"

    /// Starts a sign ceremony and has the device deliver it; returns the handle and the accepted body's SHA-256.
    func deliveredSign(_ h: Harness) async throws -> (PendingRequestHandle, [UInt8]) {
        try await h.pinDeviceKeys()
        let message = Array("sign me".utf8)
        let handle = try await h.rp.start(.sign(data: message), user: user, context: context, bindingMessage: "Sign")
        let signature = Array(try h.device.signingKey.signature(for: message))
        let delivered = try h.device.deliver(h.body(for: handle, signature: signature))
        #expect(await h.deliver(delivered).status == 204)
        return (handle, SHA256.hash(data: delivered.body).bytes)
    }

    func token(_ h: Harness, receipt: [UInt8]?, kind: PKIKind? = .sign, signer: (any JWSSigner)? = nil, keyID: String = "ed",
               edit: @escaping @Sendable (inout JWTClaims) -> Void = { _ in }) -> FakeAuthority.TokenScript {
        let factory = h.tokenFactory
        let signer = signer ?? h.keys.ed25519
        return FakeAuthority.tokens { id in
            var claims = factory.claims(authReqId: id, kind: kind, receipt: receipt)
            edit(&claims)
            return factory.sign(claims, with: signer, keyID: keyID)
        }
    }

    // MARK: Poll

    @Test func pollHonoursIntervalAndSlowDownThenVerifies() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let (handle, receipt) = try await deliveredSign(h)
        h.authority.script(FakeAuthority.error(.authorizationPending), FakeAuthority.error(.slowDown),
                           FakeAuthority.error(.authorizationPending), token(h, receipt: receipt))
        let outcome = try await h.rp.awaitOutcome(handle)
        guard case .verified(let result) = outcome else { Issue.record("expected verified, got \(outcome.name)"); return }
        #expect(h.clock.sleeps == [5, 5, 10, 10])
        guard case .signature(let signature) = result.value else { Issue.record("expected a signature"); return }
        #expect(h.device.signingKey.publicKey.isValidSignature(signature, for: Array("sign me".utf8)))
        #expect(result.idToken.subject == "pairwise-sub-1")
        #expect(result.idToken.amr == ["face", "hwk"])
        #expect(result.checks.contains { $0.hasPrefix("receipt:") })
        #expect(result.checks.first?.hasPrefix("delivery: bearer") == true)
        // Every token request used the CIBA grant and this auth_req_id; the request is forgotten afterwards.
        #expect(h.authority.tokenForms.allSatisfy { $0["grant_type"] == CIBANames.grantType && $0["auth_req_id"] == handle.authReqId })
        #expect(h.pending.count == 0)
    }

    @Test func everyIDTokenAlgorithmVerifies() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let rsa = try RSA.Signing.PrivateKey(keySize: 2048)
        h.authority.setJWKS(JWKSet(keys: try h.keys.jwks.keys + [JWK(publicKey: rsa.publicKey, keyID: "rsa")]))
        let signers: [(any JWSSigner, String)] = [(h.keys.ed25519, "ed"), (h.keys.p256, "p256"), (h.keys.mlDSA, "mldsa"), (rsa, "rsa")]
        for (signer, keyID) in signers {
            let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
            h.authority.script(token(h, receipt: nil, kind: nil, signer: signer, keyID: keyID))
            let outcome = try await h.rp.awaitOutcome(handle)
            guard case .verified(let result) = outcome else { Issue.record("\(keyID): \(outcome.name)"); continue }
            #expect(result.idToken.algorithm == signer.algorithm)
            guard case .signIn = result.value else { Issue.record("expected a sign-in"); continue }
        }
    }

    @Test func terminalErrorsBecomeTypedOutcomes() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        for (code, expected) in [(CIBAErrorCode.accessDenied, "denied"), (.expiredToken, "expired"), (.staleToken, "stale")] {
            let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
            h.authority.script(FakeAuthority.error(code))
            #expect(try await h.rp.awaitOutcome(handle).name == expected)
        }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        h.authority.script(FakeAuthority.error(.invalidGrant))
        await #expect(throws: RelyingPartyError.refused(.invalidGrant, nil)) { _ = try await h.rp.awaitOutcome(handle) }
        #expect(h.pending.count == 0)
    }

    /// An answer the client refuses at the transport level (over the 64 KiB answer limit).
    static let transportFailure: FakeAuthority.TokenScript = { _, _ in
        HTTPResponse(jsonBytes: Array(repeating: 0x20, count: 70_000))
    }

    @Test func pollingRidesOutTransientTransportFailures() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        h.authority.script(Self.transportFailure, Self.transportFailure, token(h, receipt: nil, kind: nil))
        #expect(try await h.rp.awaitOutcome(handle).name == "verified")

        let second = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        for _ in 0..<RelyingParty.maxConsecutiveTransportFailures { h.authority.script(Self.transportFailure) }
        await #expect(throws: RelyingPartyError.self) { _ = try await h.rp.awaitOutcome(second) }
        #expect(h.pending.count == 0)
    }

    /// What a draining authority answers a request it did not act on.
    static let draining: FakeAuthority.TokenScript = { _, _ in HTTPError.unavailable.httpResponse }

    /// A restarting authority answers 503 with Retry-After: the token request is sent again after that wait (on the
    /// injected sleeper) instead of ending the poll; past `UnavailableRetry.maxRetries` the 503 counts as one transport
    /// failure and the poll goes on at its interval.
    @Test func pollingRetriesA503AfterItsRetryAfter() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        h.authority.script(Self.draining, token(h, receipt: nil, kind: nil))
        #expect(try await h.rp.awaitOutcome(handle).name == "verified")
        #expect(h.clock.sleeps == [5, HTTPError.unavailableRetryAfter])
        #expect(h.authority.tokenForms.count == 2)

        let second = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        let retries = UnavailableRetry().maxRetries
        for _ in 0...retries { h.authority.script(Self.draining) }
        h.authority.script(token(h, receipt: nil, kind: nil))
        #expect(try await h.rp.awaitOutcome(second).name == "verified")
        #expect(Array(h.clock.sleeps.dropFirst(2)) == [5] + Array(repeating: HTTPError.unavailableRetryAfter, count: retries) + [5])
    }

    @Test func pollingStopsAtExpiry() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        // The fake answers authorization_pending forever; the injected clock runs out after 300 s.
        #expect(try await h.rp.awaitOutcome(handle).name == "expired")
        #expect(h.clock.sleeps.reduce(0, +) >= 300)
        #expect(h.authority.tokenForms.count == 60)
    }

    // MARK: Ping

    @Test func pingWithTheRightBearerLeadsToOneTokenRequest() async throws {
        let h = try Harness(mode: .ping, sleeper: ForeverSleeper())
        defer { Task { await h.authority.stop() } }
        let (handle, receipt) = try await deliveredSign(h)
        let bearer = h.authority.lastBearer
        h.authority.script(token(h, receipt: receipt))
        let ping = PingCallback(authReqId: handle.authReqId).encoded()
        // Wrong bearer, unknown request, malformed body: refused, nothing woken.
        #expect(await h.rp.handlePing(method: "POST", headers: ["Authorization": "Bearer nope"], body: ping).status == 401)
        #expect(await h.rp.handlePing(method: "POST", headers: ["Authorization": "Bearer \(bearer)"],
                                      body: PingCallback(authReqId: "req-unknown-0123456789").encoded()).status == 404)
        #expect(await h.rp.handlePing(method: "POST", headers: ["Authorization": "Bearer \(bearer)"], body: Array("{}".utf8)).status == 400)
        #expect(h.authority.tokenForms.isEmpty)
        let rp = h.rp
        let waiter = Task { try await rp.awaitOutcome(handle) }
        #expect(await h.rp.handlePing(method: "POST", headers: ["authorization": "Bearer \(bearer)"], body: ping).status == 204)
        let outcome = try await waiter.value
        #expect(outcome.name == "verified")
        #expect(h.authority.tokenForms.count == 1)
    }

    @Test func pingBeforeTheWaiterIsRemembered() async throws {
        let h = try Harness(mode: .ping, sleeper: ForeverSleeper())
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        h.authority.script(token(h, receipt: nil, kind: nil))
        let ping = PingCallback(authReqId: handle.authReqId).encoded()
        #expect(await h.rp.handlePing(method: "POST", headers: ["Authorization": "Bearer \(h.authority.lastBearer)"], body: ping).status == 204)
        #expect(try await h.rp.awaitOutcome(handle).name == "verified")
    }

    @Test func pingModeTimesOutAtExpiry() async throws {
        let h = try Harness(mode: .ping)
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.signIn, user: user, context: "", bindingMessage: "Sign in")
        #expect(try await h.rp.awaitOutcome(handle).name == "expired")
        #expect(h.authority.tokenForms.isEmpty)
    }

    // MARK: ID token and receipt

    func expectRejected(_ reason: String, _ script: @escaping (Harness, [UInt8]) -> FakeAuthority.TokenScript,
                        pinsAfter: Int = 1) async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let (handle, receipt) = try await deliveredSign(h)
        h.authority.script(script(h, receipt))
        do {
            let outcome = try await h.rp.awaitOutcome(handle)
            Issue.record("expected a rejection (\(reason)), got \(outcome.name)")
        } catch {
            #expect(error.description.contains(reason), "\(error.description)")
        }
        #expect(h.pending.count == 0)
        #expect(h.pins.count == pinsAfter)
    }

    @Test func wrongReceiptIsRejected() async throws {
        try await expectRejected("pki_result_sha256 is not the SHA-256") { h, receipt in
            var wrong = receipt
            wrong[0] ^= 1
            return token(h, receipt: wrong)
        }
        try await expectRejected("carries no pki_result_sha256") { h, _ in token(h, receipt: nil) }
    }

    @Test func wrongAudienceIsRejected() async throws {
        try await expectRejected("wrong audience") { h, receipt in token(h, receipt: receipt) { $0["aud"] = "another-app" } }
        // Several audiences without azp naming this client.
        try await expectRejected("azp") { h, receipt in token(h, receipt: receipt) { $0["aud"] = [.string(Harness.clientID), "other"] } }
    }

    @Test func wrongIssuerIsRejected() async throws {
        try await expectRejected("wrong issuer") { h, receipt in token(h, receipt: receipt) { $0["iss"] = "https://evil.example" } }
    }

    @Test func expiredTokenIsRejected() async throws {
        try await expectRejected("expired") { h, receipt in
            let now = h.clock.now()
            return token(h, receipt: receipt) { $0["exp"] = .integer(Int64(now.timeIntervalSince1970) - 120) }
        }
    }

    @Test func badSignatureIsRejected() async throws {
        // Signed by a key the authority does not publish (same kid), and a tampered payload.
        try await expectRejected("signature does not verify") { h, receipt in token(h, receipt: receipt, signer: Curve25519.Signing.PrivateKey()) }
        try await expectRejected("signature does not verify") { h, receipt in
            let good = token(h, receipt: receipt)
            return { id, form in
                let response = good(id, form)
                var tokens = try! TokenResponse.decode(response.body)
                var parts = tokens.idToken.split(separator: ".").map(String.init)
                var claims = try! JWTClaims(payload: Base64URL.decode(parts[1]))
                claims["sub"] = "someone-else"
                parts[1] = Base64URL.encode(claims.jsonData)
                tokens.idToken = parts.joined(separator: ".")
                return HTTPResponse(jsonBytes: tokens.encoded())
            }
        }
    }

    @Test func wrongAuthReqIdClaimIsRejected() async throws {
        try await expectRejected("auth_req_id is not this request") { h, receipt in token(h, receipt: receipt) { $0[CIBANames.authReqIdClaim] = "req-other" } }
        try await expectRejected("pki_kind is not sign") { h, receipt in token(h, receipt: receipt, kind: .decapsulate) }
    }

    @Test func aFailedReceiptCheckTakesBackThePinItsDeliveryCreated() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let handle = try await h.rp.start(.publicKeys, user: user, context: context, bindingMessage: "Link")
        #expect(await h.deliver(try h.device.deliver(h.body(for: handle, publicKeys: h.device.publicKeys))).status == 204)
        #expect(h.pins.count == 1)
        h.authority.script(token(h, receipt: Array(repeating: 0, count: 32), kind: .publicKeys))
        await #expect(throws: RelyingPartyError.self) { _ = try await h.rp.awaitOutcome(handle) }
        #expect(h.pins.count == 0)
    }

    @Test func aTokenWithoutAnAcceptedDeliveryIsRejected() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        try await h.pinDeviceKeys()
        let handle = try await h.rp.start(.sign(data: [1]), user: user, context: context, bindingMessage: "Sign")
        h.authority.script(token(h, receipt: Array(repeating: 0, count: 32)))
        await #expect(throws: RelyingPartyError.receiptMismatch("the authority issued a token but no delivery was accepted")) {
            _ = try await h.rp.awaitOutcome(handle)
        }
    }

    // MARK: Stale token

    @Test func staleTokenStartsANewRequest() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        let device = h.device
        let harness = h
        h.authority.script(FakeAuthority.error(.staleToken))
        let outcome = try await h.rp.perform(.publicKeys, user: user, context: context, bindingMessage: "Link") { handle in
            // The device delivers each attempt; the second attempt's token carries its receipt.
            let delivered = try! device.deliver(harness.body(for: handle, publicKeys: device.publicKeys))
            _ = await harness.deliver(delivered)
            if harness.authority.backchannelForms.count == 2 {
                harness.authority.script(self.token(harness, receipt: SHA256.hash(data: delivered.body).bytes, kind: .publicKeys))
            }
        }
        guard case .verified(let result) = outcome else { Issue.record("expected verified, got \(outcome.name)"); return }
        guard case .publicKeys(let keys) = result.value else { Issue.record("expected keys"); return }
        #expect(keys == PinnedKeys(keys: h.device.publicKeys))
        #expect(h.authority.backchannelForms.count == 2)
        #expect(h.pins.count == 1)
    }

    @Test func staleRetriesAreBounded() async throws {
        let h = try Harness()
        defer { Task { await h.authority.stop() } }
        h.authority.script(FakeAuthority.error(.staleToken), FakeAuthority.error(.staleToken), FakeAuthority.error(.staleToken))
        let outcome = try await h.rp.perform(.signIn, user: user, context: "", bindingMessage: "Sign in")
        #expect(outcome.name == "stale")
        #expect(h.authority.backchannelForms.count == 3)
    }
}
