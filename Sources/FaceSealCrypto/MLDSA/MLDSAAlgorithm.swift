/// ML-DSA.Sign_internal and ML-DSA.Verify_internal (FIPS 204 Alg. 7 and 8) on prepared key material,
/// plus the message representative μ.
enum MLDSAAlgorithm {
    /// μ = H(tr ‖ prefix ‖ message, 64) written to `mu`. `prefix` is M′'s header (empty for Sign_internal).
    static func messageRepresentative(
        tr: [UInt8], prefix: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer,
        into mu: UnsafeMutableRawBufferPointer, level: PQKernels.Level
    ) {
        var sponge = KeccakSponge.shake256(level)
        sponge.absorb(tr)
        sponge.absorb(prefix)
        sponge.absorb(message)
        sponge.squeeze(into: mu)
    }

    /// Sign_internal from line 7 on, given μ (64 bytes) and rnd (32 bytes). Returns σ.
    static func sign(
        key: MLDSAPrivateKeyMaterial, mu: UnsafeRawBufferPointer, randomness: UnsafeRawBufferPointer
    ) -> [UInt8] {
        let p = key.parameters
        let k = p.k, l = p.l
        let gamma2 = p.gamma2
        let level = PQKernels.active
        var signature = [UInt8](repeating: 0, count: p.signatureByteCount)
        let polynomials = 2 * l + 3 * k + 1
        let byteScratch = 64 + 64 + p.w1PackedByteCount
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: polynomials * 256) { scratch in
            withUnsafeTemporaryAllocation(byteCount: byteScratch, alignment: 8) { bytes in
                let y = scratch.baseAddress!
                let z = y + l * 256
                let w1 = z + l * 256
                let w0 = w1 + k * 256
                let h = w0 + k * 256
                let c = h + k * 256
                let rhoPrimePrime = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<64])
                let commitmentHash = UnsafeMutableRawBufferPointer(rebasing: bytes[64..<(64 + p.commitmentHashByteCount)])
                let w1Packed = UnsafeMutableRawBufferPointer(rebasing: bytes[128...])

                key.expandedEncoding.withUnsafeBytes { encoded in
                    MLDSASampling.shake256(
                        UnsafeRawBufferPointer(rebasing: encoded[32..<64]), randomness, mu, into: rhoPrimePrime, level: level)
                }
                key.secretNTT.withUnsafeBufferPointer { secrets in
                    key.publicKey.matrix.withUnsafeBufferPointer { matrix in
                        let s1Hat = secrets.baseAddress!, s2Hat = s1Hat + l * 256, t0Hat = s2Hat + k * 256
                        var kappa = 0
                        while true {
                            MLDSASampling.expandMask(
                                rhoPrimePrime: UnsafeRawBufferPointer(rhoPrimePrime), kappa: kappa, parameters: p,
                                into: y, level: level)
                            kappa += l
                            z.update(from: y, count: l * 256)
                            for r in 0..<l { MLDSAField.ntt(z + r * 256, level) }
                            MLDSAPoly.matrixVectorMontgomery(w1, matrix: matrix.baseAddress!, vector: z, k: k, l: l, level: level)
                            for r in 0..<k {
                                let w = w1 + r * 256
                                let low = w0 + r * 256
                                MLDSAField.inverseNTTToMontgomery(w, level)
                                for i in 0..<256 {
                                    let (high, lowPart) = MLDSARounding.decompose(
                                        MLDSAField.conditionalAddQ(w[i]), gamma2: gamma2)
                                    w[i] = high
                                    low[i] = lowPart
                                }
                            }
                            MLDSAEncoding.pack(
                                w1, count: k * 256, bits: p.w1Bits, base: 0, sign: 1,
                                into: w1Packed.baseAddress!.assumingMemoryBound(to: UInt8.self))
                            MLDSASampling.shake256(
                                mu, UnsafeRawBufferPointer(w1Packed), into: commitmentHash, level: level)
                            MLDSASampling.sampleInBall(
                                commitmentHash: UnsafeRawBufferPointer(commitmentHash), tau: p.tau, into: c, level: level)
                            MLDSAField.ntt(c, level)

                            // z = y + c·s1
                            for r in 0..<l {
                                let zr = z + r * 256
                                let yr = y + r * 256
                                MLDSAPoly.pointwiseMontgomery(zr, c, s1Hat + r * 256, level)
                                MLDSAField.inverseNTTToMontgomery(zr, level)
                                for i in 0..<256 { zr[i] = MLDSAField.reduce32(zr[i] &+ yr[i]) }
                            }
                            if MLDSAPoly.exceedsNorm(z, count: l * 256, bound: p.gamma1 - p.beta) { continue }

                            // r0 = w0 − c·s2
                            for r in 0..<k {
                                let hr = h + r * 256
                                let low = w0 + r * 256
                                MLDSAPoly.pointwiseMontgomery(hr, c, s2Hat + r * 256, level)
                                MLDSAField.inverseNTTToMontgomery(hr, level)
                                for i in 0..<256 { low[i] = MLDSAField.reduce32(low[i] &- hr[i]) }
                            }
                            if MLDSAPoly.exceedsNorm(w0, count: k * 256, bound: gamma2 - p.beta) { continue }

                            // c·t0
                            for r in 0..<k {
                                let hr = h + r * 256
                                MLDSAPoly.pointwiseMontgomery(hr, c, t0Hat + r * 256, level)
                                MLDSAField.inverseNTTToMontgomery(hr, level)
                                for i in 0..<256 { hr[i] = MLDSAField.reduce32(hr[i]) }
                            }
                            if MLDSAPoly.exceedsNorm(h, count: k * 256, bound: gamma2) { continue }

                            var ones: Int32 = 0
                            for i in 0..<(k * 256) {
                                let hint = MLDSARounding.makeHint(low: w0[i] &+ h[i], high: w1[i], gamma2: gamma2)
                                h[i] = hint
                                ones &+= hint
                            }
                            if ones > Int32(p.omega) { continue }

                            signature.withUnsafeMutableBufferPointer { out in
                                let base = out.baseAddress!
                                UnsafeMutableRawPointer(base).copyMemory(
                                    from: commitmentHash.baseAddress!, byteCount: p.commitmentHashByteCount)
                                let zStart = base + p.commitmentHashByteCount
                                MLDSAEncoding.pack(
                                    z, count: l * 256, bits: p.gamma1Bits, base: p.gamma1, sign: -1, into: zStart)
                                MLDSAEncoding.packHint(
                                    h, k: k, omega: p.omega, into: zStart + l * p.zPolyByteCount)
                            }
                            break
                        }
                    }
                }
                MLDSAWipe.wipe(bytes)
            }
            MLDSAWipe.wipe(UnsafeMutableRawBufferPointer(scratch))
        }
        return signature
    }

    /// Verify_internal from line 7 on, given μ. The signature length must already be checked.
    static func verify(
        key: MLDSAPublicKeyMaterial, mu: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer
    ) -> Bool {
        let p = key.parameters
        let k = p.k, l = p.l
        let level = PQKernels.active
        precondition(signature.count == p.signatureByteCount)
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: (l + 2 * k + 1) * 256) { scratch in
            let z = scratch.baseAddress!
            let w = z + l * 256
            let h = w + k * 256
            let c = h + k * 256
            let sigma = signature.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let zStart = sigma + p.commitmentHashByteCount
            MLDSAEncoding.unpack(zStart, count: l * 256, bits: p.gamma1Bits, base: p.gamma1, sign: -1, into: z)
            guard MLDSAEncoding.unpackHint(zStart + l * p.zPolyByteCount, k: k, omega: p.omega, into: h) else {
                return false
            }
            if MLDSAPoly.exceedsNorm(z, count: l * 256, bound: p.gamma1 - p.beta) { return false }
            let commitmentHash = UnsafeRawBufferPointer(rebasing: signature[0..<p.commitmentHashByteCount])
            MLDSASampling.sampleInBall(commitmentHash: commitmentHash, tau: p.tau, into: c, level: level)
            MLDSAField.ntt(c, level)
            for r in 0..<l { MLDSAField.ntt(z + r * 256, level) }
            key.matrix.withUnsafeBufferPointer { matrix in
                MLDSAPoly.matrixVectorMontgomery(w, matrix: matrix.baseAddress!, vector: z, k: k, l: l, level: level)
            }
            key.t1Shifted.withUnsafeBufferPointer { t1 in
                for r in 0..<k {
                    let wr = w + r * 256
                    let t = t1.baseAddress! + r * 256
                    for i in 0..<256 {
                        wr[i] = MLDSAField.reduce32(
                            wr[i] &- MLDSAField.montgomeryReduce(Int64(c[i]) &* Int64(t[i])))
                    }
                    MLDSAField.inverseNTTToMontgomery(wr, level)
                    let hr = h + r * 256
                    for i in 0..<256 {
                        wr[i] = MLDSARounding.useHint(MLDSAField.conditionalAddQ(wr[i]), hint: hr[i], gamma2: p.gamma2)
                    }
                }
            }
            return withUnsafeTemporaryAllocation(byteCount: p.w1PackedByteCount + 64, alignment: 8) { bytes in
                let packed = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<p.w1PackedByteCount])
                let recomputed = UnsafeMutableRawBufferPointer(
                    rebasing: bytes[p.w1PackedByteCount..<(p.w1PackedByteCount + p.commitmentHashByteCount)])
                MLDSAEncoding.pack(
                    w, count: k * 256, bits: p.w1Bits, base: 0, sign: 1,
                    into: packed.baseAddress!.assumingMemoryBound(to: UInt8.self))
                MLDSASampling.shake256(mu, UnsafeRawBufferPointer(packed), into: recomputed, level: level)
                return recomputed.elementsEqual(commitmentHash)
            }
        }
    }
}
