import FaceSealCrypto
import FaceSealHTTP
import Foundation

/// The authority's rate limits: one configuration value (`AuthorityConfiguration.rateLimits`). Counts live in
/// the store, so every authority process on one database enforces the same limits.
public struct RateLimits: Sendable, Equatable {
    /// At most `limit` failures per fixed window of `window` seconds.
    public struct FailureLimit: Sendable, Equatable {
        /// Failures allowed per window (0 switches the limit off).
        public var limit: Int
        /// The window, seconds (1…86400).
        public var window: Int

        /// Builds a limit.
        public init(limit: Int, window: Int) {
            self.limit = limit
            self.window = window
        }
    }

    /// Failed client authentications per client id at the token and backchannel endpoints. Once reached, every
    /// authentication of that client id is answered 429 with `Retry-After` until the window ends, before any
    /// credential is checked (an attacker can then no longer make the authority verify signatures for it).
    public var clientAuthenticationFailures: FailureLimit
    /// Failed device signatures per device key id. Once reached, every request naming that key id is answered
    /// `rate_limited` (429, `Retry-After`) until the window ends, before its signature is checked.
    public var deviceSignatureFailures: FailureLimit
    /// Pending (unexpired) requests per user and client: one more is `access_denied` (403) with `Retry-After`,
    /// so an application cannot fill a user's phone with requests (push bombing). 0 switches the limit off.
    public var pendingRequestsPerUser: Int

    /// Defaults: 20 failed client authentications and 20 failed device signatures a minute, 5 pending requests.
    public init(clientAuthenticationFailures: FailureLimit = FailureLimit(limit: 20, window: 60),
                deviceSignatureFailures: FailureLimit = FailureLimit(limit: 20, window: 60),
                pendingRequestsPerUser: Int = 5) {
        self.clientAuthenticationFailures = clientAuthenticationFailures
        self.deviceSignatureFailures = deviceSignatureFailures
        self.pendingRequestsPerUser = pendingRequestsPerUser
    }
}

/// A request refused by a rate limit: retry after `retryAfter` seconds.
struct RateLimited: Error, Sendable {
    let retryAfter: Int

    /// `Retry-After` (whole seconds, at least 1).
    var headers: HTTPHeaders { ["Retry-After": String(retryAfter)] }

    init(until: Date, now: Date) {
        retryAfter = max(1, Int(min(until.timeIntervalSince(now), 86_400).rounded(.up)))
    }
}

/// What a failure counter is kept for.
enum RateKey: Sendable {
    case clientAuthentication(clientID: String)
    case deviceSignature(keyID: String)

    /// The store key: bounded and control-free whatever the id (ids are hashed).
    var storeKey: String {
        switch self {
        case .clientAuthentication(let clientID): "client-auth:" + Self.digest(clientID)
        case .deviceSignature(let keyID): "device-signature:" + Self.digest(keyID)
        }
    }

    /// The `limit` label of `faceseal_rate_limited_total`.
    var metricsLimit: AuthorityMetrics.Limit {
        switch self {
        case .clientAuthentication: .clientAuthentication
        case .deviceSignature: .deviceSignature
        }
    }

    private static func digest(_ id: String) -> String { Base64URL.encode(SHA256.hash(data: Array(id.utf8)).bytes) }
}

extension Authority {
    private func limit(for key: RateKey) -> RateLimits.FailureLimit {
        switch key {
        case .clientAuthentication: configuration.rateLimits.clientAuthenticationFailures
        case .deviceSignature: configuration.rateLimits.deviceSignatureFailures
        }
    }

    /// Throws `RateLimited` while `key` has reached its limit in the current window.
    func refuseIfRateLimited(_ key: RateKey) async throws {
        let limit = limit(for: key)
        guard limit.limit > 0, let window = try await store.failureWindow(key: key.storeKey), window.count >= limit.limit else { return }
        metrics.rateLimitHit(key.metricsLimit)
        throw RateLimited(until: window.endsAt, now: clock())
    }

    /// Counts one failure under `key`.
    func countFailure(_ key: RateKey) async throws {
        let limit = limit(for: key)
        guard limit.limit > 0 else { return }
        _ = try await store.countFailure(key: key.storeKey, window: TimeInterval(limit.window))
    }
}
