import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Overwrites memory that held secrets in a way the optimiser may not remove.
enum MLDSAWipe {
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(base, buffer.count)
        #else
        _ = memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }

    /// Wipes the storage of an array this object owns exclusively and is about to release. The arrays are
    /// `let` so the owner stays `Sendable`; they are never handed out, so no other copy shares the buffer.
    static func wipe<T>(owned array: [T]) {
        array.withUnsafeBytes { bytes in
            wipe(UnsafeMutableRawBufferPointer(mutating: bytes))
        }
    }
}

/// A decoded public key made ready for verification: Â = ExpandA(ρ) and tr = H(pk, 64) are computed once
/// here, NTT(t1·2^d) on first use, so repeated verifications with one key skip all three.
final class MLDSAPublicKeyMaterial: Sendable {
    let parameters: MLDSAParameters
    /// pkEncode(ρ, t1).
    let encoded: [UInt8]
    /// H(pk, 64).
    let tr: [UInt8]
    /// Â, k×l polynomials row-major, NTT domain.
    let matrix: [Int32]
    /// NTT(t1·2^d), k polynomials; computed by the first verification (key generation does not need it).
    private let t1ShiftedCache = Mutex<[Int32]?>(nil)

    /// pkDecode (Alg. 23): every 10-bit pattern is a valid t1 coefficient, so only the length can be wrong.
    convenience init(encoded: [UInt8], parameters: MLDSAParameters) throws(MLDSAError) {
        guard encoded.count == parameters.publicKeyByteCount else {
            throw .invalidPublicKeyLength(expected: parameters.publicKeyByteCount, actual: encoded.count)
        }
        let k = parameters.k, l = parameters.l
        let matrix = [Int32](unsafeUninitializedCapacity: k * l * 256) { buffer, initialized in
            encoded.withUnsafeBytes { bytes in
                MLDSASampling.expandA(
                    rho: UnsafeRawBufferPointer(rebasing: bytes[0..<32]), k: k, l: l, into: buffer.baseAddress!,
                    level: PQKernels.active)
            }
            initialized = k * l * 256
        }
        self.init(encoded: encoded, matrix: matrix, parameters: parameters)
    }

    /// Builds the material from values key generation already holds (no second ExpandA).
    init(encoded: [UInt8], matrix: [Int32], parameters: MLDSAParameters) {
        self.parameters = parameters
        self.encoded = encoded
        self.matrix = matrix
        self.tr = [UInt8](unsafeUninitializedCapacity: 64) { buffer, initialized in
            encoded.withUnsafeBytes { bytes in
                MLDSASampling.shake256(bytes, into: UnsafeMutableRawBufferPointer(buffer), level: PQKernels.active)
            }
            initialized = 64
        }
    }

    /// NTT(t1·2^d), decoded from `encoded` the first time it is asked for.
    var t1Shifted: [Int32] {
        t1ShiftedCache.withLock { cache in
            if let cache { return cache }
            let k = parameters.k
            let value = [Int32](unsafeUninitializedCapacity: k * 256) { buffer, initialized in
                let out = buffer.baseAddress!
                encoded.withUnsafeBufferPointer { bytes in
                    MLDSAEncoding.unpack(bytes.baseAddress! + 32, count: k * 256, bits: 10, base: 0, sign: 1, into: out)
                }
                for i in 0..<(k * 256) { out[i] <<= Int32(MLDSAField.d) }
                let level = PQKernels.active
                for r in 0..<k { MLDSAField.ntt(out + r * 256, level) }
                initialized = k * 256
            }
            cache = value
            return value
        }
    }
}

/// Private key material: the seed ξ (when known), the FIPS 204 expanded encoding, ŝ1 ‖ ŝ2 ‖ t̂0 in NTT
/// form, and the public key (which carries Â). All secret storage is wiped when the last reference goes.
final class MLDSAPrivateKeyMaterial: Sendable {
    let parameters: MLDSAParameters
    /// ξ; empty when the key was imported from its expanded encoding.
    let seed: [UInt8]
    /// skEncode(ρ, K, tr, s1, s2, t0) (Alg. 24).
    let expandedEncoding: [UInt8]
    /// NTT(s1) (l polynomials) ‖ NTT(s2) (k) ‖ NTT(t0) (k): filled at import of an expanded key (which
    /// computes them anyway), else by the first signature, so key generation does not pay for them.
    private let secretNTTCache: Mutex<[Int32]?>
    let publicKey: MLDSAPublicKeyMaterial

    private init(
        parameters: MLDSAParameters, seed: [UInt8], expandedEncoding: [UInt8], secretNTT: [Int32]?,
        publicKey: MLDSAPublicKeyMaterial
    ) {
        self.parameters = parameters
        self.seed = seed
        self.expandedEncoding = expandedEncoding
        self.secretNTTCache = Mutex(secretNTT)
        self.publicKey = publicKey
    }

    deinit {
        MLDSAWipe.wipe(owned: seed)
        MLDSAWipe.wipe(owned: expandedEncoding)
        secretNTTCache.withLock { cache in
            if let cache { MLDSAWipe.wipe(owned: cache) }
        }
    }

    /// ŝ1 ‖ ŝ2 ‖ t̂0 for signing, decoded from the expanded encoding the first time.
    var secretNTT: [Int32] {
        secretNTTCache.withLock { cache in
            if let cache { return cache }
            let p = parameters
            let k = p.k, l = p.l
            let value = [Int32](unsafeUninitializedCapacity: (l + 2 * k) * 256) { buffer, initialized in
                let out = buffer.baseAddress!
                expandedEncoding.withUnsafeBufferPointer { bytes in
                    let etaStart = bytes.baseAddress! + 128
                    MLDSAEncoding.unpack(
                        etaStart, count: (l + k) * 256, bits: p.etaBits, base: p.eta, sign: -1, into: out)
                    MLDSAEncoding.unpack(
                        etaStart + (l + k) * p.etaPolyByteCount, count: k * 256, bits: 13, base: 1 << 12, sign: -1,
                        into: out + (l + k) * 256)
                }
                let level = PQKernels.active
                for r in 0..<(l + 2 * k) { MLDSAField.ntt(out + r * 256, level) }
                initialized = (l + 2 * k) * 256
            }
            cache = value
            return value
        }
    }

    /// ML-DSA.KeyGen_internal(ξ) (FIPS 204 Alg. 6). Takes ownership of `seed` (wipes it on failure).
    convenience init(seed: [UInt8], parameters: MLDSAParameters) throws(MLDSAError) {
        guard seed.count == 32 else {
            MLDSAWipe.wipe(owned: seed)
            throw .invalidSeedLength(expected: 32, actual: seed.count)
        }
        self.init(validSeed: seed, parameters: parameters)
    }

    /// KeyGen_internal for a seed already known to be 32 bytes.
    convenience init(validSeed seed: [UInt8], parameters: MLDSAParameters) {
        let k = parameters.k, l = parameters.l
        var expanded = [UInt8](repeating: 0, count: 128)
        defer { MLDSAWipe.wipe(owned: expanded) }
        seed.withUnsafeBytes { seedBytes in
            withUnsafeBytes(of: (UInt8(k), UInt8(l))) { sizes in
                expanded.withUnsafeMutableBytes { out in
                    MLDSASampling.shake256(seedBytes, sizes, into: out, level: PQKernels.active)
                }
            }
        }
        // ρ = expanded[0..<32], ρ′ = expanded[32..<96], K = expanded[96..<128].
        let pieces = withUnsafeTemporaryAllocation(of: Int32.self, capacity: (l + k) * 256) { scratch in
            let s1 = scratch.baseAddress!, s2 = s1 + l * 256
            expanded.withUnsafeBytes { bytes in
                let rhoPrime = UnsafeRawBufferPointer(rebasing: bytes[32..<96])
                // s1 (nonces 0..<l) and s2 (l..<l+k) are adjacent: one call samples both.
                MLDSASampling.expandS(
                    rhoPrime: rhoPrime, eta: parameters.eta, count: l + k, firstNonce: 0, into: s1,
                    level: PQKernels.active)
            }
            let pieces = expanded.withUnsafeBytes { bytes in
                Self.derive(
                    parameters: parameters, rho: UnsafeRawBufferPointer(rebasing: bytes[0..<32]),
                    key: UnsafeRawBufferPointer(rebasing: bytes[96..<128]), tr: nil, s1: s1, s2: s2, t0: nil,
                    includeSigningVectors: false)
            }
            MLDSAWipe.wipe(UnsafeMutableRawBufferPointer(scratch))
            return pieces
        }
        self.init(
            parameters: parameters, seed: seed, expandedEncoding: pieces.expanded, secretNTT: pieces.secretNTT,
            publicKey: pieces.publicKey)
    }

    /// skDecode (Alg. 25) with the checks that make the key usable: s1/s2 codes within [−η, η], and
    /// t0 and tr consistent with A·s1 + s2 (a tampered or mismatched key is refused, not signed with).
    convenience init(expandedEncoding encoded: [UInt8], parameters: MLDSAParameters) throws(MLDSAError) {
        guard encoded.count == parameters.expandedPrivateKeyByteCount else {
            throw .invalidPrivateKeyLength(expected: parameters.expandedPrivateKeyByteCount, actual: encoded.count)
        }
        let k = parameters.k, l = parameters.l
        let etaBytes = parameters.etaPolyByteCount
        let pieces = withUnsafeTemporaryAllocation(of: Int32.self, capacity: (l + 2 * k) * 256) {
            scratch -> DerivedKey? in
            defer { MLDSAWipe.wipe(UnsafeMutableRawBufferPointer(scratch)) }
            let s1 = scratch.baseAddress!, s2 = s1 + l * 256, t0 = s2 + k * 256
            let codesValid = encoded.withUnsafeBufferPointer { bytes -> Bool in
                let base = bytes.baseAddress!
                let etaStart = base + 128
                let outOfRange = MLDSAEncoding.anyCodeExceeds(
                    etaStart, count: (l + k) * 256, bits: parameters.etaBits, bound: 2 * parameters.eta)
                MLDSAEncoding.unpack(
                    etaStart, count: l * 256, bits: parameters.etaBits, base: parameters.eta, sign: -1, into: s1)
                MLDSAEncoding.unpack(
                    etaStart + l * etaBytes, count: k * 256, bits: parameters.etaBits, base: parameters.eta,
                    sign: -1, into: s2)
                MLDSAEncoding.unpack(
                    etaStart + (l + k) * etaBytes, count: k * 256, bits: 13, base: 1 << 12, sign: -1, into: t0)
                return !outOfRange
            }
            guard codesValid else { return nil }
            return encoded.withUnsafeBytes { bytes in
                Self.derive(
                    parameters: parameters, rho: UnsafeRawBufferPointer(rebasing: bytes[0..<32]),
                    key: UnsafeRawBufferPointer(rebasing: bytes[32..<64]),
                    tr: UnsafeRawBufferPointer(rebasing: bytes[64..<128]), s1: s1, s2: s2, t0: t0,
                    includeSigningVectors: true)
            }
        }
        guard let pieces else { throw .invalidPrivateKey }
        guard pieces.consistent else {
            MLDSAWipe.wipe(owned: pieces.expanded)
            if let secretNTT = pieces.secretNTT { MLDSAWipe.wipe(owned: secretNTT) }
            throw .invalidPrivateKey
        }
        self.init(
            parameters: parameters, seed: [], expandedEncoding: pieces.expanded, secretNTT: pieces.secretNTT,
            publicKey: pieces.publicKey)
    }

    private struct DerivedKey {
        var expanded: [UInt8]
        var secretNTT: [Int32]?
        var publicKey: MLDSAPublicKeyMaterial
        /// False when an imported key's t0 or tr differs from the derived one.
        var consistent: Bool
    }

    /// Lines 3–9 of Alg. 6: t = NTT^−1(Â ∘ NTT(s1)) + s2, (t1, t0) = Power2Round(t), pk, tr, sk.
    /// When `t0`/`tr` are given (an imported key) the result says whether they equal the derived ones.
    private static func derive(
        parameters: MLDSAParameters, rho: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
        tr expectedTr: UnsafeRawBufferPointer?,
        s1: UnsafeMutablePointer<Int32>, s2: UnsafeMutablePointer<Int32>, t0 expectedT0: UnsafeMutablePointer<Int32>?,
        includeSigningVectors: Bool
    ) -> DerivedKey {
        let k = parameters.k, l = parameters.l
        let level = PQKernels.active
        let matrix = [Int32](unsafeUninitializedCapacity: k * l * 256) { buffer, initialized in
            MLDSASampling.expandA(rho: rho, k: k, l: l, into: buffer.baseAddress!, level: level)
            initialized = k * l * 256
        }
        var secretNTT = [Int32](repeating: 0, count: (l + 2 * k) * 256)
        var t1 = [Int32](repeating: 0, count: k * 256)
        var expanded = [UInt8](repeating: 0, count: parameters.expandedPrivateKeyByteCount)
        var t0Matches = true
        secretNTT.withUnsafeMutableBufferPointer { secretBuffer in
            let s1Hat = secretBuffer.baseAddress!, s2Hat = s1Hat + l * 256, t0Hat = s2Hat + k * 256
            s1Hat.update(from: s1, count: l * 256)
            for r in 0..<l { MLDSAField.ntt(s1Hat + r * 256, level) }
            // t (into t0Hat as scratch), then split into t1 and t0.
            matrix.withUnsafeBufferPointer { a in
                MLDSAPoly.matrixVectorMontgomery(
                    t0Hat, matrix: a.baseAddress!, vector: s1Hat, k: k, l: l, level: level)
            }
            var difference: Int32 = 0
            t1.withUnsafeMutableBufferPointer { t1Buffer in
                let t1Out = t1Buffer.baseAddress!
                for r in 0..<k {
                    let t = t0Hat + r * 256
                    MLDSAField.inverseNTTToMontgomery(t, level)
                    for i in 0..<256 {
                        let value = MLDSAField.conditionalAddQ(MLDSAField.reduce32(t[i] &+ s2[r * 256 + i]))
                        let (high, low) = MLDSARounding.power2Round(value)
                        t1Out[r * 256 + i] = high
                        t[i] = low
                        if let expectedT0 { difference |= low ^ expectedT0[r * 256 + i] }
                    }
                }
            }
            t0Matches = difference == 0
            s2Hat.update(from: s2, count: k * 256)
            if includeSigningVectors {
                for r in 0..<k { MLDSAField.ntt(s2Hat + r * 256, level) }
            }
            // skEncode while s1, s2 and t0 are still in normal form.
            expanded.withUnsafeMutableBufferPointer { out in
                let base = out.baseAddress!
                UnsafeMutableRawPointer(base).copyMemory(from: rho.baseAddress!, byteCount: 32)
                UnsafeMutableRawPointer(base + 32).copyMemory(from: key.baseAddress!, byteCount: 32)
                var offset = 128 + (l + k) * parameters.etaPolyByteCount
                MLDSAEncoding.pack(t0Hat, count: k * 256, bits: 13, base: 1 << 12, sign: -1, into: base + offset)
                offset = 128
                MLDSAEncoding.pack(
                    s1, count: l * 256, bits: parameters.etaBits, base: parameters.eta, sign: -1, into: base + offset)
                offset += l * parameters.etaPolyByteCount
                MLDSAEncoding.pack(
                    s2, count: k * 256, bits: parameters.etaBits, base: parameters.eta, sign: -1, into: base + offset)
            }
            if includeSigningVectors {
                for r in 0..<k { MLDSAField.ntt(t0Hat + r * 256, level) }
            }
        }
        var encoded = [UInt8](repeating: 0, count: parameters.publicKeyByteCount)
        encoded.withUnsafeMutableBufferPointer { out in
            UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: rho.baseAddress!, byteCount: 32)
            t1.withUnsafeBufferPointer { t1Buffer in
                MLDSAEncoding.pack(
                    t1Buffer.baseAddress!, count: k * 256, bits: 10, base: 0, sign: 1, into: out.baseAddress! + 32)
            }
        }
        let publicKey = MLDSAPublicKeyMaterial(encoded: encoded, matrix: matrix, parameters: parameters)
        expanded.replaceSubrange(64..<128, with: publicKey.tr)
        var consistent = t0Matches
        if let expectedTr, !expectedTr.elementsEqual(publicKey.tr) { consistent = false }
        if !includeSigningVectors { MLDSAWipe.wipe(owned: secretNTT) }
        return DerivedKey(
            expanded: expanded, secretNTT: includeSigningVectors ? secretNTT : nil, publicKey: publicKey,
            consistent: consistent)
    }
}
