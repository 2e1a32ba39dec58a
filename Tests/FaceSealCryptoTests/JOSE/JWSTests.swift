import Foundation
import Testing
@testable import FaceSealCrypto

/// Stand-in for the ML-DSA-65 key pair (delivered by another part of the project): it only has to show that
/// an outside signer and verifier plug into JOSE. Its "signature" is an HMAC keyed by the public bytes.
struct FakeMLDSA65: JWSSigner, JWSVerifier {
    let publicKey: [UInt8]
    var algorithm: JWSAlgorithm { .mlDSA65 }
    func sign(_ signingInput: [UInt8]) throws -> [UInt8] {
        HMAC<SHA256>.authenticationCode(for: signingInput, using: SymmetricKey(data: publicKey)).bytes
    }
    func verify(_ signingInput: [UInt8], signature: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: SymmetricKey(data: publicKey))
    }
}

enum JOSETestData {
    static let rfc8032Seed = OSSLTestBytes.hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    /// RFC 8037 appendix A.4.
    static let rfc8037JWS = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
    /// RFC 7515 appendix A.3.
    static let rfc7515ES256 = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    static let rfc7515ES256JWK = #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#

    static func compact(header: String, payload: [UInt8], signature: [UInt8]) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload) + "." + Base64URL.encode(signature)
    }
}

@Suite struct JWSKnownAnswerTests {
    @Test func rfc8037EdDSAExactBytes() throws {
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: JOSETestData.rfc8032Seed)
        let jws = try JWS.sign(payload: Array("Example of Ed25519 signing".utf8), signer: key)
        #expect(jws == JOSETestData.rfc8037JWS)
        let verified = try JWS.verify(jws, verifier: key.publicKey)
        #expect(verified.header.algorithm == .edDSA)
        #expect(String(decoding: verified.payload, as: UTF8.self) == "Example of Ed25519 signing")
    }

    @Test func rfc7515ES256Verifies() throws {
        let jwk = try JWK(json: Array(JOSETestData.rfc7515ES256JWK.utf8))
        let verified = try JWS.verify(JOSETestData.rfc7515ES256, verifier: jwk.verifier())
        #expect(String(decoding: verified.payload, as: UTF8.self).hasPrefix("{\"iss\":\"joe\",\r\n \"exp\":1300819380"))
        // Through a key set too (no kid: the only ES256 key is chosen).
        let set = JWKSet(keys: [jwk, JWK(publicKey: Curve25519.Signing.PrivateKey().publicKey)])
        #expect(try JWS.verify(JOSETestData.rfc7515ES256, keySet: set).payload == verified.payload)
    }

    @Test func roundTripEveryAlgorithm() throws {
        let mlKey = FakeMLDSA65(publicKey: SecureRandom.bytes(count: 1952))
        let rsa = try RSA.Signing.PrivateKey()
        let pairs: [(any JWSSigner, any JWSVerifier)] = [
            (rsa, rsa.publicKey),
            { let k = P256.Signing.PrivateKey(); return (k, k.publicKey) }(),
            { let k = Curve25519.Signing.PrivateKey(); return (k, k.publicKey) }(),
            (mlKey, mlKey),
        ]
        for (signer, verifier) in pairs {
            let jws = try JWS.sign(payload: Array("{\"n\":1}".utf8), signer: signer, keyID: "k1", type: "JWT")
            let verified = try JWS.verify(jws, verifier: verifier)
            #expect(verified.header == JWSHeader(algorithm: signer.algorithm, keyID: "k1", type: "JWT"))
            #expect(verified.payload == Array("{\"n\":1}".utf8))
        }
    }

    @Test func mlDSA65PlugsInThroughTheFactory() throws {
        let fake = FakeMLDSA65(publicKey: SecureRandom.bytes(count: 1952))
        let jwk = try JWK(mlDSA65PublicKey: fake.publicKey, keyID: "pq")
        let parsedSet = try JWKSet(json: JWKSet(keys: [jwk]).jsonData)
        let jws = try JWS.sign(payload: Array("pq".utf8), signer: fake, keyID: "pq")
        let factory = JWSVerifierFactory(mlDSA65: { FakeMLDSA65(publicKey: $0) })
        #expect(try JWS.verify(jws, keySet: parsedSet, factory: factory).payload == Array("pq".utf8))
        #expect(throws: JOSEError.unsupportedKeyType("AKP ML-DSA-65 (no verifier installed)")) {
            try JWS.verify(jws, keySet: parsedSet, factory: JWSVerifierFactory())
        }
        let lying = JWSVerifierFactory(mlDSA65: { _ in Curve25519.Signing.PrivateKey().publicKey })
        #expect(throws: JOSEError.algorithmMismatch(header: "ML-DSA-65", key: "EdDSA")) {
            try JWS.verify(jws, keySet: parsedSet, factory: lying)
        }
    }
}

@Suite struct JWSTamperingTests {
    let key = Curve25519.Signing.PrivateKey()

    private func parts(_ jws: String) throws -> ([UInt8], [UInt8], [UInt8]) {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        return (try Base64URL.decode(segments[0]), try Base64URL.decode(segments[1]), try Base64URL.decode(segments[2]))
    }

    private func assemble(_ h: [UInt8], _ p: [UInt8], _ s: [UInt8]) -> String {
        Base64URL.encode(h) + "." + Base64URL.encode(p) + "." + Base64URL.encode(s)
    }

    @Test(arguments: [JWSAlgorithm.edDSA, .es256, .rs256, .mlDSA65])
    func everyFlippedBitFails(algorithm: JWSAlgorithm) throws {
        let signer: any JWSSigner
        let verifier: any JWSVerifier
        switch algorithm {
        case .edDSA: signer = key; verifier = key.publicKey
        case .es256: let k = P256.Signing.PrivateKey(); signer = k; verifier = k.publicKey
        case .rs256: let k = try RSA.Signing.PrivateKey(); signer = k; verifier = k.publicKey
        case .mlDSA65: let k = FakeMLDSA65(publicKey: SecureRandom.bytes(count: 1952)); signer = k; verifier = k
        }
        let jws = try JWS.sign(payload: Array("{\"sub\":\"alice\",\"amr\":[\"face\"]}".utf8), signer: signer, keyID: "a")
        #expect(throws: Never.self) { try JWS.verify(jws, verifier: verifier) }
        let (h, p, s) = try parts(jws)
        var attempts = 0
        for part in 0..<3 {
            let original = [h, p, s][part]
            for byteIndex in original.indices {
                for bit in 0..<8 {
                    var modified = [h, p, s]
                    modified[part][byteIndex] ^= UInt8(1) << bit
                    let tampered = assemble(modified[0], modified[1], modified[2])
                    #expect(throws: JOSEError.self) { try JWS.verify(tampered, verifier: verifier) }
                    attempts += 1
                }
            }
        }
        #expect(attempts == (h.count + p.count + s.count) * 8)
    }

    @Test func changedAlgorithmFails() throws {
        let jws = try JWS.sign(payload: Array("x".utf8), signer: key)
        let (_, p, s) = try parts(jws)
        for (header, expected) in [
            (#"{"alg":"ES256"}"#, JOSEError.algorithmMismatch(header: "ES256", key: "EdDSA")),
            (#"{"alg":"RS256"}"#, .algorithmMismatch(header: "RS256", key: "EdDSA")),
            (#"{"alg":"HS256"}"#, .unsupportedAlgorithm("HS256")),
            (#"{"alg":"none"}"#, .algorithmNone),
            (#"{"alg":"None"}"#, .algorithmNone),
            (#"{"alg":"Ed25519"}"#, .unsupportedAlgorithm("Ed25519")),
        ] {
            #expect(throws: expected) { try JWS.verify(JOSETestData.compact(header: header, payload: p, signature: s), verifier: key.publicKey) }
        }
        // An unsecured JWS with an empty signature is refused on its header.
        let unsecured = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(p) + "."
        #expect(throws: JOSEError.algorithmNone) { try JWS.verify(unsecured, verifier: key.publicKey) }
        // Same alg but another key of the algorithm.
        #expect(throws: JOSEError.invalidSignature) { try JWS.verify(jws, verifier: Curve25519.Signing.PrivateKey().publicKey) }
    }

    @Test func es256RefusesDERSignatures() throws {
        let k = P256.Signing.PrivateKey()
        let jws = try JWS.sign(payload: Array("x".utf8), signer: k)
        let (h, p, _) = try parts(jws)
        let signingInput = Array((jws.split(separator: ".")[0] + "." + jws.split(separator: ".")[1]).utf8)
        let der = [UInt8](try k.signature(for: signingInput).derRepresentation)
        #expect(throws: JOSEError.invalidSignature) { try JWS.verify(assemble(h, p, der), verifier: k.publicKey) }
    }
}

@Suite struct JWSBadInputTests {
    let key = Curve25519.Signing.PrivateKey()
    var valid: String { (try? JWS.sign(payload: Array("hello".utf8), signer: key)) ?? "" }

    @Test func wrongSegmentCounts() {
        for (input, count) in [("", 1), ("abc", 1), ("a.b", 2), ("a.b.c.d", 4), (valid + ".", 4), ("..", 3)] {
            if count == 3 {
                #expect(throws: JOSEError.self) { try JWS.verify(input, verifier: key.publicKey) }
            } else {
                #expect(throws: JOSEError.wrongSegmentCount(count)) { try JWS.verify(input, verifier: key.publicKey) }
            }
        }
    }

    @Test func trailingGarbageAndBadBase64URL() {
        let jws = valid
        #expect(throws: JOSEError.invalidBase64URL(part: "signature")) { try JWS.verify(jws + " ", verifier: key.publicKey) }
        #expect(throws: JOSEError.invalidBase64URL(part: "signature")) { try JWS.verify(jws + "\n", verifier: key.publicKey) }
        #expect(throws: JOSEError.invalidBase64URL(part: "signature")) { try JWS.verify(jws + "=", verifier: key.publicKey) }
        #expect(throws: JOSEError.self) { try JWS.verify(jws + "A", verifier: key.publicKey) }
        #expect(throws: JOSEError.invalidBase64URL(part: "header")) { try JWS.verify("e#J" + jws.dropFirst(3), verifier: key.publicKey) }
        let segments = jws.split(separator: ".")
        #expect(throws: JOSEError.invalidBase64URL(part: "payload")) {
            try JWS.verify(segments[0] + ".aGVsbG8=." + segments[2], verifier: key.publicKey)
        }
        #expect(throws: JOSEError.invalidBase64URL(part: "header")) {
            try JWS.verify(" " + jws, verifier: key.publicKey)
        }
    }

    @Test func oversizedInput() throws {
        let big = [UInt8](repeating: 0x41, count: 70_000)
        let jws = try JWS.sign(payload: big, signer: key)
        #expect(throws: JOSEError.inputTooLarge(limit: 65_536)) { try JWS.verify(jws, verifier: key.publicKey) }
        #expect(try JWS.verify(jws, verifier: key.publicKey, options: .init(maximumSize: 200_000)).payload == big)
        #expect(throws: JOSEError.inputTooLarge(limit: 50)) { try JWS.verify(valid, verifier: key.publicKey, options: .init(maximumSize: 50)) }
    }

    @Test func malformedHeaders() {
        let cases: [(String, JOSEError)] = [
            (#"{"kid":"1"}"#, .missingField("alg")),
            (#"{"alg":5}"#, .invalidField("alg")),
            (#"{"alg":"EdDSA","kid":7}"#, .invalidField("kid")),
            (#"{"alg":"EdDSA","typ":["JWT"]}"#, .invalidField("typ")),
            (#"{"alg":"EdDSA","crit":["exp"],"exp":1}"#, .criticalHeaderUnsupported),
            (#"{"alg":"EdDSA","crit":[]}"#, .criticalHeaderUnsupported),
            (#"{"alg":"EdDSA","b64":false}"#, .invalidField("b64")),
        ]
        for (header, expected) in cases {
            let jws = JOSETestData.compact(header: header, payload: [1], signature: [UInt8](repeating: 0, count: 64))
            #expect(throws: expected, "\(header)") { try JWS.verify(jws, verifier: key.publicKey) }
        }
        for header in [#"[1]"#, #"{"alg":"EdDSA","alg":"none"}"#, #"{"alg":"EdDSA"} "x""#, "", #"{"alg":"EdDSA""#] {
            let jws = JOSETestData.compact(header: header, payload: [1], signature: [UInt8](repeating: 0, count: 64))
            #expect(throws: JOSEError.self, "\(header)") { try JWS.verify(jws, verifier: key.publicKey) }
            #expect(throws: JOSEError.self) { try JWS.parse(jws) }
        }
    }

    @Test func signerAndHeaderMustAgree() {
        #expect(throws: JOSEError.algorithmMismatch(header: "ES256", key: "EdDSA")) {
            try JWS.sign(payload: [1], header: JWSHeader(algorithm: .es256), signer: key)
        }
        #expect(throws: JOSEError.invalidField("crit")) {
            try JWS.sign(payload: [1], header: JWSHeader(algorithm: .edDSA, additionalMembers: ["crit": ["x"]]), signer: key)
        }
    }

    @Test func allowedAlgorithms() throws {
        #expect(throws: JOSEError.unsupportedAlgorithm("EdDSA")) {
            try JWS.verify(valid, verifier: key.publicKey, options: .init(allowedAlgorithms: [.es256]))
        }
        #expect(throws: Never.self) { try JWS.verify(valid, verifier: key.publicKey, options: .init(allowedAlgorithms: [.edDSA])) }
    }

    /// The header written directly (no additional members) is the bytes of its JSON object, escapes included.
    @Test func headersAreWrittenAsTheirJSONObject() throws {
        let texts = ["", "k", "kid/1", "a\"b\\c", "tab\tnew\nline\r\u{0}\u{1f}\u{7f}", "é€😀", "faceseal-device+jwt"]
        for algorithm in JWSAlgorithm.allCases {
            for keyID in [nil] + texts {
                for type in [nil] + texts {
                    let header = JWSHeader(algorithm: algorithm, keyID: keyID, type: type)
                    #expect(header.serialized == header.jsonValue.serialized)
                }
            }
        }
        let compact = try JWS.sign(payload: [1, 2, 3], signer: key, keyID: "k/1", type: "x+jwt")
        let parts = compact.split(separator: ".")
        #expect(try Base64URL.decode(parts[0]) == Array(#"{"alg":"EdDSA","kid":"k/1","typ":"x+jwt"}"#.utf8))
        #expect(String(parts[1]) == "AQID")
    }

    @Test func additionalHeaderMembersRoundTrip() throws {
        let header = JWSHeader(algorithm: .edDSA, keyID: "k", type: "dpop+jwt", additionalMembers: ["nonce": "n-1", "jwk": JWK(publicKey: key.publicKey).jsonValue])
        let jws = try JWS.sign(payload: [1, 2], header: header, signer: key)
        #expect(try JWS.verify(jws, verifier: key.publicKey).header == header)
    }
}
