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

/// Waits before the SDK sends again a request a draining authority turned away (`503` with `Retry-After`); injected so
/// tests never sleep.
public protocol RetrySleeper: Sendable {
    /// Returns after `seconds` (or throws `CancellationError`).
    func sleep(seconds: Int) async throws
}

/// The real sleeper: `Task.sleep`.
public struct SystemRetrySleeper: RetrySleeper {
    /// Creates the system sleeper.
    public init() {}
    /// Sleeps for real.
    public func sleep(seconds: Int) async throws { try await Task.sleep(for: .seconds(seconds)) }
}
