// K-PKE and the ML-KEM internal algorithms of FIPS 203 (Alg. 13–18) over raw byte buffers.
//
// Every operation takes its scratch space from one stack allocation (no heap traffic, nothing per
// coefficient), streams the matrix Â row by row so it is never stored whole, and wipes every buffer
// that held a secret before returning.

/// The FIPS 203 internal algorithms. Lengths are checked by the callers; these trust their buffers.
enum MLKEMEngine {
    // MARK: Hash functions G, H, J, PRF, XOF (FIPS 203 §4.1)

    /// G(a) = SHA3-512, 64 bytes into `out`.
    @inline(__always)
    static func hashG(_ a: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
        var sponge = KeccakSponge.sha3_512()
        sponge.absorb(a)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 64))
        sponge.zeroize()
    }

    /// H(a) = SHA3-256, 32 bytes into `out`.
    @inline(__always)
    static func hashH(_ a: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
        var sponge = KeccakSponge.sha3_256()
        sponge.absorb(a)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 32))
    }

    /// J(z ‖ c) = SHAKE256(z ‖ c, 32 bytes): the implicit-rejection key.
    @inline(__always)
    static func hashJ(
        _ z: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>
    ) {
        var sponge = KeccakSponge.shake256()
        sponge.absorb(z)
        sponge.absorb(c)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 32))
        sponge.zeroize()
    }

    /// Samples a CBD_η polynomial from PRF_η(s, n) = SHAKE256(s ‖ n, 64η) (Alg. 8 on top of §4.1).
    @inline(__always)
    static func sampleNoise(
        seed: UnsafePointer<UInt8>, nonce: UInt8, eta: Int,
        into r: UnsafeMutablePointer<Int16>, buffer: UnsafeMutablePointer<UInt8>
    ) {
        buffer[32] = nonce
        buffer.update(from: seed, count: 32)
        var sponge = KeccakSponge.shake256()
        sponge.absorb(UnsafeRawBufferPointer(start: buffer, count: 33))
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: buffer, count: 64 * eta))
        sponge.zeroize()
        MLKEMPoly.sampleCBD(buffer, eta: eta, into: r)
    }

    /// SampleNTT(ρ ‖ first ‖ second) (Alg. 7): a uniform polynomial in the NTT domain. Â[i, j] uses
    /// (first, second) = (j, i). Public data, so rejection sampling may branch.
    @inline(__always)
    static func sampleMatrixEntry(
        rho: UnsafePointer<UInt8>, _ first: Int, _ second: Int,
        into r: UnsafeMutablePointer<Int16>, buffer: UnsafeMutablePointer<UInt8>
    ) {
        buffer.update(from: rho, count: 32)
        buffer[32] = UInt8(truncatingIfNeeded: first)
        buffer[33] = UInt8(truncatingIfNeeded: second)
        var sponge = KeccakSponge.shake128()
        sponge.absorb(UnsafeRawBufferPointer(start: buffer, count: 34))
        // Three blocks give 336 candidates for 256 slots; more are needed with probability < 2^-20.
        let firstLength = 3 * KeccakSponge.shake128Rate
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: buffer, count: firstLength))
        var count = MLKEMPoly.rejectionSample(buffer, length: firstLength, into: r, count: 0)
        while count < 256 {
            sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: buffer, count: KeccakSponge.shake128Rate))
            count = MLKEMPoly.rejectionSample(buffer, length: KeccakSponge.shake128Rate, into: r, count: count)
        }
    }

    /// Bytes of scratch for `buffer` arguments: the largest XOF squeeze (3 SHAKE128 blocks).
    static let byteScratch = 3 * 168

    // MARK: ML-KEM.KeyGen_internal (Alg. 16, with K-PKE.KeyGen, Alg. 13)

    /// KeyGen_internal(d, z): writes ek (384k+32 bytes) and dk (768k+96 bytes).
    static func keyGen(
        _ p: MLKEMParameters, d: UnsafePointer<UInt8>, z: UnsafePointer<UInt8>,
        ek: UnsafeMutablePointer<UInt8>, dk: UnsafeMutablePointer<UInt8>
    ) {
        let k = p.k
        withScratch(k: k) { s in
            // (ρ, σ) = G(d ‖ k)
            s.seeds.update(from: d, count: 32)
            s.seeds[32] = UInt8(truncatingIfNeeded: k)
            hashG(UnsafeRawBufferPointer(start: s.seeds, count: 33), into: s.seeds + 64)
            let rho = UnsafePointer(s.seeds + 64), sigma = UnsafePointer(s.seeds + 96)
            for i in 0..<k {
                let si = s.vector + 256 * i
                sampleNoise(seed: sigma, nonce: UInt8(i), eta: p.eta1, into: si, buffer: s.bytes)
                MLKEMPoly.ntt(si)
                MLKEMPoly.mulCache(si, into: s.cache + 128 * i)
            }
            for i in 0..<k {
                s.acc.initialize(repeating: 0, count: 256)
                for j in 0..<k {
                    sampleMatrixEntry(rho: rho, j, i, into: s.poly, buffer: s.bytes)
                    MLKEMPoly.basemulAccumulate(s.acc, s.poly, s.vector + 256 * j, s.cache + 128 * j)
                }
                MLKEMPoly.reduceAccumulator(s.acc, into: s.work)
                MLKEMPoly.toMontgomery(s.work)
                sampleNoise(seed: sigma, nonce: UInt8(k + i), eta: p.eta1, into: s.poly, buffer: s.bytes)
                MLKEMPoly.ntt(s.poly)
                MLKEMPoly.add(s.work, s.poly)
                MLKEMPoly.reduce(s.work)
                MLKEMPoly.encode12(s.work, into: ek + 384 * i)
            }
            (ek + 384 * k).update(from: rho, count: 32)
            for i in 0..<k {
                MLKEMPoly.encode12(s.vector + 256 * i, into: dk + 384 * i)
            }
            let ekLength = 384 * k + 32
            (dk + 384 * k).update(from: ek, count: ekLength)
            hashH(UnsafeRawBufferPointer(start: ek, count: ekLength), into: dk + 384 * k + ekLength)
            (dk + 384 * k + ekLength + 32).update(from: z, count: 32)
        }
    }

    // MARK: K-PKE.Encrypt (Alg. 14)

    /// K-PKE.Encrypt(ek, m, r) into c (32(d_u·k + d_v) bytes), using scratch `s`.
    static func encrypt(
        _ p: MLKEMParameters, ek: UnsafePointer<UInt8>, m: UnsafePointer<UInt8>, r: UnsafePointer<UInt8>,
        c: UnsafeMutablePointer<UInt8>, scratch s: Scratch
    ) {
        let k = p.k
        let rho = ek + 384 * k
        for i in 0..<k {
            let yi = s.vector + 256 * i
            sampleNoise(seed: r, nonce: UInt8(i), eta: p.eta1, into: yi, buffer: s.bytes)
            MLKEMPoly.ntt(yi)
            MLKEMPoly.mulCache(yi, into: s.cache + 128 * i)
        }
        // u = NTT⁻¹(Âᵀ ∘ ŷ) + e₁
        for i in 0..<k {
            s.acc.initialize(repeating: 0, count: 256)
            for j in 0..<k {
                // Âᵀ[i, j] = Â[j, i] = SampleNTT(ρ ‖ i ‖ j)
                sampleMatrixEntry(rho: rho, i, j, into: s.poly, buffer: s.bytes)
                MLKEMPoly.basemulAccumulate(s.acc, s.poly, s.vector + 256 * j, s.cache + 128 * j)
            }
            MLKEMPoly.reduceAccumulator(s.acc, into: s.work)
            MLKEMPoly.inverseNTT(s.work)
            sampleNoise(seed: r, nonce: UInt8(k + i), eta: p.eta2, into: s.poly, buffer: s.bytes)
            MLKEMPoly.add(s.work, s.poly)
            MLKEMPoly.reduce(s.work)
            MLKEMPoly.compress(s.work, bits: p.du, into: c + p.polyCompressedUBytes * i)
        }
        // v = NTT⁻¹(t̂ᵀ ∘ ŷ) + e₂ + Decompress₁(m)
        s.acc.initialize(repeating: 0, count: 256)
        for j in 0..<k {
            MLKEMPoly.decode12(ek + 384 * j, into: s.poly)
            MLKEMPoly.basemulAccumulate(s.acc, s.poly, s.vector + 256 * j, s.cache + 128 * j)
        }
        MLKEMPoly.reduceAccumulator(s.acc, into: s.work)
        MLKEMPoly.inverseNTT(s.work)
        sampleNoise(seed: r, nonce: UInt8(2 * k), eta: p.eta2, into: s.poly, buffer: s.bytes)
        MLKEMPoly.add(s.work, s.poly)
        MLKEMPoly.fromMessage(m, into: s.poly)
        MLKEMPoly.add(s.work, s.poly)
        MLKEMPoly.reduce(s.work)
        MLKEMPoly.compress(s.work, bits: p.dv, into: c + p.polyCompressedUBytes * k)
    }

    // MARK: K-PKE.Decrypt (Alg. 15)

    /// K-PKE.Decrypt(dk_PKE, c): the 32-byte message m into `m`.
    static func decrypt(
        _ p: MLKEMParameters, dkPKE: UnsafePointer<UInt8>, c: UnsafePointer<UInt8>,
        m: UnsafeMutablePointer<UInt8>, scratch s: Scratch
    ) {
        let k = p.k
        for i in 0..<k {
            let ui = s.vector + 256 * i
            MLKEMPoly.decompress(c + p.polyCompressedUBytes * i, bits: p.du, into: ui)
            MLKEMPoly.ntt(ui)
            MLKEMPoly.mulCache(ui, into: s.cache + 128 * i)
        }
        s.acc.initialize(repeating: 0, count: 256)
        for i in 0..<k {
            MLKEMPoly.decode12(dkPKE + 384 * i, into: s.poly)
            MLKEMPoly.basemulAccumulate(s.acc, s.poly, s.vector + 256 * i, s.cache + 128 * i)
        }
        MLKEMPoly.reduceAccumulator(s.acc, into: s.work)
        MLKEMPoly.inverseNTT(s.work)
        MLKEMPoly.decompress(c + p.polyCompressedUBytes * k, bits: p.dv, into: s.poly)
        MLKEMPoly.subtractFrom(s.poly, s.work)
        MLKEMPoly.reduce(s.work)
        MLKEMPoly.toMessage(s.work, into: m)
    }

    // MARK: ML-KEM.Encaps_internal / Decaps_internal (Alg. 17, 18)

    /// Encaps_internal(ek, m): writes c and the 32-byte shared secret K.
    /// `ekHash`, when given, is H(ek) computed earlier (a public key caches it), saving the hash of ek.
    static func encapsulate(
        _ p: MLKEMParameters, ek: UnsafePointer<UInt8>, ekHash: UnsafePointer<UInt8>? = nil,
        m: UnsafePointer<UInt8>, c: UnsafeMutablePointer<UInt8>, key: UnsafeMutablePointer<UInt8>
    ) {
        withScratch(k: p.k) { s in
            let ekLength = p.encapsulationKeyByteCount
            // (K, r) = G(m ‖ H(ek))
            s.seeds.update(from: m, count: 32)
            if let ekHash {
                (s.seeds + 32).update(from: ekHash, count: 32)
            } else {
                hashH(UnsafeRawBufferPointer(start: ek, count: ekLength), into: s.seeds + 32)
            }
            hashG(UnsafeRawBufferPointer(start: s.seeds, count: 64), into: s.seeds + 64)
            encrypt(p, ek: ek, m: m, r: s.seeds + 96, c: c, scratch: s)
            key.update(from: s.seeds + 64, count: 32)
        }
    }

    /// Decaps_internal(dk, c): writes the 32-byte shared secret, or J(z ‖ c) when the re-encryption of
    /// the decrypted message does not reproduce c (implicit rejection, selected in constant time).
    static func decapsulate(
        _ p: MLKEMParameters, dk: UnsafePointer<UInt8>, c: UnsafePointer<UInt8>,
        key: UnsafeMutablePointer<UInt8>
    ) {
        let k = p.k
        let ctLength = p.ciphertextByteCount
        let ek = dk + 384 * k
        let h = dk + 768 * k + 32
        let z = dk + 768 * k + 64
        withScratch(k: k) { s in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ctLength) { reencrypted in
                let cPrime = reencrypted.baseAddress!
                // seeds: m' (0..<32) ‖ h (32..<64) → G → K' (64..<96) ‖ r' (96..<128); K̄ at 128..<160
                decrypt(p, dkPKE: dk, c: c, m: s.seeds, scratch: s)
                (s.seeds + 32).update(from: h, count: 32)
                hashG(UnsafeRawBufferPointer(start: s.seeds, count: 64), into: s.seeds + 64)
                hashJ(
                    UnsafeRawBufferPointer(start: z, count: 32), UnsafeRawBufferPointer(start: c, count: ctLength),
                    into: s.seeds + 128)
                encrypt(p, ek: ek, m: s.seeds, r: s.seeds + 96, c: cPrime, scratch: s)
                let equal = MLKEMConstantTime.equalMask(c, UnsafePointer(cPrime), count: ctLength)
                MLKEMConstantTime.select(
                    equal, UnsafePointer(s.seeds + 64), otherwise: UnsafePointer(s.seeds + 128), into: key, count: 32)
                MLKEMMemory.wipe(cPrime, count: ctLength)
            }
        }
    }

    // MARK: Scratch space

    /// Pointers into one stack allocation: the vector (ŝ, ŷ or û), its multiplication cache, two
    /// working polynomials, a 32-bit accumulator, byte buffers for hashes and seeds.
    struct Scratch {
        let vector: UnsafeMutablePointer<Int16>  // k × 256
        let cache: UnsafeMutablePointer<Int16>  // k × 128
        let poly: UnsafeMutablePointer<Int16>  // 256
        let work: UnsafeMutablePointer<Int16>  // 256
        let acc: UnsafeMutablePointer<Int32>  // 256
        let bytes: UnsafeMutablePointer<UInt8>  // byteScratch
        let seeds: UnsafeMutablePointer<UInt8>  // 160
    }

    /// Runs `body` with scratch for rank k, then wipes all of it (it held secrets).
    @inline(__always)
    static func withScratch<R>(k: Int, _ body: (Scratch) -> R) -> R {
        let int16Count = k * 256 + k * 128 + 512
        let byteCount = 1024 + 2 * int16Count + byteScratch + 160
        return withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 16) { buffer in
            let base = buffer.baseAddress!
            let acc = base.bindMemory(to: Int32.self, capacity: 256)
            let polys = (base + 1024).bindMemory(to: Int16.self, capacity: int16Count)
            let bytes = (base + 1024 + 2 * int16Count).bindMemory(to: UInt8.self, capacity: byteScratch + 160)
            let scratch = Scratch(
                vector: polys, cache: polys + k * 256, poly: polys + k * 384, work: polys + k * 384 + 256,
                acc: acc, bytes: bytes, seeds: bytes + byteScratch)
            let result = body(scratch)
            MLKEMMemory.wipe(base, count: byteCount)
            return result
        }
    }
}
