import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 14 item 6: the authority's keys roll over — ID-token keys with an overlap in `/jwks`, the device-response key
/// with a statement signed by the old key — over HTTP, on both databases.
@Suite("Authority keys: rotation and rollover")
struct KeyRolloverTests {
    static func admin(_ harness: AuthorityHarness) async throws -> AdminSession {
        let key: String = try #require(try await harness.authority.bootstrapAdminKey())
        return AdminSession(harness: harness, key: key)
    }

    /// A completed sign-in's ID token and its `kid`.
    static func idToken(_ harness: AuthorityHarness) async throws -> (token: String, kid: String) {
        let ack = try await harness.startRequest()
        try await harness.complete(ack.authReqId)
        let token = try TokenResponse.decode(try await harness.token(ack.authReqId).body).idToken
        return (token, try #require(try JWS.parse(token).header.keyID))
    }

    static func jwksKeyIDs(_ harness: AuthorityHarness) async throws -> Set<String> {
        Set(try JWKSet(json: try await harness.get(CIBAPaths.jwks).body).keys.compactMap(\.keyID))
    }

    @Test("ID-token keys rotate: the new kid signs, /jwks serves old and new for the overlap, then drops the old",
          arguments: StoreBackend.underTest)
    func idTokenKeysRotateWithOverlap(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await CIBAFixture.seed(harness)
            let admin = try await Self.admin(harness)
            let before = try await Self.idToken(harness)
            try await admin.expectError(400, "invalid_request", .post, "/keys/rotate", body: "{}")
            let tenantKey = try await admin.createTenantKey("acme")
            try await admin.with(key: tenantKey.key).expectError(403, "forbidden", .post, "/keys/rotate", body: #"{"id_token":true}"#)

            let rotated = try await admin.expect(200, .post, "/keys/rotate", body: #"{"id_token":true}"#)
            let keys = try #require(rotated["keys"]?.arrayValue)
            #expect(keys.filter { $0["use"]?.stringValue == "id_token" && $0["retired_at"] == nil }.count == 4)
            #expect(keys.contains { $0["key_id"]?.stringValue == before.kid && $0["retired_at"] != nil && $0["published"] == .bool(true) })
            harness.clock.advance(by: 6)
            let after = try await Self.idToken(harness)
            #expect(after.kid != before.kid)
            let published = try await Self.jwksKeyIDs(harness)
            #expect(published.contains(before.kid) && published.contains(after.kid))
            let jwks = try JWKSet(json: try await harness.get(CIBAPaths.jwks).body)
            for token in [before.token, after.token] {
                #expect(throws: Never.self) { _ = try JWS.verify(token, keySet: jwks, factory: .includingMLDSA65) }
            }

            harness.clock.advance(by: TimeInterval(Authority.idTokenKeyOverlap))
            let later = try await Self.jwksKeyIDs(harness)
            #expect(!later.contains(before.kid) && later.contains(after.kid))
            let events = try #require(try await admin.expect(200, .get, "/audit")["events"]?.arrayValue)
            #expect(events.contains { $0["kind"]?.stringValue == "keys.rotated" })
        }
    }

    @Test("the device key rolls over: answers are signed by the new key, the old one signed the statement, a chain of two verifies",
          arguments: StoreBackend.underTest)
    func deviceKeyRollsOver(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let device = try await ManagementLifecycleTests.enrolledDevice(harness)
            let admin = try await Self.admin(harness)
            let issuer = harness.authority.issuer
            let k0 = harness.authority.keys.deviceKey.publicKey
            #expect(try await harness.get(DevicePaths.authorityKeys).status.code == 200)
            #expect(try AuthorityKeyChain.decode(try await harness.get(DevicePaths.authorityKeys).body).rollovers.isEmpty)

            let rotated = try await admin.expect(200, .post, "/keys/rotate", body: #"{"device":true,"rollover_days":30}"#)
            let k1 = try Curve25519.Signing.PublicKey(rawRepresentation: try Base64URL.decode(try #require(rotated["device_public_key"]?.stringValue)))
            #expect(k1.rawRepresentation != k0.rawRepresentation)

            // The device's next answer is signed by the new key, and only by it.
            let jti = DeviceRequestSignature.newJTI()
            let answer = try await device.sendUnverified(.get, DevicePaths.outbox, jti: jti)
            let header = answer.headers[DeviceSigning.responseHeader]
            #expect(throws: (any Error).self) {
                _ = try AuthorityResponseSignature.verify(header, body: answer.body, requestJTI: jti, status: answer.status.code, key: k0)
            }
            _ = try AuthorityResponseSignature.verify(header, body: answer.body, requestJTI: jti, status: answer.status.code, key: k1)

            // The statement leads from the old key to the new one; another key's is refused.
            let chain = try AuthorityKeyChain.decode(try await harness.get(DevicePaths.authorityKeys).body)
            #expect(chain.rollovers.count == 1)
            let now = Int64(harness.clock.now().timeIntervalSince1970)
            let claims = try AuthorityKeyRollover.verify(chain.rollovers[0], pinned: k0, pinnedAt: now, issuer: issuer, now: now)
            #expect(claims.new.bytes == Array(k1.rawRepresentation) && claims.exp == claims.iat + 30 * 86_400)
            let impostor = Curve25519.Signing.PrivateKey()
            let forged = try AuthorityKeyRollover.make(
                AuthorityKeyRolloverClaims(iss: issuer, old: Array(k0.rawRepresentation), new: Array(impostor.publicKey.rawRepresentation),
                                           iat: now, exp: now + 60), oldKey: impostor)
            #expect(throws: AuthorityKeyRolloverError.notFromPinnedKey) {
                _ = try AuthorityKeyRollover.verify(forged, pinned: k0, pinnedAt: now, issuer: issuer, now: now)
            }

            // New links are signed by, and new invitations carry, the new key.
            let invitation = try await admin.expect(201, .post, "/tenants/acme/invitations",
                                                    body: #"{"subject":"user-2","client_id":"\#(TestApplication.clientID)"}"#)
            let link = try LinkSignature.parse(Array(try #require(invitation["link"]?.stringValue).utf8))
            #expect(link.claims.akey?.bytes == Array(k1.rawRepresentation))
            _ = try link.verify(with: k1, now: now)

            // A second rotation: the chain has two steps, and the first stored key's private half is erased.
            harness.clock.advance(by: 1)
            try await admin.expect(200, .post, "/keys/rotate", body: #"{"device":true}"#)
            let two = try AuthorityKeyChain.decode(try await harness.get(DevicePaths.authorityKeys).body)
            #expect(two.rollovers.count == 2)
            let step = try AuthorityKeyRollover.verify(two.rollovers[1], pinned: k1, pinnedAt: now, issuer: issuer, now: now)
            #expect(step.old.bytes == Array(k1.rawRepresentation))
            let stored = try await harness.store.signingKeys().filter { $0.algorithm == DeviceResponseKeyRing.algorithm }
            #expect(stored.count == 2 && stored[0].retiredAt != nil && stored[0].encryptedPrivateKey == [0] && stored[1].retiredAt == nil)
            let listed = try await admin.expect(200, .get, "/keys")
            #expect(listed["keys"]?.arrayValue?.filter { $0["use"]?.stringValue == "device" }.count == 2)
        }
    }

    @Test("a rotation from a key another process already replaced is refused", arguments: StoreBackend.underTest)
    func concurrentRotationConflicts(backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            _ = try await harness.authority.rotateDeviceResponseKey(window: 86_400)
            let record = try #require(try await harness.store.signingKeys().last)
            await expectStoreError(.conflict(.signingKey, id: "other")) {
                var copy = record
                copy.keyID = "other"
                return try await harness.store.rotateDeviceResponseKey(copy, replacing: nil)
            }
        }
    }
}
