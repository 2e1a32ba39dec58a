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

    /// ζ^brv8(i)·R mod q for ζ = 1753, centred, as in FIPS 204 Appendix B (entry 0 unused).
    static let zetas: [Int32] = {
        var table = [Int32](repeating: 0, count: 256)
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
        let r = (Int64(1) << 32) % modulus
        for i in 0..<256 {
            var reversed = 0
            for bit in 0..<8 where i & (1 << bit) != 0 { reversed |= 1 << (7 - bit) }
            var z = power(1753, reversed) * r % modulus
            if z > modulus / 2 { z -= modulus }
            table[i] = Int32(z)
        }
        table[0] = 0
        return table
    }()

    /// Forward NTT in place (FIPS 204 Alg. 41). Input |a| < q; output |a| < 9q. No reduction.
    static func ntt(_ a: UnsafeMutablePointer<Int32>) {
        zetas.withUnsafeBufferPointer { zetaBuffer in
            let zeta = zetaBuffer.baseAddress!
            var k = 0
            var length = 128
            while length > 0 {
                var start = 0
                while start < 256 {
                    k += 1
                    let z = Int64(zeta[k])
                    let low = a + start
                    let high = low + length
                    for j in 0..<length {
                        let t = montgomeryReduce(z &* Int64(high[j]))
                        let x = low[j]
                        high[j] = x &- t
                        low[j] = x &+ t
                    }
                    start += 2 * length
                }
                length >>= 1
            }
        }
    }

    /// Inverse NTT in place, multiplying by R on the way (FIPS 204 Alg. 42 with Montgomery factor).
    /// Input |a| < q; output |a| < q.
    static func inverseNTTToMontgomery(_ a: UnsafeMutablePointer<Int32>) {
        // R^2/256 mod q: undoes the final 1/256 and adds one factor R for the following Montgomery products.
        let f: Int64 = 41_978
        zetas.withUnsafeBufferPointer { zetaBuffer in
            let zeta = zetaBuffer.baseAddress!
            var k = 256
            var length = 1
            while length < 256 {
                var start = 0
                while start < 256 {
                    k -= 1
                    let z = -Int64(zeta[k])
                    let low = a + start
                    let high = low + length
                    for j in 0..<length {
                        let t = low[j]
                        let u = high[j]
                        low[j] = t &+ u
                        high[j] = montgomeryReduce(z &* Int64(t &- u))
                    }
                    start += 2 * length
                }
                length <<= 1
            }
        }
        for j in 0..<256 {
            a[j] = montgomeryReduce(f &* Int64(a[j]))
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
        _ c: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int32>, _ b: UnsafePointer<Int32>
    ) {
        for i in 0..<256 { c[i] = MLDSAField.montgomeryReduce(Int64(a[i]) &* Int64(b[i])) }
    }

    /// w = Â·v·R^−1 in NTT form: `matrix` is k×l polynomials row-major, `vector` l polynomials.
    /// Products are summed in 64 bits and reduced once (l·9q² stays far below 2^31·q).
    static func matrixVectorMontgomery(
        _ w: UnsafeMutablePointer<Int32>, matrix: UnsafePointer<Int32>, vector: UnsafePointer<Int32>, k: Int, l: Int
    ) {
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
