import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 9 item 8: an unauthenticated token or backchannel request costs at most one signature verification and no
/// key check, whatever JWKS the client registered; the full check of each key runs once, at registration.
@Suite("Client authentication: bounded cost of private_key_jwt")
struct ClientKeyCostTests {
    /// One RSA-4096 key for the whole suite (generating it is the slow part).
    static let registered = try! RSA.Signing.PrivateKey(keySize: 4096)

    /// `{"keys":[…]}` of `keys` as JSON text.
    static func jwksText(_ keys: [JWK]) -> String { String(decoding: JWKSet(keys: keys).jsonData, as: UTF8.self) }

    /// An RSA JWK with an `n` of `bits` bits, odd and divisible by 3: the right shape, never a real modulus.
    static func rsaMembers(bits: Int, kid: String) -> String {
        var n = SecureRandom.bytes(count: bits / 8)
        n[0] |= 0x80
        // 256 ≡ 1 (mod 3), so n ≡ the sum of its bytes: pick an odd last byte that makes the sum a multiple of 3.
        let rest = n.dropLast().reduce(0) { ($0 + Int($1)) % 3 }
        n[n.count - 1] = UInt8((1...255).first { $0 % 2 == 1 && (rest + $0) % 3 == 0 }!)
        return #"{"kty":"RSA","kid":"\#(kid)","e":"AQAB","n":"\#(Base64URL.encode(n))"}"#
    }

    @Test("sixteen RSA-4096 keys: each hostile assertion costs at most one verification, the set is parsed once",
          arguments: StoreBackend.underTest)
    func boundedCost(backend: StoreBackend) async throws {
        // Twenty failures in a row: without the failure limit, so that every one reaches the key lookup.
        try await withManagement(backend, configure: { $0.rateLimits.clientAuthenticationFailures.limit = 0 }) { admin in
            try await admin.createTenant("acme")
            let keys = (0..<16).map { JWK(publicKey: Self.registered.publicKey, keyID: "k\($0)") }
            let created = try await admin.createApplication("acme", extra: #","jwks":\#(Self.jwksText(keys))"#)
            let clientID = try #require(created["client_id"]?.stringValue)
            let harness = admin.harness
            let before = harness.authority.clientKeySets.counts

            let attacker = try RSA.Signing.PrivateKey(keySize: 2048)
            let p256 = P256.Signing.PrivateKey()
            func assertion(_ signer: any JWSSigner, kid: String?, lifetime: TimeInterval = 60) throws -> String {
                let now = harness.clock.now()
                let claims = JWTClaims(issuer: clientID, subject: clientID, audience: [harness.baseURL.absoluteString], issuedAt: now,
                                       expiresAt: now.addingTimeInterval(lifetime), jwtID: UUID().uuidString)
                return try JWT.sign(claims, signer: signer, keyID: kid)
            }
            var named = 0
            for index in 0..<16 {
                let forged = try assertion(attacker, kid: "k\(index)")
                let response = index.isMultiple(of: 2)
                    ? try await harness.token("any", auth: .assertion(forged, clientID: nil))
                    : try await harness.backchannel(auth: .assertion(forged, clientID: nil))
                expectCIBAError(response, .invalidClient)
                named += 1
            }
            // No kid among sixteen RS256 keys, a kid of another algorithm, an unknown kid, an expired assertion:
            // refused without any verification.
            for forged in [try assertion(attacker, kid: nil), try assertion(p256, kid: "k0"), try assertion(attacker, kid: "nope"),
                           try assertion(attacker, kid: "k1", lifetime: -120)] {
                expectCIBAError(try await harness.token("any", auth: .assertion(forged, clientID: nil)), .invalidClient)
            }
            let after = harness.authority.clientKeySets.counts
            #expect(after.verifications - before.verifications == named)
            #expect(after.parsed - before.parsed == 1)

            // The genuine key still authenticates, from the same parsed set.
            let genuine = try assertion(Self.registered, kid: "k7")
            let answer = try await harness.token("unknown-request", auth: .assertion(genuine, clientID: nil))
            expectCIBAError(answer, .invalidGrant)
            #expect(harness.authority.clientKeySets.counts.parsed == after.parsed)
        }
    }

    @Test("registration refuses RSA over 4096 bits, more than 16 keys, and a modulus that fails the full check",
          arguments: StoreBackend.underTest)
    func registrationLimits(backend: StoreBackend) async throws {
        try await withManagement(backend) { admin in
            try await admin.createTenant("acme")
            let oversized = #"{"keys":[\#(Self.rsaMembers(bits: 8192, kid: "big"))]}"#
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":\#(oversized)}"#)
            let many = Self.jwksText((0..<17).map { JWK(publicKey: Self.registered.publicKey, keyID: "k\($0)") })
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":\#(many)}"#)
            // The right size but divisible by 3: parsing accepts it, the full check at registration does not.
            let fake = #"{"keys":[\#(Self.rsaMembers(bits: 4096, kid: "fake"))]}"#
            #expect(throws: Never.self) { try JWKSet(json: Array(fake.utf8)) }
            try await admin.expectError(400, "invalid_field", .post, "/tenants/acme/applications", body: #"{"label":"x","jwks":\#(fake)}"#)
            #expect(try await admin.harness.store.applications(tenantID: "acme").isEmpty)
        }
    }
}
