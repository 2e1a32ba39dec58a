import Foundation

/// How webhook pushes are sent (docs/PROTOCOL.md, "Webhook push"). Which endpoints a tenant may register follows
/// `AuthorityConfiguration.callbackDestinations`, as every send does.
public struct WebhookPolicy: Sendable {
    /// POSTs per link, the first included (1…20).
    public var maxAttempts: Int
    /// The wait before the first retry; each further retry waits twice as long, up to `maxRetryDelay`.
    public var firstRetryDelay: Duration
    /// The longest wait between two attempts.
    public var maxRetryDelay: Duration
    /// How long one POST may take.
    public var attemptTimeout: Duration
    /// Waits between attempts (injected in tests, which then never sleep).
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Defaults: 6 attempts, 1 s doubling to at most 60 s apart, 5 s per POST.
    public init(maxAttempts: Int = 6, firstRetryDelay: Duration = .seconds(1), maxRetryDelay: Duration = .seconds(60),
                attemptTimeout: Duration = .seconds(5),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.maxAttempts = min(max(maxAttempts, 1), 20)
        self.firstRetryDelay = firstRetryDelay
        self.maxRetryDelay = maxRetryDelay
        self.attemptTimeout = attemptTimeout
        self.sleep = sleep
    }

    /// The wait before attempt `attempt` (2…): `firstRetryDelay · 2^(attempt − 2)`, at most `maxRetryDelay`.
    func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = firstRetryDelay
        for _ in 0..<max(0, min(attempt - 2, 30)) where delay < maxRetryDelay { delay *= 2 }
        return min(delay, maxRetryDelay)
    }
}
