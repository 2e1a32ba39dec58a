public import Foundation
import Synchronization

/// The time every FaceSeal part reads — the authority's handlers and store, the SDK, the relying-party library, the
/// event log — as one injected value, so tests move time instead of sleeping.
public protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
}

/// The system clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}
    /// The current instant from the system.
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to (tests, simulations, benchmarks).
public final class ManualClock: WallClock {
    private let instant: Mutex<Date>

    /// A clock standing at `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        instant = Mutex(start)
    }

    /// The instant the clock stands at.
    public func now() -> Date { instant.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        instant.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        instant.withLock { $0 = date }
    }
}

/// How a FaceSeal part waits — a relying party between polls, a device or an application before sending again what a
/// draining authority turned away (`503` with `Retry-After`); injected so tests never sleep.
public protocol Sleeper: Sendable {
    /// Returns after `seconds` (or throws `CancellationError`).
    func sleep(seconds: Int) async throws
}

/// The real sleeper: `Task.sleep`.
public struct TaskSleeper: Sleeper {
    /// Creates the real sleeper.
    public init() {}
    /// Sleeps for real.
    public func sleep(seconds: Int) async throws { try await Task.sleep(for: .seconds(seconds)) }
}
