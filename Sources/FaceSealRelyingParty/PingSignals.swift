import Synchronization

/// Wakes the task waiting for a request's ping callback; a ping that comes first is remembered.
final class PingSignals: Sendable {
    private enum State {
        case pinged
        case waiting(CheckedContinuation<Void, any Error>)
    }

    private let states = Mutex<[String: State]>([:])

    /// Records a ping for `authReqId`, waking its waiter.
    func signal(_ authReqId: String) {
        let waiter: CheckedContinuation<Void, any Error>? = states.withLock { states in
            if case .waiting(let continuation) = states[authReqId] {
                states[authReqId] = nil
                return continuation
            }
            states[authReqId] = .pinged
            return nil
        }
        waiter?.resume()
    }

    /// Returns once `authReqId` was pinged; throws `CancellationError` when the task is cancelled.
    func wait(_ authReqId: String) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // 0: wait, 1: already pinged, 2: already cancelled (onCancel ran before the waiter was stored).
                let action: Int = states.withLock { states in
                    if case .pinged = states[authReqId] {
                        states[authReqId] = nil
                        return 1
                    }
                    if Task.isCancelled { return 2 }
                    states[authReqId] = .waiting(continuation)
                    return 0
                }
                if action == 1 { continuation.resume() }
                if action == 2 { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            cancel(authReqId)
        }
    }

    /// Forgets `authReqId`, failing its waiter with `CancellationError`.
    func cancel(_ authReqId: String) {
        let waiter: CheckedContinuation<Void, any Error>? = states.withLock { states in
            guard case .waiting(let continuation) = states.removeValue(forKey: authReqId) else { return nil }
            return continuation
        }
        waiter?.resume(throwing: CancellationError())
    }
}
