import COpenBLAS
import Synchronization

/// The engine's calls into OpenBLAS. Each runs single-threaded in its caller: the networks split their work
/// between the cores themselves (`Parallel`), so several threads, and several concurrent forward passes, call in
/// at once.
///
/// That is safe only with a build that locks the buffer pool every call takes its scratch from. OpenBLAS's pthread
/// build does (Debian's default, `libopenblas0-pthread`); its sequential build (`libopenblas0-serial`) does not,
/// and hands two concurrent calls the same buffer now and then, so both compute garbage. With any build other
/// than the pthread one the calls here take turns.
enum BLAS {
    /// Whether the loaded OpenBLAS may be entered from several threads at once: only its pthread build is known to be.
    static let concurrentCallsAreSafe: Bool = {
        // One thread per call: the threaded build would otherwise hand parts of every small call to its own
        // threads, which spin between calls and compete with the engine's workers.
        openblas_set_num_threads(1)
        return openblas_get_parallel() == 1
    }()

    /// Serialises the calls when the loaded build is not safe for concurrent callers.
    private static let turns = Mutex<Void>(())

    /// Configures OpenBLAS before the first call (one thread per call). Process-wide; the face engine is the only
    /// BLAS user in the process.
    static func configure() {
        _ = concurrentCallsAreSafe
    }

    /// `C = A·B` for row-major `A` (`m × k`, rows `lda` apart), `B` (`k × n`, `ldb`) and `C` (`m × n`, `ldc`).
    static func multiply(m: Int, n: Int, k: Int, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int,
                         c: UnsafeMutablePointer<Float>, ldc: Int) {
        call {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(m), Int32(n), Int32(k),
                        1, a, Int32(lda), b, Int32(ldb), 0, c, Int32(ldc))
        }
    }

    /// `y += Aᵀ·x` for row-major `A` (`rows × cols`): `x` has `rows` values, `y` has `cols`.
    static func addTransposedProduct(rows: Int, cols: Int, a: UnsafePointer<Float>, x: UnsafePointer<Float>,
                                     y: UnsafeMutablePointer<Float>) {
        call {
            cblas_sgemv(CblasRowMajor, CblasTrans, Int32(rows), Int32(cols), 1, a, Int32(cols), x, 1, 1, y, 1)
        }
    }

    private static func call(_ body: () -> Void) {
        if concurrentCallsAreSafe {
            body()
        } else {
            turns.withLock { _ in body() }
        }
    }
}
