import Foundation
import Synchronization

/// The time source of a store. Every timestamp the store writes or compares comes from here,
/// so tests control time instead of sleeping.
public protocol StoreClock: Sendable {
    /// The current instant.
    func now() -> Date
}

/// The wall clock.
public struct SystemStoreClock: StoreClock {
    /// Creates the wall clock.
    public init() {}
    /// The current wall-clock instant.
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to (tests, simulations).
public final class ManualStoreClock: StoreClock {
    private let instant: Mutex<Date>

    /// Creates a clock standing at `start`.
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
