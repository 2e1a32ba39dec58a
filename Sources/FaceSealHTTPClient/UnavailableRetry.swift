/// How a client answers a server that is draining for a restart: `503` with `Retry-After` means the request was not
/// acted on, so it is sent again, as it was, after the wait the server asked for — a bounded number of times and only
/// for a short wait (a longer one, or an HTTP date, is the caller's to handle). The wait is injected: tests never sleep.
public struct UnavailableRetry: Sendable {
    /// How many times one request is sent again.
    public var maxRetries: Int
    /// The longest `Retry-After` waited for, seconds.
    public var maxWaitSeconds: Int

    /// A policy; the defaults ride out an instance's restart (a few seconds) without holding a caller for long.
    public init(maxRetries: Int = 3, maxWaitSeconds: Int = 10) {
        self.maxRetries = maxRetries
        self.maxWaitSeconds = maxWaitSeconds
    }

    /// Sends `request` through `client`, again after `sleep(seconds)` while the answer is a `503` whose `Retry-After`
    /// is at most `maxWaitSeconds`, at most `maxRetries` times; returns the last answer. Throws what `send` or
    /// `sleep` throws.
    public func send(_ request: HTTPClientRequest, with client: HTTPClient,
                     sleep: @Sendable (_ seconds: Int) async throws -> Void) async throws -> HTTPClientResponse {
        var retries = 0
        while true {
            let response = try await client.send(request)
            guard response.status == .serviceUnavailable, retries < maxRetries, let seconds = response.headers.retryAfterSeconds,
                  seconds <= maxWaitSeconds else { return response }
            retries += 1
            try await sleep(seconds)
        }
    }
}
