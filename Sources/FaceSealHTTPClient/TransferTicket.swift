import Synchronization

/// One request on its way through the transfer loop, shared by the caller's task and the loop thread: the
/// continuation to resume exactly once, and whether the caller gave up. Cancellation may arrive before the
/// continuation exists, while the request waits in the queue, or while it is on the wire; each is handled.
final class TransferTicket: Sendable {
    /// Unchecked: the phase below already resumes it exactly once; the checked kind adds a canary object per request.
    typealias Continuation = UnsafeContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>

    private enum Phase {
        /// Created; the caller has not handed over its continuation yet.
        case created
        /// Queued or on the wire; the caller is suspended.
        case waiting(Continuation)
        /// The caller was resumed.
        case finished
    }

    private struct State {
        var phase: Phase = .created
        var cancelled = false
    }

    /// What to send, validated.
    let request: CurlRequest
    /// When the whole exchange must be over, waiting for a free connection included.
    let deadline: ContinuousClock.Instant
    private let state = Mutex(State())

    /// A ticket whose deadline is `request`'s timeout from `now`.
    init(request: CurlRequest, now: ContinuousClock.Instant = .now) {
        self.request = request
        deadline = now + .milliseconds(request.timeoutMilliseconds)
    }

    /// Takes the caller's continuation. Returns false when the caller was cancelled first: it is then resumed
    /// with `.cancelled` and the request must not be submitted.
    func attach(_ continuation: Continuation) -> Bool {
        let proceed = state.withLock { state -> Bool in
            guard case .created = state.phase else { preconditionFailure("a transfer ticket is attached once") }
            state.phase = state.cancelled ? .finished : .waiting(continuation)
            return !state.cancelled
        }
        if !proceed { continuation.resume(returning: .failure(.cancelled)) }
        return proceed
    }

    /// Records that the caller gave up. True when the request may be queued or running, so the loop must look.
    func cancel() -> Bool {
        state.withLock { state in
            state.cancelled = true
            if case .waiting = state.phase { return true }
            return false
        }
    }

    /// True once the caller gave up.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Resumes the caller with `result`; later calls do nothing.
    func finish(_ result: Result<HTTPClientResponse, HTTPClientError>) {
        let continuation = state.withLock { state -> Continuation? in
            guard case .waiting(let continuation) = state.phase else { return nil }
            state.phase = .finished
            return continuation
        }
        continuation?.resume(returning: result)
    }
}
