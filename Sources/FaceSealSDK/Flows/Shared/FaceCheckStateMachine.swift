import struct FaceSealWire.AttemptBudget

/// What a face check counts and shows: the outer machine's capture progress.
protocol FaceCheckProgress: Equatable, Sendable {
    var lastRetryReason: FaceCaptureRetryReason? { get set }
    var livenessChallenge: LivenessChallenge? { get set }
    /// Counts one failure on the device (a report that did not arrive, or a flow the authority does not count for).
    mutating func count(_ kind: AttemptKind)
    /// Takes the authority's count.
    mutating func absorb(_ remaining: AttemptBudget)
    /// The spent budget, if any: how the flow fails and the abort that tells the authority.
    var exhaustion: (failure: FailureReason, abort: AbortReason)? { get }
}

/// The face check an approval and a further device's enrolment share, with SPEC §5.4's attempt rule: liveness runs
/// before the match, only a face mismatch spends an attempt, a liveness or capture-quality failure returns to the
/// capture with its reason. The outer machine embeds it in its state and lifts its actions.
struct FaceCheckStateMachine<Progress: FaceCheckProgress>: Equatable, Sendable {
    /// Who counts the failures.
    enum Counting: Equatable, Sendable {
        /// Each failure is reported; the authority's answer is the count (an approval).
        case authority
        /// The device counts (an enrolment).
        case device
    }

    /// What verifies the face once liveness passed.
    enum Verification: Equatable, Sendable {
        /// A match against the opened token's templates: a failure may spend an attempt.
        case match
        /// A first enrolment's template extraction: a failure spends nothing.
        case extraction
    }

    /// Where the check stands.
    enum Phase: Equatable, Sendable {
        case awaitingCapture
        case checkingLiveness(CapturedFace)
        case verifying(CapturedFace)
        /// The progress already names the retry reason and the next challenge; the counts come with the answer.
        case reporting(AttemptKind)
    }

    /// What the outer machine must do.
    enum Action: Equatable, Sendable {
        /// Nothing: wait for a capture.
        case none
        /// → `livenessChecked(_:nextChallenge:)`.
        case checkLiveness(CapturedFace, challenge: LivenessChallenge?)
        /// Match or extract → `verified(_:nextChallenge:)`.
        case verify(CapturedFace)
        /// Report the failure → `reported(_:)` / `reportFailed()`.
        case report(AttemptKind)
        /// The face is verified.
        case passed
        /// A budget is spent; `abort` is set when the authority has not counted it.
        case exhausted(FailureReason, abort: AbortReason?)
    }

    let livenessRequired: Bool
    let counting: Counting
    let verification: Verification
    private(set) var progress: Progress
    private(set) var phase: Phase = .awaitingCapture

    init(livenessRequired: Bool, counting: Counting, verification: Verification, progress: Progress) {
        self.livenessRequired = livenessRequired
        self.counting = counting
        self.verification = verification
        self.progress = progress
    }

    /// A finished capture; ignored unless one is asked for.
    mutating func submitCapture(_ capture: CapturedFace) -> Action {
        guard case .awaitingCapture = phase else { return .none }
        if livenessRequired {
            phase = .checkingLiveness(capture)
            return .checkLiveness(capture, challenge: progress.livenessChallenge)
        }
        phase = .verifying(capture)
        return .verify(capture)
    }

    mutating func livenessChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        guard case .checkingLiveness(let capture) = phase else { preconditionFailure("livenessChecked while \(phase)") }
        switch outcome {
        case .passed:
            phase = .verifying(capture)
            return .verify(capture)
        case .retry(let reason):
            // A liveness or capture-quality failure never spends a face-mismatch attempt; it has its own budget.
            return failed(reason, counted: .captureRetry, nextChallenge: nextChallenge)
        }
    }

    /// The match's (or the extraction's) result.
    mutating func verified(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        guard case .verifying = phase else { preconditionFailure("face verified while \(phase)") }
        switch outcome {
        case .passed:
            return .passed
        case .retry(let reason):
            let kind: AttemptKind? = switch verification {
            case .match: reason.spendsAttempt ? .faceMismatch : .captureRetry
            case .extraction: nil
            }
            return failed(reason, counted: kind, nextChallenge: nextChallenge)
        }
    }

    /// The authority counted the failure. A spent budget means it has already ended the request: no abort.
    mutating func reported(_ remaining: AttemptBudget) -> Action {
        guard case .reporting = phase else { preconditionFailure("attemptReported while \(phase)") }
        progress.absorb(remaining)
        if let exhausted = progress.exhaustion { return .exhausted(exhausted.failure, abort: nil) }
        phase = .awaitingCapture
        return .none
    }

    /// The report did not arrive: count on the device, and tell the authority with an abort when spent.
    mutating func reportFailed() -> Action {
        guard case .reporting(let kind) = phase else { preconditionFailure("report failed while \(phase)") }
        return counted(kind)
    }

    /// Whether a report is in flight (the outer machine takes an authority failure only then).
    var isReporting: Bool {
        if case .reporting = phase { true } else { false }
    }

    private mutating func failed(_ reason: FaceCaptureRetryReason, counted kind: AttemptKind?, nextChallenge: LivenessChallenge?) -> Action {
        progress.lastRetryReason = reason
        progress.livenessChallenge = livenessRequired ? nextChallenge : nil
        guard let kind else {
            phase = .awaitingCapture
            return .none
        }
        switch counting {
        case .authority:
            // The authority counts every failure; its answer decides whether the user may capture again.
            phase = .reporting(kind)
            return .report(kind)
        case .device:
            return counted(kind)
        }
    }

    private mutating func counted(_ kind: AttemptKind) -> Action {
        progress.count(kind)
        if let exhausted = progress.exhaustion { return .exhausted(exhausted.failure, abort: exhausted.abort) }
        phase = .awaitingCapture
        return .none
    }
}
