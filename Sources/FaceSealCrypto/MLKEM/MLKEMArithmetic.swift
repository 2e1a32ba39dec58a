// Arithmetic in R_q = Z_3329[X]/(X^256 + 1) and its NTT domain (FIPS 203 §4.3), on 256 Int16 lanes.
//
// Coefficients are kept in signed 16-bit lanes with lazy reduction, as in the CRYSTALS-Kyber reference
// design: Montgomery multiplication (R = 2^16) and Barrett reduction, never `%` on secret data, no
// secret-dependent branch or table index. All arithmetic uses wrapping operators: the bounds below are
// what keeps every value in range, and a trap check per coefficient would cost more than the work.

import CFaceSealPQ

/// Polynomial kernels over a pointer to 256 coefficients. Callers own the storage.
enum MLKEMPoly {
    /// q, the ML-KEM modulus.
    static let q: Int16 = 3329
    /// q⁻¹ mod 2^16 (as a signed value), for Montgomery reduction.
    static let qinv: Int16 = -3327
    /// 2^32 mod q: multiplying by it in Montgomery form converts a value into Montgomery form.
    static let montSquared: Int16 = 1353
    /// R²/128 mod q: folds the 1/128 of the inverse NTT and the Montgomery factor into one multiply.
    static let invNTTFactor: Int16 = 1441

    /// ζ^BitRev₇(i) · 2^16 mod q, centred in (−q/2, q/2], ζ = 17 (FIPS 203 Appendix A, in Montgomery form).
    static let zetas: [Int16] = [
        -1044, -758, -359, -1517, 1493, 1422, 287, 202, -171, 622, 1577, 182, 962, -1202, -1474, 1468,
        573, -1325, 264, 383, -829, 1458, -1602, -130, -681, 1017, 732, 608, -1542, 411, -205, -1571,
        1223, 652, -552, 1015, -1293, 1491, -282, -1544, 516, -8, -320, -666, -1618, -1162, 126, 1469,
        -853, -90, -271, 830, 107, -1421, -247, -951, -398, 961, -1508, -725, 448, -1065, 677, -1275,
        -1103, 430, 555, 843, -1251, 871, 1550, 105, 422, 587, 177, -235, -291, -460, 1574, 1653,
        -246, 778, 1159, -147, -777, 1483, -602, 1119, -1590, 644, -872, 349, 418, 329, -156, -75,
        817, 1097, 603, 610, 1322, -1285, -1465, 384, -1215, -136, 1218, -1335, -874, 220, -1187, -1659,
        -1185, -1530, -1278, 794, -1510, -854, -870, 478, -108, -308, 996, 991, 958, -1460, 1522, 1628,
    ]

    /// a · 2^-16 mod q for |a| < q·2^15; result in (−q, q).
    @inline(__always)
    static func montgomeryReduce(_ a: Int32) -> Int16 {
        let t = Int16(truncatingIfNeeded: a) &* qinv
        return Int16(truncatingIfNeeded: (a &- Int32(t) &* Int32(q)) >> 16)
    }

    /// a · b · 2^-16 mod q (Montgomery multiplication), result in (−q, q) for |a·b| < q·2^15.
    /// Written as high(a·b) − high(low(low(a·b)·q⁻¹)·q): equal to `montgomeryReduce(a·b)` (the low halves
    /// cancel exactly), and in this form the vectoriser maps it to 16-bit multiply-high instructions.
    @inline(__always)
    static func fqmul(_ a: Int16, _ b: Int16) -> Int16 {
        let high = Int16(truncatingIfNeeded: (Int32(a) &* Int32(b)) >> 16)
        let t = (a &* b) &* qinv
        return high &- Int16(truncatingIfNeeded: (Int32(t) &* Int32(q)) >> 16)
    }

    /// The representative of a mod q in [−(q−1)/2, (q−1)/2], for any Int16 a.
    @inline(__always)
    static func barrettReduce(_ a: Int16) -> Int16 {
        let v: Int32 = 20159  // round(2^26 / q)
        let t = Int16(truncatingIfNeeded: (v &* Int32(a) &+ (1 << 25)) >> 26)
        return a &- t &* q
    }

    /// Maps a value in (−q, q) to [0, q) without a branch.
    @inline(__always)
    static func canonical(_ a: Int16) -> Int16 {
        a &+ ((a >> 15) & q)
    }

    /// Barrett-reduces every coefficient.
    @inline(__always)
    static func reduce(_ r: UnsafeMutablePointer<Int16>) {
        for i in 0..<256 { r[i] = barrettReduce(r[i]) }
    }

    /// Multiplies every coefficient by 2^16 (into Montgomery form).
    @inline(__always)
    static func toMontgomery(_ r: UnsafeMutablePointer<Int16>) {
        for i in 0..<256 { r[i] = fqmul(r[i], montSquared) }
    }

    /// r += a, coefficient-wise (no reduction).
    @inline(__always)
    static func add(_ r: UnsafeMutablePointer<Int16>, _ a: UnsafePointer<Int16>) {
        for i in 0..<256 { r[i] = r[i] &+ a[i] }
    }

    /// r = a − r, coefficient-wise (no reduction).
    @inline(__always)
    static func subtractFrom(_ a: UnsafePointer<Int16>, _ r: UnsafeMutablePointer<Int16>) {
        for i in 0..<256 { r[i] = a[i] &- r[i] }
    }

    /// One Cooley–Tukey layer of the forward NTT with block length `len` (a literal at every call site,
    /// so each layer compiles to its own fixed-trip-count, vectorisable loop).
    @inline(__always)
    private static func nttLayer(_ r: UnsafeMutablePointer<Int16>, _ z: UnsafePointer<Int16>, len: Int) {
        let blocks = 128 / len
        for block in 0..<blocks {
            let zeta = z[blocks + block]
            let lower = r + 2 * len * block, upper = lower + len
            for j in 0..<len {
                let t = fqmul(zeta, upper[j])
                upper[j] = lower[j] &- t
                lower[j] = lower[j] &+ t
            }
        }
    }

    /// Forward NTT (FIPS 203 Alg. 9) in place, output Barrett-reduced.
    /// Input |x| < q (or small noise); each of the 7 layers grows the bound by less than q, so < 8q < 2^15.
    static func ntt(_ r: UnsafeMutablePointer<Int16>) {
        zetas.withUnsafeBufferPointer { buffer in
            let z = buffer.baseAddress!
            nttLayer(r, z, len: 128)
            nttLayer(r, z, len: 64)
            nttLayer(r, z, len: 32)
            nttLayer(r, z, len: 16)
            nttLayer(r, z, len: 8)
            nttLayer(r, z, len: 4)
            nttLayer(r, z, len: 2)
        }
        reduce(r)
    }

    /// One Gentleman–Sande layer of the inverse NTT with block length `len` (a literal at each call site).
    /// The sums are Barrett-reduced only when `reduceSums` is set: the caller tracks the bound.
    @inline(__always)
    private static func inverseNTTLayer(
        _ r: UnsafeMutablePointer<Int16>, _ z: UnsafePointer<Int16>, len: Int, reduceSums: Bool
    ) {
        let blocks = 128 / len
        for block in 0..<blocks {
            let zeta = z[2 * blocks - 1 - block]
            let lower = r + 2 * len * block, upper = lower + len
            for j in 0..<len {
                let t = lower[j], u = upper[j]
                lower[j] = reduceSums ? barrettReduce(t &+ u) : t &+ u
                upper[j] = fqmul(zeta, u &- t)
            }
        }
    }

    /// Inverse NTT (FIPS 203 Alg. 10) in place, including the factor 1/128. The output is multiplied by
    /// 2^16 as well, which cancels the 2^-16 left by `basemulAccumulate` + `montgomeryReduce`.
    /// Input |x| < q; output in (−q, q).
    static func inverseNTT(_ r: UnsafeMutablePointer<Int16>) {
        zetas.withUnsafeBufferPointer { buffer in
            let z = buffer.baseAddress!
            // Sums double per layer: < 2q, 4q, 8q, then reduced to ≤ q/2; again up to 8q, reduced.
            inverseNTTLayer(r, z, len: 2, reduceSums: false)
            inverseNTTLayer(r, z, len: 4, reduceSums: false)
            inverseNTTLayer(r, z, len: 8, reduceSums: true)
            inverseNTTLayer(r, z, len: 16, reduceSums: false)
            inverseNTTLayer(r, z, len: 32, reduceSums: false)
            inverseNTTLayer(r, z, len: 64, reduceSums: true)
            // Last layer with the scaling by R²/128 folded in: both outputs leave through one fqmul.
            let f = invNTTFactor
            let zf = fqmul(z[1], f)
            for j in 0..<128 {
                let t = r[j], u = r[j + 128]
                r[j] = fqmul(t &+ u, f)
                r[j + 128] = fqmul(u &- t, zf)
            }
        }
    }

    /// For the NTT-domain vector operand b: cache[i] = b[2i+1] · γᵢ (the odd half of each degree-1
    /// product already multiplied by its twist), so `basemulAccumulate` needs no extra reduction per term.
    static func mulCache(_ b: UnsafePointer<Int16>, into cache: UnsafeMutablePointer<Int16>) {
        zetas.withUnsafeBufferPointer { z in
            for i in 0..<64 {
                let zeta = z[64 + i]
                cache[2 * i] = fqmul(b[4 * i + 1], zeta)
                cache[2 * i + 1] = fqmul(b[4 * i + 3], 0 &- zeta)
            }
        }
    }

    /// acc += a ∘ b in the NTT domain (FIPS 203 Alg. 11/12), unreduced in 32-bit lanes.
    /// Bound: |a| < 2^12, |b|, |cache| < q, at most 8 terms per lane, so |acc| < q·2^15 for any k ≤ 4.
    @inline(__always)
    static func basemulAccumulate(
        _ acc: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int16>,
        _ b: UnsafePointer<Int16>, _ cache: UnsafePointer<Int16>
    ) {
        for i in 0..<128 {
            let a0 = Int32(a[2 * i]), a1 = Int32(a[2 * i + 1])
            let b0 = Int32(b[2 * i]), b1 = Int32(b[2 * i + 1])
            let c = Int32(cache[i])
            acc[2 * i] = acc[2 * i] &+ a0 &* b0 &+ a1 &* c
            acc[2 * i + 1] = acc[2 * i + 1] &+ a0 &* b1 &+ a1 &* b0
        }
    }

    /// r = acc · 2^-16 mod q, each result in (−q, q).
    @inline(__always)
    static func reduceAccumulator(_ acc: UnsafePointer<Int32>, into r: UnsafeMutablePointer<Int16>) {
        for i in 0..<256 { r[i] = montgomeryReduce(acc[i]) }
    }

    // MARK: Dispatch between the portable code above and the AVX2 kernels (bit-identical)

    /// Forward NTT on the given kernel level.
    @inline(__always)
    static func ntt(_ r: UnsafeMutablePointer<Int16>, _ level: PQKernels.Level) {
        if level == .portable { ntt(r) } else { fs_mlkem_ntt(r) }
    }

    /// Inverse NTT on the given kernel level.
    @inline(__always)
    static func inverseNTT(_ r: UnsafeMutablePointer<Int16>, _ level: PQKernels.Level) {
        if level == .portable { inverseNTT(r) } else { fs_mlkem_invntt(r) }
    }

    /// SampleNTT's rejection step on the given kernel level (`rejectionSample` in MLKEMEncoding.swift).
    @inline(__always)
    static func rejectionSample(
        _ bytes: UnsafePointer<UInt8>, length: Int, into r: UnsafeMutablePointer<Int16>, count: Int, _ level: PQKernels.Level
    ) -> Int {
        guard level == .portable else { return Int(fs_mlkem_rej_uniform(r, Int32(count), bytes, Int32(length))) }
        return rejectionSample(bytes, length: length, into: r, count: count)
    }

    /// r = Σ_{j<k} a_j ∘ b_j, reduced (k polynomials each at a and b, `cache` from `mulCache` of each b_j).
    @inline(__always)
    static func basemulSum(
        _ r: UnsafeMutablePointer<Int16>, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>,
        _ cache: UnsafePointer<Int16>, k: Int, _ level: PQKernels.Level
    ) {
        guard level == .portable else {
            fs_mlkem_basemul_sum(r, a, b, cache, Int32(k))
            return
        }
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 256) { buffer in
            let acc = buffer.baseAddress!
            acc.initialize(repeating: 0, count: 256)
            for j in 0..<k { basemulAccumulate(acc, a + 256 * j, b + 256 * j, cache + 128 * j) }
            reduceAccumulator(acc, into: r)
        }
    }
}
