import Foundation
import Testing
@testable import FaceSealCrypto

/// Behaviour beyond the vectors: round trips, implicit rejection of tampered ciphertexts, typed errors
/// for bad input, the §7.2 modulus check, and exhaustive checks of the branch-free arithmetic.
@Suite struct MLKEMTests {
    /// A reproducible 64-byte seed.
    static func seed(_ tag: UInt8) -> [UInt8] {
        (0..<64).map { UInt8(truncatingIfNeeded: Int($0) &* 29 &+ Int(tag) &* 101 &+ 3) }
    }

    /// J(z ‖ c), computed independently of the decapsulation code.
    static func rejectionKey(z: ArraySlice<UInt8>, c: [UInt8]) -> [UInt8] {
        var sponge = KeccakSponge.shake256()
        sponge.absorb(Array(z))
        sponge.absorb(c)
        return sponge.squeeze(count: 32)
    }

    static func bytes(_ secret: SymmetricKey) -> [UInt8] {
        secret.withUnsafeBytes { [UInt8]($0) }
    }

    @Test func roundTripsAllSets() throws {
        let k512 = try MLKEM512.PrivateKey.generate()
        let r512 = try k512.publicKey.encapsulate()
        #expect(try k512.decapsulate(r512.encapsulated) == r512.sharedSecret)
        #expect(r512.encapsulated.count == 768)

        let k768 = try MLKEM768.PrivateKey()
        let r768 = try k768.publicKey.encapsulate()
        #expect(try k768.decapsulate(r768.encapsulated) == r768.sharedSecret)
        #expect(r768.encapsulated.count == 1088 && r768.sharedSecret.bitCount == 256)

        let k1024 = try MLKEM1024.PrivateKey.generate()
        let r1024 = try k1024.publicKey.encapsulate()
        #expect(try k1024.decapsulate(r1024.encapsulated) == r1024.sharedSecret)
        #expect(r1024.encapsulated.count == 1568)

        // Two encapsulations to one key give different secrets and ciphertexts.
        let again = try k768.publicKey.encapsulate()
        #expect(again.sharedSecret != r768.sharedSecret && again.encapsulated != r768.encapsulated)
    }

    @Test func keysRoundTripThroughTheirEncodings() throws {
        let key = try MLKEM768.PrivateKey(seedRepresentation: Self.seed(1))
        #expect(key.seedRepresentation == Data(Self.seed(1)))
        let publicKey = try MLKEM768.PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
        #expect(publicKey == key.publicKey)
        let sameSeed = try MLKEM768.PrivateKey(seedRepresentation: key.seedRepresentation!, publicKey: publicKey)
        #expect(sameSeed.integrityCheckedRepresentation == key.integrityCheckedRepresentation)
        let expanded = try MLKEM768.PrivateKey(integrityCheckedRepresentation: key.integrityCheckedRepresentation)
        #expect(expanded.seedRepresentation == nil)
        #expect(expanded.publicKey == key.publicKey)
        let result = try publicKey.encapsulate(randomness: [UInt8](repeating: 7, count: 32))
        #expect(try expanded.decapsulate(result.encapsulated) == result.sharedSecret)
        #expect(try key.decapsulate(result.encapsulated) == result.sharedSecret)
        // Deterministic encapsulation is deterministic.
        let repeated = try publicKey.encapsulate(randomness: [UInt8](repeating: 7, count: 32))
        #expect(repeated.encapsulated == result.encapsulated && repeated.sharedSecret == result.sharedSecret)
    }

    @Test func seedWithForeignPublicKeyIsRejected() throws {
        let other = try MLKEM768.PrivateKey(seedRepresentation: Self.seed(2)).publicKey
        #expect(throws: MLKEMError.keyCheckFailed) {
            try MLKEM768.PrivateKey(seedRepresentation: Self.seed(1), publicKey: other)
        }
    }

    /// A flipped bit anywhere in a ciphertext gives J(z ‖ c'), never the real key, and never throws.
    @Test(arguments: [0, 1, 100, 639, 640, 959, 960, 1087])
    func tamperedCiphertextYieldsImplicitRejectionKey(byte: Int) throws {
        let seed = Self.seed(3)
        let key = try MLKEM768.PrivateKey(seedRepresentation: seed)
        let result = try key.publicKey.encapsulate(randomness: [UInt8](repeating: 0x42, count: 32))
        for bit in [0, 5] {
            var tampered = [UInt8](result.encapsulated)
            tampered[byte] ^= UInt8(1 << bit)
            let secret = try key.decapsulate(tampered)
            #expect(secret != result.sharedSecret)
            #expect(Self.bytes(secret) == Self.rejectionKey(z: seed[32..<64], c: tampered))
        }
    }

    @Test func tamperingAllSets() throws {
        let seed = Self.seed(4)
        let k512 = try MLKEM512.PrivateKey(seedRepresentation: seed)
        var c512 = [UInt8](try k512.publicKey.encapsulate().encapsulated)
        c512[c512.count - 1] ^= 0x80
        #expect(Self.bytes(try k512.decapsulate(c512)) == Self.rejectionKey(z: seed[32..<64], c: c512))
        let k1024 = try MLKEM1024.PrivateKey(seedRepresentation: seed)
        var c1024 = [UInt8](try k1024.publicKey.encapsulate().encapsulated)
        c1024[3] ^= 0x01
        #expect(Self.bytes(try k1024.decapsulate(c1024)) == Self.rejectionKey(z: seed[32..<64], c: c1024))
    }

    @Test func wrongLengthsGiveTypedErrors() throws {
        let key = try MLKEM768.PrivateKey(seedRepresentation: Self.seed(5))
        let ek = [UInt8](key.publicKey.rawRepresentation)
        for length in [0, 1183, 1185, 1568] {
            let input = Array((ek + ek).prefix(length))
            #expect(throws: MLKEMError.invalidKeyLength(expected: 1184, actual: length)) {
                try MLKEM768.PublicKey(rawRepresentation: input)
            }
        }
        for length in [0, 32, 63, 65] {
            #expect(throws: MLKEMError.invalidSeedLength(expected: 64, actual: length)) {
                try MLKEM768.PrivateKey(seedRepresentation: [UInt8](repeating: 1, count: length))
            }
        }
        for length in [0, 1087, 1089, 768] {
            #expect(throws: MLKEMError.invalidCiphertextLength(expected: 1088, actual: length)) {
                try key.decapsulate([UInt8](repeating: 0, count: length))
            }
        }
        #expect(throws: MLKEMError.invalidSeedLength(expected: 32, actual: 31)) {
            try key.publicKey.encapsulate(randomness: [UInt8](repeating: 0, count: 31))
        }
        let dk = [UInt8](key.integrityCheckedRepresentation)
        #expect(throws: MLKEMError.invalidKeyLength(expected: 2400, actual: 2399)) {
            try MLKEM768.PrivateKey(integrityCheckedRepresentation: dk.dropLast())
        }
        // A 768 key is not a 512 or 1024 key.
        #expect(throws: MLKEMError.invalidKeyLength(expected: 800, actual: 1184)) {
            try MLKEM512.PublicKey(rawRepresentation: ek)
        }
        #expect(throws: MLKEMError.invalidKeyLength(expected: 3168, actual: 2400)) {
            try MLKEM1024.PrivateKey(integrityCheckedRepresentation: dk)
        }
        // The raw entry points check their buffers too.
        var out = [UInt8](repeating: 0, count: 32)
        #expect(throws: MLKEMError.invalidCiphertextLength(expected: 1088, actual: 5)) {
            try dk.withUnsafeBytes { d in
                try [UInt8](repeating: 0, count: 5).withUnsafeBytes { c in
                    try out.withUnsafeMutableBytes { o in
                        try MLKEM.decapsulateInternal(.mlkem768, decapsulationKey: d, ciphertext: c, sharedSecret: o)
                    }
                }
            }
        }
    }

    /// §7.2 modulus check: a 12-bit value ≥ q anywhere in the t̂ part is rejected; q − 1 is fine.
    @Test func encapsulationKeyModulusCheck() throws {
        let ek = [UInt8](try MLKEM768.PrivateKey(seedRepresentation: Self.seed(6)).publicKey.rawRepresentation)
        func withCoefficient(_ index: Int, _ value: UInt16) -> [UInt8] {
            var e = ek
            let byte = 3 * (index / 2)
            if index % 2 == 0 {
                e[byte] = UInt8(value & 0xFF)
                e[byte + 1] = (e[byte + 1] & 0xF0) | UInt8(value >> 8)
            } else {
                e[byte + 1] = (e[byte + 1] & 0x0F) | UInt8((value & 0x0F) << 4)
                e[byte + 2] = UInt8(value >> 4)
            }
            return e
        }
        for index in [0, 1, 255, 256, 767] {
            #expect(throws: MLKEMError.keyCheckFailed) { try MLKEM768.PublicKey(rawRepresentation: withCoefficient(index, 3329)) }
            #expect(throws: MLKEMError.keyCheckFailed) { try MLKEM768.PublicKey(rawRepresentation: withCoefficient(index, 4095)) }
            #expect(throws: Never.self) { try MLKEM768.PublicKey(rawRepresentation: withCoefficient(index, 3328)) }
        }
        // ρ (the last 32 bytes) is not checked: any value is valid.
        var rhoChanged = ek
        rhoChanged[rhoChanged.count - 1] = 0xFF
        #expect(throws: Never.self) { try MLKEM768.PublicKey(rawRepresentation: rhoChanged) }
    }

    /// §7.3: a changed H(ek), or a changed ek under the stored hash, is rejected.
    @Test func decapsulationKeyHashCheck() throws {
        let dk = [UInt8](try MLKEM512.PrivateKey(seedRepresentation: Self.seed(7)).integrityCheckedRepresentation)
        for index in [768 + 10, 768 * 2 + 32, 768 * 2 + 63] {
            var bad = dk
            bad[index] ^= 0x01
            #expect(throws: MLKEMError.keyCheckFailed) { try MLKEM512.PrivateKey(integrityCheckedRepresentation: bad) }
        }
    }

    /// An expanded key whose embedded ek has a coefficient ≥ q is refused even with a matching H(ek):
    /// that ek would become the key's `publicKey`.
    @Test func decapsulationKeyWithNonCanonicalEncapsulationKey() throws {
        let k = 2
        var dk = [UInt8](try MLKEM512.PrivateKey(seedRepresentation: Self.seed(8)).integrityCheckedRepresentation)
        dk[384 * k] = 0xFF
        dk[384 * k + 1] |= 0x0F  // first coefficient of the embedded ek = 4095
        var sponge = KeccakSponge.sha3_256()
        sponge.absorb(Array(dk[(384 * k)..<(768 * k + 32)]))
        dk.replaceSubrange((768 * k + 32)..<(768 * k + 64), with: sponge.squeeze(count: 32))
        #expect(throws: Never.self) { try dk.withUnsafeBytes { try MLKEM.checkDecapsulationKey(.mlkem512, $0) } }
        #expect(throws: MLKEMError.keyCheckFailed) { try MLKEM512.PrivateKey(integrityCheckedRepresentation: dk) }
    }

    /// Compress_d by multiply-shift equals round(2^d · x / q) mod 2^d for every x, including negative
    /// representatives; Decompress_d matches round(q · y / 2^d).
    @Test func compressionIsExact() {
        let q = 3329
        for d in [1, 4, 5, 10, 11] {
            var mismatches = 0
            for x in (1 - q)..<q {
                let canonical = (x + q) % q
                let exact = ((canonical << d) + q / 2) / q % (1 << d)
                let fast = d <= 5
                    ? Int(MLKEMPoly.compressSmall(Int16(x), bits: UInt32(d)))
                    : Int(MLKEMPoly.compressLarge(Int16(x), bits: UInt64(d)))
                if fast != exact { mismatches += 1 }
            }
            #expect(mismatches == 0, "Compress_\(d)")
            for y in 0..<(1 << d) {
                let exact = (q * y + (1 << (d - 1))) >> d
                #expect(Int(MLKEMPoly.decompress(UInt32(y), bits: UInt32(d))) == exact)
            }
        }
    }

    /// Reductions agree with `%` over their whole input range.
    @Test func reductionsAreExact() {
        for a in Int(Int16.min)...Int(Int16.max) {
            let b = Int(MLKEMPoly.barrettReduce(Int16(a)))
            #expect((b - a) % 3329 == 0 && abs(b) <= 1664, "barrett \(a)")
            if a > -3329 && a < 3329 {
                let c = Int(MLKEMPoly.canonical(Int16(a)))
                #expect(c == ((a % 3329) + 3329) % 3329)
            }
        }
        for a in stride(from: -3329 * 32768 + 1, to: 3329 * 32768, by: 9973) {
            let m = Int(MLKEMPoly.montgomeryReduce(Int32(a)))
            #expect((m * 65536 - a) % 3329 == 0 && abs(m) < 3329)
        }
    }

    /// NTT-domain multiplication equals the negacyclic schoolbook product (times the 2^-16 Montgomery
    /// factor the inverse NTT cancels).
    @Test func nttMultiplicationMatchesSchoolbook() {
        let q = 3329
        var a = [Int16](repeating: 0, count: 256), b = a
        for i in 0..<256 {
            a[i] = Int16((i * 37 + 11) % q - q / 2)
            b[i] = Int16((i * i * 13 + 5) % 7 - 3)
        }
        var expected = [Int](repeating: 0, count: 256)
        for i in 0..<256 {
            for j in 0..<256 {
                let product = Int(a[i]) * Int(b[j])
                if i + j < 256 { expected[i + j] += product } else { expected[i + j - 256] -= product }
            }
        }
        var result = [Int16](repeating: 0, count: 256)
        var cache = [Int16](repeating: 0, count: 128)
        var acc = [Int32](repeating: 0, count: 256)
        a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                MLKEMPoly.ntt(ap.baseAddress!)
                MLKEMPoly.ntt(bp.baseAddress!)
                cache.withUnsafeMutableBufferPointer { cp in
                    MLKEMPoly.mulCache(bp.baseAddress!, into: cp.baseAddress!)
                    acc.withUnsafeMutableBufferPointer { accp in
                        MLKEMPoly.basemulAccumulate(accp.baseAddress!, ap.baseAddress!, bp.baseAddress!, cp.baseAddress!)
                        result.withUnsafeMutableBufferPointer { rp in
                            MLKEMPoly.reduceAccumulator(accp.baseAddress!, into: rp.baseAddress!)
                            MLKEMPoly.inverseNTT(rp.baseAddress!)
                        }
                    }
                }
            }
        }
        for i in 0..<256 {
            #expect((Int(result[i]) - expected[i]) % q == 0, "coefficient \(i)")
        }
    }
}
