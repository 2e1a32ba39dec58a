import Testing
@testable import FaceSealCrypto

/// The vector kernels against the portable Swift code they replace: bit-identical outputs on random
/// inputs across the whole input range each kernel is specified for.
@Suite struct PQKernelTests {
    /// The vector levels this CPU runs (empty on a CPU without AVX2: then only the portable path exists).
    static let vectorLevels = PQKernels.available.filter { $0 > .portable }

    /// A fixed-seed generator (SplitMix64), so a failure reproduces.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int16(in range: ClosedRange<Int16>) -> Int16 {
            Int16(Int(range.lowerBound) + Int(next() % UInt64(Int(range.upperBound) - Int(range.lowerBound) + 1)))
        }
        mutating func int32(in range: ClosedRange<Int32>) -> Int32 {
            Int32(Int64(range.lowerBound) + Int64(next() % UInt64(Int64(range.upperBound) - Int64(range.lowerBound) + 1)))
        }
    }

    @Test func detectionIsConsistent() {
        #expect(PQKernels.available.first == .portable)
        #expect(PQKernels.available.last == PQKernels.supported)
        #expect(PQKernels.$limit.withValue(.portable) { PQKernels.active } == .portable)
    }

    @Test(arguments: vectorLevels)
    func mlkemTransformsMatch(level: PQKernels.Level) {
        var random = Generator(state: 1)
        let q = MLKEMPoly.q
        for _ in 0..<200 {
            let input = (0..<256).map { _ in random.int16(in: (-q + 1)...(q - 1)) }
            var portable = input, vector = input
            portable.withUnsafeMutableBufferPointer { MLKEMPoly.ntt($0.baseAddress!, .portable) }
            vector.withUnsafeMutableBufferPointer { MLKEMPoly.ntt($0.baseAddress!, level) }
            #expect(portable == vector, "NTT")
            portable = input
            vector = input
            portable.withUnsafeMutableBufferPointer { MLKEMPoly.inverseNTT($0.baseAddress!, .portable) }
            vector.withUnsafeMutableBufferPointer { MLKEMPoly.inverseNTT($0.baseAddress!, level) }
            #expect(portable == vector, "inverse NTT")
        }
    }

    @Test(arguments: vectorLevels)
    func mlkemBaseMultiplicationMatches(level: PQKernels.Level) {
        var random = Generator(state: 2)
        let q = MLKEMPoly.q
        for k in 2...4 {
            for _ in 0..<50 {
                let a = (0..<(256 * k)).map { _ in random.int16(in: 0...4095) }
                let b = (0..<(256 * k)).map { _ in random.int16(in: (-q + 1)...(q - 1)) }
                var cache = [Int16](repeating: 0, count: 128 * k)
                b.withUnsafeBufferPointer { bp in
                    cache.withUnsafeMutableBufferPointer { cp in
                        for j in 0..<k { MLKEMPoly.mulCache(bp.baseAddress! + 256 * j, into: cp.baseAddress! + 128 * j) }
                    }
                }
                var portable = [Int16](repeating: 0, count: 256), vector = portable
                portable.withUnsafeMutableBufferPointer {
                    MLKEMPoly.basemulSum($0.baseAddress!, a, b, cache, k: k, .portable)
                }
                vector.withUnsafeMutableBufferPointer { MLKEMPoly.basemulSum($0.baseAddress!, a, b, cache, k: k, level) }
                #expect(portable == vector, "k = \(k)")
            }
        }
    }

    @Test(arguments: vectorLevels)
    func mldsaTransformsMatch(level: PQKernels.Level) {
        var random = Generator(state: 3)
        let q = MLDSAField.q
        for _ in 0..<200 {
            let input = (0..<256).map { _ in random.int32(in: (-q + 1)...(q - 1)) }
            var portable = input, vector = input
            portable.withUnsafeMutableBufferPointer { MLDSAField.ntt($0.baseAddress!, .portable) }
            vector.withUnsafeMutableBufferPointer { MLDSAField.ntt($0.baseAddress!, level) }
            #expect(portable == vector, "NTT")
            portable = input
            vector = input
            portable.withUnsafeMutableBufferPointer { MLDSAField.inverseNTTToMontgomery($0.baseAddress!, .portable) }
            vector.withUnsafeMutableBufferPointer { MLDSAField.inverseNTTToMontgomery($0.baseAddress!, level) }
            #expect(portable == vector, "inverse NTT")
        }
    }

    @Test(arguments: vectorLevels)
    func mldsaMatrixVectorProductMatches(level: PQKernels.Level) {
        var random = Generator(state: 4)
        let q = MLDSAField.q
        for (k, l) in [(4, 4), (6, 5), (8, 7), (1, 1)] {
            // Matrix entries reduced, vector entries up to 9q (an NTT output): the documented bounds.
            let matrix = (0..<(256 * k * l)).map { _ in random.int32(in: (-q + 1)...(q - 1)) }
            let vector = (0..<(256 * l)).map { _ in random.int32(in: (-9 * q)...(9 * q)) }
            var portable = [Int32](repeating: 0, count: 256 * k), vectorResult = portable
            portable.withUnsafeMutableBufferPointer {
                MLDSAPoly.matrixVectorMontgomery($0.baseAddress!, matrix: matrix, vector: vector, k: k, l: l, level: .portable)
            }
            vectorResult.withUnsafeMutableBufferPointer {
                MLDSAPoly.matrixVectorMontgomery($0.baseAddress!, matrix: matrix, vector: vector, k: k, l: l, level: level)
            }
            #expect(portable == vectorResult, "k = \(k), l = \(l)")
        }
    }

    /// Four-way SHAKE against four single sponges, for both rates, several input lengths and block counts.
    @Test(arguments: PQKernels.available)
    func keccakX4MatchesSingleSponges(level: PQKernels.Level) {
        var random = Generator(state: 5)
        for rate in [KeccakSponge.shake128Rate, KeccakSponge.shake256Rate] {
            for count in [0, 1, 33, 34, 66, rate - 1] {
                let stride = 200
                let inputs = (0..<(4 * stride)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let blocks = 3
                var outputs = [UInt8](repeating: 0, count: 4 * blocks * rate)
                inputs.withUnsafeBufferPointer { input in
                    outputs.withUnsafeMutableBufferPointer { output in
                        KeccakX4.with(rate: rate, level: level) { sponge in
                            sponge.absorb(input.baseAddress!, stride: stride, count: count)
                            sponge.squeeze(blocks: 1, into: output.baseAddress!, stride: blocks * rate)
                            sponge.squeeze(blocks: 2, into: output.baseAddress! + rate, stride: blocks * rate)
                        }
                    }
                }
                for j in 0..<4 {
                    var single = rate == KeccakSponge.shake128Rate ? KeccakSponge.shake128() : KeccakSponge.shake256()
                    single.absorb(Array(inputs[(j * stride)..<(j * stride + count)]))
                    let expected = single.squeeze(count: blocks * rate)
                    #expect(Array(outputs[(j * blocks * rate)..<((j + 1) * blocks * rate)]) == expected, "rate \(rate), length \(count), lane \(j)")
                }
            }
        }
    }
}

extension PQKernelTests {
    /// Both rejection samplers on random XOF-like output, from every starting count, with buffers that
    /// reject often (high bits set) and rarely, of every length the samplers are called with.
    @Test(arguments: vectorLevels)
    func rejectionSamplingMatches(level: PQKernels.Level) {
        var random = Generator(state: 6)
        for trial in 0..<400 {
            let bytes = (0..<840).map { _ in
                UInt8(truncatingIfNeeded: random.next()) | (trial % 3 == 0 ? 0xF0 : 0)
            }
            let start = Int(random.next() % 256)
            bytes.withUnsafeBufferPointer { buffer in
                let base = buffer.baseAddress!
                for length in [168, 504] {
                    var portable = [Int16](repeating: -1, count: 256), vector = portable
                    let a = portable.withUnsafeMutableBufferPointer {
                        MLKEMPoly.rejectionSample(base, length: length, into: $0.baseAddress!, count: start, .portable)
                    }
                    let b = vector.withUnsafeMutableBufferPointer {
                        MLKEMPoly.rejectionSample(base, length: length, into: $0.baseAddress!, count: start, level)
                    }
                    #expect(a == b && portable[start..<a] == vector[start..<b], "ML-KEM, start \(start), length \(length)")
                }
                for length in [168, 840] {
                    var portable = [Int32](repeating: -1, count: 256), vector = portable
                    let stream = UnsafeRawBufferPointer(start: base, count: length)
                    let a = portable.withUnsafeMutableBufferPointer {
                        MLDSASampling.rejectUniform($0.baseAddress!, filled: start, stream: stream, .portable)
                    }
                    let b = vector.withUnsafeMutableBufferPointer {
                        MLDSASampling.rejectUniform($0.baseAddress!, filled: start, stream: stream, level)
                    }
                    #expect(a == b && portable[start..<a] == vector[start..<b], "ML-DSA, start \(start), length \(length)")
                }
            }
        }
    }
}
