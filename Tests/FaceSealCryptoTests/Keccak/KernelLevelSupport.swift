import Testing
@testable import FaceSealCrypto

/// Runs `body` with the ML-KEM/ML-DSA kernels limited to `level`, after checking that `level` is the one
/// in force (a test meant for the portable path must not silently run the vector kernels, or the reverse).
func onKernelLevel(_ level: PQKernels.Level, _ body: () throws -> Void) throws {
    try PQKernels.$limit.withValue(level) {
        #expect(PQKernels.active == level)
        try body()
    }
}
