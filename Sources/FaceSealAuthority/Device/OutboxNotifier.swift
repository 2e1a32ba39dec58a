import Foundation
import Synchronization

/// Wakes long polls of the link outbox (SPEC §4.6) when a link is queued for their device: one
/// `AsyncStream` continuation per waiting poll, keyed by device id, woken by `announce(link:for:)`.
///
/// Process-wide, because device ids are random and unique across authorities, so one authority's wake can
/// never reach another's device; a wake is only a hint to read the store again. With several authority
/// processes on one PostgreSQL database, a link queued in one wakes the polls of all: the store announces it
/// (`NOTIFY`, at commit) and each process's `wakeOnLinksQueuedElsewhere()` listener calls `wake` here.
final class OutboxNotifier: Sendable {
    /// The notifier of this process.
    static let shared = OutboxNotifier()

    private struct State {
        var nextID: UInt64 = 0
        var waiters: [String: [UInt64: AsyncStream<Void>.Continuation]] = [:]
        var count = 0
    }

    private let state = Mutex(State())

    /// Registers a waiter for `deviceID`, also woken when `lifecycle` begins draining. Register before reading the
    /// store, so a link queued in between still wakes it.
    func subscribe(deviceID: String, lifecycle: AuthorityLifecycle) -> OutboxSubscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.waiters[deviceID, default: [:]][state.nextID] = continuation
            state.count += 1
            return state.nextID
        }
        let drainID = lifecycle.wakeOnDrain(continuation)
        return OutboxSubscription(stream: stream) { [self] in
            lifecycle.forget(drainID)
            let removed = state.withLock { state -> AsyncStream<Void>.Continuation? in
                let continuation = state.waiters[deviceID]?.removeValue(forKey: id)
                if continuation != nil { state.count -= 1 }
                if state.waiters[deviceID]?.isEmpty == true { state.waiters[deviceID] = nil }
                return continuation
            }
            removed?.finish()
        }
    }

    /// Wakes every poll waiting for `deviceID`.
    func wake(deviceID: String) {
        let continuations = state.withLock { Array(($0.waiters[deviceID] ?? [:]).values) }
        for continuation in continuations { continuation.yield() }
    }

    /// How many polls wait in this process (`faceseal_outbox_waiters`).
    var totalWaiters: Int { state.withLock { $0.count } }

    /// How many polls wait for `deviceID` (tests).
    func waiterCount(deviceID: String) -> Int { state.withLock { $0.waiters[deviceID]?.count ?? 0 } }
}

/// One waiting poll's registration; `cancel()` removes it.
struct OutboxSubscription: Sendable {
    let stream: AsyncStream<Void>
    let cancel: @Sendable () -> Void

    /// Waits until woken or until `timeout` passes; true when woken. The deadline is wall time (a transport
    /// timeout, not protocol time), raced against the wake-up, never polled.
    func wait(upTo timeout: Duration) async -> Bool {
        let stream = self.stream
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
