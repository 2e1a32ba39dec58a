import FaceSealTestSupport
import FaceSealWire
import Foundation
import Testing
@testable import FaceSealAuthority

/// Every stored state × every event of a CIBA request's lifecycle (`RequestLifecycle.decide`), for a sign-in and a
/// ceremony. The view is the state the row holds once the decision is written (a rotation: `completed` when the
/// token's compare-and-swap stores it); the action is the decision; `.ignored` is `.unchanged`.
@Suite struct RequestLifecycleTests {
    typealias Decision = RequestLifecycle.Decision
    typealias Outcome = TransitionOutcome<CIBARequestState, Decision>

    /// The rows the table starts from.
    enum Stage: String, CaseIterable, Codable, Sendable {
        case pending, pendingPolledJustNow, pendingAtExpiry, completed, completedRedeemed, stale, denied, expired

        var state: CIBARequestState {
            switch self {
            case .pending, .pendingPolledJustNow, .pendingAtExpiry: .pending
            case .completed, .completedRedeemed: .completed
            case .stale: .stale
            case .denied: .denied
            case .expired: .expired
            }
        }
        var isLive: Bool { self == .pending || self == .pendingPolledJustNow }
    }

    /// Every event, with the variations its rules tell apart.
    enum Event: String, CaseIterable, Codable, Sendable {
        case deliver, downloadToken
        case mismatch, captureRetry, mismatchSpendingBudget, captureRetrySpendingBudget, failureWithoutDownload
        case denyCancelled, denyRefused, withdraw
        case complete, completeOtherReceipt, completeWithoutReceipt, completeWithoutDownload
        case poll, issueIDToken, expire
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let receipt: [UInt8] = Array(repeating: 7, count: 32)
    static let otherReceipt: [UInt8] = Array(repeating: 8, count: 32)

    static func receipt(_ kind: CIBARequestKind) -> [UInt8]? { kind == .ceremony ? receipt : nil }

    static func row(_ kind: CIBARequestKind, _ stage: Stage) -> CIBARequestRecord {
        var row = CIBARequestRecord(authReqID: "req-1", tenantID: "acme", clientID: "app-1", subject: "user-1", kind: kind,
                                    pkiKind: kind == .ceremony ? "sign" : nil, expiresAt: now.addingTimeInterval(60), intervalSeconds: 5,
                                    state: stage.state, createdAt: now.addingTimeInterval(-60))
        switch stage {
        case .pending, .expired: break
        case .pendingPolledJustNow: row.lastPolledAt = now.addingTimeInterval(-1)
        case .pendingAtExpiry: row.expiresAt = now
        case .completed, .completedRedeemed, .stale:
            row.stagedGeneration = 5
            row.receiptSHA256 = receipt(kind)
            if stage == .completedRedeemed { row.idToken = "a.b.c" }
        case .denied: row.denyReason = "user_cancelled"
        }
        return row
    }

    static func event(_ kind: CIBARequestKind, _ event: Event) -> RequestLifecycle.Event {
        func claim(downloaded: Int64? = 4, receipt: [UInt8]?) -> RequestLifecycle.Event {
            .complete(.init(downloadedGeneration: downloaded, expectedGeneration: 4, rotatedGeneration: 5, receiptSHA256: receipt))
        }
        switch event {
        case .deliver: return .deliver
        case .downloadToken: return .downloadToken
        case .mismatch: return .countFailure(.faceMismatch, downloaded: true, policy: TenantPolicy())
        case .captureRetry: return .countFailure(.captureRetry, downloaded: true, policy: TenantPolicy())
        case .mismatchSpendingBudget: return .countFailure(.faceMismatch, downloaded: true, policy: TenantPolicy(attemptsMax: 1))
        case .captureRetrySpendingBudget: return .countFailure(.captureRetry, downloaded: true, policy: TenantPolicy(captureRetriesMax: 1))
        case .failureWithoutDownload: return .countFailure(.faceMismatch, downloaded: false, policy: TenantPolicy())
        case .denyCancelled: return .deny(reason: "user_cancelled")
        case .denyRefused: return .deny(reason: "refused")
        case .withdraw: return .withdraw(reason: "user_deleted")
        case .complete: return claim(receipt: receipt(kind))
        case .completeOtherReceipt: return claim(receipt: kind == .ceremony ? otherReceipt : receipt)
        case .completeWithoutReceipt: return claim(receipt: nil)
        case .completeWithoutDownload: return claim(downloaded: nil, receipt: receipt(kind))
        case .poll: return .poll
        case .issueIDToken: return .issueIDToken
        case .expire: return .expire
        }
    }

    /// The state a written decision leaves.
    static func state(after decision: Decision, from state: CIBARequestState) -> CIBARequestState {
        switch decision {
        case .deny, .count(_, _, _?): .denied
        case .expire: .expired
        case .rotate: .completed
        case .refuse, .unchanged, .proceed, .count, .slowDown, .recordPoll, .storeIDToken: state
        }
    }

    /// The whole table.
    static func expected(_ kind: CIBARequestKind, _ stage: Stage, _ event: Event) -> Outcome {
        let state = stage.state
        func refused(_ error: AuthorityStoreError) -> Outcome { .transition(state, .refuse(error)) }
        let notPending = refused(.requestNotPending(authReqID: "req-1", state: state))
        // A pending request past its expiry refuses as `expired`, written or not.
        let notLive = stage == .pendingAtExpiry ? refused(.requestNotPending(authReqID: "req-1", state: .expired)) : notPending
        let mismatch = refused(.completionMismatch(authReqID: "req-1"))
        let notDownloaded = refused(.invalidInput(field: "expectedGeneration", reason: "not a generation this key downloaded for the request"))

        switch (event, stage) {
        // Steps a device takes on a live request.
        case (.deliver, _) where stage.isLive, (.downloadToken, _) where stage.isLive:
            return .transition(.pending, .proceed)
        case (.mismatch, _) where stage.isLive:
            return .transition(.pending, .count(attempts: 1, captureRetries: 0, denyReason: nil))
        case (.captureRetry, _) where stage.isLive:
            return .transition(.pending, .count(attempts: 0, captureRetries: 1, denyReason: nil))
        case (.mismatchSpendingBudget, _) where stage.isLive:
            return .transition(.denied, .count(attempts: 1, captureRetries: 0, denyReason: "attempts_exhausted"))
        case (.captureRetrySpendingBudget, _) where stage.isLive:
            return .transition(.denied, .count(attempts: 0, captureRetries: 1, denyReason: "capture_retries_exhausted"))
        case (.failureWithoutDownload, _) where stage.isLive:
            return refused(.invalidInput(field: "keyID", reason: "this key did not download the token for the request"))
        case (.deliver, _), (.downloadToken, _), (.mismatch, _), (.captureRetry, _), (.mismatchSpendingBudget, _),
             (.captureRetrySpendingBudget, _), (.failureWithoutDownload, _):
            return notLive

        // Denial: a repeat with the same reason is the stored answer.
        case (.denyCancelled, .denied):
            return .ignored
        case (.denyCancelled, _) where stage.isLive:
            return .transition(.denied, .deny(reason: "user_cancelled"))
        case (.denyRefused, _) where stage.isLive:
            return .transition(.denied, .deny(reason: "refused"))
        case (.denyCancelled, _), (.denyRefused, _):
            return notLive
        case (.withdraw, _) where state == .pending:
            return .transition(.denied, .deny(reason: "user_deleted"))
        case (.withdraw, _):
            return .ignored

        // Completion: a finished request refuses before the download is asked; then the download; then the state.
        case (.complete, .denied), (.complete, .expired), (.completeOtherReceipt, .denied), (.completeOtherReceipt, .expired),
             (.completeWithoutReceipt, .denied), (.completeWithoutReceipt, .expired), (.completeWithoutDownload, .denied),
             (.completeWithoutDownload, .expired):
            return notPending
        case (.completeWithoutDownload, _):
            return notDownloaded
        case (.complete, .completed), (.complete, .completedRedeemed), (.complete, .stale):
            return .ignored
        case (.completeOtherReceipt, .completed), (.completeOtherReceipt, .completedRedeemed), (.completeOtherReceipt, .stale):
            return mismatch
        case (.completeWithoutReceipt, .completed), (.completeWithoutReceipt, .completedRedeemed), (.completeWithoutReceipt, .stale):
            return kind == .login ? .ignored : mismatch
        case (.completeWithoutReceipt, _) where stage.isLive && kind == .ceremony:
            return refused(.invalidInput(field: "receiptSHA256", reason: "a ceremony's completion needs the receipt"))
        case (.complete, _) where stage.isLive, (.completeOtherReceipt, _) where stage.isLive, (.completeWithoutReceipt, _) where stage.isLive:
            return .transition(.completed, .rotate)
        case (.complete, _), (.completeOtherReceipt, _), (.completeWithoutReceipt, _):
            return notLive

        // The token endpoint.
        case (.poll, .pendingPolledJustNow):
            return .transition(.pending, .slowDown(intervalSeconds: 10))
        case (.poll, .pendingAtExpiry):
            return .transition(.expired, .expire)
        case (.poll, _):
            return .transition(state, .recordPoll)
        case (.issueIDToken, .completed):
            return .transition(.completed, .storeIDToken)
        case (.issueIDToken, .completedRedeemed):
            return .ignored
        case (.issueIDToken, _):
            return notPending

        // The sweep.
        case (.expire, .pendingAtExpiry):
            return .transition(.expired, .expire)
        case (.expire, _):
            return .ignored
        }
    }

    struct PairCase: Codable, Sendable, CustomTestStringConvertible {
        let kind: CIBARequestKind
        let stage: Stage
        let event: Event
        var testDescription: String { "\(kind.rawValue): \(stage.rawValue) × \(event.rawValue)" }
    }

    static let pairs: [PairCase] = CIBARequestKind.allCases.flatMap { kind in
        Stage.allCases.flatMap { stage in Event.allCases.map { PairCase(kind: kind, stage: stage, event: $0) } }
    }

    @Test("every stored state × every event", arguments: pairs)
    func decision(_ pair: PairCase) {
        let row = Self.row(pair.kind, pair.stage)
        let decision = RequestLifecycle.decide(Self.event(pair.kind, pair.event), row, now: Self.now)
        expectTransition(Self.expected(pair.kind, pair.stage, pair.event), before: row.state,
                         after: Self.state(after: decision, from: row.state), action: decision, none: .unchanged)
    }

    @Test func tableCoversEveryPairAndEveryDecision() {
        #expect(Self.pairs.count == CIBARequestKind.allCases.count * Stage.allCases.count * Event.allCases.count)
        let decisions = Set(Self.pairs.map { RequestLifecycle.decide(Self.event($0.kind, $0.event), Self.row($0.kind, $0.stage), now: Self.now) })
        let shapes = Set(decisions.map { decision -> String in
            switch decision {
            case .refuse: "refuse"
            case .unchanged: "unchanged"
            case .proceed: "proceed"
            case .count: "count"
            case .slowDown: "slowDown"
            case .recordPoll: "recordPoll"
            case .deny: "deny"
            case .expire: "expire"
            case .rotate: "rotate"
            case .storeIDToken: "storeIDToken"
            }
        })
        #expect(shapes.count == 10)
    }
}
