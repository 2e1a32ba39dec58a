import FaceSealWire
import Foundation

/// The life of a stored CIBA request, as one pure value: what an event does to the row, decided on the row as the
/// store's transaction locked it and the transaction's instant. The store writes the decision with its
/// compare-and-swap in the SQL `WHERE` (the request's `state`, the face token's generation and id), so every rule
/// of which step a request may take, and when, lives here and nowhere else (docs/ARCHITECTURE.md "Machines").
enum RequestLifecycle {
    /// What can happen to a request.
    enum Event: Sendable, Hashable {
        /// A key of the request's user and application fetches its details.
        case deliver
        /// A key downloads the user's face token for it.
        case downloadToken
        /// A failed face check, reported by a key that did or did not download the token for it, counted under the
        /// tenant's current policy.
        case countFailure(AttemptKind, downloaded: Bool, policy: TenantPolicy)
        /// The device aborts, or the user refuses, with a reason (`DenialReason`).
        case deny(reason: String)
        /// Its user or application is deleted: a pending request ends denied, also past its expiry.
        case withdraw(reason: String)
        /// A completion (SPEC §5.3).
        case complete(CompletionClaim)
        /// The application polls the token endpoint.
        case poll
        /// An ID token is issued for it.
        case issueIDToken
        /// The sweep finds it.
        case expire
    }

    /// What a completion claims, with what the store knows of the claiming key.
    struct CompletionClaim: Sendable, Hashable {
        /// The generation the completing key downloaded for this request (nil: it downloaded none).
        var downloadedGeneration: Int64?
        /// The generation the completion names as the one it rotated from.
        var expectedGeneration: Int64
        /// The rotated token's generation.
        var rotatedGeneration: Int64
        /// SHA-256 of the delivery body.
        var receiptSHA256: [UInt8]?
    }

    /// What the store does.
    enum Decision: Sendable, Hashable {
        /// The step is refused; nothing changes.
        case refuse(AuthorityStoreError)
        /// Nothing to write: the row as stored is the answer (a repeat, or a request the event no longer concerns).
        case unchanged
        /// The step goes ahead; the request stays pending.
        case proceed
        /// A counted failure: the new counts; with `denyReason`, the budget is spent and the request ends denied.
        case count(attempts: Int, captureRetries: Int, denyReason: String?)
        /// Polled sooner than the interval after the last poll: the raised interval (CIBA Core §7.3 `slow_down`).
        case slowDown(intervalSeconds: Int)
        /// The poll is recorded; the state stays.
        case recordPoll
        /// The request ends denied with a reason.
        case deny(reason: String)
        /// The request ends expired.
        case expire
        /// Store the rotated token: the request ends `completed` when the token's compare-and-swap stores it, else
        /// `stale`.
        case rotate
        /// Store the ID token.
        case storeIDToken
    }

    /// What `event` does to `row` at `now`. A pending request past its expiry is refused as `expired`, whether or not
    /// the sweep has written that yet.
    static func decide(_ event: Event, _ row: CIBARequestRecord, now: Date) -> Decision {
        let live = row.state == .pending && now < row.expiresAt
        let notLive = AuthorityStoreError.requestNotPending(authReqID: row.authReqID, state: row.state == .pending ? .expired : row.state)
        switch event {
        case .deliver, .downloadToken:
            return live ? .proceed : .refuse(notLive)

        case .countFailure(let kind, let downloaded, let policy):
            guard live else { return .refuse(notLive) }
            // Only the key that downloaded the token ran a face check for this request.
            guard downloaded else {
                return .refuse(.invalidInput(field: "keyID", reason: "this key did not download the token for the request"))
            }
            var counted = row
            switch kind {
            case .faceMismatch: counted.attempts += 1
            case .captureRetry: counted.captureRetries += 1
            }
            let budget = AttemptBudget(counted, policy: policy)
            let reason = budget.isSpent ? (budget.attemptsLeft == 0 ? "attempts_exhausted" : "capture_retries_exhausted") : nil
            return .count(attempts: counted.attempts, captureRetries: counted.captureRetries, denyReason: reason)

        case .deny(let reason):
            if row.state == .denied && row.denyReason == reason { return .unchanged }
            return live ? .deny(reason: reason) : .refuse(notLive)

        case .withdraw(let reason):
            return row.state == .pending ? .deny(reason: reason) : .unchanged

        case .complete(let claim):
            switch row.state {
            case .denied, .expired:
                return .refuse(.requestNotPending(authReqID: row.authReqID, state: row.state))
            case .completed, .stale, .pending:
                break
            }
            // A completion (or its retry: the download row stays) comes only from the key that downloaded, naming the
            // generation it downloaded.
            guard claim.downloadedGeneration == claim.expectedGeneration else {
                return .refuse(.invalidInput(field: "expectedGeneration", reason: "not a generation this key downloaded for the request"))
            }
            switch row.state {
            case .completed:
                let same = row.receiptSHA256 == claim.receiptSHA256 && row.stagedGeneration == claim.rotatedGeneration
                return same ? .unchanged : .refuse(.completionMismatch(authReqID: row.authReqID))
            case .stale:
                return row.receiptSHA256 == claim.receiptSHA256 ? .unchanged : .refuse(.completionMismatch(authReqID: row.authReqID))
            case .pending, .denied, .expired:
                guard live else { return .refuse(notLive) }
                // The receipt is what the ID token of a ceremony vouches for; a sign-in delivers nothing.
                if row.kind == .ceremony && claim.receiptSHA256 == nil {
                    return .refuse(.invalidInput(field: "receiptSHA256", reason: "a ceremony's completion needs the receipt"))
                }
                return .rotate
            }

        case .poll:
            guard row.state == .pending else { return .recordPoll }
            guard live else { return .expire }
            if let last = row.lastPolledAt, now < last.addingTimeInterval(TimeInterval(row.intervalSeconds)) {
                return .slowDown(intervalSeconds: row.intervalSeconds + 5)
            }
            return .recordPoll

        case .issueIDToken:
            guard row.state == .completed else { return .refuse(.requestNotPending(authReqID: row.authReqID, state: row.state)) }
            return row.idToken == nil ? .storeIDToken : .unchanged

        case .expire:
            return row.state == .pending && !live ? .expire : .unchanged
        }
    }
}
