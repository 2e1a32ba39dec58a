import Synchronization

/// Publishes a flow's state to any number of `stateStream()` subscribers: each new stream yields
/// the current state first, then every change, and finishes after the flow's terminal state.
final class StateBroadcaster<Value: Sendable & Equatable>: Sendable {
    private struct Storage {
        var current: Value
        var finished = false
        var nextId = 0
        var continuations: [Int: AsyncStream<Value>.Continuation] = [:]
    }

    private let storage: Mutex<Storage>

    init(_ initial: Value) {
        storage = Mutex(Storage(current: initial))
    }

    /// The latest published value.
    var current: Value { storage.withLock { $0.current } }

    /// A new subscription: the current value first, then every change.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        let registered: Int? = storage.withLock { s in
            continuation.yield(s.current)
            if s.finished { return nil }
            let id = s.nextId
            s.nextId += 1
            s.continuations[id] = continuation
            return id
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.storage.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `value` if it differs from the current one; `terminal` finishes every stream after it.
    func publish(_ value: Value, terminal: Bool) {
        // Yield under the lock so concurrent publishers cannot reorder states; finish outside it,
        // because finishing runs `onTermination`, which takes the lock.
        let toFinish: [AsyncStream<Value>.Continuation] = storage.withLock { s in
            guard !s.finished else { return [] }
            if value != s.current {
                s.current = value
                for continuation in s.continuations.values { continuation.yield(value) }
            }
            guard terminal else { return [] }
            s.finished = true
            let all = Array(s.continuations.values)
            s.continuations.removeAll()
            return all
        }
        for continuation in toFinish { continuation.finish() }
    }
}
