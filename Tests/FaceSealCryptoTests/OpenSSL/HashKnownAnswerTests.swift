import Foundation
import Testing
@testable import FaceSealCrypto

@Suite struct HashKnownAnswerTests {
    private let abc = Array("abc".utf8)

    @Test func sha2OfABC() {
        #expect(OSSLTestBytes.hexString(SHA256.hash(data: abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(OSSLTestBytes.hexString(SHA384.hash(data: abc)) == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        #expect(OSSLTestBytes.hexString(SHA512.hash(data: abc)) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test func sha256TwoBlockMessage() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(OSSLTestBytes.hexString(SHA256.hash(data: message)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func sha3OfABC() {
        #expect(OSSLTestBytes.hexString(SHA3_256.hash(data: abc)) == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        #expect(OSSLTestBytes.hexString(SHA3_512.hash(data: abc)) == "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0")
    }

    @Test func shakeKnownAnswers() {
        #expect(OSSLTestBytes.hexString(SHAKE128.hash(data: [UInt8](), outputByteCount: 32)) == "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26")
        #expect(OSSLTestBytes.hexString(SHAKE256.hash(data: [UInt8](), outputByteCount: 64)) == "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be")
        #expect(OSSLTestBytes.hexString(SHAKE128.hash(data: abc, outputByteCount: 16)) == "5881092dd818bf5cf8a3ddb793fbcba7")
        #expect(SHAKE256.hash(data: abc, outputByteCount: 0).isEmpty)
        // A longer output starts with the shorter one (XOF prefix property).
        #expect(Array(SHAKE256.hash(data: abc, outputByteCount: 200).prefix(64)) == SHAKE256.hash(data: abc, outputByteCount: 64))
    }

    @Test func incrementalEqualsOneShotAndCopiesFork() {
        var hasher = SHA256()
        hasher.update(data: Array("ab".utf8))
        var fork = hasher
        hasher.update(data: Data("c".utf8))
        fork.update(data: Array("x".utf8))
        #expect(hasher.finalize() == SHA256.hash(data: abc))
        #expect(fork.finalize() == SHA256.hash(data: Array("abx".utf8)))
        // finalize leaves the state usable.
        hasher.update(data: Array("d".utf8))
        #expect(hasher.finalize() == SHA256.hash(data: Array("abcd".utf8)))
    }

    @Test func nonContiguousInput() {
        var data = DispatchData.empty
        for piece in ["a", "b", "c"] {
            Array(piece.utf8).withUnsafeBytes { data.append($0) }
        }
        #expect(SHA3_256.hash(data: data) == SHA3_256.hash(data: abc))
    }

    @Test func digestMetadata() {
        #expect(SHA256Digest.byteCount == 32)
        #expect(SHA512.hash(data: abc).bytes.count == 64)
        #expect(SHA256.hash(data: abc).description.hasPrefix("SHA256 digest: ba7816bf"))
    }
}

@Suite struct MACAndKDFKnownAnswerTests {
    @Test func hmacSHA256RFC4231Case2() {
        let key = SymmetricKey(data: Array("Jefe".utf8))
        let data = Array("what do ya want for nothing?".utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: data, using: key)
        #expect(OSSLTestBytes.hexString(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMAC<SHA256>.isValidAuthenticationCode(mac.bytes, authenticating: data, using: key))
        var wrong = mac.bytes
        wrong[31] ^= 1
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(wrong, authenticating: data, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(mac.bytes.prefix(16), authenticating: data, using: key))
    }

    /// RFC 4231 case 2 on the SHA-2 functions with 128-byte blocks.
    @Test func hmacSHA384AndSHA512RFC4231Case2() {
        let key = SymmetricKey(data: Array("Jefe".utf8))
        let data = Array("what do ya want for nothing?".utf8)
        #expect(OSSLTestBytes.hexString(HMAC<SHA384>.authenticationCode(for: data, using: key))
                == "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649")
        #expect(OSSLTestBytes.hexString(HMAC<SHA512>.authenticationCode(for: data, using: key))
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
    }

    /// RFC 4231 case 6 (a key longer than the block, hashed first) over three hash functions, and the empty key and message.
    @Test func hmacLongAndEmptyKeys() {
        let key = SymmetricKey(data: [UInt8](repeating: 0xaa, count: 131))
        let data = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(OSSLTestBytes.hexString(HMAC<SHA256>.authenticationCode(for: data, using: key))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(OSSLTestBytes.hexString(HMAC<SHA512>.authenticationCode(for: data, using: key))
                == "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598")
        #expect(OSSLTestBytes.hexString(HMAC<SHA3_256>.authenticationCode(for: data, using: key))
                == "ed73a374b96c005235f948032f09674a58c0ce555cfc1f223b02356560312c3b")
        #expect(OSSLTestBytes.hexString(HMAC<SHA256>.authenticationCode(for: [UInt8](), using: SymmetricKey(data: [UInt8]())))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func hkdfRFC5869Case1() throws {
        let ikm = SymmetricKey(data: [UInt8](repeating: 0x0b, count: 22))
        let salt = OSSLTestBytes.hex("000102030405060708090a0b0c")
        let info = OSSLTestBytes.hex("f0f1f2f3f4f5f6f7f8f9")
        let okm = try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: 42)
        let expected = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        #expect(OSSLTestBytes.hexString(okm.secret.copyBytes()) == expected)

        // Expand-only from the case's PRK gives the same OKM.
        let prk = SymmetricKey(data: OSSLTestBytes.hex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"))
        let expanded = try HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: 42)
        #expect(OSSLTestBytes.hexString(expanded.secret.copyBytes()) == expected)
    }

    @Test func hkdfRejectsBadLengths() {
        let ikm = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
        #expect(throws: CryptoError.self) { try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, info: [UInt8](), outputByteCount: 0) }
        #expect(throws: CryptoError.self) { try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, info: [UInt8](), outputByteCount: 255 * 32 + 1) }
        #expect(throws: CryptoError.incorrectKeySize(expected: 32, actual: 16)) {
            try HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: [UInt8](repeating: 1, count: 16)), info: [UInt8](), outputByteCount: 32)
        }
        #expect((try? HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, info: [UInt8](), outputByteCount: 255 * 32))?.bitCount == 255 * 32 * 8)
        #expect(HKDF<SHA512>.maximumOutputByteCount == 255 * 64)
    }

    @Test func hkdfSHA512MatchesReference() throws {
        // Python: hkdf(sha512, ikm=0x0b*22, salt=000102..0c, info=f0..f9, L=42) via hmac (RFC 5869 construction).
        let okm = try HKDF<SHA512>.deriveKey(inputKeyMaterial: SymmetricKey(data: [UInt8](repeating: 0x0b, count: 22)),
                                             salt: OSSLTestBytes.hex("000102030405060708090a0b0c"),
                                             info: OSSLTestBytes.hex("f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(OSSLTestBytes.hexString(okm.secret.copyBytes()) == "832390086cda71fb47625bb5ceb168e4c8e26a1a16ed34d9fc7fe92c1481579338da362cb8d9f925d7cb")
    }

    @Test func scryptRFC7914Vectors() throws {
        let first = try Scrypt.deriveKey(password: Array("password".utf8), salt: Array("NaCl".utf8),
                                         parameters: .init(n: 1024, r: 8, p: 16), outputByteCount: 64)
        #expect(OSSLTestBytes.hexString(first.secret.copyBytes()) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        let second = try Scrypt.deriveKey(password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8),
                                          parameters: .init(n: 16384, r: 8, p: 1), outputByteCount: 64)
        #expect(OSSLTestBytes.hexString(second.secret.copyBytes()) == "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")
    }

    @Test func emptyInputsAreValid() throws {
        // RFC 7914 §12 first vector: empty password and salt.
        let scrypt = try Scrypt.deriveKey(password: [UInt8](), salt: [UInt8](), parameters: .init(n: 16, r: 1, p: 1), outputByteCount: 64)
        #expect(OSSLTestBytes.hexString(scrypt.secret.copyBytes()) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        // HKDF with empty IKM, salt and info (reference: HMAC construction of RFC 5869 in Python).
        let hkdf = try HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: [UInt8]()), info: [UInt8](), outputByteCount: 32)
        #expect(OSSLTestBytes.hexString(hkdf.secret.copyBytes()) == "eb70f01dede9afafa449eee1b1286504e1f62388b3f7dd4f956697b0e828fe18")
    }

    @Test func scryptRecommendedParametersRun() throws {
        // N = 2^15, r = 8 needs more than OpenSSL's default 32 MiB cap.
        let key = try Scrypt.deriveKey(password: Array("pw".utf8), salt: [UInt8](repeating: 7, count: 16),
                                       parameters: .recommended, outputByteCount: 32)
        #expect(key.bitCount == 256)
    }

    @Test func scryptRejectsBadParameters() {
        let pw = Array("pw".utf8)
        for bad in [Scrypt.Parameters(n: 1000, r: 8, p: 1), .init(n: 1, r: 8, p: 1), .init(n: 1024, r: 0, p: 1),
                    .init(n: 1024, r: 8, p: 0), .init(n: 1 << 22, r: 8, p: 1)] {
            #expect(throws: CryptoError.self) {
                try Scrypt.deriveKey(password: pw, salt: pw, parameters: bad, outputByteCount: 32)
            }
        }
        #expect(throws: CryptoError.self) {
            try Scrypt.deriveKey(password: pw, salt: pw, parameters: .init(n: 16, r: 1, p: 1), outputByteCount: 0)
        }
    }
}

@Suite struct AESGCMTests {
    // NIST GCM spec test case 16 (AES-256, 60-byte plaintext, 20-byte AAD).
    let key = SymmetricKey(data: OSSLTestBytes.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"))
    let nonceBytes = OSSLTestBytes.hex("cafebabefacedbaddecaf888")
    let plaintext = OSSLTestBytes.hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
    let aad = OSSLTestBytes.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    let ciphertext = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    let tag = "76fc6ece0f4e1768cddf8853bb2d551b"

    @Test func knownAnswer() throws {
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonceBytes), authenticating: aad)
        #expect(OSSLTestBytes.hexString(box.ciphertext) == ciphertext)
        #expect(OSSLTestBytes.hexString(box.tag) == tag)
        #expect(OSSLTestBytes.hexString(box.combined) == "cafebabefacedbaddecaf888" + ciphertext + tag)
        let opened = try AES.GCM.open(AES.GCM.SealedBox(combined: box.combined), using: key, authenticating: aad)
        #expect([UInt8](opened) == plaintext)
        let secret = try AES.GCM.openSecret(box, using: key, authenticating: aad)
        #expect(secret.copyBytes() == plaintext)
    }

    @Test func everyTamperingIsAnAuthenticationFailure() throws {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: aad)
        let combined = [UInt8](box.combined)
        // Flip one bit in every byte position of nonce, ciphertext and tag.
        for index in combined.indices {
            var modified = combined
            modified[index] ^= 0x01 << (index % 8)
            #expect(throws: CryptoError.authenticationFailure) {
                try AES.GCM.open(AES.GCM.SealedBox(combined: modified), using: key, authenticating: aad)
            }
        }
        var wrongAAD = aad
        wrongAAD[0] ^= 0x80
        #expect(throws: CryptoError.authenticationFailure) { try AES.GCM.open(box, using: key, authenticating: wrongAAD) }
        #expect(throws: CryptoError.authenticationFailure) { try AES.GCM.open(box, using: key) }
        #expect(throws: CryptoError.authenticationFailure) {
            try AES.GCM.open(box, using: SymmetricKey(size: .bits256), authenticating: aad)
        }
        #expect(throws: CryptoError.authenticationFailure) { try AES.GCM.openSecret(box, using: key, authenticating: wrongAAD) }
    }

    @Test func badSizesAreTypedErrors() throws {
        #expect(throws: CryptoError.self) { try AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 11)) }
        #expect(throws: CryptoError.self) { try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 27)) }
        #expect(throws: CryptoError.incorrectKeySize(expected: 32, actual: 20)) {
            try AES.GCM.seal(plaintext, using: SymmetricKey(data: [UInt8](repeating: 0, count: 20)))
        }
        let empty = try AES.GCM.seal([UInt8](), using: key)
        #expect(empty.ciphertext.isEmpty)
        #expect(try AES.GCM.open(empty, using: key).isEmpty)
    }
}
