import Foundation

/// How webhook pushes are sent and which endpoints a tenant may register (docs/PROTOCOL.md, "Webhook push").
public struct WebhookPolicy: Sendable {
    /// POSTs per link, the first included (1…20).
    public var maxAttempts: Int
    /// The wait before the first retry; each further retry waits twice as long, up to `maxRetryDelay`.
    public var firstRetryDelay: Duration
    /// The longest wait between two attempts.
    public var maxRetryDelay: Duration
    /// How long one POST may take.
    public var attemptTimeout: Duration
    /// Development and tests only: also accept `http://` endpoints on a loopback address (`127.0.0.1`, `[::1]`,
    /// `localhost`). Off by default: in production an endpoint is `https://` on a host that is not a loopback name.
    public var allowsLoopbackHTTP: Bool
    /// Waits between attempts (injected in tests, which then never sleep).
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Defaults: 6 attempts, 1 s doubling to at most 60 s apart, 5 s per POST, HTTPS only.
    public init(maxAttempts: Int = 6, firstRetryDelay: Duration = .seconds(1), maxRetryDelay: Duration = .seconds(60),
                attemptTimeout: Duration = .seconds(5), allowsLoopbackHTTP: Bool = false,
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.maxAttempts = min(max(maxAttempts, 1), 20)
        self.firstRetryDelay = firstRetryDelay
        self.maxRetryDelay = maxRetryDelay
        self.attemptTimeout = attemptTimeout
        self.allowsLoopbackHTTP = allowsLoopbackHTTP
        self.sleep = sleep
    }

    /// The wait before attempt `attempt` (2…): `firstRetryDelay · 2^(attempt − 2)`, at most `maxRetryDelay`.
    func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = firstRetryDelay
        for _ in 0..<max(0, min(attempt - 2, 30)) where delay < maxRetryDelay { delay *= 2 }
        return min(delay, maxRetryDelay)
    }

    /// Why `text` cannot be a webhook endpoint, or nil when it can: an absolute `https://` URL of at most 2048 bytes
    /// without credentials or fragment, whose host is not a loopback name (unless `allowsLoopbackHTTP`, which also
    /// admits `http://` to a loopback host).
    func refusal(of text: String) -> String? {
        guard text.utf8.count <= 2048, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return "must be at most 2048 bytes without spaces or control characters"
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else {
            return "must be an absolute URL"
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            return "must not carry credentials or a fragment"
        }
        let loopback = host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
            || host == "0.0.0.0"
        switch scheme {
        case "https" where !loopback, "https" where allowsLoopbackHTTP, "http" where loopback && allowsLoopbackHTTP:
            return nil
        case "https":
            return "must not name a loopback host"
        default:
            return "must be an https:// URL"
        }
    }
}
