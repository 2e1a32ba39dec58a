import FaceSealHTTP
import Foundation
import Synchronization

/// The authority's counters, exported at `GET /metrics` in the Prometheus text format (docs/PROTOCOL.md,
/// "Operations"). Process-local, as Prometheus expects: each authority process counts what it served, and a
/// dashboard sums over processes. Every label value comes from a bounded set chosen by the code (route patterns,
/// status codes, request kinds, deny reasons), never from a raw path or any other input.
///
/// Recording is a lock on a per-route value (or one atomic increment) and no allocation once a status was seen.
public final class AuthorityMetrics: Sendable {
    /// Upper bounds of the latency histogram buckets, seconds (long polls end at 30 s).
    static let latencyBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    /// The same bounds in microseconds, for comparing without floating point.
    private static let latencyBoundMicros: [Int64] = latencyBounds.map { Int64(($0 * 1_000_000).rounded()) }

    /// One route's (or the unmatched requests') counts.
    final class RouteSeries: Sendable {
        struct Counts {
            var statuses: [Int: UInt64] = [:]
            /// Per bucket, not cumulative (`latencyBounds.count + 1`, the last one past every bound).
            var buckets = [UInt64](repeating: 0, count: AuthorityMetrics.latencyBounds.count + 1)
            var count: UInt64 = 0
            var sumMicros: Int64 = 0
        }

        let method: String
        let route: String
        let counts = Mutex(Counts())

        init(method: String, route: String) {
            self.method = method
            self.route = route
        }

        /// Counts one answer; `duration` nil counts the status only (no histogram: unmatched requests).
        func record(status: Int, duration: Duration?) {
            guard let duration else {
                counts.withLock { $0.statuses[status, default: 0] &+= 1 }
                return
            }
            let parts = duration.components
            let micros = max(0, parts.seconds &* 1_000_000 &+ parts.attoseconds / 1_000_000_000_000)
            let bucket = AuthorityMetrics.latencyBoundMicros.firstIndex { micros <= $0 } ?? AuthorityMetrics.latencyBounds.count
            counts.withLock { counts in
                counts.statuses[status, default: 0] &+= 1
                counts.buckets[bucket] &+= 1
                counts.count &+= 1
                counts.sumMicros &+= micros
            }
        }
    }

    /// What ended a request, as the `outcome` label says.
    enum Outcome: String, Sendable {
        case succeeded, denied, expired, stale
    }

    private struct OutcomeKey: Hashable {
        let kind: String
        let outcome: Outcome
        let reason: String
    }

    /// The rate limits, as the `limit` label says.
    enum Limit: String, Sendable, CaseIterable {
        case clientAuthentication = "client_authentication"
        case deviceSignature = "device_signature"
        case pendingRequests = "pending_requests"
    }

    /// What became of one webhook POST, as the `outcome` label says.
    enum WebhookOutcome: String, Sendable, CaseIterable {
        /// Answered 2xx.
        case delivered
        /// Failed and will be tried again.
        case retried
        /// Failed for the last time (attempts spent, the request expired, or a permanent refusal).
        case failed
    }

    private let routes = Mutex<[RouteSeries]>([])
    /// Requests that matched no route (404, 405), under the route label `unmatched`.
    let unmatched = RouteSeries(method: "", route: "unmatched")
    private let created = Mutex<[String: UInt64]>([:])
    private let outcomes = Mutex<[OutcomeKey: UInt64]>([:])
    private let rateLimited = Mutex<[Limit: UInt64]>([:])
    private let webhooks = Mutex<[WebhookOutcome: UInt64]>([:])
    private let purged = Atomic<UInt64>(0)
    private let auditPurged = Atomic<UInt64>(0)

    /// Empty counters.
    public init() {}

    /// The series of one route, looked up when a router is built (routers built twice, or a route on both
    /// listeners, share one series).
    func series(method: String, route: String) -> RouteSeries {
        routes.withLock { routes in
            if let existing = routes.first(where: { $0.method == method && $0.route == route }) { return existing }
            let series = RouteSeries(method: method, route: route)
            routes.append(series)
            return series
        }
    }

    /// A new request of `kind` (`login` or a PKI kind).
    func requestCreated(kind: String) {
        created.withLock { $0[kind, default: 0] &+= 1 }
    }

    /// A request of `kind` left `pending` with `outcome` (`reason`: the deny reason, else empty).
    func requestFinished(kind: String, outcome: Outcome, reason: String = "") {
        outcomes.withLock { $0[OutcomeKey(kind: kind, outcome: outcome, reason: reason), default: 0] &+= 1 }
    }

    /// A request refused by `limit`.
    func rateLimitHit(_ limit: Limit) {
        rateLimited.withLock { $0[limit, default: 0] &+= 1 }
    }

    /// Finished requests deleted by the retention sweep.
    func requestsPurged(_ count: Int) {
        purged.add(UInt64(max(0, count)), ordering: .relaxed)
    }

    /// Audit events deleted by the retention sweep.
    func auditEventsPurged(_ count: Int) {
        auditPurged.add(UInt64(max(0, count)), ordering: .relaxed)
    }

    /// One webhook POST's outcome.
    func webhookAttempt(_ outcome: WebhookOutcome) {
        webhooks.withLock { $0[outcome, default: 0] &+= 1 }
    }

    /// Gauges read at scrape time, from the store and the process.
    struct Gauges {
        var pendingRequests: Int?
        var outboxWaiters: Int
        var databaseErrors: UInt64
    }

    /// Everything in the Prometheus text exposition format 0.0.4, series sorted so a scrape is deterministic.
    func exposition(_ gauges: Gauges) -> String {
        var text = PrometheusText()
        text.family("faceseal_http_requests_total", "counter", "HTTP requests answered, by method, route pattern and status.")
        let series = (routes.withLock { $0 } + [unmatched]).map { ($0, $0.counts.withLock { $0 }) }
        for (route, counts) in series {
            for (status, count) in counts.statuses.sorted(by: { $0.key < $1.key }) {
                text.sample("faceseal_http_requests_total", [("method", route.method), ("route", route.route), ("status", String(status))], count)
            }
        }
        text.family("faceseal_http_request_duration_seconds", "histogram", "Time from the handler's start to its response, by method and route pattern.")
        for (route, counts) in series where counts.count > 0 {
            let labels = [("method", route.method), ("route", route.route)]
            var cumulative: UInt64 = 0
            for (index, bound) in Self.latencyBounds.enumerated() {
                cumulative &+= counts.buckets[index]
                text.sample("faceseal_http_request_duration_seconds_bucket", labels + [("le", PrometheusText.number(bound))], cumulative)
            }
            text.sample("faceseal_http_request_duration_seconds_bucket", labels + [("le", "+Inf")], counts.count)
            text.sample("faceseal_http_request_duration_seconds_sum", labels, PrometheusText.number(Double(counts.sumMicros) / 1_000_000))
            text.sample("faceseal_http_request_duration_seconds_count", labels, counts.count)
        }
        text.family("faceseal_requests_created_total", "counter", "CIBA requests created, by kind (login or the PKI kind).")
        for (kind, count) in created.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            text.sample("faceseal_requests_created_total", [("kind", kind)], count)
        }
        text.family("faceseal_requests_finished_total", "counter",
                    "CIBA requests that left pending, by kind, outcome (succeeded, denied, expired, stale) and deny reason.")
        let finished = outcomes.withLock { $0 }.sorted { ($0.key.kind, $0.key.outcome.rawValue, $0.key.reason) < ($1.key.kind, $1.key.outcome.rawValue, $1.key.reason) }
        for (key, count) in finished {
            text.sample("faceseal_requests_finished_total", [("kind", key.kind), ("outcome", key.outcome.rawValue), ("reason", key.reason)], count)
        }
        if let pending = gauges.pendingRequests {
            text.family("faceseal_requests_pending", "gauge", "Unexpired pending CIBA requests in the database (every process).")
            text.sample("faceseal_requests_pending", [], UInt64(max(0, pending)))
        }
        text.family("faceseal_outbox_waiters", "gauge", "Device long polls of the link outbox waiting in this process.")
        text.sample("faceseal_outbox_waiters", [], UInt64(max(0, gauges.outboxWaiters)))
        text.family("faceseal_database_errors_total", "counter", "Store operations that failed with a database error.")
        text.sample("faceseal_database_errors_total", [], gauges.databaseErrors)
        text.family("faceseal_rate_limited_total", "counter", "Requests refused by a rate limit, by limit.")
        let limited = rateLimited.withLock { $0 }
        for limit in Limit.allCases {
            text.sample("faceseal_rate_limited_total", [("limit", limit.rawValue)], limited[limit] ?? 0)
        }
        text.family("faceseal_webhook_deliveries_total", "counter", "Webhook push attempts, by outcome (delivered, retried, failed).")
        let deliveries = webhooks.withLock { $0 }
        for outcome in WebhookOutcome.allCases {
            text.sample("faceseal_webhook_deliveries_total", [("outcome", outcome.rawValue)], deliveries[outcome] ?? 0)
        }
        text.family("faceseal_requests_purged_total", "counter", "Finished CIBA requests deleted by the retention sweep of this process.")
        text.sample("faceseal_requests_purged_total", [], purged.load(ordering: .relaxed))
        text.family("faceseal_audit_events_purged_total", "counter", "Audit events deleted by the retention sweep of this process.")
        text.sample("faceseal_audit_events_purged_total", [], auditPurged.load(ordering: .relaxed))
        return text.output
    }
}

/// Builds Prometheus text exposition (format 0.0.4): `# HELP`, `# TYPE`, then `name{label="value"} number` lines.
struct PrometheusText {
    private(set) var output = ""

    mutating func family(_ name: String, _ type: String, _ help: String) {
        output += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: UInt64) {
        sample(name, labels, String(value))
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        output += name
        if !labels.isEmpty {
            output += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        output += " \(value)\n"
    }

    /// A label value with `\`, `"` and line feeds escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A float as Prometheus reads it (`0.0005`, `1`, `2.5`).
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
