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
    static func hashG(_ a: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>, _ level: PQKernels.Level) {
        var sponge = KeccakSponge.sha3_512(level)
        sponge.absorb(a)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 64))
        sponge.zeroize()
    }

    /// H(a) = SHA3-256, 32 bytes into `out`.
    @inline(__always)
    static func hashH(_ a: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>, _ level: PQKernels.Level) {
        var sponge = KeccakSponge.sha3_256(level)
        sponge.absorb(a)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 32))
    }

    /// J(z ‖ c) = SHAKE256(z ‖ c, 32 bytes): the implicit-rejection key.
    @inline(__always)
    static func hashJ(
        _ z: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>,
        _ level: PQKernels.Level
    ) {
        var sponge = KeccakSponge.shake256(level)
        sponge.absorb(z)
        sponge.absorb(c)
        sponge.squeeze(into: UnsafeMutableRawBufferPointer(start: out, count: 32))
        sponge.zeroize()
    }

    /// Noise polynomials r_i = CBD_η(PRF_η(seed, firstNonce + i)) for i < count (Alg. 8 on top of §4.1),
    /// into `polys + 256·i`; η = eta1 for i < eta1Count, else eta2. Four PRF calls run side by side.
    static func sampleNoise(
        seed: UnsafePointer<UInt8>, firstNonce: Int, count: Int, eta1Count: Int, eta1: Int, eta2: Int,
        into polys: UnsafeMutablePointer<Int16>, scratch s: Scratch
    ) {
        let rate = KeccakSponge.shake256Rate
        let outStride = 2 * rate  // 64·η ≤ 192 bytes fit in two blocks
        for batch in stride(from: 0, to: count, by: 4) {
            for lane in 0..<4 {
                let input = s.xofIn + 34 * lane
                input.update(from: seed, count: 32)
                input[32] = UInt8(truncatingIfNeeded: firstNonce + min(batch + lane, count - 1))
            }
            let largestEta = batch < eta1Count ? max(eta1, eta2) : eta2
            KeccakX4.with(rate: rate, level: s.level) { sponge in
                sponge.absorb(s.xofIn, stride: 34, count: 33)
                sponge.squeeze(blocks: (64 * largestEta + rate - 1) / rate, into: s.xofOut, stride: outStride)
            }
            for lane in 0..<min(4, count - batch) {
                let index = batch + lane
                MLKEMPoly.sampleCBD(
                    s.xofOut + outStride * lane, eta: index < eta1Count ? eta1 : eta2, into: polys + 256 * index)
            }
        }
        MLKEMMemory.wipe(s.xofIn, count: 4 * 34)
        MLKEMMemory.wipe(s.xofOut, count: xofOutBytes)
    }

    /// Â (FIPS 203 Alg. 13 line 4–8), k×k polynomials row-major at `s.matrix`: entry (i, j) is
    /// SampleNTT(ρ ‖ j ‖ i), or SampleNTT(ρ ‖ i ‖ j) (that is Âᵀ) when `transposed`. Four entries are
    /// sampled side by side. Public data, so rejection sampling may branch.
    static func sampleMatrix(rho: UnsafePointer<UInt8>, k: Int, transposed: Bool, scratch s: Scratch) {
        let rate = KeccakSponge.shake128Rate
        // Three blocks give 336 candidates for 256 slots; more are needed with probability < 2^-20.
        let firstBlocks = 3
        let entries = k * k
        for batch in stride(from: 0, to: entries, by: 4) {
            let lanes = min(4, entries - batch)
            for lane in 0..<4 {
                let entry = batch + min(lane, lanes - 1)
                let i = entry / k, j = entry % k
                let input = s.xofIn + 34 * lane
                input.update(from: rho, count: 32)
                input[32] = UInt8(truncatingIfNeeded: transposed ? i : j)
                input[33] = UInt8(truncatingIfNeeded: transposed ? j : i)
            }
            KeccakX4.with(rate: rate, level: s.level) { sponge in
                sponge.absorb(s.xofIn, stride: 34, count: 34)
                sponge.sampleUntilFull(lanes: lanes, firstBlocks: firstBlocks, output: s.xofOut) {
                    lane, filled, bytes, length in
                    MLKEMPoly.rejectionSample(
                        bytes, length: length, into: s.matrix + 256 * (batch + lane), count: filled, s.level)
                }
            }
        }
    }

    /// Bytes of `xofOut`: four streams of three SHAKE128 blocks.
    static let xofOutBytes = 4 * 3 * 168

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
            hashG(UnsafeRawBufferPointer(start: s.seeds, count: 33), into: s.seeds + 64, s.level)
            let rho = UnsafePointer(s.seeds + 64), sigma = UnsafePointer(s.seeds + 96)
            sampleMatrix(rho: rho, k: k, transposed: false, scratch: s)
            // ŝ into `vector`, ê into `noise` (which follows it).
            sampleNoise(
                seed: sigma, firstNonce: 0, count: 2 * k, eta1Count: 2 * k, eta1: p.eta1, eta2: p.eta2,
                into: s.vector, scratch: s)
            for i in 0..<(2 * k) { MLKEMPoly.ntt(s.vector + 256 * i, s.level) }
            for i in 0..<k { MLKEMPoly.mulCache(s.vector + 256 * i, into: s.cache + 128 * i) }
            for i in 0..<k {
                MLKEMPoly.basemulSum(s.work, s.matrix + 256 * k * i, s.vector, s.cache, k: k, s.level)
                MLKEMPoly.toMontgomery(s.work)
                MLKEMPoly.add(s.work, s.noise + 256 * i)
                MLKEMPoly.reduce(s.work)
                MLKEMPoly.encode12(s.work, into: ek + 384 * i)
            }
            (ek + 384 * k).update(from: rho, count: 32)
            for i in 0..<k {
                MLKEMPoly.encode12(s.vector + 256 * i, into: dk + 384 * i)
            }
            let ekLength = 384 * k + 32
            (dk + 384 * k).update(from: ek, count: ekLength)
            hashH(UnsafeRawBufferPointer(start: ek, count: ekLength), into: dk + 384 * k + ekLength, s.level)
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
        sampleMatrix(rho: ek + 384 * k, k: k, transposed: true, scratch: s)
        // y into `vector`; e₁ (k polynomials) and e₂ into `noise`.
        sampleNoise(
            seed: r, firstNonce: 0, count: 2 * k + 1, eta1Count: k, eta1: p.eta1, eta2: p.eta2,
            into: s.vector, scratch: s)
        for i in 0..<k {
            let yi = s.vector + 256 * i
            MLKEMPoly.ntt(yi, s.level)
            MLKEMPoly.mulCache(yi, into: s.cache + 128 * i)
        }
        // u = NTT⁻¹(Âᵀ ∘ ŷ) + e₁
        for i in 0..<k {
            MLKEMPoly.basemulSum(s.work, s.matrix + 256 * k * i, s.vector, s.cache, k: k, s.level)
            MLKEMPoly.inverseNTT(s.work, s.level)
            MLKEMPoly.add(s.work, s.noise + 256 * i)
            MLKEMPoly.reduce(s.work)
            MLKEMPoly.compress(s.work, bits: p.du, into: c + p.polyCompressedUBytes * i)
        }
        // v = NTT⁻¹(t̂ᵀ ∘ ŷ) + e₂ + Decompress₁(m); t̂ is decoded over the first row of Â, no longer needed.
        for j in 0..<k { MLKEMPoly.decode12(ek + 384 * j, into: s.matrix + 256 * j) }
        MLKEMPoly.basemulSum(s.work, s.matrix, s.vector, s.cache, k: k, s.level)
        MLKEMPoly.inverseNTT(s.work, s.level)
        MLKEMPoly.add(s.work, s.noise + 256 * k)
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
            MLKEMPoly.ntt(ui, s.level)
            MLKEMPoly.mulCache(ui, into: s.cache + 128 * i)
        }
        for i in 0..<k { MLKEMPoly.decode12(dkPKE + 384 * i, into: s.matrix + 256 * i) }
        MLKEMPoly.basemulSum(s.work, s.matrix, s.vector, s.cache, k: k, s.level)
        MLKEMPoly.inverseNTT(s.work, s.level)
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
                hashH(UnsafeRawBufferPointer(start: ek, count: ekLength), into: s.seeds + 32, s.level)
            }
            hashG(UnsafeRawBufferPointer(start: s.seeds, count: 64), into: s.seeds + 64, s.level)
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
                hashG(UnsafeRawBufferPointer(start: s.seeds, count: 64), into: s.seeds + 64, s.level)
                hashJ(
                    UnsafeRawBufferPointer(start: z, count: 32), UnsafeRawBufferPointer(start: c, count: ctLength),
                    into: s.seeds + 128, s.level)
                encrypt(p, ek: ek, m: s.seeds, r: s.seeds + 96, c: cPrime, scratch: s)
                let equal = MLKEMConstantTime.equalMask(c, UnsafePointer(cPrime), count: ctLength)
                MLKEMConstantTime.select(
                    equal, UnsafePointer(s.seeds + 64), otherwise: UnsafePointer(s.seeds + 128), into: key, count: 32)
                MLKEMMemory.wipe(cPrime, count: ctLength)
            }
        }
    }

    // MARK: Scratch space

    /// Pointers into one stack allocation: the vector (ŝ, ŷ or û) followed by the noise polynomials,
    /// the vector's multiplication cache, the matrix Â, two working polynomials, XOF inputs and outputs
    /// for four streams, and seeds; plus the kernel level of this operation.
    struct Scratch {
        let vector: UnsafeMutablePointer<Int16>  // k × 256
        let noise: UnsafeMutablePointer<Int16>  // (k + 1) × 256, right after `vector`
        let cache: UnsafeMutablePointer<Int16>  // k × 128
        let matrix: UnsafeMutablePointer<Int16>  // k × k × 256
        let poly: UnsafeMutablePointer<Int16>  // 256
        let work: UnsafeMutablePointer<Int16>  // 256
        let xofIn: UnsafeMutablePointer<UInt8>  // 4 × 34
        let xofOut: UnsafeMutablePointer<UInt8>  // xofOutBytes
        let seeds: UnsafeMutablePointer<UInt8>  // 160
        let level: PQKernels.Level
    }

    /// Runs `body` with scratch for rank k, then wipes all of it (it held secrets).
    @inline(__always)
    static func withScratch<R>(k: Int, _ body: (Scratch) -> R) -> R {
        let int16Count = k * 256 + (k + 1) * 256 + k * 128 + k * k * 256 + 512
        let byteCount = 2 * int16Count + xofOutBytes + 4 * 34 + 160
        let level = PQKernels.active
        return withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 32) { buffer in
            let base = buffer.baseAddress!
            let polys = base.bindMemory(to: Int16.self, capacity: int16Count)
            let bytes = (base + 2 * int16Count).bindMemory(to: UInt8.self, capacity: xofOutBytes + 4 * 34 + 160)
            let cache = polys + (2 * k + 1) * 256
            let matrix = cache + k * 128
            let scratch = Scratch(
                vector: polys, noise: polys + k * 256, cache: cache, matrix: matrix, poly: matrix + k * k * 256,
                work: matrix + k * k * 256 + 256, xofIn: bytes + xofOutBytes, xofOut: bytes,
                seeds: bytes + xofOutBytes + 4 * 34, level: level)
            let result = body(scratch)
            MLKEMMemory.wipe(base, count: byteCount)
            return result
        }
    }
}
