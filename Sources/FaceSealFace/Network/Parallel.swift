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
