import FaceSealCrypto
import FaceSealHTTP
import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Discovery, `/jwks` and the ID-token signing keys.
@Suite struct DiscoveryAndKeysTests {
    private func json(_ response: HTTPClientResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test(arguments: StoreBackend.underTest)
    func discoveryHasEveryRequiredField(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let response = try await harness.get(CIBAPaths.discovery)
            #expect(response.status.code == 200)
            let document = try json(response)
            let base = harness.baseURL.absoluteString
            // OIDC Discovery 1.0 §3 REQUIRED members.
            #expect(document["issuer"] as? String == base)
            #expect(document["authorization_endpoint"] as? String == base + "/authorize")
            #expect(document["token_endpoint"] as? String == base + "/token")
            #expect(document["jwks_uri"] as? String == base + "/jwks")
            #expect((document["response_types_supported"] as? [String])?.isEmpty == false)
            #expect(document["subject_types_supported"] as? [String] == ["pairwise"])
            #expect(Set(document["id_token_signing_alg_values_supported"] as? [String] ?? []) == ["RS256", "EdDSA", "ES256", "ML-DSA-65"])
            // CIBA Core §4.
            #expect(document["backchannel_authentication_endpoint"] as? String == base + "/backchannel")
            #expect(document["backchannel_token_delivery_modes_supported"] as? [String] == ["poll", "ping"])
            #expect(document["backchannel_user_code_parameter_supported"] as? Bool == false)
            #expect(document["grant_types_supported"] as? [String] == ["authorization_code", "urn:openid:params:grant-type:ciba"])
            #expect(Set(document["token_endpoint_auth_methods_supported"] as? [String] ?? [])
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt"])
            #expect(Set(document["token_endpoint_auth_signing_alg_values_supported"] as? [String] ?? [])
                    == ["RS256", "EdDSA", "ES256", "ML-DSA-65"])
            // FaceSeal.
            #expect(document["faceseal_pki_kinds_supported"] as? [String] == ["public_keys", "sign", "decapsulate"])
            #expect(document["faceseal_protocol_version"] as? Int == ProtocolVersion.current)
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func authorizationEndpointWithoutClientIsAnErrorPage(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let response = try await harness.get("/authorize?response_type=code")
            #expect(response.status == .badRequest)
            #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(response.headers["Location"] == nil)
            #expect(String(decoding: response.body, as: UTF8.self).contains("client_id is missing"))
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func jwksPublishesOneKeyPerAlgorithmNamedByItsThumbprint(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            let response = try await harness.get(CIBAPaths.jwks)
            #expect(response.status.code == 200)
            let keySet = try JWKSet(json: response.body)
            #expect(Set(keySet.keys.map(\.algorithm)) == [.rs256, .edDSA, .es256, .mlDSA65])
            #expect(keySet.keys.count == 4)
            for key in keySet.keys {
                #expect(key.keyID == key.thumbprintBase64URL)
                #expect(key.use == "sig")
            }
            if case .rsa(let n, _)? = keySet.keys.first(where: { $0.algorithm == .rs256 })?.material {
                #expect(n.count == 256)
            } else {
                Issue.record("no RSA key")
            }
            // No private member is ever published.
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(!text.contains("\"d\"") && !text.contains("\"priv\"") && !text.contains("\"seed\""))
        }
    }

    @Test(arguments: StoreBackend.underTest)
    func signingKeysAreStoredSealedAndReloaded(_ backend: StoreBackend) async throws {
        try await withAuthority(backend) { harness in
            try await harness.authority.prepareSigningKeys()
            let records = try await harness.store.signingKeys()
            #expect(records.count == 4)
            // A second process over the same store and master key loads the same keys and creates none.
            let restarted = Authority(configuration: harness.authority.configuration, store: harness.store, keys: harness.authority.keys,
                                      clock: { harness.clock.now() })
            let ring = try await restarted.idTokenKeyRing()
            #expect(Set(ring.signers.values.map(\.keyID)) == Set(records.map(\.keyID)))
            #expect(try await harness.store.signingKeys().count == 4)
            // The private keys are sealed: another master key cannot open them.
            let stranger = Authority(configuration: harness.authority.configuration, store: harness.store,
                                     keys: try AuthorityKeys(deviceKey: Curve25519.Signing.PrivateKey(), masterKey: SymmetricKey(size: .bits256)))
            await #expect(throws: SigningKeyError.self) { try await stranger.prepareSigningKeys() }
            for record in records {
                #expect(record.encryptedPrivateKey.count > 12 + 16)
            }
        }
    }

    @Test func deviceKeyIsDerivedFromTheMasterKey() throws {
        let master = SymmetricKey(size: .bits256)
        let one = try AuthorityKeys(derivingFrom: master)
        let two = try AuthorityKeys(derivingFrom: master)
        let other = try AuthorityKeys(derivingFrom: SymmetricKey(size: .bits256))
        #expect(one.deviceKey.publicKey == two.deviceKey.publicKey)
        #expect(one.deviceKey.publicKey != other.deviceKey.publicKey)
    }

    @Test func pairwiseSubjectsDifferPerApplicationAndAreStable() async throws {
        try await withAuthority(.sqlite) { harness in
            let authority = harness.authority
            let a = authority.pairwiseSubject(userSubject: "user-1", clientID: "app-a")
            #expect(a == authority.pairwiseSubject(userSubject: "user-1", clientID: "app-a"))
            #expect(a != authority.pairwiseSubject(userSubject: "user-1", clientID: "app-b"))
            #expect(a != authority.pairwiseSubject(userSubject: "user-2", clientID: "app-a"))
            #expect(authority.pairwiseSubject(userSubject: "c", clientID: "ab") != authority.pairwiseSubject(userSubject: "bc", clientID: "a"))
            let decoded = try Base64URL.decode(a)
            #expect(decoded.count == 32)
            #expect(a != "user-1")
        }
    }
}

/// The master key file of `faceseal serve`.
@Suite struct MasterKeyFileTests {
    private func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-mk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func generatedOnceWithMode0600ThenReloaded() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("master-key").path
        let (key, created) = try MasterKeyFile.loadOrCreate(path: path)
        #expect(created)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        #expect((attributes[.size] as? Int) == 32)
        let (again, createdAgain) = try MasterKeyFile.loadOrCreate(path: path)
        #expect(!createdAgain)
        #expect(again == key)
    }

    @Test func aGroupOrWorldReadableFileIsRefused() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("key").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 32), attributes: [.posixPermissions: 0o644])
        #expect(throws: MasterKeyFileError.tooOpen(path: path, mode: 0o644)) { try MasterKeyFile.load(path: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try MasterKeyFile.load(path: path) == SymmetricKey(data: [UInt8](repeating: 1, count: 32)))
    }

    @Test func aKeyOfAnotherLengthOrAMissingFileIsRefused() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("key").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 31), attributes: [.posixPermissions: 0o600])
        #expect(throws: MasterKeyFileError.wrongLength(path: path, count: 31)) { try MasterKeyFile.load(path: path) }
        #expect(throws: MasterKeyFileError.self) { try MasterKeyFile.load(path: directory.appendingPathComponent("absent").path) }
    }
}
