import Dispatch
import Foundation
import Synchronization

/// Splits a layer's work between the cores.
enum Parallel {
    /// Below this many multiply-adds a layer runs on one core: the hand-off costs more than it saves.
    static let minimumWorkPerWorker = 2_000_000

    static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    static func workers(items: Int, work: Int) -> Int {
        max(1, min(cores, items, work / minimumWorkPerWorker))
    }

    /// Calls `body(task, slice)` once per contiguous slice of `0..<count`, `tasks` slices, on the calling thread and
    /// the pool's helpers at once; returns when every slice is done.
    static func forEachRange(of count: Int, workers tasks: Int, _ body: @escaping @Sendable (Int, Range<Int>) -> Void) {
        guard tasks > 1 else {
            body(0, 0..<count)
            return
        }
        WorkerPool.shared.run(tasks: tasks) { task in
            body(task, (count * task / tasks)..<(count * (task + 1) / tasks))
        }
    }
}

/// Helper threads that take the tasks of one parallel step at a time beside its caller. A forward pass hands out a
/// step every few tens of microseconds, faster than a parked thread wakes (GCD's `concurrentPerform` often ran both
/// halves of a layer on the caller), so a helper spins for a short while after its last task and only then parks
/// on a condition: between forward passes it uses no CPU. A task the helper has not yet claimed is taken by the
/// caller, so a slow wake-up delays nothing.
final class WorkerPool: Sendable {
    static let shared = WorkerPool(helpers: Parallel.cores - 1)

    /// How long a helper keeps looking for the next step before it parks.
    static let spinNanoseconds: UInt64 = 200_000

    private final class Job: Sendable {
        let tasks: Int
        let body: @Sendable (Int) -> Void
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)

        init(tasks: Int, body: @escaping @Sendable (Int) -> Void) {
            self.tasks = tasks
            self.body = body
        }

        /// Runs unclaimed tasks until none is left.
        func work() {
            while true {
                let task = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard task < tasks else { return }
                body(task)
                done.add(1, ordering: .releasing)
            }
        }
    }

    private let helpers: Int
    /// The step being handed out; one caller at a time owns the pool (`busy`).
    private let current = Mutex<Job?>(nil)
    private let busy = Atomic<Bool>(false)
    private let generation = Atomic<Int>(0)
    private let sleepers = Atomic<Int>(0)
    private let parking = NSCondition()

    init(helpers: Int) {
        self.helpers = helpers
        for _ in 0..<helpers {
            let thread = Thread { [self] in helperLoop() }
            thread.name = "faceseal-face-worker"
            thread.start()
        }
    }

    /// Runs `body(0..<tasks)`, each once, on this thread and the helpers; returns when all are done. A caller that
    /// finds the pool in use by another forward pass runs its tasks alone.
    func run(tasks: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let job = Job(tasks: tasks, body: body)
        guard helpers > 0, busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            job.work()
            return
        }
        current.withLock { $0 = job }
        generation.add(1, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            parking.lock()
            parking.broadcast()
            parking.unlock()
        }
        job.work()
        while job.done.load(ordering: .acquiring) < tasks {}
        current.withLock { $0 = nil }
        busy.store(false, ordering: .releasing)
    }

    private func helperLoop() {
        var seen = generation.load(ordering: .acquiring)
        while true {
            let start = DispatchTime.now().uptimeNanoseconds
            var spins = 0
            while generation.load(ordering: .acquiring) == seen {
                spins += 1
                if spins % 256 == 0, DispatchTime.now().uptimeNanoseconds - start > Self.spinNanoseconds { break }
            }
            if generation.load(ordering: .sequentiallyConsistent) == seen {
                parking.lock()
                sleepers.add(1, ordering: .sequentiallyConsistent)
                while generation.load(ordering: .sequentiallyConsistent) == seen { parking.wait() }
                sleepers.subtract(1, ordering: .sequentiallyConsistent)
                parking.unlock()
            }
            seen = generation.load(ordering: .acquiring)
            current.withLock { $0 }?.work()
        }
    }
}
