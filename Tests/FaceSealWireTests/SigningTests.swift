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
}

@Suite struct FaceTokenSealTests {
    let share = SecureRandom.bytes(count: 32)
    let body = FaceTokenBody(templates: [[0.1, 0.2]], masters: [.mlDSA65: Array(repeating: 9, count: 32)])

    func header(password: Bool, gen: Int = 1) -> FaceTokenHeader {
        FaceTokenHeader(tid: "t", sub: "s", tenant: "x", gen: gen, passwordRequired: password, livenessRequired: false,
                        threshold: 0.5, scrypt: password ? ScryptParameters(logN: 10, salt: Array(repeating: 1, count: 16)) : nil,
                        createdAt: 0)
    }

    @Test func sealsAndOpensWithoutPassword() throws {
        let envelope = try FaceTokenSeal.seal(header: header(password: false), body: body, serverShare: share, passwordKey: nil)
        let opened = try FaceTokenSeal.open(envelope, serverShare: share, passwordKey: nil)
        #expect(opened.body == body && opened.header == header(password: false))
        var wrongShare = share
        wrongShare[0] ^= 1
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.open(envelope, serverShare: wrongShare, passwordKey: nil) }
    }

    @Test func passwordIsRequiredAndChecked() throws {
        let h = header(password: true)
        let key = try FaceTokenSeal.passwordKey(password: "correct horse", parameters: h.scrypt!)
        let envelope = try FaceTokenSeal.seal(header: h, body: body, serverShare: share, passwordKey: key)
        #expect(throws: FaceTokenError.passwordRequired) { try FaceTokenSeal.open(envelope, serverShare: share, passwordKey: nil) }
        let wrong = try FaceTokenSeal.passwordKey(password: "battery staple", parameters: h.scrypt!)
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.open(envelope, serverShare: share, passwordKey: wrong) }
        #expect(try FaceTokenSeal.open(envelope, serverShare: share, passwordKey: key).body == body)
    }

    @Test func tamperedHeaderOrGenerationFails() throws {
        let envelope = try FaceTokenSeal.seal(header: header(password: false), body: body, serverShare: share, passwordKey: nil)
        var tampered = envelope
        tampered.header = Base64URLBytes(header(password: false, gen: 2).encoded())
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.open(tampered, serverShare: share, passwordKey: nil) }
        var flipped = envelope
        flipped.sealed.bytes[0] ^= 0x80
        #expect(throws: FaceTokenError.wrongPassword) { try FaceTokenSeal.open(flipped, serverShare: share, passwordKey: nil) }
        var short = envelope
        short.sealed = Base64URLBytes([1, 2])
        #expect(throws: FaceTokenError.malformed("sealed body too short")) { try FaceTokenSeal.open(short, serverShare: share, passwordKey: nil) }
        #expect(throws: FaceTokenError.malformed("server share length")) { try FaceTokenSeal.open(envelope, serverShare: [1], passwordKey: nil) }
    }
}
