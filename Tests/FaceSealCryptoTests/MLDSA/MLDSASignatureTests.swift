import Foundation
import Testing
@testable import FaceSealCrypto

/// Signing modes, tampering and malformed input.
@Suite struct MLDSASignatureTests {
    static let key = try! MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 0x42, count: 32))
    static let message = Array("FaceSeal face-locked key rotation".utf8)
    static let context = Array("faceseal/v1".utf8)

    @Test func deterministicSigningIsRepeatableAndHedgedIsNot() throws {
        let key = Self.key
        let a = try key.deterministicSignature(for: Self.message, context: Self.context)
        let b = try key.signature(for: Self.message, context: Self.context, randomness: .deterministic)
        #expect(a == b)
        let h1 = try key.signature(for: Self.message, context: Self.context)
        let h2 = try key.signature(for: Self.message, context: Self.context)
        #expect(h1 != h2)
        for signature in [a, h1, h2] {
            #expect(key.publicKey.isValidSignature(signature, for: Self.message, context: Self.context))
        }
        // Caller-given rnd is used as given: same rnd, same signature; zeros equal the deterministic one.
        let rnd = Data((0..<32).map { UInt8($0) })
        #expect(try key.signature(for: Self.message, context: Self.context, randomness: .given(rnd))
            == key.signature(for: Self.message, context: Self.context, randomness: .given(rnd)))
        #expect(try key.signature(for: Self.message, context: Self.context, randomness: .given(Data(count: 32))) == a)
    }

    /// External μ and Sign_internal agree with the pure interface they decompose.
    @Test func externalMuAndInternalInterfacesAgreeWithPureSigning() throws {
        let key = Self.key
        let mu = try key.publicKey.prehash(for: Self.message, context: Self.context)
        #expect(mu.count == 64)
        let viaMu = try key.signature(forPrehashedMessageRepresentative: mu, randomness: .deterministic)
        let pure = try key.deterministicSignature(for: Self.message, context: Self.context)
        #expect(viaMu == pure)
        #expect(key.publicKey.isValidSignature(pure, forPrehashedMessageRepresentative: mu))
        let framed = [0, UInt8(Self.context.count)] + Self.context + Self.message
        let viaInternal = try key.signature(forInternalMessage: framed, randomness: .deterministic)
        #expect(viaInternal == pure)
        #expect(key.publicKey.isValidSignature(pure, forInternalMessage: framed))
        // Without the framing, Sign_internal signs a different M′.
        #expect(!key.publicKey.isValidSignature(pure, forInternalMessage: Self.message))
    }

    @Test func contextLimits() throws {
        let key = Self.key
        let longest = [UInt8](repeating: 7, count: 255)
        let signature = try key.signature(for: Self.message, context: longest)
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, context: longest))
        let tooLong = [UInt8](repeating: 7, count: 256)
        #expect(throws: MLDSAError.contextTooLong(length: 256)) { try key.signature(for: Self.message, context: tooLong) }
        #expect(throws: MLDSAError.contextTooLong(length: 256)) {
            try key.publicKey.verifySignature(signature, for: Self.message, context: tooLong)
        }
        #expect(!key.publicKey.isValidSignature(signature, for: Self.message, context: tooLong))
        // An empty context is a context too: the empty-context overloads agree with an explicit empty one.
        let empty = try key.deterministicSignature(for: Self.message)
        #expect(key.publicKey.isValidSignature(empty, for: Self.message))
        #expect(key.publicKey.isValidSignature(empty, for: Self.message, context: [UInt8]()))
    }

    @Test func wrongLengthsAreTypedErrors() throws {
        let key = Self.key
        let p = MLDSA65.parameters
        #expect(throws: MLDSAError.invalidRandomnessLength(expected: 32, actual: 31)) {
            try key.signature(for: Self.message, context: Self.context, randomness: .given(Data(count: 31)))
        }
        #expect(throws: MLDSAError.invalidMessageRepresentativeLength(expected: 64, actual: 63)) {
            try key.signature(forPrehashedMessageRepresentative: Data(count: 63))
        }
        let signature = try key.signature(for: Self.message, context: Self.context)
        for length in [0, p.signatureByteCount - 1, p.signatureByteCount + 1] {
            let resized = Array((Array(signature) + [UInt8](repeating: 0, count: 1)).prefix(length))
            #expect(throws: MLDSAError.invalidSignatureLength(expected: p.signatureByteCount, actual: length)) {
                try key.publicKey.verifySignature(resized, for: Self.message, context: Self.context)
            }
            #expect(!key.publicKey.isValidSignature(resized, for: Self.message, context: Self.context))
        }
        #expect(!key.publicKey.isValidSignature(signature, forPrehashedMessageRepresentative: Data(count: 65)))
    }

    /// A flipped bit anywhere in the signature (one bit per byte, cycling through the bit positions, so
    /// every byte and every bit position is hit), and every bit of message and context, is rejected.
    @Test(arguments: [MLDSA44.parameters.name, MLDSA65.parameters.name, MLDSA87.parameters.name])
    func flippedBitsAreRejected(set: String) throws {
        let scheme = try #require(AnyMLDSA.named(set))
        let (pk, sk, _) = try scheme.keyGen([UInt8](repeating: 0x11, count: 32))
        let input = AnyMLDSA.SignInput.pure(message: Self.message, context: Self.context)
        let signature = [UInt8](try scheme.signExpanded([UInt8](sk), input, .deterministic))
        let verify = try scheme.verifier([UInt8](pk))
        #expect(verify(signature, input))
        var rejected = 0
        for index in 0..<signature.count {
            var tampered = signature
            tampered[index] ^= 1 << (index % 8)
            if !verify(tampered, input) { rejected += 1 }
        }
        #expect(rejected == signature.count)
        for bit in 0..<(Self.message.count * 8) {
            var tampered = Self.message
            tampered[bit / 8] ^= 1 << (bit % 8)
            #expect(!verify(signature, .pure(message: tampered, context: Self.context)))
        }
        for bit in 0..<(Self.context.count * 8) {
            var tampered = Self.context
            tampered[bit / 8] ^= 1 << (bit % 8)
            #expect(!verify(signature, .pure(message: Self.message, context: tampered)))
        }
        // A truncated or extended message or context is a different message or context.
        #expect(!verify(signature, .pure(message: Self.message + [0], context: Self.context)))
        #expect(!verify(signature, .pure(message: Self.message, context: Array(Self.context.dropLast()))))
        // The same signature under a different public key.
        let (otherPk, _, _) = try scheme.keyGen([UInt8](repeating: 0x12, count: 32))
        #expect(try !scheme.verify([UInt8](otherPk), signature, input))
    }

    /// Hand-built malformed hints and out-of-range z: refused without a crash.
    @Test func malformedSignaturesAreRejected() throws {
        let key = Self.key
        let p = MLDSA65.parameters
        let signature = [UInt8](try key.deterministicSignature(for: Self.message, context: Self.context))
        let hintStart = p.commitmentHashByteCount + p.l * p.zPolyByteCount
        let counts = Array(signature[(hintStart + p.omega)...])
        let total = Int(counts.last!)
        #expect(total >= 2, "this signature needs at least two hints for the order tests")
        func rejects(_ mutate: (inout [UInt8]) -> Void) -> Bool {
            var tampered = signature
            mutate(&tampered)
            return !key.publicKey.isValidSignature(tampered, for: Self.message, context: Self.context)
        }
        // Hints out of order within a polynomial (find a polynomial with two positions and swap them).
        var start = 0
        var swapped = false
        for i in 0..<p.k {
            let end = Int(counts[i])
            if end - start >= 2 {
                #expect(rejects { s in s.swapAt(hintStart + start, hintStart + start + 1) })
                #expect(rejects { s in s[hintStart + start + 1] = s[hintStart + start] })
                swapped = true
                break
            }
            start = end
        }
        #expect(swapped)
        // A running count above ω, a decreasing count, and a non-zero unused slot.
        #expect(rejects { s in s[hintStart + p.omega + p.k - 1] = UInt8(p.omega + 1) })
        #expect(rejects { s in s[hintStart + p.omega + p.k - 1] = 255 })
        #expect(rejects { s in s[hintStart + p.omega] = s[hintStart + p.omega + 1] &+ 1 })
        if total < p.omega {
            #expect(rejects { s in s[hintStart + p.omega - 1] = 1 })
        }
        // Too many hints: every count at ω with increasing positions filling all slots.
        #expect(rejects { s in
            for j in 0..<p.omega { s[hintStart + j] = UInt8(j) }
            for i in 0..<p.k { s[hintStart + p.omega + i] = UInt8(p.omega) }
        })
        // z = −γ1 + 1 … γ1 are all decodable; set the first coefficient to γ1 (code 0): ‖z‖∞ ≥ γ1 − β.
        #expect(rejects { s in
            let zStart = p.commitmentHashByteCount
            s[zStart] = 0
            s[zStart + 1] = 0
            s[zStart + 2] &= 0xF0
        })
        // All-zero and all-ones signatures.
        #expect(!key.publicKey.isValidSignature([UInt8](repeating: 0, count: p.signatureByteCount), for: Self.message))
        #expect(!key.publicKey.isValidSignature([UInt8](repeating: 0xFF, count: p.signatureByteCount), for: Self.message))
    }

    /// Concurrent use of one key from many tasks gives the same deterministic signature (keys are Sendable).
    @Test func keysAreUsableConcurrently() async throws {
        let key = Self.key
        let expected = try key.deterministicSignature(for: Self.message)
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<8 { group.addTask { try key.deterministicSignature(for: Self.message) } }
            for try await signature in group { #expect(signature == expected) }
        }
    }
}
