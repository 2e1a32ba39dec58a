import Foundation

// How long finished requests and audit events are kept (`faceseal serve --request-retention`, `--audit-retention`;
// docs/PROTOCOL.md §11, "Retention of finished requests").
extension Authority {
    /// Rows one purge transaction deletes, and the most transactions one sweep runs for each kind: with a sweep every
    /// `retentionSweepInterval` that keeps up with 5,000 finished requests (and as many audit events) a second, in
    /// transactions of 50 rows, so the writes committed with one wait little; a backlog goes over the next sweeps.
    static let retentionSweep = (batch: 50, batches: 100)
    /// How often `AuthorityService` sweeps.
    static let retentionSweepInterval = Duration.seconds(1)

    /// The retention sweep of requests, which `AuthorityService` runs every second: pending requests past their
    /// expiry are expired (`expireOverdueRequests()`), then finished requests whose expiry passed
    /// `configuration.requestRetention` seconds ago or more are deleted with their token downloads, queued links and
    /// browser sign-in, oldest first, in transactions of 50 (counted in `faceseal_requests_purged_total`). Audit events
    /// stay. Returns how many requests it deleted (none when the retention is off).
    public func sweepRequests() async throws -> Int {
        try await expireOverdueRequests()
        guard let retention = configuration.requestRetention else { return 0 }
        let purged = try await purgeInBatches { try await self.store.purgeFinishedRequests(expiredFor: TimeInterval(retention), limit: $0) }
        metrics.requestsPurged(purged)
        if purged > 0 { log.event(.info, "requests.purged", ["count": .int(purged)]) }
        return purged
    }

    /// The retention sweep of the audit log: events recorded `configuration.auditRetention` seconds ago or more are
    /// deleted, oldest first, in transactions of 50 (counted in `faceseal_audit_events_purged_total`). Returns how
    /// many it deleted (none when the retention is off, the default).
    public func sweepAuditEvents() async throws -> Int {
        guard let retention = configuration.auditRetention else { return 0 }
        let purged = try await purgeInBatches { try await self.store.purgeAuditEvents(olderThan: TimeInterval(retention), limit: $0) }
        metrics.auditEventsPurged(purged)
        if purged > 0 { log.event(.info, "audit.purged", ["count": .int(purged)]) }
        return purged
    }

    /// Calls `purge` with the batch size until it deletes fewer or the sweep's batches are spent; the total deleted.
    private func purgeInBatches(_ purge: (Int) async throws -> Int) async throws -> Int {
        var purged = 0
        for _ in 0..<Self.retentionSweep.batches {
            let deleted = try await purge(Self.retentionSweep.batch)
            purged += deleted
            if deleted < Self.retentionSweep.batch { break }
        }
        return purged
    }

    /// Expires every pending request past its expiry (each audited `request.expired` by the store) and counts each as
    /// finished in `metrics`: what the sweep and a read of the audit log do first.
    func expireOverdueRequests() async throws {
        for request in try await store.expireOverdueRequests() { countOutcome(request) }
    }

    /// Runs `sweepRequests()` and `sweepAuditEvents()` after every `interval` until the task is cancelled (`sleep`
    /// throws then). Each is run whether or not the other failed; a failed one is logged (`requests.sweep_failed`,
    /// `audit.sweep_failed`) and tried again at the next interval.
    func sweepRequestsPeriodically(every interval: Duration,
                                   sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) async {
        while (try? await sleep(interval)) != nil {
            await logFailure("requests.sweep_failed") { _ = try await sweepRequests() }
            await logFailure("audit.sweep_failed") { _ = try await sweepAuditEvents() }
        }
    }

    /// Runs `sweep`; logs `event` with the error's type when it throws.
    private func logFailure(_ event: String, _ sweep: () async throws -> Void) async {
        do {
            try await sweep()
        } catch {
            log.event(.warn, event, ["error": .string(String(reflecting: type(of: error)))])
        }
    }
}
