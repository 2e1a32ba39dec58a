import Foundation
import Testing
@testable import FaceSealCrypto

/// libsodium's Ed25519 behind `Curve25519.Signing`, checked against RFC 8032 and against OpenSSL 3.0 (the
/// implementation it replaced, kept as `OpenSSLEd25519`).
@Suite struct Ed25519Tests {
    /// RFC 8032 §7.1: TEST 1, 2, 3 and SHA(abc) (seed, public key, message, signature).
    static let rfc8032: [(String, String, String, String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        ("833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42", "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
         "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
         "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"),
    ]

    /// The group order L, little endian.
    static let order = OSSLTestBytes.hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

    @Test func rfc8032Vectors() throws {
        for (seed, publicKey, message, signature) in Self.rfc8032 {
            let key = try Curve25519.Signing.PrivateKey(rawRepresentation: OSSLTestBytes.hex(seed))
            #expect(OSSLTestBytes.hexString(key.publicKey.rawRepresentation) == publicKey)
            let signed = try key.signature(for: OSSLTestBytes.hex(message))
            #expect(OSSLTestBytes.hexString(signed) == signature)
            let verifier = try Curve25519.Signing.PublicKey(rawRepresentation: OSSLTestBytes.hex(publicKey))
            #expect(verifier.isValidSignature(OSSLTestBytes.hex(signature), for: OSSLTestBytes.hex(message)))
            #expect(!verifier.isValidSignature(OSSLTestBytes.hex(signature), for: OSSLTestBytes.hex(message) + [0]))
        }
    }

    /// Random keys and messages (0–299 bytes): the same public key and the same signature from both libraries, and
    /// each verifies the other's.
    @Test func agreesWithOpenSSLBothWays() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<200 {
            let seed = SecretBytes(randomCount: 32)
            let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed.copyBytes())
            let reference = try OpenSSLEd25519.PrivateKey(seed: seed)
            #expect([UInt8](key.publicKey.rawRepresentation) == reference.publicKey)
            let message = (0..<(round * 3) % 300).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = [UInt8](try key.signature(for: message))
            let theirs = try reference.signature(for: message)
            #expect(ours == theirs)
            #expect(try OpenSSLEd25519.PublicKey(rawRepresentation: reference.publicKey).isValidSignature(ours, for: message))
            #expect(key.publicKey.isValidSignature(theirs, for: message))
            #expect(key.publicKey.isValidSignature(Data(theirs), for: Data(message)))
        }
    }

    @Test func tamperingAndBadLengths() throws {
        let key = Curve25519.Signing.PrivateKey()
        let message = Array("message".utf8)
        let signature = [UInt8](try key.signature(for: message))
        #expect(key.publicKey.isValidSignature(signature, for: message))
        for index in signature.indices {
            for bit in 0..<8 {
                var bad = signature
                bad[index] ^= 1 << bit
                #expect(!key.publicKey.isValidSignature(bad, for: message))
            }
        }
        var badMessage = message
        badMessage[0] ^= 1
        #expect(!key.publicKey.isValidSignature(signature, for: badMessage))
        #expect(!key.publicKey.isValidSignature(signature.dropLast(), for: message))
        #expect(!key.publicKey.isValidSignature(signature + [0], for: message))
        #expect(!key.publicKey.isValidSignature([UInt8](), for: message))
        #expect(!Curve25519.Signing.PrivateKey().publicKey.isValidSignature(signature, for: message))
        #expect(throws: CryptoError.incorrectKeySize(expected: 32, actual: 31)) {
            try Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: CryptoError.incorrectKeySize(expected: 32, actual: 33)) {
            try Curve25519.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 33))
        }
        let roundTrip = try Curve25519.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        #expect(roundTrip.publicKey == key.publicKey)
        #expect(roundTrip.secretRepresentation == key.secretRepresentation)
    }

    /// S + L verifies the same equation as S, so accepting it would make signatures malleable: both libraries refuse it.
    @Test func refusesNonCanonicalS() throws {
        let key = Curve25519.Signing.PrivateKey()
        let message = Array("malleable".utf8)
        let signature = [UInt8](try key.signature(for: message))
        var shifted = signature
        var carry = 0
        for index in 0..<32 {
            let sum = Int(signature[32 + index]) + Int(Self.order[index]) + carry
            shifted[32 + index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        #expect(carry == 0)
        #expect(!key.publicKey.isValidSignature(shifted, for: message))
        #expect(!(try OpenSSLEd25519.PublicKey(rawRepresentation: [UInt8](key.publicKey.rawRepresentation)).isValidSignature(shifted, for: message)))
    }

    /// A small-order key verifies forged signatures under OpenSSL's rules (the identity key with R = identity and
    /// S = 0 "signs" every message); libsodium refuses small-order and non-canonical keys and R values outright.
    @Test func refusesSmallOrderAndNonCanonicalPoints() throws {
        let identity = [1] + [UInt8](repeating: 0, count: 31)
        let forged = identity + [UInt8](repeating: 0, count: 32)
        let message = Array("any message at all".utf8)
        let weak = try Curve25519.Signing.PublicKey(rawRepresentation: identity)
        #expect(!weak.isValidSignature(forged, for: message))
        #expect(try OpenSSLEd25519.PublicKey(rawRepresentation: identity).isValidSignature(forged, for: message))
        // y = p (2²⁵⁵ − 19): a non-canonical encoding of y = 0, a point of order 4.
        let nonCanonical = [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
        #expect(!(try Curve25519.Signing.PublicKey(rawRepresentation: nonCanonical)).isValidSignature(forged, for: message))
        let key = Curve25519.Signing.PrivateKey()
        let signature = [UInt8](try key.signature(for: message))
        #expect(!key.publicKey.isValidSignature(identity + signature[32...], for: message))
        #expect(!key.publicKey.isValidSignature(nonCanonical + signature[32...], for: message))
        // Every 32-byte key makes a value; none of these crash verification.
        for _ in 0..<64 {
            let random = try Curve25519.Signing.PublicKey(rawRepresentation: SecretBytes(randomCount: 32).copyBytes())
            #expect(!random.isValidSignature(signature, for: message))
        }
    }

    /// One key signs from many tasks at once (its secret storage serialises them), always the same deterministic bytes.
    @Test func signsConcurrentlyWithOneKey() async throws {
        let key = Curve25519.Signing.PrivateKey()
        let message = Array("shared".utf8)
        let expected = [UInt8](try key.signature(for: message))
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<50).allSatisfy { _ in
                        (try? key.signature(for: message)).map { [UInt8]($0) == expected && key.publicKey.isValidSignature($0, for: message) } ?? false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [Bool](repeating: true, count: 8))
    }
}
