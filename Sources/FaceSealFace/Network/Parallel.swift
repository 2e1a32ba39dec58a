import COpenBLAS
import Dispatch
import Foundation

/// Splits a layer's output rows between the cores.
enum Parallel {
    /// Below this many multiply-adds a layer runs on one core: the hand-off costs more than it saves.
    static let minimumWorkPerWorker = 2_000_000

    static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    static func workers(items: Int, work: Int) -> Int {
        max(1, min(cores, items, work / minimumWorkPerWorker))
    }

    /// Calls `body(worker, slice)` once per contiguous slice of `0..<count`, on `workers` threads at once.
    static func forEachRange(of count: Int, workers: Int, _ body: @Sendable (Int, Range<Int>) -> Void) {
        guard workers > 1 else {
            body(0, 0..<count)
            return
        }
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            body(worker, (count * worker / workers)..<(count * (worker + 1) / workers))
        }
    }
}

/// OpenBLAS runs single-threaded: the networks split their work between the cores themselves
/// (`Parallel`), and OpenBLAS's own threads would otherwise spin between the many small calls.
/// FaceSeal's executables load OpenBLAS's single-threaded build (the run path in Package.swift), which starts no
/// worker threads; this call covers a host that loads the threaded one. Process-wide; the face engine is the only
/// BLAS user in the process.
enum BLASThreading {
    /// OpenBLAS's thread count before the engine first set it: 1 with the single-threaded build.
    static let threadsAtLoad: Int = {
        let threads = Int(openblas_get_num_threads())
        openblas_set_num_threads(1)
        return threads
    }()

    static func ensureSingleThreaded() {
        _ = threadsAtLoad
    }
}
