import FaceSealCrypto
import Testing
@testable import FaceSealWire

@Suite struct LinkSignatureTests {
    let authority = Curve25519.Signing.PrivateKey()
    let claims = LinkClaims(iss: "http://127.0.0.1:1", rid: "r1", kind: .login, exp: 2_000, nonce: "n")

    @Test func signedLinkVerifiesAsRawOrUniversalLink() throws {
        let link = try LinkSignature.make(claims, key: authority)
        #expect(try LinkSignature.parse(Array(link.utf8)).verify(with: authority.publicKey, now: 1_000) == claims)
        let universal = "https://auth.example/l/" + link
        #expect(try LinkSignature.parse(Array(universal.utf8)).verify(with: authority.publicKey, now: 1_000) == claims)
    }

    @Test func forgedExpiredAndMalformedLinksAreRefused() throws {
        let link = try LinkSignature.make(claims, key: authority)
        let other = Curve25519.Signing.PrivateKey()
        #expect(throws: LinkError.badSignature) { try LinkSignature.parse(Array(link.utf8)).verify(with: other.publicKey, now: 1_000) }
        #expect(throws: LinkError.expired) { try LinkSignature.parse(Array(link.utf8)).verify(with: authority.publicKey, now: 2_000) }
        for bad in ["", "not a link", "a.b", String(repeating: "A", count: 5000), link + "x"] {
            #expect(throws: LinkError.self) {
                try LinkSignature.parse(Array(bad.utf8)).verify(with: authority.publicKey, now: 1_000)
            }
        }
        #expect(throws: LinkError.malformed) { try LinkSignature.parse([0xFF, 0xFE]) }
        // A JWS of something else signed by the same key is not a link.
        let other_ = try JWS.sign(payload: Array("{}".utf8), signer: authority, type: LinkSignature.type)
        #expect(throws: LinkError.malformed) { try LinkSignature.parse(Array(other_.utf8)) }
    }
}

@Suite struct DeviceRequestSignatureTests {
    let device = P256.Signing.PrivateKey()
    let body = Array(#"{"v":7}"#.utf8)

    @Test func signedRequestVerifies() throws {
        let (header, jti) = try DeviceRequestSignature.make(method: "post", path: "/p", body: body, kid: "k1", signer: device, now: 100)
        let parsed = try DeviceRequestSignature.parse(header)
        #expect(parsed.claims.kid == "k1" && parsed.claims.jti == jti)
        let claims = try parsed.verify(with: device.publicKey, method: "POST", path: "/p", body: body, now: 150)
        #expect(claims.method == "POST")
    }

    @Test func everyMismatchIsRefused() throws {
        let (header, _) = try DeviceRequestSignature.make(method: "POST", path: "/p", body: body, kid: "k1", signer: device, now: 100)
        let parsed = try DeviceRequestSignature.parse(header)
        #expect(throws: DeviceErrorCode.invalidSignature) {
            try parsed.verify(with: P256.Signing.PrivateKey().publicKey, method: "POST", path: "/p", body: body, now: 100)
        }
        #expect(throws: DeviceErrorCode.invalidSignature) { try parsed.verify(with: device.publicKey, method: "GET", path: "/p", body: body, now: 100) }
        #expect(throws: DeviceErrorCode.invalidSignature) { try parsed.verify(with: device.publicKey, method: "POST", path: "/q", body: body, now: 100) }
        #expect(throws: DeviceErrorCode.invalidSignature) { try parsed.verify(with: device.publicKey, method: "POST", path: "/p", body: body + [0x20], now: 100) }
        #expect(throws: DeviceErrorCode.clockSkew) { try parsed.verify(with: device.publicKey, method: "POST", path: "/p", body: body, now: 221) }
        #expect(throws: DeviceErrorCode.clockSkew) { try parsed.verify(with: device.publicKey, method: "POST", path: "/p", body: body, now: -21) }
        #expect(throws: DeviceErrorCode.invalidSignature) { try DeviceRequestSignature.parse(nil) }
        #expect(throws: DeviceErrorCode.invalidSignature) { try DeviceRequestSignature.parse("x.y.z") }
        // An EdDSA token is not a device signature even if well formed.
        let ed = try JWS.sign(payload: Array("{}".utf8), signer: Curve25519.Signing.PrivateKey(), keyID: "k1", type: DeviceRequestSignature.type)
        #expect(throws: DeviceErrorCode.invalidSignature) { try DeviceRequestSignature.parse(ed) }
    }

    @Test func authorityResponsesBindStatusBodyAndRequest() throws {
        let authority = Curve25519.Signing.PrivateKey()
        let header = try AuthorityResponseSignature.make(body: body, requestJTI: "j", status: 200, hint: true, key: authority, now: 5)
        let claims = try AuthorityResponseSignature.verify(header, body: body, requestJTI: "j", status: 200, key: authority.publicKey)
        #expect(claims.hint == true)
        #expect(throws: WireError.badSignature) { try AuthorityResponseSignature.verify(header, body: body, requestJTI: "other", status: 200, key: authority.publicKey) }
        #expect(throws: WireError.badSignature) { try AuthorityResponseSignature.verify(header, body: body, requestJTI: "j", status: 401, key: authority.publicKey) }
        #expect(throws: WireError.badSignature) { try AuthorityResponseSignature.verify(header, body: [], requestJTI: "j", status: 200, key: authority.publicKey) }
        #expect(throws: WireError.badSignature) {
            try AuthorityResponseSignature.verify(header, body: body, requestJTI: "j", status: 200, key: Curve25519.Signing.PrivateKey().publicKey)
        }
        #expect(throws: WireError.badSignature) { try AuthorityResponseSignature.verify(nil, body: body, requestJTI: "j", status: 200, key: authority.publicKey) }
    }

    /// A device that pinned a key of small order (the identity point, from a doctored enrolment link) accepts no
    /// answer: the signature "R = identity, S = 0" that such a key would verify for any message is refused, a typed
    /// error (OpenSSL 3.0, before libsodium, accepted it).
    @Test func aSmallOrderPinnedKeyVerifiesNoForgery() throws {
        struct Forger: JWSSigner {
            var algorithm: JWSAlgorithm { .edDSA }
            func sign(_ signingInput: [UInt8]) throws -> [UInt8] { [1] + [UInt8](repeating: 0, count: 63) }
        }
        let weak = try Curve25519.Signing.PublicKey(rawRepresentation: [1] + [UInt8](repeating: 0, count: 31))
        let claims = AuthorityResponseClaims(bsha: DeviceRequestSignature.bodyHash(body), jti: "j", status: 200, iat: 5)
        let forged = try JWS.sign(payload: claims.encoded(), signer: Forger(), type: AuthorityResponseSignature.type)
        #expect(throws: WireError.badSignature) { try AuthorityResponseSignature.verify(forged, body: body, requestJTI: "j", status: 200, key: weak) }
        #expect(throws: JOSEError.invalidSignature) { try JWS.verify(forged, verifier: weak) }
    }
}

@Suite struct FaceTokenSealTests {
    let share = SecretBytes(randomCount: 32)
    let templates: [[Float]] = [[0.1, 0.2, -3.5], [1e-5, 0, 42]]
    let masters: FaceTokenMasters = {
        var masters = FaceTokenMasters()
        masters.fill(.mlDSA65)
        masters.fill(.mlKEM768)
        return masters
    }()

    func header(password: Bool, gen: Int = 1, v: Int = FaceTokenHeader.currentFormat) -> FaceTokenHeader {
        FaceTokenHeader(v: v, tid: "t", sub: "s", tenant: "x", gen: gen, passwordRequired: password, livenessRequired: false,
                        threshold: 0.5, scrypt: password ? ScryptParameters(logN: 10, salt: Array(repeating: 1, count: 16)) : nil,
                        createdAt: 0)
    }

    func keys(_ envelope: FaceTokenEnvelope, share: SecretBytes? = nil, password: SymmetricKey? = nil) throws -> FaceTokenSeal.LayerKeys {
        try FaceTokenSeal.layerKeys(serverShare: share ?? self.share, passwordKey: password, header: try envelope.checkedHeader())
    }

    static func same(_ a: FaceTokenMasters, _ b: FaceTokenMasters) -> Bool {
        a.names == b.names && KeyAlgorithm.allCases.allSatisfy { a[$0] == b[$0] }
    }

    @Test func sealsTwoLayersThatOpenSeparately() throws {
        let envelope = try FaceTokenSeal.seal(header: header(password: false), templates: templates, masters: masters, serverShare: share,
                                              passwordKey: nil)
        #expect(try envelope.checkedHeader() == header(password: false))
        #expect(envelope.keysNonce?.bytes.count == 12 && envelope.nonce.bytes != envelope.keysNonce?.bytes)
        let layers = try keys(envelope)
        #expect(layers.templates != layers.keys)
        #expect(try FaceTokenSeal.openTemplates(envelope, keys: layers) == templates)
        #expect(Self.same(try FaceTokenSeal.openMasters(envelope, keys: layers), masters))
        // Each layer opens only under its own key: the templates key cannot open the masters.
        let crossed = FaceTokenSeal.LayerKeys(templates: layers.keys, keys: layers.templates)
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openTemplates(envelope, keys: crossed) }
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openMasters(envelope, keys: crossed) }
        var wrongShare = share.copyBytes()
        wrongShare[0] ^= 1
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openTemplates(envelope, keys: try keys(envelope, share: SecretBytes(wrongShare))) }
    }

    @Test func theLayerKeysAreTheSpecsHKDF() throws {
        let envelope = try FaceTokenSeal.seal(header: header(password: false, gen: 4), templates: templates, masters: masters, serverShare: share,
                                              passwordKey: nil)
        let salt = Array("t".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 4]
        for (info, key) in [("faceseal/token/v2/templates", try keys(envelope).templates), ("faceseal/token/v2/keys", try keys(envelope).keys)] {
            let expected = try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(secret: share), salt: salt, info: Array(info.utf8),
                                                      outputByteCount: 32)
            #expect(key == expected)
        }
    }

    @Test func theLayersHaveTheDocumentedBytes() throws {
        var one = FaceTokenMasters()
        one.fill(.mlKEM768)
        one.fill(.mlDSA65)
        let envelope = try FaceTokenSeal.seal(header: header(password: false), templates: [[1, -2]], masters: one, serverShare: share, passwordKey: nil)
        let layers = try keys(envelope)
        func plaintext(_ nonce: Base64URLBytes, _ sealed: Base64URLBytes, _ key: SymmetricKey) throws -> [UInt8] {
            Array(try AES.GCM.open(AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce.bytes), ciphertext: sealed.bytes.dropLast(16),
                                                     tag: sealed.bytes.suffix(16)), using: key, authenticating: envelope.header.bytes))
        }
        // count 1, dimension 2, then 1.0 and -2.0 as big-endian binary32.
        #expect(try plaintext(envelope.nonce, envelope.sealed, layers.templates) == [0, 1, 0, 2, 0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0])
        // count 2, then (length, name, 32-byte master) in ascending name order.
        let keysLayer = try plaintext(try #require(envelope.keysNonce), try #require(envelope.keysSealed), layers.keys)
        let dsa = Array("ML-DSA-65".utf8), kem = Array("ML-KEM-768".utf8)
        #expect(keysLayer.count == 1 + 2 + dsa.count + kem.count + 64)
        #expect(Array(keysLayer.prefix(2 + dsa.count)) == [2, UInt8(dsa.count)] + dsa)
        #expect(Array(keysLayer[(2 + dsa.count)..<(2 + dsa.count + 32)]) == one[.mlDSA65]?.copyBytes())
        #expect(Array(keysLayer[(34 + dsa.count)..<(35 + dsa.count + kem.count)]) == [UInt8(kem.count)] + kem)
        #expect(Array(keysLayer.suffix(32)) == one[.mlKEM768]?.copyBytes())
    }

    @Test func passwordIsRequiredAndChecked() throws {
        let h = header(password: true)
        let key = try FaceTokenSeal.passwordKey(password: "correct horse", parameters: h.scrypt!)
        let envelope = try FaceTokenSeal.seal(header: h, templates: templates, masters: masters, serverShare: share, passwordKey: key)
        #expect(throws: FaceTokenError.passwordRequired) { try keys(envelope) }
        let wrong = try FaceTokenSeal.passwordKey(password: "battery staple", parameters: h.scrypt!)
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openTemplates(envelope, keys: try keys(envelope, password: wrong)) }
        #expect(try FaceTokenSeal.openTemplates(envelope, keys: try keys(envelope, password: key)) == templates)
        #expect(throws: FaceTokenError.passwordRequired) {
            try FaceTokenSeal.seal(header: h, templates: templates, masters: masters, serverShare: share, passwordKey: nil)
        }
    }

    @Test func tamperedHeaderLayersOrShapesFail() throws {
        let envelope = try FaceTokenSeal.seal(header: header(password: false), templates: templates, masters: masters, serverShare: share,
                                              passwordKey: nil)
        let layers = try keys(envelope)
        var tampered = envelope
        tampered.header = Base64URLBytes(header(password: false, gen: 2).encoded())
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openTemplates(tampered, keys: layers) }
        var flipped = envelope
        flipped.keysSealed?.bytes[0] ^= 0x80
        #expect(try FaceTokenSeal.openTemplates(flipped, keys: layers) == templates)
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.openMasters(flipped, keys: layers) }
        var short = envelope
        short.sealed = Base64URLBytes([1, 2])
        #expect(throws: FaceTokenError.malformed("sealed layer too short")) { try FaceTokenSeal.openTemplates(short, keys: layers) }
        var missing = envelope
        missing.keysSealed = nil
        #expect(throws: FaceTokenError.malformed("the layers do not fit format 2")) { try missing.checkedHeader() }
        var extra = FaceTokenEnvelope(header: header(password: false, v: 1).encoded(), nonce: envelope.nonce.bytes, sealed: envelope.sealed.bytes)
        #expect(try extra.checkedHeader().v == 1)
        extra.keysNonce = envelope.keysNonce
        extra.keysSealed = envelope.keysSealed
        #expect(throws: FaceTokenError.malformed("the layers do not fit format 1")) { try extra.checkedHeader() }
        let future = FaceTokenEnvelope(header: header(password: false, v: 3).encoded(), nonce: envelope.nonce.bytes, sealed: envelope.sealed.bytes)
        #expect(throws: FaceTokenError.malformed("token format 3")) { try future.checkedHeader() }
        let genZero = FaceTokenEnvelope(header: header(password: false, gen: 0).encoded(), nonce: envelope.nonce.bytes, sealed: envelope.sealed.bytes,
                                        keysNonce: envelope.keysNonce?.bytes, keysSealed: envelope.keysSealed?.bytes)
        #expect(throws: FaceTokenError.self) { try genZero.checkedHeader() }
        #expect(throws: FaceTokenError.malformed("server share length")) {
            try FaceTokenSeal.layerKeys(serverShare: SecretBytes([1]), passwordKey: nil, header: header(password: false))
        }
        #expect(throws: FaceTokenError.malformed("tokens are sealed in format 2")) {
            try FaceTokenSeal.seal(header: header(password: false, v: 1), templates: templates, masters: masters, serverShare: share, passwordKey: nil)
        }
        for bad in [[[Float]](), [[1, 2], [3]], [[Float.nan]], Array(repeating: [Float(1)], count: 65)] {
            #expect(throws: FaceTokenError.self) {
                try FaceTokenSeal.seal(header: header(password: false), templates: bad, masters: masters, serverShare: share, passwordKey: nil)
            }
        }
    }

    @Test func malformedKeysLayersAreRefused() throws {
        let master = [UInt8](repeating: 7, count: 32)
        func decode(_ bytes: [UInt8]) throws -> FaceTokenMasters { try FaceTokenMasters.decodeLayer(SecretBytes(bytes)) }
        let dsa = Array("ML-DSA-65".utf8), kem = Array("ML-KEM-768".utf8)
        #expect(try decode([2, UInt8(dsa.count)] + dsa + master + [UInt8(kem.count)] + kem + master).names == ["ML-DSA-65", "ML-KEM-768"])
        #expect(try decode([0]).names.isEmpty)
        #expect(throws: FaceTokenError.self) { try decode([]) }
        #expect(throws: FaceTokenError.self) { try decode([1, UInt8(dsa.count)] + dsa + master.dropLast()) }
        #expect(throws: FaceTokenError.self) { try decode([1, UInt8(dsa.count)] + dsa + master + [0]) }
        #expect(throws: FaceTokenError.self) { try decode([2, UInt8(kem.count)] + kem + master + [UInt8(dsa.count)] + dsa + master) }
        #expect(throws: FaceTokenError.self) { try decode([2, UInt8(dsa.count)] + dsa + master + [UInt8(dsa.count)] + dsa + master) }
        #expect(throws: FaceTokenError.self) { try decode([1, 3] + Array("a b".utf8) + master) }
        #expect(throws: FaceTokenError.self) { try decode([1, 0] + master) }
        #expect(throws: FaceTokenError.self) { try decode([255]) }
    }

    /// A format-1 token as format 1 sealed it: one JSON body with templates and base64url masters under `faceseal/token/v1`.
    struct FormatOneBody: Encodable {
        var templates: [[Float]]
        var masters: [String: Base64URLBytes]
    }

    static func sealFormatOne(header: FaceTokenHeader, body: [UInt8], share: SecretBytes) throws -> FaceTokenEnvelope {
        let key = try FaceTokenSeal.layerKeys(serverShare: share, passwordKey: nil, header: header).templates
        let salt = Array(header.tid.utf8) + [0] + withUnsafeBytes(of: UInt64(header.gen).bigEndian) { Array($0) }
        #expect(key == (try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(secret: share), salt: salt,
                                                   info: Array("faceseal/token/v1".utf8), outputByteCount: 32)))
        let headerBytes = header.encoded()
        let box = try AES.GCM.seal(body, using: key, authenticating: headerBytes)
        return FaceTokenEnvelope(header: headerBytes, nonce: Array(box.nonce), sealed: Array(box.ciphertext + box.tag))
    }

    @Test func aFormatOneTokenStillOpens() throws {
        let dsa = [UInt8](repeating: 9, count: 32)
        let body = WireJSON.encode(FormatOneBody(templates: templates, masters: ["ML-DSA-65": Base64URLBytes(dsa)]))
        let envelope = try Self.sealFormatOne(header: header(password: false, gen: 3, v: 1), body: body, share: share)
        let layers = try keys(envelope)
        #expect(layers.templates == layers.keys)
        #expect(try FaceTokenSeal.openTemplates(envelope, keys: layers) == templates)
        let opened = try FaceTokenSeal.openMasters(envelope, keys: layers)
        #expect(opened.names == ["ML-DSA-65"] && opened[.mlDSA65]?.copyBytes() == dsa)
        // Whitespace is tolerated; what the format never held is refused.
        let spaced = Array(" { \"templates\" : [ [ 1 , 2 ] ] , \"masters\" : { } } ".utf8)
        let spacedEnvelope = try Self.sealFormatOne(header: header(password: false, v: 1), body: spaced, share: share)
        #expect(try FaceTokenSeal.openTemplates(spacedEnvelope, keys: try keys(spacedEnvelope)) == [[1, 2]])
        let b64 = Base64URL.encode(dsa)
        for bad in [#"{"templates":[[1]]}"#, #"{"masters":{},"templates":[[1]],"extra":1}"#, #"{"masters":{"ML-DSA-65":"\#(b64)"},"masters":{},"templates":[[1]]}"#,
                    #"{"masters":{"ML DSA":"\#(b64)"},"templates":[[1]]}"#, #"{"masters":{"ML-DSA-65":"AAAA"},"templates":[[1]]}"#,
                    #"{"masters":{"ML-DSA-65":"\#(b64)"},"templates":[[1e99]]}"#, #"{"masters":{"ML-DSA-65":"a\\b"},"templates":[[1]]}"#,
                    #"{"masters":{},"templates":[]}"#, #"{"masters":{},"templates":[[1]]} x"#] {
            let sealed = try Self.sealFormatOne(header: header(password: false, v: 1), body: Array(bad.utf8), share: share)
            let layers = try keys(sealed)
            #expect(throws: FaceTokenError.self, "\(bad)") {
                _ = try FaceTokenSeal.openTemplates(sealed, keys: layers)
                _ = try FaceTokenSeal.openMasters(sealed, keys: layers)
            }
        }
    }
}
