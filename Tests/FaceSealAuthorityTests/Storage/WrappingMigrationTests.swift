import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Issue 9 item 11: the master key is only HKDF input. A database written the old way — schema version 4, the face
/// token's server share and an ID-token signing key wrapped under the raw master key — is re-wrapped under the
/// per-purpose keys at start and keeps working over HTTP; a wrong master key is refused, never worked around.
@Suite("Master key: per-purpose wrapping keys and the migration of old rows")
struct WrappingMigrationTests {
    @Test("a database written the old way is re-wrapped at start: the token's share and the signing key still work",
          arguments: StoreBackend.underTest)
    func legacyRowsMigrate(_ backend: StoreBackend) async throws {
        try await withScratch(backend) { scratch in
            let master = SymmetricKey(size: .bits256)
            let clock = ManualStoreClock()
            let (envelope, share) = try TestDevice.sealToken(subject: "user-1", tenant: "acme", generation: 1)
            let header = try envelope.parsedHeader()
            let (signingKey, privateKey) = try IDTokenSigningKey.generate(.edDSA)

            // The previous release: migrations 1…4, secrets sealed under the master key itself.
            let raw = try await scratch.openRaw()
            try await SchemaMigrator.migrate(raw, clock: clock, migrations: SchemaMigrator.migrations.filter { $0.version <= 4 })
            let legacyToken = try FaceTokenCustody.record(envelope: envelope, header: header, subject: "user-1", serverShare: share,
                                                          wrappingKey: master)
            let legacyShare = legacyToken.encryptedServerShare
            let legacyKey = try SigningKeySeal.seal(privateKey, keyID: signingKey.keyID, algorithm: .edDSA, masterKey: master)
            let publicJWK = String(decoding: signingKey.publicJWK.jsonData, as: UTF8.self)
            try await raw.transaction { tx in
                try tx.execute("""
                    INSERT INTO tenants (id, name, key_algorithms, attempts_max, liveness_required, password_mode, password_min_length,
                        one_device_per_user, request_lifetime_seconds, created_at)
                    VALUES ('acme', 'Acme', 'ML-DSA-65,ML-KEM-768', 3, 1, 'optional', 8, 0, 300, 0)
                    """, [])
                try tx.execute("INSERT INTO users (subject, tenant_id, email, created_at) VALUES ('user-1', 'acme', 'user-1@example.com', 0)", [])
                try tx.execute("""
                    INSERT INTO face_tokens (subject, token_id, generation, header_json, sealed_body, encrypted_server_share, updated_at)
                    VALUES ('user-1', ?, 1, ?, ?, ?, 0)
                    """, [.text(header.tid), .blob(envelope.header.bytes), .blob(legacyToken.sealedBody), .blob(legacyShare)])
                try tx.execute("""
                    INSERT INTO signing_keys (key_id, algorithm, public_jwk, encrypted_private_key, created_at)
                    VALUES (?, 'EdDSA', ?, ?, 0)
                    """, [.text(signingKey.keyID), .text(publicJWK), .blob(legacyKey)])
            }
            await raw.close()

            let store = try await scratch.open(clock: clock)
            let authority = Authority(configuration: AuthorityConfiguration(issuer: "http://127.0.0.1"), store: store,
                                      keys: try AuthorityKeys(deviceKey: Curve25519.Signing.PrivateKey(), masterKey: master),
                                      clock: { clock.now() })
            do {
                #expect(try await Self.wrapVersions(store) == [0, 0])
                try await authority.prepareSigningKeys()
                #expect(try await Self.wrapVersions(store) == [1, 1])
                #expect(try await authority.migrateWrappedSecrets() == 0)
                // Re-wrapped, not copied: the share no longer opens under the raw master key.
                let stored = try await store.faceToken(subject: "user-1").encryptedServerShare
                #expect(stored != legacyShare)
                #expect(throws: (any Error).self) {
                    try AES.GCM.open(AES.GCM.SealedBox(combined: stored), using: master,
                                     authenticating: FaceTokenCustody.shareAAD(subject: "user-1", tokenID: header.tid, generation: 1))
                }
                #expect(try await authority.idTokenKeyRing().signers[.edDSA]?.keyID == signingKey.keyID)

                // The download path decrypts the re-wrapped share; over HTTP the keys still serve.
                let download = try FaceTokenCustody.download(try await store.faceToken(subject: "user-1"), wrappingKey: authority.keys.shareWrappingKey)
                #expect(download.serverShare.secret == share)
                _ = try TestDevice.open(download)
                let server = HTTPServer(logger: .disabled, router: authority.makeRouter())
                try server.start()
                let jwks = try await HTTPClient().send(HTTPClientRequest(url: URL(string: server.baseURL!.absoluteString + CIBAPaths.jwks)!))
                await server.stop()
                #expect(String(decoding: jwks.body, as: UTF8.self).contains(signingKey.keyID))

                // Another master key opens nothing, and says so.
                let stranger = Authority(configuration: AuthorityConfiguration(issuer: "http://127.0.0.1"), store: store,
                                         keys: try AuthorityKeys(deviceKey: Curve25519.Signing.PrivateKey(), masterKey: SymmetricKey(size: .bits256)))
                await #expect(throws: SigningKeyError.self) { try await stranger.prepareSigningKeys() }
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test("each purpose has its own key, none of them the master key")
    func perPurposeKeys() throws {
        let master = SymmetricKey(size: .bits256)
        let keys = try AuthorityKeys(derivingFrom: master)
        let all = [keys.shareWrappingKey, keys.signingKeyWrappingKey, keys.nonceKey, keys.pairwiseKey, master]
        #expect(Set(all.map { $0.withUnsafeBytes { Array($0) } }).count == all.count)
        // Deterministic: another process with the same master key derives the same keys.
        #expect(try AuthorityKeys(derivingFrom: master).shareWrappingKey.withUnsafeBytes { Array($0) }
            == keys.shareWrappingKey.withUnsafeBytes { Array($0) })
    }

    /// The `wrap_version` of the face token and of the signing key.
    static func wrapVersions(_ store: SQLAuthorityStore) async throws -> [Int64] {
        try await store.database.transaction { tx in
            [try tx.queryOne("SELECT wrap_version FROM face_tokens", [])?.int("wrap_version") ?? -1,
             try tx.queryOne("SELECT wrap_version FROM signing_keys", [])?.int("wrap_version") ?? -1]
        }
    }
}
