import FaceSealCrypto
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealSDK

/// The real face-token opener/sealer: SPEC §5.1–5.3, with the key derivation of §5.2 recomputed here
/// independently of `FaceLockedKeys`.
@Suite struct WireFaceTokensTests {
    let tokens = WireFaceTokens(scryptLogN: 10, clock: FixedTestClock())
    let templates = FaceTemplates(embeddings: [(0..<128).map { Float($0) / 128 }, (0..<128).map { Float(127 - $0) / 128 }])
    static let standardPolicy = ["ML-DSA-65", "ML-KEM-768"]

    /// SPEC §5.2 written out: HKDF-SHA256(master, "faceseal/key/v1", alg ‖ 0 ‖ clientId ‖ 0 ‖ context).
    static func specSeed(master: [UInt8], algorithm: String, clientId: String, context: [UInt8]) throws -> SymmetricKey {
        try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: master), salt: Array("faceseal/key/v1".utf8),
                                   info: Array(algorithm.utf8) + [0] + Array(clientId.utf8) + [0] + context, outputByteCount: 32)
    }

    static func specMLDSA(master: [UInt8], clientId: String, context: [UInt8]) throws -> MLDSA65.PublicKey {
        let seed = try specSeed(master: master, algorithm: "ML-DSA-65", clientId: clientId, context: context)
        return try seed.withUnsafeBytes { try MLDSA65.PrivateKey(seedRepresentation: $0) }.publicKey
    }

    static func specMLKEM(master: [UInt8], clientId: String, context: [UInt8]) throws -> MLKEM768.PublicKey {
        let seed = try specSeed(master: master, algorithm: "ML-KEM-768", clientId: clientId, context: context)
        let dz = try HKDF<SHA256>.expand(pseudoRandomKey: seed, info: [UInt8](), outputByteCount: 64)
        return try dz.withUnsafeBytes { try MLKEM768.PrivateKey(seedRepresentation: $0) }.publicKey
    }

    func envelope(_ token: NewFaceToken) throws -> FaceSealSDK.FaceTokenEnvelope {
        let header = try FaceSealWire.FaceTokenEnvelope.decode(token.token).parsedHeader()
        return FaceSealSDK.FaceTokenEnvelope(token: token.token, serverShare: token.serverShare, passwordRequired: header.passwordRequired,
                                             livenessRequired: header.livenessRequired, generation: header.gen)
    }

    func request(_ kind: PkiCeremonyKind?, policy: [String] = standardPolicy, clientId: String = "app_billing",
                 context: [UInt8] = Array("invoices".utf8), data: [UInt8] = [], livenessRequired: Bool = false,
                 matchThreshold: Double = MatchPolicy.defaultThreshold) -> FaceSealSDK.RequestDetails {
        FaceSealSDK.RequestDetails(
            requestId: "rid_1", identityId: "", clientId: clientId, rpLabel: "Billing", branding: nil, bindingMessage: "Sign",
            pkiKind: kind, expiresAtUnix: 2_000_000_000, attemptsMax: 3, livenessRequired: livenessRequired,
            matchThreshold: matchThreshold, minimumDeviceProtocol: 7, keyPolicy: policy,
            pkiContext: context, pkiData: data, deliveryEndpoint: URL(string: "https://rp.test/delivery"), clientNotificationToken: "bearer")
    }

    /// The header, templates and masters of sealed token bytes, opened with the spec's calls.
    static func contents(_ token: [UInt8], share: SecretBytes) throws -> (header: FaceTokenHeader, templates: [[Float]], masters: FaceTokenMasters) {
        let envelope = try FaceSealWire.FaceTokenEnvelope.decode(token)
        let header = try envelope.checkedHeader()
        let layers = try FaceTokenSeal.layerKeys(serverShare: share, passwordKey: nil, header: header)
        return (header, try FaceTokenSeal.openTemplates(envelope, keys: layers), try FaceTokenSeal.openMasters(envelope, keys: layers))
    }

    /// The contents of a prepared completion's rotated token.
    func masters(_ prepared: PreparedCompletion) throws -> (header: FaceTokenHeader, templates: [[Float]], masters: FaceTokenMasters) {
        try Self.contents(prepared.rotatedToken, share: prepared.rotatedServerShare)
    }

    @Test func theRotatedHeaderCarriesAStricterPolicyAndNothingElseChanges() async throws {
        let lax = WireFaceTokens(matchThreshold: 0.6, scryptLogN: 10, clock: FixedTestClock())
        let new = try await lax.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme",
                                       livenessRequired: false)
        let stored = try FaceSealWire.FaceTokenEnvelope.decode(new.token).parsedHeader()
        let opened = try await lax.open(try envelope(new), password: nil)
        let strict = try masters(try await opened.openKeys().prepareCompletion(for: request(nil, livenessRequired: true, matchThreshold: 0.45),
                                                                    issuedAt: Date())).header
        var expected = stored
        expected.gen = 2
        expected.livenessRequired = true
        expected.threshold = 0.45
        #expect(strict == expected)
        // A looser policy loosens nothing.
        let loose = try masters(try await opened.openKeys().prepareCompletion(for: request(nil, livenessRequired: false, matchThreshold: 0.9),
                                                                   issuedAt: Date())).header
        expected = stored
        expected.gen = 2
        #expect(loose == expected)
    }

    @Test func createdTokenOpensWithTheShareOnly() async throws {
        let new = try await tokens.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        #expect(new.serverShare.count == 32)
        // The header names the owner the enrolment details gave: the authority refuses any other.
        let header = try FaceSealWire.FaceTokenEnvelope.decode(new.token).parsedHeader()
        #expect(header.sub == "usr_8f2a")
        #expect(header.tenant == "acme")
        let opened = try await tokens.open(try envelope(new), password: nil)
        #expect(opened.templates == templates)
        #expect(opened.generation == 1)
        #expect(opened.matchThreshold == Float(MatchPolicy.defaultThreshold))
        var wrongShare = try envelope(new)
        wrongShare = FaceSealSDK.FaceTokenEnvelope(token: wrongShare.token, serverShare: SecretBytes([UInt8](repeating: 7, count: 32)),
                                                    passwordRequired: false, livenessRequired: true, generation: 1)
        await #expect(throws: FaceTokenOpenError.self) { _ = try await tokens.open(wrongShare, password: nil) }
    }

    @Test func passwordTokenNeedsTheRightPassword() async throws {
        let new = try await tokens.create(templates: templates, password: "correct horse", keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let sealed = try envelope(new)
        #expect(sealed.passwordRequired)
        await #expect(throws: FaceTokenOpenError.passwordRequired) { _ = try await tokens.open(sealed, password: nil) }
        await #expect(throws: FaceTokenOpenError.wrongPassword) { _ = try await tokens.open(sealed, password: "wrong") }
        let opened = try await tokens.open(sealed, password: "correct horse")
        #expect(opened.templates == templates)
        // The rotated token keeps the password: it opens with the same password at generation 2.
        let prepared = try await opened.openKeys().prepareCompletion(for: request(nil), issuedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(prepared.passwordUsed)
        let rotated = FaceSealSDK.FaceTokenEnvelope(token: prepared.rotatedToken, serverShare: prepared.rotatedServerShare,
                                                     passwordRequired: true, livenessRequired: true, generation: 2)
        await #expect(throws: FaceTokenOpenError.wrongPassword) { _ = try await tokens.open(rotated, password: "wrong") }
        #expect(try await tokens.open(rotated, password: "correct horse").generation == 2)
    }

    @Test func signIsPureMLDSAOverTheDataWithTheSpecKey() async throws {
        let new = try await tokens.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let opened = try await tokens.open(try envelope(new), password: nil)
        let data = Array("invoice 2026-114".utf8)
        let prepared = try await opened.openKeys().prepareCompletion(for: request(.sign, data: data), issuedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let bodyBytes = try #require(prepared.deliveryBody)
        let body = try DeliveryBody.decode(bodyBytes)
        #expect(body.kind == .sign && body.authReqId == "rid_1" && body.iat == 1_800_000_000 && body.isConsistent)
        let (header, sealedTemplates, sealedMasters) = try masters(prepared)
        #expect(header.gen == 2 && header.v == 2)
        #expect(sealedTemplates == templates.embeddings)
        let master = try #require(sealedMasters[.mlDSA65]).copyBytes()
        let publicKey = try Self.specMLDSA(master: master, clientId: "app_billing", context: Array("invoices".utf8))
        #expect(publicKey.isValidSignature(try #require(body.signature).bytes, for: data))
        #expect(body.keyId == Base64URL.encode(SHA256.hash(data: Array(publicKey.rawRepresentation)).bytes))
        let deliverySignature = try Base64URL.decode(try #require(prepared.deliverySignature))
        #expect(publicKey.isValidSignature(deliverySignature, for: bodyBytes, context: Array("faceseal-delivery-v1".utf8)))
        #expect(!publicKey.isValidSignature(deliverySignature, for: bodyBytes))
        #expect(prepared.deliverySHA256 == SHA256.hash(data: bodyBytes).bytes)
        #expect(prepared.rotatedServerShare.count == 32 && prepared.rotatedServerShare != new.serverShare)
    }

    @Test func publicKeysThenDecapsulateAgree() async throws {
        let new = try await tokens.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let opened = try await tokens.open(try envelope(new), password: nil)
        let keysPrepared = try await opened.openKeys().prepareCompletion(for: request(.publicKeys), issuedAt: Date())
        let keysBody = try DeliveryBody.decode(try #require(keysPrepared.deliveryBody))
        let delivered = try #require(keysBody.publicKeys)
        #expect(Set(delivered.keys) == ["ML-DSA-65", "ML-KEM-768"])
        let keysMasters = try masters(keysPrepared).masters
        let master = try #require(keysMasters[.mlKEM768]).copyBytes()
        let kemPublic = try Self.specMLKEM(master: master, clientId: "app_billing", context: Array("invoices".utf8))
        #expect(Array(kemPublic.rawRepresentation) == delivered["ML-KEM-768"]?.bytes)
        let encapsulated = try kemPublic.encapsulate()
        let decap = try await opened.openKeys().prepareCompletion(for: request(.decapsulate, data: Array(encapsulated.encapsulated)), issuedAt: Date())
        let decapBody = try DeliveryBody.decode(try #require(decap.deliveryBody))
        #expect(decapBody.sharedSecret?.bytes == encapsulated.sharedSecret.secret.copyBytes())
        #expect(decapBody.keyId == keysBody.keyId)
    }

    @Test func keysDependOnApplicationAndContextOnly() async throws {
        let new = try await tokens.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let opened = try await tokens.open(try envelope(new), password: nil)
        func keyId(_ clientId: String, _ context: String) async throws -> String {
            let prepared = try await opened.openKeys().prepareCompletion(for: request(.publicKeys, clientId: clientId, context: Array(context.utf8)), issuedAt: Date())
            return try DeliveryBody.decode(try #require(prepared.deliveryBody)).keyId
        }
        let a = try await keyId("app_a", "ctx")
        #expect(try await keyId("app_a", "ctx") == a)
        #expect(try await keyId("app_b", "ctx") != a)
        #expect(try await keyId("app_a", "other") != a)
    }

    @Test func missingMastersAreFilledAndExistingOnesKept() async throws {
        let new = try await tokens.create(templates: templates, password: nil, keyPolicy: ["ML-DSA-65"], subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let before = try Self.contents(new.token, share: new.serverShare).masters
        #expect(before.names == ["ML-DSA-65"])
        let opened = try await tokens.open(try envelope(new), password: nil)
        let prepared = try await opened.openKeys().prepareCompletion(for: request(.publicKeys), issuedAt: Date())
        let after = try masters(prepared).masters
        #expect(after.names == ["ML-DSA-65", "ML-KEM-768"])
        #expect(after[.mlDSA65] == before[.mlDSA65])
        // The ceremony that found the token without a KEM master completes on the key it just gained.
        let deliveredBody = try DeliveryBody.decode(try #require(prepared.deliveryBody))
        let delivered = try #require(deliveredBody.publicKeys)
        let kem = try Self.specMLKEM(master: try #require(after[.mlKEM768]).copyBytes(), clientId: "app_billing", context: Array("invoices".utf8))
        #expect(delivered["ML-KEM-768"]?.bytes == Array(kem.rawRepresentation))
    }

    @Test func aFormatOneTokenOpensAndItsRotationIsFormatTwoWithTheSameKeys() async throws {
        let dsa = [UInt8](repeating: 0x11, count: 32), kem = [UInt8](repeating: 0x22, count: 32)
        let share = SecretBytes(randomCount: 32)
        let header = FaceTokenHeader(v: 1, tid: "tok_v1", sub: "usr_8f2a", tenant: "acme", gen: 3, passwordRequired: false,
                                     livenessRequired: true, threshold: 0.5, scrypt: nil, createdAt: 1_700_000_000)
        let old = try FormatOneToken.seal(header: header, templates: templates.embeddings, masters: ["ML-DSA-65": dsa, "ML-KEM-768": kem], share: share)
        let opened = try await tokens.open(FaceSealSDK.FaceTokenEnvelope(token: old.encoded(), serverShare: share, passwordRequired: false,
                                                                        livenessRequired: true, generation: 3), password: nil)
        #expect(opened.templates == templates && opened.generation == 3)
        let prepared = try await opened.openKeys().prepareCompletion(for: request(.publicKeys), issuedAt: Date())
        let (rotated, rotatedTemplates, rotatedMasters) = try masters(prepared)
        var expected = header
        expected.v = 2
        expected.gen = 4
        #expect(rotated == expected)
        #expect(rotatedTemplates == templates.embeddings)
        #expect(rotatedMasters.names == ["ML-DSA-65", "ML-KEM-768"])
        #expect(rotatedMasters[.mlDSA65]?.copyBytes() == dsa && rotatedMasters[.mlKEM768]?.copyBytes() == kem)
        let body = try #require(prepared.deliveryBody)
        let delivered = try #require(try DeliveryBody.decode(body).publicKeys)
        let spec = try Self.specMLDSA(master: dsa, clientId: "app_billing", context: Array("invoices".utf8))
        #expect(delivered["ML-DSA-65"]?.bytes == Array(spec.rawRepresentation))
    }

    @Test func operationsThatDoNotFitAreRefused() async throws {
        let kemOnly = try await tokens.create(templates: templates, password: nil, keyPolicy: ["ML-KEM-768"], subject: "usr_8f2a", tenant: "acme", livenessRequired: true)
        let opened = try await tokens.open(try envelope(kemOnly), password: nil)
        await #expect(throws: KeyOperationError.notPermitted) {
            _ = try await opened.openKeys().prepareCompletion(for: request(.sign, policy: ["ML-KEM-768"], data: [1]), issuedAt: Date())
        }
        let dsaOnly = try await tokens.open(try envelope(try await tokens.create(templates: templates, password: nil, keyPolicy: ["ML-DSA-65"], subject: "usr_8f2a", tenant: "acme", livenessRequired: true)), password: nil)
        await #expect(throws: KeyOperationError.notPermitted) {
            _ = try await dsaOnly.openKeys().prepareCompletion(for: request(.decapsulate, policy: ["ML-DSA-65"], data: [1]), issuedAt: Date())
        }
        let both = try await tokens.open(try envelope(try await tokens.create(templates: templates, password: nil, keyPolicy: Self.standardPolicy, subject: "usr_8f2a", tenant: "acme", livenessRequired: true)), password: nil)
        await #expect(throws: KeyOperationError.self) {
            _ = try await both.openKeys().prepareCompletion(for: request(.decapsulate, data: [1, 2, 3]), issuedAt: Date())
        }
        await #expect(throws: KeyOperationError.unsupportedAlgorithm("RSA")) {
            _ = try await both.openKeys().prepareCompletion(for: request(.sign, policy: ["RSA"], data: [1]), issuedAt: Date())
        }
    }
}

/// A fixed wall clock for the real-seam tests.
struct FixedTestClock: WallClock {
    var date = Date(timeIntervalSince1970: 1_800_000_000)
    func now() -> Date { date }
}
