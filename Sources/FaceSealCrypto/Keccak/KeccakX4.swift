import CFaceSealPQ

/// Four independent SHAKE sponges stepped together, for the samplers that hash many short seeds
/// (the ML-KEM matrix and noise, ML-DSA's ExpandA, ExpandS and ExpandMask). Each instance absorbs one
/// input shorter than the rate, then squeezes whole blocks. The permutation runs on the AVX2 kernel, or
/// as four scalar permutations on the portable level (same bytes either way).
///
/// The state lives in a 32-byte aligned stack buffer that `with` wipes when the body returns.
struct KeccakX4 {
    /// 100 lanes: lane i of instance j at index 4·i + j.
    private let state: UnsafeMutablePointer<UInt64>
    let rate: Int
    private let level: PQKernels.Level
    private var squeezed = false

    /// Runs `body` with four fresh sponges of the given rate (168: SHAKE128, 136: SHAKE256).
    static func with<R>(rate: Int, level: PQKernels.Level, _ body: (inout KeccakX4) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: 800, alignment: 32) { buffer in
            let state = buffer.baseAddress!.bindMemory(to: UInt64.self, capacity: 100)
            state.initialize(repeating: 0, count: 100)
            var sponge = KeccakX4(state: state, rate: rate, level: level)
            let result = body(&sponge)
            MLKEMMemory.wipe(buffer.baseAddress!, count: 800)
            return result
        }
    }

    private init(state: UnsafeMutablePointer<UInt64>, rate: Int, level: PQKernels.Level) {
        self.state = state
        self.rate = rate
        self.level = level
    }

    /// Absorbs input j = `inputs + j·stride` (`count` < rate bytes each) with SHAKE padding, and permutes.
    mutating func absorb(_ inputs: UnsafePointer<UInt8>, stride: Int, count: Int) {
        precondition(count < rate && !squeezed)
        let bytes = UnsafeMutableRawPointer(state).assumingMemoryBound(to: UInt8.self)
        for j in 0..<4 {
            let input = inputs + j * stride
            for p in 0..<count {
                bytes[32 * (p >> 3) + 8 * j + (p & 7)] ^= input[p]
            }
            bytes[32 * (count >> 3) + 8 * j + (count & 7)] ^= 0x1F
            bytes[32 * ((rate - 1) >> 3) + 8 * j + ((rate - 1) & 7)] ^= 0x80
        }
        permute()
    }

    /// Writes the next `blocks` blocks of each instance's output to `outputs + j·stride`.
    mutating func squeeze(blocks: Int, into outputs: UnsafeMutablePointer<UInt8>, stride: Int) {
        let lanes = rate / 8
        for block in 0..<blocks {
            if squeezed { permute() }
            squeezed = true
            for j in 0..<4 {
                let out = UnsafeMutableRawPointer(outputs + j * stride + block * rate)
                for i in 0..<lanes {
                    out.storeBytes(of: state[4 * i + j], toByteOffset: 8 * i, as: UInt64.self)
                }
            }
        }
    }

    /// Rejection sampling of `lanes` (≤ 4) polynomials from the four output streams, after `absorb`:
    /// `firstBlocks` blocks into `output` (four streams of that many blocks), then one block at a time
    /// while some lane has fewer than 256 coefficients. `sample(lane, filled, bytes, length)` appends the
    /// accepted candidates among `length` bytes to that lane's polynomial and returns its new count.
    mutating func sampleUntilFull(
        lanes: Int, firstBlocks: Int, output: UnsafeMutablePointer<UInt8>,
        _ sample: (_ lane: Int, _ filled: Int, _ bytes: UnsafePointer<UInt8>, _ length: Int) -> Int
    ) {
        let stride = firstBlocks * rate
        squeeze(blocks: firstBlocks, into: output, stride: stride)
        var counts = SIMD4<Int>(repeating: 256)
        for lane in 0..<lanes { counts[lane] = sample(lane, 0, output + stride * lane, stride) }
        while counts.min() < 256 {
            squeeze(blocks: 1, into: output, stride: stride)
            for lane in 0..<lanes where counts[lane] < 256 {
                counts[lane] = sample(lane, counts[lane], output + stride * lane, rate)
            }
        }
    }

    private func permute() {
        if level == .portable {
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 25) { buffer in
                let single = buffer.baseAddress!
                for j in 0..<4 {
                    for i in 0..<25 { single[i] = state[4 * i + j] }
                    keccakF1600(single)
                    for i in 0..<25 { state[4 * i + j] = single[i] }
                }
                MLKEMMemory.wipe(UnsafeMutableRawPointer(single), count: 200)
            }
        } else {
            fs_keccakf1600x4(state, level.code)
        }
    }
}
