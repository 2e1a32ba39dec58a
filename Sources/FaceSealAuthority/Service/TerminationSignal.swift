import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, caught from creation on (their default action is disabled) and awaited once.
public final class TerminationSignal: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Void, Never>?)
        case fired
    }

    private let state = Mutex(State.waiting(nil))
    /// The dispatch sources, only touched under the lock.
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Catches both signals from now on.
    public init() {
        let queue = DispatchQueue(label: "faceseal.serve.signals")
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        sources = Mutex([SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) })
        sources.withLock { sources in
            for source in sources {
                source.setEventHandler { [weak self] in self?.fire() }
                source.resume()
            }
        }
    }

    private func fire() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .fired
            return continuation
        }
        continuation?.resume()
    }

    /// Returns once a signal arrived (at once if one already did).
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let firedAlready = state.withLock { state -> Bool in
                guard case .waiting = state else { return true }
                state = .waiting(continuation)
                return false
            }
            if firedAlready { continuation.resume() }
        }
        sources.withLock { $0.forEach { $0.cancel() } }
    }
}
