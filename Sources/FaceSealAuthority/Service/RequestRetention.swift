import Foundation

// How long finished requests are kept (`faceseal serve --request-retention`; docs/PROTOCOL.md §11, "Retention of
// finished requests").
extension Authority {
    /// Requests one purge transaction deletes, and the most transactions one sweep runs (the next sweep takes the rest).
    static let retentionSweep = (batch: 500, batches: 20)

    /// The retention sweep, which `AuthorityService` runs every minute: pending requests past their expiry are expired
    /// (`expireOverdueRequests()`), then finished requests whose expiry passed `configuration.requestRetention` seconds
    /// ago or more are deleted with their token downloads, queued links and browser sign-in, in transactions of
    /// 500 and at most 10,000 a sweep, so a backlog never holds the database for long (counted in
    /// `faceseal_requests_purged_total`). Audit events stay. Returns how many requests it deleted (none when the
    /// retention is off).
    public func sweepRequests() async throws -> Int {
        try await expireOverdueRequests()
        guard let retention = configuration.requestRetention else { return 0 }
        var purged = 0
        for _ in 0..<Self.retentionSweep.batches {
            let deleted = try await store.purgeFinishedRequests(expiredFor: TimeInterval(retention), limit: Self.retentionSweep.batch)
            purged += deleted
            metrics.requestsPurged(deleted)
            if deleted < Self.retentionSweep.batch { break }
        }
        if purged > 0 { log.event(.info, "requests.purged", ["count": .int(purged)]) }
        return purged
    }

    /// Expires every pending request past its expiry (each audited `request.expired` by the store) and counts each as
    /// finished in `metrics`: what the sweep and a read of the audit log do first.
    func expireOverdueRequests() async throws {
        for request in try await store.expireOverdueRequests() { countOutcome(request) }
    }

    /// Runs `sweepRequests()` after every `interval` until the task is cancelled (`sleep` throws then). A failed sweep
    /// is logged and tried again at the next.
    func sweepRequestsPeriodically(every interval: Duration,
                                   sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) async {
        while (try? await sleep(interval)) != nil {
            do {
                _ = try await sweepRequests()
            } catch {
                log.event(.warn, "requests.sweep_failed", ["error": .string(String(reflecting: type(of: error)))])
            }
        }
    }
}
