// Byte encodings, compression and noise sampling of FIPS 203 §4.2.1 and §4.2.2, branch-free on secrets.
//
// Compress_d(x) = round(2^d · x / q) is computed as ((x << d) + (q−1)/2) · M >> s with M = ⌈2^s / q⌉;
// the constants were chosen so the result equals the exact rounding for every x in [0, q) (a test checks
// all of them), so no division by q ever runs on a secret.

extension MLKEMPoly {
    /// ByteEncode₁₂ of a polynomial with coefficients in (−q, q) (mapped to [0, q) first): 384 bytes.
    static func encode12(_ a: UnsafePointer<Int16>, into out: UnsafeMutablePointer<UInt8>) {
        for i in 0..<128 {
            let t0 = UInt16(bitPattern: canonical(a[2 * i]))
            let t1 = UInt16(bitPattern: canonical(a[2 * i + 1]))
            out[3 * i] = UInt8(truncatingIfNeeded: t0)
            out[3 * i + 1] = UInt8(truncatingIfNeeded: (t0 >> 8) | (t1 << 4))
            out[3 * i + 2] = UInt8(truncatingIfNeeded: t1 >> 4)
        }
    }

    /// ByteDecode₁₂ of 384 bytes: coefficients in [0, 4096), not reduced mod q (the arithmetic is
    /// linear mod q and its bounds allow 2^12).
    static func decode12(_ bytes: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
        for i in 0..<128 {
            let b0 = UInt16(bytes[3 * i]), b1 = UInt16(bytes[3 * i + 1]), b2 = UInt16(bytes[3 * i + 2])
            r[2 * i] = Int16(bitPattern: b0 | ((b1 & 0x0F) << 8))
            r[2 * i + 1] = Int16(bitPattern: (b1 >> 4) | (b2 << 4))
        }
    }

    /// True when every 12-bit value in 384 bytes is < q, i.e. ByteEncode₁₂(ByteDecode₁₂(bytes)) == bytes
    /// (the FIPS 203 §7.2 modulus check). Runs on public data; still branch-free to keep it simple and fast.
    static func isCanonical12(_ bytes: UnsafePointer<UInt8>) -> Bool {
        var bad: UInt16 = 0
        for i in 0..<128 {
            let b0 = UInt16(bytes[3 * i]), b1 = UInt16(bytes[3 * i + 1]), b2 = UInt16(bytes[3 * i + 2])
            let t0 = b0 | ((b1 & 0x0F) << 8)
            let t1 = (b1 >> 4) | (b2 << 4)
            // (q − 1 − t) has its top bit set exactly when t ≥ q.
            bad |= (UInt16(3328) &- t0) | (UInt16(3328) &- t1)
        }
        return bad & 0x8000 == 0
    }

    /// Compress_d for d ∈ {1, 4, 5} of x in (−q, q).
    @inline(__always)
    static func compressSmall(_ x: Int16, bits d: UInt32) -> UInt32 {
        let c = UInt32(UInt16(bitPattern: canonical(x)))
        return ((((c << d) &+ 1664) &* 315) >> 20) & ((1 << d) &- 1)
    }

    /// Compress_d for d ∈ {10, 11} of x in (−q, q).
    @inline(__always)
    static func compressLarge(_ x: Int16, bits d: UInt64) -> UInt64 {
        let c = UInt64(UInt16(bitPattern: canonical(x)))
        return ((((c << d) &+ 1664) &* 161_271) >> 29) & ((1 << d) &- 1)
    }

    /// Decompress_d(y) = round(q · y / 2^d).
    @inline(__always)
    static func decompress(_ y: UInt32, bits d: UInt32) -> Int16 {
        Int16(truncatingIfNeeded: (y &* 3329 &+ (1 << (d &- 1))) >> d)
    }

    /// ByteEncode_d(Compress_d(a)) for d ∈ {4, 5, 10, 11}: 32·d bytes.
    static func compress(_ a: UnsafePointer<Int16>, bits d: Int, into out: UnsafeMutablePointer<UInt8>) {
        switch d {
        case 4:
            for i in 0..<128 {
                let t0 = compressSmall(a[2 * i], bits: 4), t1 = compressSmall(a[2 * i + 1], bits: 4)
                out[i] = UInt8(truncatingIfNeeded: t0 | (t1 << 4))
            }
        case 5:
            for i in 0..<32 {
                var t: UInt64 = 0
                for j in 0..<8 { t |= UInt64(compressSmall(a[8 * i + j], bits: 5)) << (5 * j) }
                for j in 0..<5 { out[5 * i + j] = UInt8(truncatingIfNeeded: t >> (8 * j)) }
            }
        case 10:
            for i in 0..<64 {
                var t: UInt64 = 0
                for j in 0..<4 { t |= compressLarge(a[4 * i + j], bits: 10) << (10 * j) }
                for j in 0..<5 { out[5 * i + j] = UInt8(truncatingIfNeeded: t >> (8 * j)) }
            }
        default:  // 11
            for i in 0..<32 {
                var lo: UInt64 = 0, hi: UInt64 = 0
                for j in 0..<5 { lo |= compressLarge(a[8 * i + j], bits: 11) << (11 * j) }
                let t5 = compressLarge(a[8 * i + 5], bits: 11)
                lo |= t5 << 55
                hi = t5 >> 9
                for j in 6..<8 { hi |= compressLarge(a[8 * i + j], bits: 11) << (11 * j - 64) }
                for j in 0..<8 { out[11 * i + j] = UInt8(truncatingIfNeeded: lo >> (8 * j)) }
                for j in 0..<3 { out[11 * i + 8 + j] = UInt8(truncatingIfNeeded: hi >> (8 * j)) }
            }
        }
    }

    /// Decompress_d(ByteDecode_d(bytes)) for d ∈ {4, 5, 10, 11}: coefficients in [0, q].
    static func decompress(_ bytes: UnsafePointer<UInt8>, bits d: Int, into r: UnsafeMutablePointer<Int16>) {
        switch d {
        case 4:
            for i in 0..<128 {
                let b = UInt32(bytes[i])
                r[2 * i] = decompress(b & 0x0F, bits: 4)
                r[2 * i + 1] = decompress(b >> 4, bits: 4)
            }
        case 5:
            for i in 0..<32 {
                var t: UInt64 = 0
                for j in 0..<5 { t |= UInt64(bytes[5 * i + j]) << (8 * j) }
                for j in 0..<8 {
                    r[8 * i + j] = decompress(UInt32(truncatingIfNeeded: (t >> (5 * j)) & 0x1F), bits: 5)
                }
            }
        case 10:
            for i in 0..<64 {
                var t: UInt64 = 0
                for j in 0..<5 { t |= UInt64(bytes[5 * i + j]) << (8 * j) }
                for j in 0..<4 {
                    r[4 * i + j] = decompress(UInt32(truncatingIfNeeded: (t >> (10 * j)) & 0x3FF), bits: 10)
                }
            }
        default:  // 11
            for i in 0..<32 {
                var lo: UInt64 = 0, hi: UInt64 = 0
                for j in 0..<8 { lo |= UInt64(bytes[11 * i + j]) << (8 * j) }
                for j in 0..<3 { hi |= UInt64(bytes[11 * i + 8 + j]) << (8 * j) }
                for j in 0..<5 {
                    r[8 * i + j] = decompress(UInt32(truncatingIfNeeded: (lo >> (11 * j)) & 0x7FF), bits: 11)
                }
                r[8 * i + 5] = decompress(UInt32(truncatingIfNeeded: ((lo >> 55) | (hi << 9)) & 0x7FF), bits: 11)
                for j in 6..<8 {
                    r[8 * i + j] = decompress(UInt32(truncatingIfNeeded: (hi >> (11 * j - 64)) & 0x7FF), bits: 11)
                }
            }
        }
    }

    /// Decompress₁(ByteDecode₁(m)) for the 32-byte message: bit → 0 or ⌈q/2⌋ = 1665 via a mask.
    static func fromMessage(_ m: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
        for i in 0..<32 {
            let byte = Int16(m[i])
            for j in 0..<8 {
                let mask = 0 &- ((byte >> j) & 1)
                r[8 * i + j] = mask & 1665
            }
        }
    }

    /// ByteEncode₁(Compress₁(a)): the 32-byte message.
    static func toMessage(_ a: UnsafePointer<Int16>, into m: UnsafeMutablePointer<UInt8>) {
        for i in 0..<32 {
            var byte: UInt32 = 0
            for j in 0..<8 { byte |= compressSmall(a[8 * i + j], bits: 1) << j }
            m[i] = UInt8(truncatingIfNeeded: byte)
        }
    }

    /// SamplePolyCBD_η (FIPS 203 Alg. 8) for η ∈ {2, 3} from 64·η bytes of PRF output.
    static func sampleCBD(_ bytes: UnsafePointer<UInt8>, eta: Int, into r: UnsafeMutablePointer<Int16>) {
        if eta == 2 {
            for i in 0..<32 {
                let t = UInt32(bytes[4 * i]) | UInt32(bytes[4 * i + 1]) << 8
                    | UInt32(bytes[4 * i + 2]) << 16 | UInt32(bytes[4 * i + 3]) << 24
                let d = (t & 0x5555_5555) &+ ((t >> 1) & 0x5555_5555)
                for j in 0..<8 {
                    let a = Int16(truncatingIfNeeded: (d >> (4 * j)) & 3)
                    let b = Int16(truncatingIfNeeded: (d >> (4 * j + 2)) & 3)
                    r[8 * i + j] = a &- b
                }
            }
        } else {
            for i in 0..<64 {
                let t = UInt32(bytes[3 * i]) | UInt32(bytes[3 * i + 1]) << 8 | UInt32(bytes[3 * i + 2]) << 16
                let d = (t & 0x0024_9249) &+ ((t >> 1) & 0x0024_9249) &+ ((t >> 2) & 0x0024_9249)
                for j in 0..<4 {
                    let a = Int16(truncatingIfNeeded: (d >> (6 * j)) & 7)
                    let b = Int16(truncatingIfNeeded: (d >> (6 * j + 3)) & 7)
                    r[4 * i + j] = a &- b
                }
            }
        }
    }

    /// SampleNTT's rejection step (FIPS 203 Alg. 7) over public XOF output: appends coefficients < q
    /// to r starting at `count`, returns the new count (≤ 256).
    @inline(__always)
    static func rejectionSample(
        _ bytes: UnsafePointer<UInt8>, length: Int, into r: UnsafeMutablePointer<Int16>, count: Int
    ) -> Int {
        var ctr = count
        var pos = 0
        // Main loop without data-dependent branches (a rejection is unpredictable, ~19 % of candidates):
        // store every candidate and advance by (d < q). Needs two free slots, hence ctr ≤ 254.
        while ctr <= 254 && pos + 3 <= length {
            let b0 = UInt32(bytes[pos]), b1 = UInt32(bytes[pos + 1]), b2 = UInt32(bytes[pos + 2])
            pos += 3
            let d1 = b0 | ((b1 & 0x0F) << 8)
            let d2 = (b1 >> 4) | (b2 << 4)
            r[ctr] = Int16(truncatingIfNeeded: d1)
            ctr &+= Int(truncatingIfNeeded: (d1 &- 3329) >> 31)
            r[ctr] = Int16(truncatingIfNeeded: d2)
            ctr &+= Int(truncatingIfNeeded: (d2 &- 3329) >> 31)
        }
        while ctr < 256 && pos + 3 <= length {
            let b0 = UInt16(bytes[pos]), b1 = UInt16(bytes[pos + 1]), b2 = UInt16(bytes[pos + 2])
            pos += 3
            let d1 = b0 | ((b1 & 0x0F) << 8)
            let d2 = (b1 >> 4) | (b2 << 4)
            if d1 < 3329 {
                r[ctr] = Int16(bitPattern: d1)
                ctr += 1
            }
            if d2 < 3329 && ctr < 256 {
                r[ctr] = Int16(bitPattern: d2)
                ctr += 1
            }
        }
        return ctr
    }
}
