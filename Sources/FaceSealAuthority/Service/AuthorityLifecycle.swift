import Synchronization

/// Where an authority process is in its life, as every part that must act on it reads it: one small value per
/// `Authority`. Draining begins when the process is asked to stop (SIGTERM, SIGINT): the server then answers new
/// requests `503` with `Retry-After`, in-flight requests finish, and every long poll (the outbox wait, the enrolment
/// token wait) answers at once with what it would answer at its deadline, which tells the device to ask again.
public final class AuthorityLifecycle: Sendable {
    private struct State {
        var draining = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: AsyncStream<Void>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// A lifecycle that is serving.
    public init() {}

    /// True from the moment the process began to stop (readiness reports it; long polls end on it).
    public var isDraining: Bool { state.withLock { $0.draining } }

    /// Begins draining: wakes every long poll waiting now; later ones do not wait. Idempotent.
    public func beginDraining() {
        let waiters = state.withLock { state -> [AsyncStream<Void>.Continuation] in
            state.draining = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.yield() }
    }

    /// Has `continuation` woken when draining begins (at once when it already has); answers the registration to
    /// pass to `forget(_:)`.
    func wakeOnDrain(_ continuation: AsyncStream<Void>.Continuation) -> UInt64 {
        let (id, draining) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            if !state.draining { state.waiters[state.nextID] = continuation }
            return (state.nextID, state.draining)
        }
        if draining { continuation.yield() }
        return id
    }

    /// Removes a registration of `wakeOnDrain(_:)`.
    func forget(_ id: UInt64) {
        _ = state.withLock { $0.waiters.removeValue(forKey: id) }
    }
}
