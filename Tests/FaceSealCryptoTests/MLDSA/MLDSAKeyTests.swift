import Foundation
import Testing
@testable import FaceSealCrypto

/// Key handling: representations round-trip, inputs are left untouched, wrong sizes give typed errors.
@Suite struct MLDSAKeyTests {
    @Test func seedRepresentationRoundTripsAndLeavesTheCallersSeedIntact() throws {
        let seed: [UInt8] = (0..<32).map { UInt8($0 * 5 + 1) }
        let key = try MLDSA65.PrivateKey(seedRepresentation: seed)
        let original: [UInt8] = (0..<32).map { UInt8($0 * 5 + 1) }
        #expect(seed == original)
        #expect(Array(key.seedRepresentation) == seed)
        let again = try MLDSA65.PrivateKey(seedRepresentation: key.seedRepresentation)
        #expect(again.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(again.expandedRepresentation == key.expandedRepresentation)
        // The seed and the public key must agree when both are given.
        _ = try MLDSA65.PrivateKey(seedRepresentation: seed, publicKey: key.publicKey)
        let other = MLDSA65.PrivateKey()
        #expect(throws: MLDSAError.publicKeyMismatch) {
            try MLDSA65.PrivateKey(seedRepresentation: seed, publicKey: other.publicKey)
        }
    }

    @Test func randomKeysDifferAndSignVerify() throws {
        let a = MLDSA44.PrivateKey(), b = MLDSA44.PrivateKey()
        #expect(a.seedRepresentation != b.seedRepresentation)
        #expect(a.seedRepresentation.count == 32)
        let message = Array("hello".utf8)
        let signature = try a.signature(for: message)
        #expect(a.publicKey.isValidSignature(signature, for: message))
        #expect(!b.publicKey.isValidSignature(signature, for: message))
    }

    @Test func expandedKeyImportMatchesSeedKey() throws {
        let key = try MLDSA87.PrivateKey(seedRepresentation: [UInt8](repeating: 9, count: 32))
        let expanded = try MLDSA87.ExpandedPrivateKey(rawRepresentation: key.expandedRepresentation)
        #expect(expanded.rawRepresentation == key.expandedRepresentation)
        #expect(expanded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        let message = Array("same".utf8)
        #expect(try expanded.signature(for: message, randomness: .deterministic)
            == key.deterministicSignature(for: message))
    }

    @Test func publicKeyRoundTrips() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 3, count: 32))
        let decoded = try MLDSA65.PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
        #expect(decoded.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(decoded == key.publicKey)
        #expect(decoded != MLDSA65.PrivateKey().publicKey)
        let signature = try key.signature(for: [1, 2, 3], context: [4])
        #expect(decoded.isValidSignature(signature, for: [1, 2, 3], context: [4]))
    }

    @Test(arguments: [0, 1, 31, 33, 64])
    func wrongSeedLengthIsATypedError(length: Int) {
        #expect(throws: MLDSAError.invalidSeedLength(expected: 32, actual: length)) {
            try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 1, count: length))
        }
    }

    @Test func wrongKeyLengthsAreTypedErrors() {
        for (parameters, make) in Self.publicKeyMakers {
            for delta in [-1, 1, -parameters.publicKeyByteCount] {
                let length = parameters.publicKeyByteCount + delta
                #expect(throws: MLDSAError.invalidPublicKeyLength(expected: parameters.publicKeyByteCount, actual: length)) {
                    try make([UInt8](repeating: 0, count: length))
                }
            }
        }
        let sk = MLDSA44.parameters.expandedPrivateKeyByteCount
        #expect(throws: MLDSAError.invalidPrivateKeyLength(expected: sk, actual: sk + 1)) {
            try MLDSA44.ExpandedPrivateKey(rawRepresentation: [UInt8](repeating: 0, count: sk + 1))
        }
        #expect(throws: MLDSAError.invalidPrivateKeyLength(expected: 4032, actual: 0)) {
            try MLDSA65.ExpandedPrivateKey(rawRepresentation: [UInt8]())
        }
    }

    /// An expanded key whose secret coefficients are out of range, or whose t0/tr do not match, is refused.
    @Test func malformedExpandedKeysAreRefused() throws {
        let key = try MLDSA44.PrivateKey(seedRepresentation: [UInt8](repeating: 7, count: 32))
        let good = [UInt8](key.expandedRepresentation)
        // s1's first 3-bit code set to 7 (η − 7 = −5 is outside [−2, 2]).
        var badEta = good
        badEta[128] |= 0x07
        #expect(throws: MLDSAError.invalidPrivateKey) { try MLDSA44.ExpandedPrivateKey(rawRepresentation: badEta) }
        var badTr = good
        badTr[64] ^= 1
        #expect(throws: MLDSAError.invalidPrivateKey) { try MLDSA44.ExpandedPrivateKey(rawRepresentation: badTr) }
        var badT0 = good
        badT0[good.count - 1] ^= 0x10
        #expect(throws: MLDSAError.invalidPrivateKey) { try MLDSA44.ExpandedPrivateKey(rawRepresentation: badT0) }
        var badRho = good
        badRho[0] ^= 1
        #expect(throws: MLDSAError.invalidPrivateKey) { try MLDSA44.ExpandedPrivateKey(rawRepresentation: badRho) }
    }

    @Test func sizesMatchFIPS204() {
        #expect(MLDSA44.parameters.publicKeyByteCount == 1312)
        #expect(MLDSA44.parameters.expandedPrivateKeyByteCount == 2560)
        #expect(MLDSA44.parameters.signatureByteCount == 2420)
        #expect(MLDSA65.parameters.publicKeyByteCount == 1952)
        #expect(MLDSA65.parameters.expandedPrivateKeyByteCount == 4032)
        #expect(MLDSA65.parameters.signatureByteCount == 3309)
        #expect(MLDSA87.parameters.publicKeyByteCount == 2592)
        #expect(MLDSA87.parameters.expandedPrivateKeyByteCount == 4896)
        #expect(MLDSA87.parameters.signatureByteCount == 4627)
    }

    /// The first entries of FIPS 204 Appendix B's zeta table (ζ^brv8(i) mod q).
    @Test func zetaTableMatchesTheStandard() {
        let expected: [Int64] = [4_808_194, 3_765_607, 3_761_513, 5_178_923, 5_496_691, 5_234_739, 5_178_987]
        let table = MLDSAField.zetas[1...7].map { (Int64($0) + 8_380_417) % 8_380_417 }
        #expect(table == expected)
    }

    static let publicKeyMakers: [(MLDSAParameters, @Sendable ([UInt8]) throws -> Void)] = [
        (MLDSA44.parameters, { _ = try MLDSA44.PublicKey(rawRepresentation: $0) }),
        (MLDSA65.parameters, { _ = try MLDSA65.PublicKey(rawRepresentation: $0) }),
        (MLDSA87.parameters, { _ = try MLDSA87.PublicKey(rawRepresentation: $0) }),
    ]
}

/// The wipe used for key material really clears the bytes it is given.
@Suite struct MLDSAWipeTests {
    @Test func wipeClearsOwnedArrays() {
        let words: [Int32] = (1...512).map { Int32($0) }
        MLDSAWipe.wipe(owned: words)
        #expect(words.allSatisfy { $0 == 0 })
        let bytes = [UInt8](repeating: 0xA5, count: 100)
        MLDSAWipe.wipe(owned: bytes)
        #expect(bytes.allSatisfy { $0 == 0 })
    }

    /// Codes of s1/s2 at exactly 2η are accepted, one above is refused (η = 4: 4-bit codes 0…8).
    @Test func etaCodeBoundary() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 8, count: 32))
        var encoded = [UInt8](key.expandedRepresentation)
        #expect(!encoded.withUnsafeBufferPointer {
            MLDSAEncoding.anyCodeExceeds($0.baseAddress! + 128, count: 11 * 256, bits: 4, bound: 8)
        })
        encoded[128] = (encoded[128] & 0xF0) | 0x09
        #expect(encoded.withUnsafeBufferPointer {
            MLDSAEncoding.anyCodeExceeds($0.baseAddress! + 128, count: 11 * 256, bits: 4, bound: 8)
        })
        #expect(throws: MLDSAError.invalidPrivateKey) { try MLDSA65.ExpandedPrivateKey(rawRepresentation: encoded) }
    }
}
