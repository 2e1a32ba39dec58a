import CFaceSealPQ

#if _endian(big)
#error("KeccakSponge reads its lanes as little-endian bytes")
#endif

/// A Keccak sponge (FIPS 202): SHA3-256, SHA3-512, SHAKE128 and SHAKE256 over one 1600-bit state.
///
/// Internal to the pure-Swift ML-KEM and ML-DSA, which need incremental squeezing (OpenSSL 3.0 has none)
/// and no per-call allocation. Absorb any number of times, then squeeze any number of times; the first
/// squeeze pads and finalises. The state may hold secret-derived bytes: call `zeroize()` when done.
struct KeccakSponge: Sendable {
    typealias Lanes = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64
    )

    /// SHAKE128's rate in bytes (one squeezed block).
    static let shake128Rate = 168
    /// SHAKE256's rate in bytes (one squeezed block).
    static let shake256Rate = 136

    var lanes: Lanes = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    /// Bytes per block.
    let rate: Int
    let domain: UInt8
    /// Absorbing: bytes of the current block already absorbed. Squeezing: bytes of the current block already read.
    var position = 0
    var squeezing = false

    /// Which permutation runs: the Swift one, or (`.avx512`) lane 0 of the AVX-512VL four-way kernel.
    let level: PQKernels.Level

    init(rate: Int, domain: UInt8, level: PQKernels.Level = .portable) {
        self.rate = rate
        self.domain = domain
        self.level = level
    }

    static func shake128(_ level: PQKernels.Level = .portable) -> KeccakSponge {
        KeccakSponge(rate: shake128Rate, domain: 0x1F, level: level)
    }
    static func shake256(_ level: PQKernels.Level = .portable) -> KeccakSponge {
        KeccakSponge(rate: shake256Rate, domain: 0x1F, level: level)
    }
    static func sha3_256(_ level: PQKernels.Level = .portable) -> KeccakSponge {
        KeccakSponge(rate: 136, domain: 0x06, level: level)
    }
    static func sha3_512(_ level: PQKernels.Level = .portable) -> KeccakSponge {
        KeccakSponge(rate: 72, domain: 0x06, level: level)
    }

    /// Keccak-f[1600] on the state. The AVX2-only level keeps the Swift permutation: the AVX2 four-way
    /// kernel costs about as much for one lane as the scalar code.
    @inline(__always)
    private static func permute(_ state: UnsafeMutablePointer<UInt64>, _ level: PQKernels.Level) {
        if level == .avx512 { fs_keccakf1600x1(state) } else { keccakF1600(state) }
    }

    @inline(__always)
    private mutating func withState<R>(_ body: (UnsafeMutablePointer<UInt64>) -> R) -> R {
        withUnsafeMutablePointer(to: &lanes) { tuple in
            tuple.withMemoryRebound(to: UInt64.self, capacity: 25) { body($0) }
        }
    }

    /// Absorbs `bytes`. Absorbing after the first squeeze is a programming error.
    mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        precondition(!squeezing, "KeccakSponge: absorb after squeeze")
        guard var source = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        let rate = self.rate, level = self.level
        var position = self.position
        withState { state in
            let stateBytes = UnsafeMutableRawPointer(state).assumingMemoryBound(to: UInt8.self)
            while remaining > 0 {
                if position == 0 && remaining >= rate {
                    // Whole blocks: XOR lane by lane.
                    for lane in 0..<(rate / 8) {
                        state[lane] ^= source.loadUnaligned(fromByteOffset: lane * 8, as: UInt64.self)
                    }
                    Self.permute(state, level)
                    source += rate
                    remaining -= rate
                    continue
                }
                let n = min(rate - position, remaining)
                for i in 0..<n {
                    stateBytes[position + i] ^= source.load(fromByteOffset: i, as: UInt8.self)
                }
                position += n
                source += n
                remaining -= n
                if position == rate {
                    Self.permute(state, level)
                    position = 0
                }
            }
        }
        self.position = position
    }

    /// Absorbs `bytes`.
    mutating func absorb(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { absorb($0) }
    }

    /// Pads (domain bits, pad10*1) and permutes; called by the first squeeze.
    private mutating func finalize() {
        let position = self.position, rate = self.rate, domain = self.domain, level = self.level
        withState { state in
            let stateBytes = UnsafeMutableRawPointer(state).assumingMemoryBound(to: UInt8.self)
            stateBytes[position] ^= domain
            stateBytes[rate - 1] ^= 0x80
            Self.permute(state, level)
        }
        self.position = 0
        squeezing = true
    }

    /// Fills `output` with the next bytes of the sponge's output stream.
    mutating func squeeze(into output: UnsafeMutableRawBufferPointer) {
        if !squeezing { finalize() }
        guard var destination = output.baseAddress else { return }
        var remaining = output.count
        let rate = self.rate, level = self.level
        var position = self.position
        withState { state in
            let stateBytes = UnsafeRawPointer(state)
            while remaining > 0 {
                if position == rate {
                    Self.permute(state, level)
                    position = 0
                }
                let n = min(rate - position, remaining)
                destination.copyMemory(from: stateBytes + position, byteCount: n)
                destination += n
                position += n
                remaining -= n
            }
        }
        self.position = position
    }

    /// Returns the next `count` bytes of the output stream.
    mutating func squeeze(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            squeeze(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Overwrites the state with zeros (it may hold secret-derived bytes).
    mutating func zeroize() {
        withState { state in
            let bytes = UnsafeMutableRawBufferPointer(start: state, count: 200)
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
        }
        // A read the optimiser cannot drop keeps the zeroing alive.
        withUnsafeBytes(of: &lanes) { _ = $0.reduce(0, |) }
        position = 0
        squeezing = false
    }
}
