import FaceSealCrypto
public import FaceSealHTTP
import Foundation

/// The authority's rate limits: one configuration value (`AuthorityConfiguration.rateLimits`). Counts live in
/// the store, so every authority process on one database enforces the same limits.
public struct RateLimits: Sendable, Equatable {
    /// The failure budgets of one client id or device key id, per fixed window of `window` seconds: `limit` per
    /// source address and `totalLimit` from all sources together. A spent budget refuses failing attempts, never
    /// a credential that verifies from a source that has not failed itself (docs/PROTOCOL.md §10).
    public struct FailureLimit: Sendable, Equatable {
        /// Failures allowed per window from one source address (0 switches both budgets off).
        public var limit: Int
        /// The window, seconds (1…86400).
        public var window: Int
        /// Failures allowed per window from all sources together (0: no total budget). Once spent, a source that
        /// failed in the window is refused before its credential is checked; one that did not is still checked.
        public var totalLimit: Int

        /// Builds a limit; `totalLimit` defaults to ten sources' worth.
        public init(limit: Int, window: Int, totalLimit: Int? = nil) {
            self.limit = limit
            self.window = window
            self.totalLimit = totalLimit ?? limit.multipliedReportingOverflow(by: 10).partialValue
        }
    }

    /// Failed client authentications per client id at the token and backchannel endpoints.
    public var clientAuthenticationFailures: FailureLimit
    /// Failed device signatures per device key id.
    public var deviceSignatureFailures: FailureLimit
    /// Pending (unexpired) requests per user and client: one more is `access_denied` (403) with `Retry-After`,
    /// so an application cannot fill a user's phone with requests (push bombing). 0 switches the limit off.
    public var pendingRequestsPerUser: Int
    /// Reverse proxies whose `X-Forwarded-For` names the source address of a request (exact addresses). A request
    /// from anywhere else is counted under its connection's peer address, whatever headers it sends.
    public var trustedProxies: Set<IPAddress>

    /// Defaults: 20 failed client authentications and 20 failed device signatures a minute per source (200 from all
    /// sources), 5 pending requests, no trusted proxy.
    public init(clientAuthenticationFailures: FailureLimit = FailureLimit(limit: 20, window: 60),
                deviceSignatureFailures: FailureLimit = FailureLimit(limit: 20, window: 60),
                pendingRequestsPerUser: Int = 5, trustedProxies: Set<IPAddress> = []) {
        self.clientAuthenticationFailures = clientAuthenticationFailures
        self.deviceSignatureFailures = deviceSignatureFailures
        self.pendingRequestsPerUser = pendingRequestsPerUser
        self.trustedProxies = trustedProxies
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

/// Whose failures are counted: a known client id or device key id.
enum RateSubject: Sendable {
    case clientAuthentication(clientID: String)
    case deviceSignature(keyID: String)

    /// The store key of the failures of all sources: bounded and control-free whatever the id (ids are hashed).
    var totalKey: String { prefix + Self.digest(id) }

    /// The store key of the failures from `source` (an address or IPv6 network).
    func key(from source: String) -> String { prefix + Self.digest(id + "\u{0}" + source) }

    private var prefix: String {
        switch self {
        case .clientAuthentication: "client-auth:"
        case .deviceSignature: "device-signature:"
        }
    }

    private var id: String {
        switch self {
        case .clientAuthentication(let clientID): clientID
        case .deviceSignature(let keyID): keyID
        }
    }

    /// The `limit` label of `faceseal_rate_limited_total`.
    var metricsLimit: AuthorityMetrics.Limit {
        switch self {
        case .clientAuthentication: .clientAuthentication
        case .deviceSignature: .deviceSignature
        }
    }

    private static func digest(_ text: String) -> String { Base64URL.encode(SHA256.hash(data: Array(text.utf8)).bytes) }
}

/// The store keys of one subject's failure budgets for an attempt from one source: its source's and its total's
/// (each a digest, made once an attempt).
struct FailureKeys: Sendable {
    let source: String
    let total: String

    var all: [String] { [source, total] }
}

/// The failure budgets of one subject as one attempt from one source finds them.
struct FailureBudget: Sendable {
    let subject: RateSubject
    let limit: RateLimits.FailureLimit
    let keys: FailureKeys
    /// The source's window and the subject's total window, nil where there is none running.
    let source: FailureWindow?
    let total: FailureWindow?

    var sourceSpent: Bool { (source?.count ?? 0) >= limit.limit }
    var totalSpent: Bool { limit.totalLimit > 0 && (total?.count ?? 0) >= limit.totalLimit }

    /// Whether a credential whose check is expensive (a signature) may be checked: the source has budget left, and
    /// either the total has too or the source has not failed in this window.
    var allowsCheck: Bool { !sourceSpent && !(totalSpent && source != nil) }

    /// When a source refused by `allowsCheck` is checked again: its own window's end, or the total's if sooner.
    func refusal(now: Date) -> RateLimited {
        let ends = [source?.endsAt, sourceSpent ? nil : total?.endsAt].compactMap { $0 }
        return RateLimited(until: ends.min() ?? now, now: now)
    }
}

extension Authority {
    private func limit(for subject: RateSubject) -> RateLimits.FailureLimit {
        switch subject {
        case .clientAuthentication: configuration.rateLimits.clientAuthenticationFailures
        case .deviceSignature: configuration.rateLimits.deviceSignatureFailures
        }
    }

    /// The network a request is counted under (its peer, or what a trusted proxy forwarded; docs/PROTOCOL.md §10).
    func rateSource(of request: HTTPRequest) -> String {
        request.clientAddress(trustedProxies: configuration.rateLimits.trustedProxies)?.network ?? "unknown"
    }

    /// The budgets of `subject` for an attempt of `request`, read in one query; nil when the limit is off.
    func failureBudget(_ subject: RateSubject, request: HTTPRequest) async throws -> FailureBudget? {
        guard let keys = failureKeys(subject, request: request) else { return nil }
        return failureBudget(subject, keys: keys, windows: try await store.failureWindows(keys: keys.all))
    }

    /// The store keys of `subject`'s budgets for an attempt of `request` (source, total), to read with other records;
    /// nil when the limit is off.
    func failureKeys(_ subject: RateSubject, request: HTTPRequest) -> FailureKeys? {
        guard limit(for: subject).limit > 0 else { return nil }
        return FailureKeys(source: subject.key(from: rateSource(of: request)), total: subject.totalKey)
    }

    /// The budgets of `subject` from `windows` read under `keys` (from `failureKeys`); nil when the limit is off.
    func failureBudget(_ subject: RateSubject, keys: FailureKeys?, windows: [String: FailureWindow]) -> FailureBudget? {
        guard let keys else { return nil }
        return FailureBudget(subject: subject, limit: limit(for: subject), keys: keys, source: windows[keys.source], total: windows[keys.total])
    }

    /// Throws `refusal` of the wait when `budget` does not allow an expensive check.
    func refuseUncheckable(_ budget: FailureBudget?, as refusal: (RateLimited) -> any Error) throws {
        if let budget, !budget.allowsCheck {
            metrics.rateLimitHit(budget.subject.metricsLimit)
            throw refusal(budget.refusal(now: clock.now()))
        }
    }

    /// Counts a failed attempt in the budgets not yet spent, and throws `refusal` of the wait when a budget was
    /// already spent: the failure is then answered 429 rather than as itself. A source past its own budget writes
    /// nothing, so one source alone cannot spend the total.
    func countFailure(_ budget: FailureBudget?, as refusal: (RateLimited) -> any Error) async throws {
        guard let budget else { return }
        let keys = budget.sourceSpent ? [] : [budget.keys.source] + (budget.totalSpent ? [] : [budget.keys.total])
        let counted = try await store.countFailures(keys: keys, window: TimeInterval(budget.limit.window))
        guard budget.sourceSpent || budget.totalSpent else { return }
        metrics.rateLimitHit(budget.subject.metricsLimit)
        let after = FailureBudget(subject: budget.subject, limit: budget.limit, keys: budget.keys,
                                  source: counted[budget.keys.source] ?? budget.source, total: counted[budget.keys.total] ?? budget.total)
        throw refusal(after.refusal(now: clock.now()))
    }
}
