import CFaceSealPQ

/// The pseudorandom samplers of FIPS 204 §7.3 (RejNTTPoly, RejBoundedPoly, ExpandA, ExpandS, ExpandMask,
/// SampleInBall) and the SHAKE256 helper H.
enum MLDSASampling {
    /// H(pieces…, count) = SHAKE256 over the concatenation, written to `output`. The state is wiped after:
    /// it would give the input back (the permutation is invertible), and inputs here include K and ξ.
    @inline(__always)
    static func shake256(
        _ pieces: UnsafeRawBufferPointer..., into output: UnsafeMutableRawBufferPointer, level: PQKernels.Level
    ) {
        var sponge = KeccakSponge.shake256(level)
        for piece in pieces { sponge.absorb(piece) }
        sponge.squeeze(into: output)
        sponge.zeroize()
    }

    /// ExpandA (Alg. 32): Â[r][s] = RejNTTPoly(ρ ‖ s ‖ r), k×l polynomials row-major, four entries
    /// side by side. ρ is public.
    static func expandA(
        rho: UnsafeRawBufferPointer, k: Int, l: Int, into matrix: UnsafeMutablePointer<Int32>,
        level: PQKernels.Level
    ) {
        let rate = KeccakSponge.shake128Rate
        // Five SHAKE128 blocks hold 280 candidates; fewer than 256 survive with probability < 2^-40.
        let firstBlocks = 5, outStride = firstBlocks * rate
        let entries = k * l
        withUnsafeTemporaryAllocation(byteCount: 4 * 34 + 4 * outStride, alignment: 8) { scratch in
            let input = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let output = input + 4 * 34
            for batch in stride(from: 0, to: entries, by: 4) {
                let lanes = min(4, entries - batch)
                for lane in 0..<4 {
                    let entry = batch + min(lane, lanes - 1)
                    let seed = input + 34 * lane
                    UnsafeMutableRawPointer(seed).copyMemory(from: rho.baseAddress!, byteCount: 32)
                    seed[32] = UInt8(truncatingIfNeeded: entry % l)
                    seed[33] = UInt8(truncatingIfNeeded: entry / l)
                }
                KeccakX4.with(rate: rate, level: level) { sponge in
                    sponge.absorb(input, stride: 34, count: 34)
                    sponge.sampleUntilFull(lanes: lanes, firstBlocks: firstBlocks, output: output) {
                        lane, filled, bytes, length in
                        rejectUniform(
                            matrix + 256 * (batch + lane), filled: filled,
                            stream: UnsafeRawBufferPointer(start: bytes, count: length), level)
                    }
                }
            }
        }
    }

    /// Parses 3-byte candidates < q into `polynomial[filled...]`; returns the new count.
    @inline(__always)
    static func rejectUniform(
        _ polynomial: UnsafeMutablePointer<Int32>, filled: Int, stream: UnsafeRawBufferPointer, _ level: PQKernels.Level
    ) -> Int {
        guard level == .portable else {
            return Int(fs_mldsa_rej_uniform(
                polynomial, Int32(filled), stream.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(stream.count)))
        }
        var count = filled
        var position = 0
        let bytes = stream.baseAddress!.assumingMemoryBound(to: UInt8.self)
        while count < 256 && position + 3 <= stream.count {
            let value = Int32(bytes[position]) | Int32(bytes[position + 1]) << 8
                | Int32(bytes[position + 2] & 0x7F) << 16
            position += 3
            polynomial[count] = value
            count += Int((value &- MLDSAField.q) >> 31) & 1
        }
        return count
    }

    /// ExpandS (Alg. 33): polynomial i of `vector` is RejBoundedPoly(ρ′ ‖ (firstNonce + i)), four at a
    /// time (s1 is nonces 0..<l, s2 nonces l..<l+k). Candidates are written unconditionally and the count
    /// advanced by the accept bit, so the only secret-dependent timing is the number of SHAKE blocks,
    /// which FIPS 204 permits.
    static func expandS(
        rhoPrime: UnsafeRawBufferPointer, eta: Int32, count: Int, firstNonce: Int,
        into vector: UnsafeMutablePointer<Int32>, level: PQKernels.Level
    ) {
        let rate = KeccakSponge.shake256Rate
        let firstBlocks = eta == 2 ? 1 : 2, outStride = 2 * rate
        withUnsafeTemporaryAllocation(byteCount: 4 * 66 + 4 * outStride, alignment: 8) { scratch in
            let input = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let output = input + 4 * 66
            for batch in stride(from: 0, to: count, by: 4) {
                let lanes = min(4, count - batch)
                writeSeeds(input, seed: rhoPrime, firstNonce: firstNonce + batch, lanes: lanes)
                KeccakX4.with(rate: rate, level: level) { sponge in
                    sponge.absorb(input, stride: 66, count: 66)
                    sponge.sampleUntilFull(lanes: lanes, firstBlocks: firstBlocks, output: output) {
                        lane, filled, bytes, length in
                        rejectBounded(
                            vector + 256 * (batch + lane), filled: filled, eta: eta,
                            stream: UnsafeRawBufferPointer(start: bytes, count: length))
                    }
                }
            }
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    @inline(__always)
    private static func rejectBounded(
        _ polynomial: UnsafeMutablePointer<Int32>, filled: Int, eta: Int32, stream: UnsafeRawBufferPointer
    ) -> Int {
        var count = filled
        var position = 0
        let bytes = stream.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if eta == 2 {
            while count < 256 && position < stream.count {
                let byte = Int32(bytes[position])
                position += 1
                let low = byte & 0x0F
                let high = byte >> 4
                // b mod 5 for b < 15 without a division: b − ⌊205b/1024⌋·5.
                polynomial[count] = 2 &- (low &- ((205 &* low) >> 10) &* 5)
                count += Int((low &- 15) >> 31) & 1
                if count < 256 {
                    polynomial[count] = 2 &- (high &- ((205 &* high) >> 10) &* 5)
                    count += Int((high &- 15) >> 31) & 1
                }
            }
        } else {
            while count < 256 && position < stream.count {
                let byte = Int32(bytes[position])
                position += 1
                let low = byte & 0x0F
                let high = byte >> 4
                polynomial[count] = 4 &- low
                count += Int((low &- 9) >> 31) & 1
                if count < 256 {
                    polynomial[count] = 4 &- high
                    count += Int((high &- 9) >> 31) & 1
                }
            }
        }
        return count
    }

    /// The four 66-byte XOF inputs seed ‖ nonce (two bytes, little-endian) of a batch at `input`; lanes past
    /// `lanes` repeat the last nonce (their output is not used).
    private static func writeSeeds(
        _ input: UnsafeMutablePointer<UInt8>, seed: UnsafeRawBufferPointer, firstNonce: Int, lanes: Int
    ) {
        for lane in 0..<4 {
            let nonce = firstNonce + min(lane, lanes - 1)
            let bytes = input + 66 * lane
            UnsafeMutableRawPointer(bytes).copyMemory(from: seed.baseAddress!, byteCount: 64)
            bytes[64] = UInt8(truncatingIfNeeded: nonce)
            bytes[65] = UInt8(truncatingIfNeeded: nonce >> 8)
        }
    }

    /// ExpandMask (Alg. 34): y[r] = BitUnpack(H(ρ″ ‖ (κ + r)), γ1 − 1, γ1) for r in 0..<l, four at a time.
    static func expandMask(
        rhoPrimePrime: UnsafeRawBufferPointer, kappa: Int, parameters: MLDSAParameters,
        into vector: UnsafeMutablePointer<Int32>, level: PQKernels.Level
    ) {
        let rate = KeccakSponge.shake256Rate
        let blocks = (parameters.zPolyByteCount + rate - 1) / rate, outStride = blocks * rate
        let l = parameters.l
        withUnsafeTemporaryAllocation(byteCount: 4 * 66 + 4 * outStride, alignment: 8) { scratch in
            let input = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let output = input + 4 * 66
            for batch in stride(from: 0, to: l, by: 4) {
                let lanes = min(4, l - batch)
                writeSeeds(input, seed: rhoPrimePrime, firstNonce: kappa + batch, lanes: lanes)
                KeccakX4.with(rate: rate, level: level) { sponge in
                    sponge.absorb(input, stride: 66, count: 66)
                    sponge.squeeze(blocks: blocks, into: output, stride: outStride)
                }
                for lane in 0..<lanes {
                    MLDSAEncoding.unpack(
                        output + outStride * lane, count: 256, bits: parameters.gamma1Bits, base: parameters.gamma1,
                        sign: -1, into: vector + (batch + lane) * 256)
                }
            }
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    /// SampleInBall (Alg. 29): τ coefficients ±1. Branches and indices depend on c̃ only, which may leak
    /// even for rejected attempts: H is modelled as a random oracle (Dilithium round-3 spec §5.5), the
    /// same position mldsa-native takes.
    static func sampleInBall(
        commitmentHash: UnsafeRawBufferPointer, tau: Int, into c: UnsafeMutablePointer<Int32>, level: PQKernels.Level
    ) {
        c.initialize(repeating: 0, count: 256)
        var sponge = KeccakSponge.shake256(level)
        sponge.absorb(commitmentHash)
        withUnsafeTemporaryAllocation(byteCount: KeccakSponge.shake256Rate, alignment: 8) { block in
            sponge.squeeze(into: block)
            var signs: UInt64 = 0
            for i in 0..<8 { signs |= UInt64(block[i]) << UInt64(8 * i) }
            var position = 8
            for i in (256 - tau)..<256 {
                var j: Int
                repeat {
                    if position == block.count {
                        sponge.squeeze(into: block)
                        position = 0
                    }
                    j = Int(block[position])
                    position += 1
                } while j > i
                c[i] = c[j]
                c[j] = 1 - 2 * Int32(signs & 1)
                signs >>= 1
            }
        }
    }
}
