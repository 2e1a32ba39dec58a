/// The pure state machine behind `KeyRotationFlow` and `RevocationFlow` (SPEC §6.2): a
/// confirmation showing what is affected → `approve()` / `cancel()` → the user-present gate →
/// submit → `succeeded` or `failed`.
///
/// Generic over what is confirmed (`Subject`: every key, or one key) and what success reports
/// (`Outcome`), because both flows have exactly this shape and differ only in those payloads.
///
/// A cancelled prompt returns to the confirmation (the user may approve again); an unavailable or
/// invalidated user-present key ends the flow, keeping every key (SPEC §6.1). Once submitted, the
/// flow cannot be cancelled: the make-before-break sequence finishes or is reconciled by `open()`.
struct GatedSubmissionStateMachine<Subject: Equatable & Sendable, Outcome: Equatable & Sendable>: Sendable {
    enum Action: Equatable, Sendable {
        case none
        /// Ask the `UserPresence` provider → `userPresenceConfirmed` / `userPresenceFailed`.
        case confirmUserPresence
        /// Perform the submission with the proof → `submissionSucceeded` / `submissionFailed`.
        case submit(Subject, UserPresenceProof)
    }

    enum View: Equatable, Sendable {
        case confirming(Subject)
        case awaitingUserPresence
        case submitting
        case succeeded(Outcome)
        case failed(reason: FailureReason)
    }

    private enum State: Equatable {
        case confirming(Subject)
        case awaitingUserPresence(Subject)
        case submitting(Subject)
        case succeeded(Outcome)
        case failed(FailureReason)
    }

    private var state: State

    init(subject: Subject) {
        state = .confirming(subject)
    }

    var isTerminal: Bool {
        switch state {
        case .succeeded, .failed: true
        default: false
        }
    }

    var view: View {
        switch state {
        case .confirming(let subject): .confirming(subject)
        case .awaitingUserPresence: .awaitingUserPresence
        case .submitting: .submitting
        case .succeeded(let outcome): .succeeded(outcome)
        case .failed(let reason): .failed(reason: reason)
        }
    }

    // MARK: - User inputs (ignored where they do not apply)

    mutating func approve() -> Action {
        guard case .confirming(let subject) = state else { return .none }
        state = .awaitingUserPresence(subject)
        return .confirmUserPresence
    }

    mutating func cancel() -> Action {
        switch state {
        case .confirming, .awaitingUserPresence:
            state = .failed(.cancelled)
            return .none
        case .submitting, .succeeded, .failed:
            return .none
        }
    }

    // MARK: - Driver results

    mutating func userPresenceConfirmed(_ proof: UserPresenceProof) -> Action {
        switch state {
        case .awaitingUserPresence(let subject):
            state = .submitting(subject)
            return .submit(subject, proof)
        case .succeeded, .failed:
            return .none
        case .confirming, .submitting:
            preconditionFailure("userPresenceConfirmed in state \(state)")
        }
    }

    mutating func userPresenceFailed(_ error: SignKeypairError) -> Action {
        switch state {
        case .awaitingUserPresence(let subject):
            if error.code == .userCancelled {
                state = .confirming(subject)
            } else {
                state = .failed(.userPresence(error.code))
            }
            return .none
        case .succeeded, .failed:
            return .none
        case .confirming, .submitting:
            preconditionFailure("userPresenceFailed in state \(state)")
        }
    }

    mutating func submissionSucceeded(_ outcome: Outcome) -> Action {
        guard case .submitting = state else { preconditionFailure("submissionSucceeded in state \(state)") }
        state = .succeeded(outcome)
        return .none
    }

    mutating func submissionFailed(_ reason: FailureReason) -> Action {
        guard case .submitting = state else { preconditionFailure("submissionFailed in state \(state)") }
        state = .failed(reason)
        return .none
    }
}
