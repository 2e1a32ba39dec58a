import CSodium
import Foundation
import Testing
@testable import FaceSealCrypto

/// FaceSeal's table verifier (`Ed25519Tables`, `CFaceSealCurves`) against libsodium's `crypto_sign_verify_detached`:
/// the same answer for valid signatures, every kind of tampering, non-canonical and small-order values, and keys it
/// must leave to libsodium.
@Suite struct Ed25519TableTests {
    /// A table for every key at its first verification.
    let tables = Ed25519Tables(limit: 1_000, threshold: 1)

    static func libsodium(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) -> Bool {
        crypto_sign_verify_detached(signature, message, UInt64(message.count), key) == 0
    }

    func ours(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) -> Bool? {
        signature.withUnsafeBytes { signature in
            message.withUnsafeBytes { message in tables.verify(signature, message: message, key: Data(key)) }
        }
    }

    /// Asserts that both verifiers give `expected` (and that the tables answered at all).
    func expectBoth(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8], _ expected: Bool,
                    sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Self.libsodium(signature, message, key) == expected, sourceLocation: sourceLocation)
        #expect(ours(signature, message, key) == expected, sourceLocation: sourceLocation)
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// `a + b` for 32-byte little-endian numbers, mod 2^256.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var sum = [UInt8](repeating: 0, count: 32), carry = 0
        for index in 0..<32 {
            let value = Int(a[index]) + Int(b[index]) + carry
            sum[index] = UInt8(value & 0xFF)
            carry = value >> 8
        }
        return sum
    }

    @Test func rfc8032Vectors() throws {
        for (_, publicKey, message, signature) in Ed25519Tests.rfc8032 {
            let key = OSSLTestBytes.hex(publicKey), message = OSSLTestBytes.hex(message), signature = OSSLTestBytes.hex(signature)
            expectBoth(signature, message, key, true)
            expectBoth(signature, message + [0], key, false)
        }
    }

    /// Random keys and messages: valid signatures verify; any flipped bit of the signature, the message or (for the
    /// libsodium side) the key fails on both.
    @Test func randomKeysSignaturesAndTampering() throws {
        for round in 0..<40 {
            let key = Curve25519.Signing.PrivateKey()
            let publicKey = [UInt8](key.publicKey.rawRepresentation)
            for _ in 0..<8 {
                let message = Self.random(Int.random(in: 0...300))
                let signature = [UInt8](try key.signature(for: message))
                expectBoth(signature, message, publicKey, true)
                var flipped = signature
                flipped[Int.random(in: 0..<64)] ^= 1 << UInt8.random(in: 0...7)
                expectBoth(flipped, message, publicKey, false)
                if !message.isEmpty {
                    var changed = message
                    changed[Int.random(in: 0..<changed.count)] ^= 1 << UInt8.random(in: 0...7)
                    expectBoth(signature, changed, publicKey, false)
                }
                expectBoth(Self.random(64), message, publicKey, false)
            }
            // Every bit of one signature, once per few keys (512 verifications each).
            if round % 10 == 0 {
                let message = Array("every bit".utf8)
                let signature = [UInt8](try key.signature(for: message))
                for index in 0..<64 {
                    for bit in 0..<8 {
                        var bad = signature
                        bad[index] ^= 1 << bit
                        expectBoth(bad, message, publicKey, false)
                    }
                }
            }
        }
    }

    /// S must be below L: S + L (the same point, a malleated signature), L itself, and the largest 256-bit value fail.
    @Test func nonCanonicalS() throws {
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = [UInt8](key.publicKey.rawRepresentation)
        let message = Array("malleable".utf8)
        let signature = [UInt8](try key.signature(for: message))
        let r = Array(signature[..<32]), s = Array(signature[32...])
        expectBoth(r + Self.add(s, Ed25519Tests.order), message, publicKey, false)
        expectBoth(r + Ed25519Tests.order, message, publicKey, false)
        expectBoth(r + [UInt8](repeating: 0xFF, count: 32), message, publicKey, false)
        var belowOrder = Ed25519Tests.order
        belowOrder[0] -= 1
        expectBoth(r + belowOrder, message, publicKey, false)
    }

    /// R of small order (the identity, the points of order 2, 4 and 8, either sign bit) and non-canonical R (y ≥ p) fail
    /// on both, whatever S.
    @Test func smallOrderAndNonCanonicalR() throws {
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = [UInt8](key.publicKey.rawRepresentation)
        let message = Array("small order".utf8)
        let p = OSSLTestBytes.hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        var encodings: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            OSSLTestBytes.hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
            OSSLTestBytes.hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
            OSSLTestBytes.hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
            p,
            Self.add(p, [1] + [UInt8](repeating: 0, count: 31)),
            Self.add(p, [5] + [UInt8](repeating: 0, count: 31)),
        ]
        encodings += encodings.map { encoding in
            var signed = encoding
            signed[31] |= 0x80
            return signed
        }
        for encoding in encodings {
            for s in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31), Array(Self.random(31) + [0x0F])] {
                expectBoth(encoding + s, message, publicKey, false)
            }
        }
    }

    /// A key outside the prime-order subgroup (a valid key plus a point of order 8) or not a point gets no table: the
    /// tables answer nil and libsodium decides.
    @Test func keysLeftToLibsodium() throws {
        let key = Curve25519.Signing.PrivateKey()
        var mixed = [UInt8](repeating: 0, count: 32)
        let torsion = OSSLTestBytes.hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
        #expect(crypto_core_ed25519_add(&mixed, [UInt8](key.publicKey.rawRepresentation), torsion) == 0)
        let message = Array("mixed".utf8)
        let signature = [UInt8](try key.signature(for: message))
        #expect(ours(signature, message, mixed) == nil)
        #expect(!tables.hasTable(Data(mixed)))
        let notAPoint = OSSLTestBytes.hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        #expect(ours(signature, message, notAPoint) == nil)
        #expect(ours(signature, message, [1] + [UInt8](repeating: 0, count: 31)) == nil)
        #expect(ours(signature, message, [UInt8](key.publicKey.rawRepresentation)) == true)
    }

    /// A key gets its table at its `threshold`-th verification, not before; `isValidSignature` answers the same
    /// throughout.
    @Test func tablesAreBuiltAtTheThreshold() throws {
        let tables = Ed25519Tables(limit: 8, threshold: 3)
        let key = Curve25519.Signing.PrivateKey()
        let message = Array("threshold".utf8)
        let signature = [UInt8](try key.signature(for: message))
        func verify() -> Bool? {
            signature.withUnsafeBytes { signature in
                message.withUnsafeBytes { tables.verify(signature, message: $0, key: key.publicKey.rawRepresentation) }
            }
        }
        #expect(verify() == nil)
        #expect(verify() == nil)
        #expect(!tables.hasTable(key.publicKey.rawRepresentation))
        #expect(verify() == true)
        #expect(tables.hasTable(key.publicKey.rawRepresentation))
        for _ in 0..<10 { #expect(key.publicKey.isValidSignature(signature, for: message)) }
        #expect(Ed25519Tables.shared.hasTable(key.publicKey.rawRepresentation))
    }
}
