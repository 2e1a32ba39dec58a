import Foundation

/// The wall clock the SDK reads for audit entries and timestamps; injected so tests control time.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}
    /// The current time from the system.
    public func now() -> Date { Date() }
}
