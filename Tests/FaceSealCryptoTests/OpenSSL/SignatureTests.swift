import Foundation
import Testing
@testable import FaceSealCrypto

@Suite struct P256Tests {
    @Test func signVerifyRawAndDER() throws {
        let key = P256.Signing.PrivateKey()
        let message = Array("payload".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.rawRepresentation.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        let fromDER = try P256.Signing.ECDSASignature(derRepresentation: signature.derRepresentation)
        #expect(fromDER == signature)
        let fromRaw = try P256.Signing.ECDSASignature(rawRepresentation: signature.rawRepresentation)
        #expect(key.publicKey.isValidSignature(fromRaw, for: message))
        for index in 0..<64 {
            var raw = [UInt8](signature.rawRepresentation)
            raw[index] ^= 0x01
            #expect(!key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: message))
        }
        #expect(!key.publicKey.isValidSignature(signature, for: Array("payloaD".utf8)))
        // r = s = 0 never verifies.
        #expect(!key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 0, count: 64)), for: message))
    }

    @Test func crossCheckWithForeignKeyAndSignature() throws {
        let fromSPKI = try P256.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.p256SPKI))
        #expect(OSSLTestBytes.hexString(fromSPKI.x963Representation) == OSSLFixtures.p256X963)
        #expect(OSSLTestBytes.hexString(fromSPKI.derRepresentation) == OSSLFixtures.p256SPKI)
        let signature = try P256.Signing.ECDSASignature(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.p256DERSignatureOfABC))
        #expect(OSSLTestBytes.hexString(signature.derRepresentation) == OSSLFixtures.p256DERSignatureOfABC)
        #expect(fromSPKI.isValidSignature(signature, for: Array("abc".utf8)))
        let privateKey = try P256.Signing.PrivateKey(rawRepresentation: OSSLTestBytes.hex(OSSLFixtures.p256PrivateScalar))
        #expect(privateKey.publicKey == fromSPKI)
        #expect(OSSLTestBytes.hexString(privateKey.rawRepresentation) == OSSLFixtures.p256PrivateScalar)
    }

    @Test func publicKeyRepresentationsRoundTrip() throws {
        let key = P256.Signing.PrivateKey().publicKey
        #expect(try P256.Signing.PublicKey(rawRepresentation: key.rawRepresentation) == key)
        #expect(try P256.Signing.PublicKey(x963Representation: key.x963Representation) == key)
        #expect(try P256.Signing.PublicKey(derRepresentation: key.derRepresentation) == key)
        #expect(try P256.Signing.PublicKey(x: key.x, y: key.y) == key)
        #expect(key.x.count == 32 && key.y.count == 32)
    }

    @Test func rejectsBadKeys() {
        let point = OSSLTestBytes.hex(OSSLFixtures.p256X963)
        var offCurve = point
        offCurve[64] ^= 1
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(x963Representation: offCurve) }
        var compressedTag = point
        compressedTag[0] = 0x02
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(x963Representation: compressedTag) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(x963Representation: point.dropLast()) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 64)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.p384SPKI)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.p256SPKI) + [0]) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaSPKI)) }
        #expect(throws: CryptoError.self) { try P256.Signing.PublicKey(derRepresentation: [0x30, 0x00]) }
        // d = 0 and d = n are not private keys.
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        let n = OSSLTestBytes.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        #expect(throws: CryptoError.self) { try P256.Signing.PrivateKey(rawRepresentation: n) }
        #expect(throws: CryptoError.incorrectKeySize(expected: 32, actual: 31)) { try P256.Signing.PrivateKey(rawRepresentation: n.dropLast()) }
    }

    @Test func derIntegersAreMinimal() throws {
        // r with leading zero bytes then a high bit (a 0x00 pad), s = 1, and r = 0.
        let r = [0, 0, 0x80] + [UInt8](repeating: 0x11, count: 29)
        let one = [UInt8](repeating: 0, count: 31) + [1]
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: r + one)
        let expected: [UInt8] = [0x30, 36, 0x02, 31, 0x00, 0x80] + [UInt8](repeating: 0x11, count: 29) + [0x02, 1, 1]
        #expect([UInt8](signature.derRepresentation) == expected)
        #expect(try P256.Signing.ECDSASignature(derRepresentation: expected) == signature)
        let zero = try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 0, count: 32) + one)
        #expect([UInt8](zero.derRepresentation) == [0x30, 6, 0x02, 1, 0, 0x02, 1, 1])
        let high = try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 0xFF, count: 64))
        #expect([UInt8](high.derRepresentation) == [0x30, 70, 0x02, 33, 0] + [UInt8](repeating: 0xFF, count: 32) + [0x02, 33, 0]
                + [UInt8](repeating: 0xFF, count: 32))
    }

    /// One key's kept OpenSSL contexts are shared by every thread that signs or verifies with it.
    @Test func oneKeySignsAndVerifiesFromManyTasksAtOnce() async throws {
        let key = P256.Signing.PrivateKey()
        let rsa = try RSA.Signing.PrivateKey()
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var failures = 0
                    for round in 0..<40 {
                        let message = Array("task \(task) round \(round)".utf8)
                        guard let signature = try? key.signature(for: message), key.publicKey.isValidSignature(signature, for: message),
                              !key.publicKey.isValidSignature(signature, for: message + [0]) else { failures += 1; continue }
                        if round % 8 == 0 {
                            guard let rsaSignature = try? rsa.signature(for: message),
                                  rsa.publicKey.isValidSignature(rsaSignature, for: message) else { failures += 1; continue }
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    /// Exactly the canonical encodings are accepted: every (r, s) re-encodes to what was read, and nothing else reads.
    @Test func derAcceptsExactlyCanonicalEncodings() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2000 {
            var raw = (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Leading zero bytes and high bits at the edges of both halves.
            for half in [0, 32] where round % 3 == 0 { for i in 0..<(round % 33) { raw[half + i] = 0 } }
            if round % 5 == 0 { raw[0] |= 0x80 }
            let canonical = [UInt8](try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            #expect(try P256.Signing.ECDSASignature(derRepresentation: canonical).rawRepresentation == Data(raw))
            // Mutations: a byte changed, one inserted or removed; whatever still reads must be canonical.
            var mutated = canonical
            let position = Int.random(in: 0..<mutated.count, using: &generator)
            switch round % 3 {
            case 0: mutated[position] = [0x00, 0x80, 0x7F, 0x02, 0x30, 0x21, 0x20, UInt8.random(in: 0...255, using: &generator)][round % 8]
            case 1: mutated.insert([0x00, 0x80, 0xFF][round % 3], at: position)
            default: mutated.remove(at: position)
            }
            if let read = try? P256.Signing.ECDSASignature(derRepresentation: mutated) {
                #expect([UInt8](read.derRepresentation) == mutated)
            }
        }
    }

    @Test func rejectsNonCanonicalDER() throws {
        let der = OSSLTestBytes.hex(OSSLFixtures.p256DERSignatureOfABC)
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: der + [0]) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: der.dropLast()) }
        // Long-form length where short form is required (BER, not DER).
        let ber = [0x30, 0x81, der[1]] + der[2...]
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: ber) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 1, count: 63)) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: [UInt8]()) }
        // Well-formed structures whose integers are not canonical or not in 0..<2^256.
        let one: [UInt8] = [0x02, 0x01, 0x01]
        let wide = [0x02, 33, 0x01] + [UInt8](repeating: 0x80, count: 32)
        for integer: [UInt8] in [[0x02, 0x02, 0x00, 0x01], [0x02, 0x01, 0x80], [0x02, 0x00], wide,
                                 [0x02, 34, 0x00, 0x00] + [UInt8](repeating: 0x80, count: 32), [0x03, 0x01, 0x01]] {
            for body in [integer + one, one + integer] {
                #expect(throws: CryptoError.invalidSignatureEncoding) {
                    try P256.Signing.ECDSASignature(derRepresentation: [0x30, UInt8(body.count)] + body)
                }
            }
        }
        #expect(try P256.Signing.ECDSASignature(derRepresentation: [0x30, 6, 0x02, 0x01, 0x00] + one).rawRepresentation
                == Data([UInt8](repeating: 0, count: 63) + [1]))
    }
}

@Suite struct RSATests {
    @Test func knownAnswerSignatureFromForeignKey() throws {
        let key = try RSA.Signing.PrivateKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaPKCS1DER))
        let signature = try key.signature(for: Array("abc".utf8))
        #expect(OSSLTestBytes.hexString(signature.rawRepresentation) == OSSLFixtures.rsaSignatureOfABC)
        #expect(OSSLTestBytes.hexString(key.publicKey.modulus) == OSSLFixtures.rsaModulus)
        #expect([UInt8](key.publicKey.publicExponent) == [0x01, 0x00, 0x01])
        #expect(OSSLTestBytes.hexString(key.publicKey.derRepresentation) == OSSLFixtures.rsaSPKI)
        #expect(OSSLTestBytes.hexString(key.derRepresentation) == OSSLFixtures.rsaPKCS1DER)
        let fromPKCS8 = try RSA.Signing.PrivateKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaPKCS8DER))
        #expect(fromPKCS8.publicKey == key.publicKey)
        let spki = try RSA.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaSPKI))
        #expect(spki == key.publicKey)
        #expect(spki.keySizeInBits == 2048)
        #expect(spki.isValidSignature(signature, for: Array("abc".utf8)))
    }

    @Test func generateSignVerifyTamper() throws {
        let key = try RSA.Signing.PrivateKey()
        #expect(key.publicKey.keySizeInBits == 2048)
        let message = Array("id token".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.rawRepresentation.count == 256)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        var raw = [UInt8](signature.rawRepresentation)
        raw[100] ^= 4
        #expect(!key.publicKey.isValidSignature(RSA.Signing.RSASignature(rawRepresentation: raw), for: message))
        #expect(!key.publicKey.isValidSignature(RSA.Signing.RSASignature(rawRepresentation: raw.dropLast()), for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("id tokeN".utf8)))
        let rebuilt = try RSA.Signing.PublicKey(modulus: key.publicKey.modulus, publicExponent: key.publicKey.publicExponent)
        #expect(rebuilt.isValidSignature(signature, for: message))
        #expect(try RSA.Signing.PrivateKey(derRepresentation: key.derRepresentation).publicKey == key.publicKey)
    }

    @Test func rejectsBadKeys() throws {
        let n = OSSLTestBytes.hex(OSSLFixtures.rsaModulus)
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: n.prefix(128), publicExponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: n, publicExponent: [1, 0, 0]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: n, publicExponent: [UInt8]()) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: [UInt8](repeating: 0xff, count: 1025), publicExponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.p256SPKI)) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(derRepresentation: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(derRepresentation: OSSLTestBytes.hex(OSSLFixtures.rsaPKCS1DER) + [0]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PrivateKey(keySize: 1024) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: n, publicExponent: [3]) }
        #expect(throws: CryptoError.self) { try RSA.Signing.PublicKey(modulus: n.dropLast() + [n.last! & 0xFE], publicExponent: [1, 0, 1]) }
        // Leading zeros in n are ignored (JWK producers sometimes keep one).
        #expect(try RSA.Signing.PublicKey(modulus: [0] + n, publicExponent: [0, 1, 0, 1]).modulus == Data(n))
        // Only the full check finds a modulus with a small factor: the right size and parity, divisible by 3.
        var composite = n
        let rest = composite.dropLast().reduce(0) { ($0 + Int($1)) % 3 }
        composite[composite.count - 1] = UInt8((1...255).first { $0 % 2 == 1 && (rest + $0) % 3 == 0 }!)
        let cheap = try RSA.Signing.PublicKey(modulus: composite, publicExponent: [1, 0, 1])
        #expect(throws: CryptoError.self) { try cheap.check() }
        try RSA.Signing.PublicKey(modulus: n, publicExponent: [1, 0, 1]).check()
    }
}
