import CFaceSealPQ

/// Which implementation of the ML-KEM / ML-DSA hot loops runs: the portable Swift code, or FaceSeal's
/// own AVX2 kernels (target `CFaceSealPQ`, bit-identical results) chosen at run time from the CPU.
///
/// Every operation reads `active` once and passes the level down, so a test or benchmark can run the
/// portable path inside `PQKernels.$limit.withValue(.portable) { … }` while others run concurrently.
package enum PQKernels {
    /// Kernel sets, in increasing order of what they need from the CPU.
    package enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Swift only (any CPU).
        case portable = 0
        /// AVX2 NTTs, base multiplication, matrix-vector products and four-way Keccak.
        case avx2 = 1
        /// As `avx2`, with the four-way Keccak on AVX-512VL rotates and ternary logic.
        case avx512 = 2

        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        package var description: String {
            switch self {
            case .portable: "portable Swift"
            case .avx2: "AVX2"
            case .avx512: "AVX2 + AVX-512VL Keccak"
            }
        }

        /// The C kernels' level argument.
        var code: Int32 { Int32(rawValue) }
    }

    /// The best level this CPU (and operating system) supports.
    package static let supported: Level = Level(rawValue: Int(fs_pq_cpu_level())) ?? .portable

    /// An upper bound on the level, for tests and benchmarks; the default lets `supported` decide.
    @TaskLocal package static var limit: Level = .avx512

    /// The level an operation starting now uses.
    @inline(__always)
    static var active: Level { min(supported, limit) }

    /// Every level this CPU can run, portable first (what the vector tests iterate over).
    package static var available: [Level] { Level.allCases.filter { $0 <= supported } }
}
