/// Bit packing of polynomials (FIPS 204 §7.1–7.2: SimpleBitPack, BitPack, HintBitPack and their inverses).
///
/// A coefficient x is stored as `base + sign·x` in `bits` bits: (0, +1) for t1 and w1, (η, −1) for s1/s2,
/// (2^12, −1) for t0, (γ1, −1) for z. The loops depend only on the sizes, never on the values.
enum MLDSAEncoding {
    /// Packs `count` coefficients into `count·bits/8` bytes.
    @inline(__always)
    static func pack(
        _ coefficients: UnsafePointer<Int32>, count: Int, bits: Int, base: Int32, sign: Int32,
        into output: UnsafeMutablePointer<UInt8>
    ) {
        let mask = (UInt64(1) &<< UInt64(bits)) &- 1
        if bits <= 8 && count % 8 == 0 {
            // Eight coefficients make `bits` bytes: one word each, no carried state (w1 is packed per attempt).
            for group in 0..<(count / 8) {
                var word: UInt64 = 0
                for j in 0..<8 {
                    let value = UInt64(UInt32(bitPattern: base &+ sign &* coefficients[8 * group + j])) & mask
                    word |= value &<< UInt64(j * bits)
                }
                for b in 0..<bits { output[group * bits + b] = UInt8(truncatingIfNeeded: word &>> UInt64(8 * b)) }
            }
            return
        }
        var accumulator: UInt64 = 0
        var filled = 0
        var o = 0
        for i in 0..<count {
            let value = UInt32(bitPattern: base &+ sign &* coefficients[i])
            accumulator |= (UInt64(value) & mask) << UInt64(filled)
            filled += bits
            while filled >= 8 {
                output[o] = UInt8(truncatingIfNeeded: accumulator)
                accumulator >>= 8
                filled -= 8
                o += 1
            }
        }
    }

    /// Unpacks `count` coefficients (`bits` ≤ 32) from `count·bits/8` bytes; every bit pattern decodes to
    /// some value. Each coefficient is one unaligned 8-byte load and a shift (a byte loop for the last few,
    /// which never reads past the input): ExpandMask's unpacking was a seventh of signing bit by bit.
    @inline(__always)
    static func unpack(
        _ input: UnsafePointer<UInt8>, count: Int, bits: Int, base: Int32, sign: Int32,
        into coefficients: UnsafeMutablePointer<Int32>
    ) {
        let mask = (UInt64(1) &<< UInt64(bits)) &- 1
        let byteCount = (count * bits + 7) / 8
        let raw = UnsafeRawPointer(input)
        for i in 0..<count {
            let bit = i * bits, byte = bit >> 3
            var word: UInt64 = 0
            if byte + 8 <= byteCount {
                word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: byte, as: UInt64.self))
            } else {
                for j in 0..<(byteCount - byte) { word |= UInt64(input[byte + j]) &<< UInt64(8 * j) }
            }
            let value = Int32(truncatingIfNeeded: (word &>> UInt64(bit & 7)) & mask)
            coefficients[i] = sign &* (value &- base)
        }
    }

    /// Whether any of the first `count` codes exceeds `bound` (s1/s2 codes above 2η are invalid).
    /// Branch-free: the codes are secret.
    static func anyCodeExceeds(
        _ input: UnsafePointer<UInt8>, count: Int, bits: Int, bound: Int32
    ) -> Bool {
        let mask = (UInt64(1) << UInt64(bits)) &- 1
        var accumulator: UInt64 = 0
        var filled = 0
        var o = 0
        var flag: Int32 = 0
        for _ in 0..<count {
            while filled < bits {
                accumulator |= UInt64(input[o]) << UInt64(filled)
                o += 1
                filled += 8
            }
            flag |= bound &- Int32(truncatingIfNeeded: accumulator & mask)
            accumulator >>= UInt64(bits)
            filled -= bits
        }
        return flag < 0
    }

    /// HintBitPack (FIPS 204 Alg. 20): positions of the 1s per polynomial, then the running counts.
    /// The hint is part of the signature, so branching on it leaks nothing.
    static func packHint(
        _ hint: UnsafePointer<Int32>, k: Int, omega: Int, into output: UnsafeMutablePointer<UInt8>
    ) {
        output.initialize(repeating: 0, count: omega + k)
        var index = 0
        for i in 0..<k {
            let polynomial = hint + i * 256
            for j in 0..<256 where polynomial[j] != 0 {
                output[index] = UInt8(j)
                index += 1
            }
            output[omega + i] = UInt8(index)
        }
    }

    /// HintBitUnpack (FIPS 204 Alg. 21) with every malformation check: counts monotone and ≤ ω,
    /// positions strictly increasing within a polynomial, unused slots zero. Returns false on ⊥.
    static func unpackHint(
        _ input: UnsafePointer<UInt8>, k: Int, omega: Int, into hint: UnsafeMutablePointer<Int32>
    ) -> Bool {
        hint.initialize(repeating: 0, count: k * 256)
        var index = 0
        for i in 0..<k {
            let end = Int(input[omega + i])
            if end < index || end > omega { return false }
            let first = index
            while index < end {
                if index > first && input[index - 1] >= input[index] { return false }
                hint[i * 256 + Int(input[index])] = 1
                index += 1
            }
        }
        while index < omega {
            if input[index] != 0 { return false }
            index += 1
        }
        return true
    }
}

/// Rounding (FIPS 204 §7.4), branch-free.
enum MLDSARounding {
    /// Power2Round for a in [0, q): a = a1·2^13 + a0 with a0 in (−2^12, 2^12].
    @inline(__always)
    static func power2Round(_ a: Int32) -> (high: Int32, low: Int32) {
        let high = (a &+ (1 << 12) &- 1) >> 13
        return (high, a &- (high << 13))
    }

    /// Decompose for a in [0, q): a = a1·2γ2 + a0 with a0 in (−γ2, γ2] (the wrap-around case maps a1 to 0).
    @inline(__always)
    static func decompose(_ a: Int32, gamma2: Int32) -> (high: Int32, low: Int32) {
        var high = (a &+ 127) >> 7
        if gamma2 == (MLDSAField.q - 1) / 32 {
            high = (high &* 1025 &+ (1 << 21)) >> 22
            high &= 15
        } else {
            high = (high &* 11275 &+ (1 << 23)) >> 24
            high ^= ((43 &- high) >> 31) & high
        }
        var low = a &- high &* 2 &* gamma2
        low &-= (((MLDSAField.q - 1) / 2 &- low) >> 31) & MLDSAField.q
        return (high, low)
    }

    /// MakeHint on the signer's values: low = w0 − c·s2 + c·t0, high = w1 (1 if the high bits change).
    @inline(__always)
    static func makeHint(low: Int32, high: Int32, gamma2: Int32) -> Int32 {
        let above = Int32(bitPattern: UInt32(bitPattern: gamma2 &- low) >> 31)
        let below = Int32(bitPattern: UInt32(bitPattern: low &+ gamma2) >> 31)
        let x = low &+ gamma2
        let isBoundary = 1 &+ ((x | (0 &- x)) >> 31)
        let highNonZero = Int32(bitPattern: UInt32(bitPattern: high | (0 &- high)) >> 31)
        return above | below | (isBoundary & highNonZero)
    }

    /// UseHint (FIPS 204 Alg. 40) for a in [0, q). Verification only: all inputs are public.
    @inline(__always)
    static func useHint(_ a: Int32, hint: Int32, gamma2: Int32) -> Int32 {
        let (high, low) = decompose(a, gamma2: gamma2)
        if hint == 0 { return high }
        if gamma2 == (MLDSAField.q - 1) / 32 {
            return low > 0 ? (high &+ 1) & 15 : (high &- 1) & 15
        }
        if low > 0 { return high == 43 ? 0 : high + 1 }
        return high == 0 ? 43 : high - 1
    }
}
