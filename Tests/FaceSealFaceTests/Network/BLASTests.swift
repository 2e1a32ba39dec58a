@testable import FaceSealFace
import Foundation
import Synchronization
import Testing

/// The engine calls OpenBLAS from several threads at once. The test runner links FaceSealFace as `faceseal` does,
/// so it loads the same OpenBLAS.
@Suite struct BLASTests {
    /// The OpenBLAS loaded is its pthread build, whose calls may overlap, set to one thread per call. The sequential
    /// build (`libopenblas0-serial`, which FaceSeal once loaded through a run path) hands overlapping calls the same
    /// buffer; with it the engine's calls would take turns.
    @Test func theLoadedOpenBLASTakesConcurrentCallers() throws {
        let file = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        let loaded = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ").last }.filter { $0.contains("libopenblas") })
        #expect(!loaded.isEmpty && loaded.allSatisfy { $0.contains("/openblas-pthread/") }, "OpenBLAS loaded from \(loaded)")
        #expect(BLAS.concurrentCallsAreSafe)
    }

    /// Two threads enter `BLAS.multiply` at the same moment, each with its own matrices, 1,500 times: every product
    /// equals the one computed alone, bit for bit. Calling the sequential build so, about one round in sixty came out wrong.
    @Test func productsStartedAtTheSameMomentEqualLoneOnes() throws {
        let (m, n, k, rounds) = (128, 128, 128, 1500)
        var generator = NetworkKernelTests.SeededGenerator(state: 7)
        let b = NetworkKernelTests.random(k * n, &generator)
        let matrices = (0..<2).map { _ in NetworkKernelTests.random(m * k, &generator) }
        let expected = matrices.map { Self.product($0, b, m: m, n: n, k: k) }
        let arrived = Atomic<Int>(0)
        let wrong = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        for worker in 0..<2 {
            Thread {
                for round in 0..<rounds {
                    // Both threads wait here, then call at once: the calls' set-up overlaps every round.
                    arrived.add(1, ordering: .sequentiallyConsistent)
                    while arrived.load(ordering: .sequentiallyConsistent) < 2 * (round + 1) { sched_yield() }
                    if Self.product(matrices[worker], b, m: m, n: n, k: k) != expected[worker] {
                        wrong.add(1, ordering: .relaxed)
                    }
                }
                done.signal()
            }.start()
        }
        done.wait()
        done.wait()
        #expect(wrong.load(ordering: .relaxed) == 0, "products that differ from the lone ones")
    }

    static func product(_ a: [Float], _ b: [Float], m: Int, n: Int, k: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: m * n) { c, initialized in
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    BLAS.multiply(m: m, n: n, k: k, a: a.baseAddress!, lda: k, b: b.baseAddress!, ldb: n, c: c.baseAddress!, ldc: n)
                }
            }
            initialized = m * n
        }
    }
}
