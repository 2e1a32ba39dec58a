import Foundation
import Testing
@testable import FaceSealCrypto

@Suite struct JWKTests {
    @Test func rfc8037ThumbprintAndRoundTrip() throws {
        let json = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#
        let jwk = try JWK(json: Array(json.utf8))
        #expect(jwk.thumbprintBase64URL == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: JOSETestData.rfc8032Seed)
        #expect(jwk.material == JWK(publicKey: key.publicKey).material)
        #expect(try JWK(json: jwk.jsonData) == jwk)
        #expect(!jwk.includesAlgorithm)
        #expect(String(decoding: jwk.jsonData, as: UTF8.self) == #"{"crv":"Ed25519","kty":"OKP","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#)
    }

    @Test func rfc7638RSAThumbprint() throws {
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let json = #"{"kty":"RSA","n":"\#(n)","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#
        let jwk = try JWK(json: Array(json.utf8))
        #expect(jwk.thumbprintBase64URL == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        #expect(jwk.keyID == "2011-04-29")
        #expect(try JWK(json: jwk.jsonData) == jwk)
        #expect(try jwk.verifier().algorithm == .rs256)
    }

    @Test func keysRoundTripThroughJWK() throws {
        let rsa = try RSA.Signing.PrivateKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaPKCS1DER))
        let p256 = P256.Signing.PrivateKey()
        let ed = Curve25519.Signing.PrivateKey()
        for jwk in [JWK(publicKey: rsa.publicKey, keyID: "r"), JWK(publicKey: p256.publicKey, keyID: "p"), JWK(publicKey: ed.publicKey, keyID: "e"),
                    try JWK(mlDSA65PublicKey: SecureRandom.bytes(count: 1952), keyID: "m")] {
            let parsed = try JWK(json: jwk.jsonData)
            #expect(parsed == jwk)
            #expect(parsed.thumbprint == jwk.thumbprint)
            #expect(jwk.jsonValue.objectValue?["alg"]?.stringValue == jwk.algorithm.rawValue)
        }
        let verifier = try JWK(json: JWK(publicKey: p256.publicKey).jsonData).verifier()
        let jws = try JWS.sign(payload: [1], signer: p256)
        #expect(throws: Never.self) { try JWS.verify(jws, verifier: verifier) }
    }

    @Test func akpKeys() throws {
        let pub = SecureRandom.bytes(count: 1952)
        let jwk = try JWK(mlDSA65PublicKey: pub)
        let object = try #require(jwk.jsonValue.objectValue)
        #expect(object["kty"] == "AKP")
        #expect(object["alg"] == "ML-DSA-65")
        #expect(object["pub"] == .string(Base64URL.encode(pub)))
        let canonical = #"{"alg":"ML-DSA-65","kty":"AKP","pub":"\#(Base64URL.encode(pub))"}"#
        #expect(jwk.thumbprint == SHA256.hash(data: Array(canonical.utf8)))
        #expect(throws: JOSEError.invalidKey("ML-DSA-65 public key must be 1952 bytes, got 1951")) { try JWK(mlDSA65PublicKey: pub.dropLast()) }
        let pubText = Base64URL.encode(pub)
        #expect(throws: JOSEError.missingField("alg")) { try JWK(json: Array(#"{"kty":"AKP","pub":"\#(pubText)"}"#.utf8)) }
        #expect(throws: JOSEError.unsupportedKeyType("AKP ML-DSA-44")) { try JWK(json: Array(#"{"kty":"AKP","alg":"ML-DSA-44","pub":"\#(pubText)"}"#.utf8)) }
        #expect(throws: JOSEError.missingField("pub")) { try JWK(json: Array(#"{"kty":"AKP","alg":"ML-DSA-65"}"#.utf8)) }
        #expect(throws: JOSEError.invalidKey("private key member \"priv\" in a public JWK")) {
            try JWK(json: Array(#"{"kty":"AKP","alg":"ML-DSA-65","pub":"\#(pubText)","priv":"AAAA"}"#.utf8))
        }
    }

    @Test func badJWKs() throws {
        let ec = JWK(publicKey: P256.Signing.PrivateKey().publicKey)
        let x = try #require(ec.jsonValue.objectValue?["x"]?.stringValue)
        let y = try #require(ec.jsonValue.objectValue?["y"]?.stringValue)
        var yBytes = try Base64URL.decode(y)
        yBytes[31] ^= 1
        let offCurveY = Base64URL.encode(yBytes)
        let edX = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        let cases: [(String, JOSEError)] = [
            (#"{"crv":"P-256","x":"\#(x)","y":"\#(y)"}"#, .missingField("kty")),
            (#"{"kty":"oct","k":"AAAA"}"#, .invalidKey("private key member \"k\" in a public JWK")),
            (#"{"kty":"oct"}"#, .unsupportedKeyType("oct")),
            (#"{"kty":7}"#, .invalidField("kty")),
            (#"{"kty":"EC","crv":"P-384","x":"\#(x)","y":"\#(y)"}"#, .unsupportedKeyType("EC P-384")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)"}"#, .missingField("y")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)=","y":"\#(y)"}"#, .invalidBase64URL(part: "x")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","d":"AAAA"}"#, .invalidKey("private key member \"d\" in a public JWK")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","alg":"EdDSA"}"#, .algorithmMismatch(header: "EdDSA", key: "ES256")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","alg":"none"}"#, .algorithmNone),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","alg":"ES384"}"#, .unsupportedAlgorithm("ES384")),
            (#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","kid":1}"#, .invalidField("kid")),
            (#"{"kty":"OKP","crv":"X25519","x":"\#(edX)"}"#, .unsupportedKeyType("OKP X25519")),
            (#"{"kty":"OKP","crv":"Ed25519","x":"AAAA"}"#, .invalidKey("incorrectKeySize(expected: 32, actual: 3)")),
            (#"{"kty":"RSA","n":"AAEC","e":"AQAB"}"#, .invalidField("n")),
            (#"{"kty":"RSA","n":"AQAB","e":"AAEAAQ"}"#, .invalidField("e")),
        ]
        for (json, expected) in cases {
            #expect(throws: expected, "\(json)") { try JWK(json: Array(json.utf8)) }
        }
        #expect(throws: JOSEError.self) { try JWK(json: Array(#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(offCurveY)"}"#.utf8)) }
        #expect(throws: JOSEError.self) { try JWK(json: Array(#"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#.utf8)) }
        #expect(throws: JOSEError.inputTooLarge(limit: 10)) { try JWK(json: ec.jsonData, maximumSize: 10) }
        #expect(throws: JOSEError.malformedJSON(part: "JWK", reason: "not a JSON object")) { try JWK(json: Array("[]".utf8)) }
    }
}

@Suite struct JWKSetTests {
    let ed = Curve25519.Signing.PrivateKey()
    let ed2 = Curve25519.Signing.PrivateKey()
    let p256 = P256.Signing.PrivateKey()

    var set: JWKSet {
        JWKSet(keys: [JWK(publicKey: ed.publicKey, keyID: "ed-1"), JWK(publicKey: ed2.publicKey, keyID: "ed-2"),
                      JWK(publicKey: p256.publicKey, keyID: "ec-1")])
    }

    @Test func parsesSkipsUnknownTypesAndRoundTrips() throws {
        var json = String(decoding: set.jsonData, as: UTF8.self)
        json.removeLast(2)  // "]}"
        json += #",{"kty":"oct-unknown","use":"sig"},{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}]}"#
        let parsed = try JWKSet(json: Array(json.utf8))
        #expect(parsed == set)
        #expect(try JWKSet(json: set.jsonData) == set)
    }

    @Test func keySelection() throws {
        #expect(try set.key(for: JWSHeader(algorithm: .edDSA, keyID: "ed-2")).keyID == "ed-2")
        #expect(try set.key(for: JWSHeader(algorithm: .es256)).keyID == "ec-1")
        #expect(throws: JOSEError.ambiguousKey) { try set.key(for: JWSHeader(algorithm: .edDSA)) }
        #expect(throws: JOSEError.keyNotFound(keyID: "nope")) { try set.key(for: JWSHeader(algorithm: .edDSA, keyID: "nope")) }
        #expect(throws: JOSEError.keyNotFound(keyID: nil)) { try set.key(for: JWSHeader(algorithm: .rs256)) }
        #expect(throws: JOSEError.algorithmMismatch(header: "ES256", key: "EdDSA")) { try set.key(for: JWSHeader(algorithm: .es256, keyID: "ed-1")) }
        var encryptionOnly = JWK(publicKey: p256.publicKey, keyID: "enc")
        encryptionOnly.use = "enc"
        #expect(throws: JOSEError.keyNotFound(keyID: "enc")) { try JWKSet(keys: [encryptionOnly]).key(for: JWSHeader(algorithm: .es256, keyID: "enc")) }
    }

    @Test func verifiesThroughTheSet() throws {
        let jws = try JWS.sign(payload: [42], signer: ed2, keyID: "ed-2")
        #expect(try JWS.verify(jws, keySet: set).payload == [42])
        let wrongKid = try JWS.sign(payload: [42], signer: ed2, keyID: "ed-1")
        #expect(throws: JOSEError.invalidSignature) { try JWS.verify(wrongKid, keySet: set) }
    }

    /// RS256 tokens verified through a parsed set, many times, with the one kept verifier; a forged one still fails.
    @Test func rs256ThroughTheSetManyTimes() throws {
        let rsa = try RSA.Signing.PrivateKey()
        let forger = try RSA.Signing.PrivateKey()
        let keys = try JWKSet(json: JWKSet(keys: [JWK(publicKey: rsa.publicKey, keyID: "rsa-1")]).jsonData)
        for round in 0..<20 {
            let jws = try JWS.sign(payload: [UInt8(round)], signer: rsa, keyID: "rsa-1")
            #expect(try JWS.verify(jws, keySet: keys).payload == [UInt8(round)])
            let forged = try JWS.sign(payload: [UInt8(round)], signer: forger, keyID: "rsa-1")
            #expect(throws: JOSEError.invalidSignature) { try JWS.verify(forged, keySet: keys) }
        }
    }

    /// The kept verifiers are bounded: a full cache starts over rather than growing.
    @Test func verifierCacheIsBounded() throws {
        let cache = JWKVerifierCache(limit: 3)
        var builds = 0
        let materials = (0..<7).map { _ in JWK.KeyMaterial.ed25519(x: [UInt8](Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)) }
        for material in materials + materials.prefix(1) {
            guard case .ed25519(let x) = material else { continue }
            _ = try cache.verifier(for: material) {
                builds += 1
                return try Curve25519.Signing.PublicKey(rawRepresentation: x)
            }
            #expect(cache.count <= 3)
        }
        #expect(builds == 8)
        _ = try cache.verifier(for: materials[0]) { Issue.record("rebuilt a kept verifier"); return ed.publicKey }
        #expect(throws: CryptoError.self) { try cache.verifier(for: .ed25519(x: [1])) { try Curve25519.Signing.PublicKey(rawRepresentation: [1]) } }
    }

    @Test func badSets() throws {
        #expect(throws: JOSEError.missingField("keys")) { try JWKSet(json: Array("{}".utf8)) }
        #expect(throws: JOSEError.invalidField("keys")) { try JWKSet(json: Array(#"{"keys":{}}"#.utf8)) }
        #expect(throws: JOSEError.invalidField("keys")) { try JWKSet(json: Array(#"{"keys":[1]}"#.utf8)) }
        #expect(throws: JOSEError.inputTooLarge(limit: 2)) { try JWKSet(json: set.jsonData, maximumKeyCount: 2) }
        #expect(throws: JOSEError.inputTooLarge(limit: 100)) { try JWKSet(json: set.jsonData, maximumSize: 100) }
        #expect(throws: JOSEError.invalidBase64URL(part: "x")) { try JWKSet(json: Array(#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"!"}]}"#.utf8)) }
    }
}
