import CFaceSealPQ

/// Arithmetic modulo q = 2^23 − 2^13 + 1 on `Int32` lanes, and the number-theoretic transform.
///
/// Everything here is branch-free and table lookups are indexed by loop counters only, so the time taken
/// does not depend on secret coefficients. Montgomery form uses R = 2^32.
enum MLDSAField {
    static let q: Int32 = 8_380_417
    /// q^−1 mod 2^32.
    static let qInverse: Int32 = 58_728_449
    /// Number of coefficients of a polynomial.
    static let n = 256
    /// Dropped bits of t (FIPS 204 d).
    static let d = 13

    /// a·R^−1 mod q for |a| ≤ 2^31·q, result in (−q, q).
    @inline(__always)
    static func montgomeryReduce(_ a: Int64) -> Int32 {
        let t = Int32(truncatingIfNeeded: a) &* qInverse
        return Int32(truncatingIfNeeded: (a &- Int64(t) &* Int64(q)) >> 32)
    }

    /// A representative of a mod q in [−6283008, 6283008] for a ≤ 2^31 − 2^22 − 1.
    @inline(__always)
    static func reduce32(_ a: Int32) -> Int32 {
        let t = (a &+ (1 << 22)) >> 23
        return a &- t &* q
    }

    /// Adds q when a is negative (branch-free).
    @inline(__always)
    static func conditionalAddQ(_ a: Int32) -> Int32 {
        a &+ ((a >> 31) & q)
    }

    /// ζ^brv8(i) mod q for ζ = 1753 (FIPS 204 Appendix B), centred, as `Double` for the NTT (entry 0 unused).
    static let zetas: [Double] = {
        var table = [Double](repeating: 0, count: 256)
        let modulus = Int64(q)
        func power(_ base: Int64, _ exponent: Int) -> Int64 {
            var result: Int64 = 1
            var b = base % modulus
            var e = exponent
            while e > 0 {
                if e & 1 == 1 { result = result * b % modulus }
                b = b * b % modulus
                e >>= 1
            }
            return result
        }
        for i in 1..<256 {
            var reversed = 0
            for bit in 0..<8 where i & (1 << bit) != 0 { reversed |= 1 << (7 - bit) }
            var z = power(1753, reversed)
            if z > modulus / 2 { z -= modulus }
            table[i] = Double(z)
        }
        return table
    }()

    // The NTTs run on `Double` lanes: every product of two coefficients (< 2^50 here) is exact in a
    // double, and baseline x86-64 (SSE2) multiplies two doubles per instruction where it has no
    // packed signed 32×32→64-bit multiply. Reduction: r = t − round(t/q)·q, rounding by adding and
    // subtracting 1.5·2^52, all exact and branch-free (integer-valued doubles, never subnormal). Under a
    // non-default FPU rounding mode the quotient may be off by one: results stay exact and congruent,
    // and the bounds below at most double, still inside every caller's limits.
    private static let qDouble = Double(q)
    private static let qInverseDouble = 1.0 / Double(q)
    private static let roundingConstant = 6_755_399_441_055_744.0

    /// t mod± q for an integer-valued |t| < 2^51; result |r| ≤ q/2 + 1.
    @inline(__always)
    private static func reduce(_ t: Double) -> Double {
        let quotient = (t * qInverseDouble + roundingConstant) - roundingConstant
        return t - quotient * qDouble
    }

    /// The integer value of an integer-valued double of magnitude < 2^31, without a trapping conversion.
    @inline(__always)
    private static func toInt32(_ x: Double) -> Int32 {
        Int32(truncatingIfNeeded: (x + roundingConstant).bitPattern)
    }

    /// Forward NTT in place (FIPS 204 Alg. 41). Input |a| < q; output |a| < 5q, not reduced.
    static func ntt(_ a: UnsafeMutablePointer<Int32>) {
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 256) { buffer in
            let x = buffer.baseAddress!
            for i in 0..<256 { x[i] = Double(a[i]) }
            zetas.withUnsafeBufferPointer { zetaBuffer in
                let zeta = zetaBuffer.baseAddress!
                var k = 0
                var length = 128
                while length >= 8 {
                    var start = 0
                    while start < 256 {
                        k += 1
                        forwardButterflies(x + start, length: length, zeta: zeta[k])
                        start += 2 * length
                    }
                    length >>= 1
                }
                // Fixed trip counts for the short layers, which the compiler unrolls.
                for start in stride(from: 0, to: 256, by: 8) {
                    k += 1
                    forwardButterflies(x + start, length: 4, zeta: zeta[k])
                }
                for start in stride(from: 0, to: 256, by: 4) {
                    k += 1
                    forwardButterflies(x + start, length: 2, zeta: zeta[k])
                }
                for start in stride(from: 0, to: 256, by: 2) {
                    k += 1
                    forwardButterflies(x + start, length: 1, zeta: zeta[k])
                }
            }
            for i in 0..<256 { a[i] = toInt32(x[i]) }
            // The lanes held (possibly secret) coefficients.
            MLDSAWipe.wipe(UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Each layer adds at most q/2 + 1 to a coefficient: |a| < q + 8·(q/2 + 1) < 5q after eight.
    @inline(__always)
    private static func forwardButterflies(_ low: UnsafeMutablePointer<Double>, length: Int, zeta: Double) {
        let high = low + length
        for j in 0..<length {
            let t = reduce(zeta * high[j])
            let u = low[j]
            high[j] = u - t
            low[j] = u + t
        }
    }

    /// Gentleman–Sande butterflies; `reduceSums` brings the growing sums back to |a| ≤ q/2 + 1.
    @inline(__always)
    private static func inverseButterflies(
        _ low: UnsafeMutablePointer<Double>, length: Int, zeta: Double, reduceSums: Bool
    ) {
        let high = low + length
        for j in 0..<length {
            let t = low[j]
            let u = high[j]
            low[j] = reduceSums ? reduce(t + u) : t + u
            high[j] = reduce(zeta * (t - u))
        }
    }

    /// Forward NTT on the given kernel level (the AVX2 kernel computes the same bits).
    @inline(__always)
    static func ntt(_ a: UnsafeMutablePointer<Int32>, _ level: PQKernels.Level) {
        if level == .portable { ntt(a) } else { fs_mldsa_ntt(a) }
    }

    /// Inverse NTT times 2^32 on the given kernel level.
    @inline(__always)
    static func inverseNTTToMontgomery(_ a: UnsafeMutablePointer<Int32>, _ level: PQKernels.Level) {
        if level == .portable { inverseNTTToMontgomery(a) } else { fs_mldsa_invntt(a) }
    }

    /// Inverse NTT in place, times R = 2^32 (FIPS 204 Alg. 42, "to Montgomery": the pointwise products
    /// before it are Montgomery products, which divide by R). Input |a| < q; output |a| ≤ q/2 + 1.
    static func inverseNTTToMontgomery(_ a: UnsafeMutablePointer<Int32>) {
        // R/256 mod q.
        let factor = Double((Int64(1) << 32) % Int64(q) * 8_347_681 % Int64(q))
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 256) { buffer in
            let x = buffer.baseAddress!
            for i in 0..<256 { x[i] = Double(a[i]) }
            zetas.withUnsafeBufferPointer { zetaBuffer in
                let zeta = zetaBuffer.baseAddress!
                var k = 256
                for start in stride(from: 0, to: 256, by: 2) {
                    k -= 1
                    inverseButterflies(x + start, length: 1, zeta: -zeta[k], reduceSums: false)
                }
                for start in stride(from: 0, to: 256, by: 4) {
                    k -= 1
                    inverseButterflies(x + start, length: 2, zeta: -zeta[k], reduceSums: false)
                }
                for start in stride(from: 0, to: 256, by: 8) {
                    k -= 1
                    inverseButterflies(x + start, length: 4, zeta: -zeta[k], reduceSums: false)
                }
                // Sums double per layer: ≤ 16q after the length-8 layer, reduced in the length-16 one,
                // ≤ 4q before the last; every product stays below 16q² < 2^50.
                var length = 8
                while length < 256 {
                    var start = 0
                    while start < 256 {
                        k -= 1
                        inverseButterflies(x + start, length: length, zeta: -zeta[k], reduceSums: length == 16)
                        start += 2 * length
                    }
                    length <<= 1
                }
            }
            for i in 0..<256 { a[i] = toInt32(reduce(x[i] * factor)) }
            MLDSAWipe.wipe(UnsafeMutableRawBufferPointer(buffer))
        }
    }
}

/// Whole-polynomial helpers over raw `Int32` storage (256 coefficients each).
enum MLDSAPoly {
    @inline(__always)
    static func reduce(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { a[i] = MLDSAField.reduce32(a[i]) }
    }

    @inline(__always)
    static func conditionalAddQ(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { a[i] = MLDSAField.conditionalAddQ(a[i]) }
    }

    /// c = a ∘ b · R^−1 for one polynomial in NTT form.
    @inline(__always)
    static func pointwiseMontgomery(
        _ c: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int32>, _ b: UnsafePointer<Int32>, _ level: PQKernels.Level
    ) {
        guard level == .portable else { return fs_mldsa_matvec(c, a, b, 1, 1) }
        for i in 0..<256 { c[i] = MLDSAField.montgomeryReduce(Int64(a[i]) &* Int64(b[i])) }
    }

    /// w = Â·v·R^−1 in NTT form: `matrix` is k×l polynomials row-major, `vector` l polynomials.
    /// Products are summed in 64 bits and reduced once (l·9q² stays far below 2^31·q).
    static func matrixVectorMontgomery(
        _ w: UnsafeMutablePointer<Int32>, matrix: UnsafePointer<Int32>, vector: UnsafePointer<Int32>, k: Int, l: Int,
        level: PQKernels.Level
    ) {
        guard level == .portable else { return fs_mldsa_matvec(w, matrix, vector, Int32(k), Int32(l)) }
        withUnsafeTemporaryAllocation(of: Int64.self, capacity: 256) { accumulator in
            let acc = accumulator.baseAddress!
            for row in 0..<k {
                let rowBase = matrix + row * l * 256
                for i in 0..<256 { acc[i] = Int64(rowBase[i]) &* Int64(vector[i]) }
                for column in 1..<l {
                    let a = rowBase + column * 256
                    let v = vector + column * 256
                    for i in 0..<256 { acc[i] &+= Int64(a[i]) &* Int64(v[i]) }
                }
                let out = w + row * 256
                for i in 0..<256 { out[i] = MLDSAField.montgomeryReduce(acc[i]) }
            }
        }
    }

    /// 1 if some |a[i]| ≥ bound, else 0; a must be reduced (|a| < q). Branch-free over all coefficients.
    @inline(__always)
    static func exceedsNorm(_ a: UnsafePointer<Int32>, count: Int, bound: Int32) -> Bool {
        var flag: Int32 = 0
        for i in 0..<count {
            let x = a[i]
            let absolute = x &- ((x >> 31) & (x &<< 1))
            flag |= (bound &- 1 &- absolute)
        }
        return flag < 0
    }
}
