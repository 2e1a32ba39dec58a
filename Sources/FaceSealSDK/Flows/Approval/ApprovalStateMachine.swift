import FaceSealWire
import Foundation

/// The pure state machine shared by `PkiCeremonyFlow` and `LoginFlow`.
///
/// One machine rather than two because the sign-in flow mirrors the ceremony step for step
/// (SPEC §7) and differs only after the face match (no key operation, no delivery); the mode
/// decides those steps, and each public flow maps ``view`` onto its own `State`.
///
/// Events are mutating functions returning the ``Action`` the driver must perform; the driver feeds
/// the result back as the next event. No I/O, clock or randomness here: the driver supplies the
/// liveness challenges and timestamps in events.
///
/// User inputs (link, password, capture, retry, cancel) arriving in a state that does not take them
/// are ignored (a double tap must not crash the host app). A driver result arriving after the flow
/// ended is dropped (the user may cancel while a call is in flight). A driver result in any other
/// state that did not ask for it is a driver bug and traps with the state in the message.
struct ApprovalStateMachine: Sendable {
    /// Which public flow runs the machine.
    enum Mode: Equatable, Sendable {
        case login
        case ceremony
    }

    /// Ceremonies need device protocol 7 (SPEC §4.1).
    static let ceremonyMinimumProtocol = 7

    /// What the flow needs from the token header and the policy.
    struct TokenInfo: Equatable, Sendable {
        var passwordRequired: Bool
        /// The header's or the tenant's (whichever asks for it).
        var livenessRequired: Bool
        /// Wrong passwords left before the flow gives up (the request's `attemptsMax`; checked on the device only).
        var passwordAttemptsLeft: Int
    }

    /// The face-capture step's progress. The budgets are the authority's counts, updated from every report.
    struct Capture: Equatable, Sendable {
        var attemptsLeft: Int
        var captureRetriesLeft: Int
        var lastRetryReason: FaceCaptureRetryReason?
        var livenessChallenge: LivenessChallenge?
    }

    /// Everything the post-match calls send, kept so that `retry()` re-sends the same bytes.
    struct PreparedResult: Equatable, Sendable {
        var delivery: DeliveryRequest?
        var completion: CompletionSubmission
    }

    /// What the driver must do next.
    enum Action: Equatable, Sendable {
        /// Nothing.
        case none
        /// Verify the link (`AuthorityClient.verifyLink`) → `linkVerified` / `linkRefused`.
        case verifyLink(payload: [UInt8])
        /// Read the request → `requestDetailsReceived` / `authorityFailed`.
        case fetchRequestDetails(VerifiedLink)
        /// Download the face token → `faceTokenDownloaded` / `authorityFailed`.
        case downloadFaceToken(requestId: String)
        /// Open the downloaded token → `faceTokenOpened` / `faceTokenOpenFailed`.
        case openFaceToken(password: String?)
        /// Run the liveness check → `livenessChecked`.
        case checkLiveness(CapturedFace, challenge: LivenessChallenge?)
        /// Match the face against the opened token → `faceMatchChecked`.
        case matchFace(CapturedFace)
        /// Report a failed face check to the authority → `attemptReported` / `authorityFailed`.
        case reportAttempt(requestId: String, kind: AttemptKind)
        /// Fill keys, do the key operation, build and sign the delivery, re-seal the token
        /// → `completionPrepared` / `completionPreparationFailed`.
        case prepareCompletion(RequestDetails)
        /// POST the delivery → `deliveryFinished`.
        case deliver(DeliveryRequest)
        /// POST the completion → `completionAccepted` / `authorityFailed`.
        case postCompletion(CompletionSubmission)
        /// Sign an abort (fire and forget: the flow has already ended).
        case abort(requestId: String, reason: AbortReason)
    }

    /// What the public flows show; each maps it onto its own `State`.
    enum View: Equatable, Sendable {
        case awaitingLink(refusal: LinkRefusal?)
        case downloadingFaceToken(passwordRequired: Bool, lastPasswordError: PasswordError?)
        case awaitingFaceCapture(RequestDetails, Capture)
        case verifying
        case deliveringResult
        case deliveryFailed(status: DeliveryFailureStatus)
        case postingResult
        case postingResultFailed(reason: CompletionFailureReason)
        case succeeded(rpLabel: String, kind: PkiCeremonyKind?, timestamp: Date)
        case failed(reason: FailureReason)
    }

    private enum State: Equatable {
        case awaitingLink(refusal: LinkRefusal?)
        case verifyingLink
        case fetchingDetails(VerifiedLink)
        case downloadingToken(RequestDetails)
        case awaitingPassword(RequestDetails, TokenInfo, lastError: PasswordError?)
        case openingToken(RequestDetails, TokenInfo)
        case awaitingFaceCapture(RequestDetails, TokenInfo, Capture)
        case checkingLiveness(RequestDetails, TokenInfo, Capture, CapturedFace)
        case matchingFace(RequestDetails, TokenInfo, Capture, CapturedFace)
        /// `Capture` already names the retry reason and the next challenge; the counts come with the answer.
        case reportingFailure(RequestDetails, TokenInfo, Capture, AttemptKind)
        case preparingCompletion(RequestDetails)
        case delivering(RequestDetails, PreparedResult)
        case deliveryFailed(RequestDetails, PreparedResult, DeliveryFailureStatus)
        case postingResult(RequestDetails, PreparedResult)
        case postingResultFailed(RequestDetails, PreparedResult, CompletionFailureReason)
        case succeeded(rpLabel: String, kind: PkiCeremonyKind?, timestamp: Date)
        case failed(FailureReason)
    }

    let mode: Mode
    /// The device protocol this SDK speaks (7; settable so tests can play an older SDK).
    let deviceProtocol: Int
    private var state: State = .awaitingLink(refusal: nil)

    init(mode: Mode, deviceProtocol: Int) {
        self.mode = mode
        self.deviceProtocol = deviceProtocol
    }

    /// True once the flow has ended (`succeeded` or `failed`).
    var isTerminal: Bool {
        switch state {
        case .succeeded, .failed: true
        default: false
        }
    }

    /// What the public flow shows for the current state.
    var view: View {
        switch state {
        case .awaitingLink(let refusal): .awaitingLink(refusal: refusal)
        case .verifyingLink: .awaitingLink(refusal: nil)
        case .fetchingDetails, .downloadingToken: .downloadingFaceToken(passwordRequired: false, lastPasswordError: nil)
        case .awaitingPassword(_, _, let error): .downloadingFaceToken(passwordRequired: true, lastPasswordError: error)
        case .openingToken(_, let info): .downloadingFaceToken(passwordRequired: info.passwordRequired, lastPasswordError: nil)
        case .awaitingFaceCapture(let details, _, let capture): .awaitingFaceCapture(details, capture)
        case .checkingLiveness, .matchingFace, .reportingFailure, .preparingCompletion: .verifying
        case .delivering: .deliveringResult
        case .deliveryFailed(_, _, let status): .deliveryFailed(status: status)
        case .postingResult: .postingResult
        case .postingResultFailed(_, _, let reason): .postingResultFailed(reason: reason)
        case .succeeded(let label, let kind, let timestamp): .succeeded(rpLabel: label, kind: kind, timestamp: timestamp)
        case .failed(let reason): .failed(reason: reason)
        }
    }

    // MARK: - User inputs (ignored where they do not apply)

    mutating func submitLink(_ payload: [UInt8]) -> Action {
        guard case .awaitingLink = state else { return .none }
        state = .verifyingLink
        return .verifyLink(payload: payload)
    }

    mutating func submitPassword(_ password: String) -> Action {
        guard case .awaitingPassword(let details, let info, _) = state else { return .none }
        guard !password.isEmpty else {
            state = .awaitingPassword(details, info, lastError: .empty)
            return .none
        }
        state = .openingToken(details, info)
        return .openFaceToken(password: password)
    }

    mutating func submitFaceCapture(_ capture: CapturedFace) -> Action {
        guard case .awaitingFaceCapture(let details, let info, let progress) = state else { return .none }
        if info.livenessRequired {
            state = .checkingLiveness(details, info, progress, capture)
            return .checkLiveness(capture, challenge: progress.livenessChallenge)
        }
        state = .matchingFace(details, info, progress, capture)
        return .matchFace(capture)
    }

    /// `retry()`: re-sends the stored delivery or re-posts the stored completion.
    mutating func retry() -> Action {
        switch state {
        case .deliveryFailed(let details, let prepared, _):
            guard let delivery = prepared.delivery else {
                preconditionFailure("deliveryFailed without a delivery in mode \(mode)")
            }
            state = .delivering(details, prepared)
            return .deliver(delivery)
        case .postingResultFailed(let details, let prepared, let reason) where reason.isRetryable:
            state = .postingResult(details, prepared)
            return .postCompletion(prepared.completion)
        default:
            return .none
        }
    }

    /// `cancel()`: ends the flow locally; the authority learns at expiry.
    mutating func cancel() -> Action {
        switch state {
        case .succeeded, .failed:
            return .none
        case .postingResultFailed(_, _, .staleToken):
            state = .failed(.staleToken)
            return .none
        default:
            state = .failed(.cancelled)
            return .none
        }
    }

    /// `cancelCeremony()`: ends the flow and signs an abort so the application learns at once.
    mutating func cancelCeremony() -> Action {
        switch state {
        case .succeeded, .failed:
            return .none
        case .awaitingLink, .verifyingLink:
            // No request is known yet: there is nothing to abort.
            state = .failed(.cancelled)
            return .none
        case .fetchingDetails(let link):
            state = .failed(.cancelled)
            return .abort(requestId: link.requestId, reason: .userCancelled)
        case .deliveryFailed(let details, _, _):
            state = .failed(.deliveryFailed)
            return .abort(requestId: details.requestId, reason: .deliveryFailed)
        case .postingResultFailed(_, _, .staleToken):
            // The authority already ended the request when it refused the completion.
            state = .failed(.staleToken)
            return .none
        case .downloadingToken(let details), .awaitingPassword(let details, _, _), .openingToken(let details, _),
            .awaitingFaceCapture(let details, _, _), .checkingLiveness(let details, _, _, _), .matchingFace(let details, _, _, _),
            .reportingFailure(let details, _, _, _), .preparingCompletion(let details), .delivering(let details, _),
            .postingResult(let details, _), .postingResultFailed(let details, _, _):
            state = .failed(.cancelled)
            return .abort(requestId: details.requestId, reason: .userCancelled)
        }
    }

    // MARK: - Driver results

    mutating func linkVerified(_ link: VerifiedLink) -> Action {
        switch state {
        case .verifyingLink:
            if let refusal = refusalForOtherFlow(link.kind) {
                state = .awaitingLink(refusal: refusal)
                return .none
            }
            if mode == .ceremony && deviceProtocol < Self.ceremonyMinimumProtocol {
                state = .failed(.upgradeRequired)
                return .none
            }
            state = .fetchingDetails(link)
            return .fetchRequestDetails(link)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("linkVerified in state \(state)")
        }
    }

    mutating func linkRefused(_ refusal: LinkRefusal) -> Action {
        switch state {
        case .verifyingLink:
            state = .awaitingLink(refusal: refusal)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("linkRefused in state \(state)")
        }
    }

    mutating func requestDetailsReceived(_ details: RequestDetails) -> Action {
        switch state {
        case .fetchingDetails(let link):
            if let violation = violation(in: details, for: link) {
                state = .failed(.protocolViolation(violation))
                return .none
            }
            if details.minimumDeviceProtocol > deviceProtocol {
                state = .failed(.upgradeRequired)
                return .none
            }
            // A budget spent already (the tenant lowered it meanwhile): give up, and say so.
            if let exhausted = Self.exhaustion(attemptsLeft: details.attemptsLeft, captureRetriesLeft: details.captureRetriesLeft) {
                state = .failed(exhausted.failure)
                return .abort(requestId: details.requestId, reason: exhausted.abort)
            }
            state = .downloadingToken(details)
            return .downloadFaceToken(requestId: details.requestId)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("requestDetailsReceived in state \(state)")
        }
    }

    mutating func faceTokenDownloaded(passwordRequired: Bool, livenessRequired: Bool) -> Action {
        switch state {
        case .downloadingToken(let details):
            // The stricter of the header and the tenant's current policy.
            let info = TokenInfo(passwordRequired: passwordRequired, livenessRequired: livenessRequired || details.livenessRequired,
                                 passwordAttemptsLeft: details.attemptsMax)
            if passwordRequired {
                state = .awaitingPassword(details, info, lastError: nil)
                return .none
            }
            state = .openingToken(details, info)
            return .openFaceToken(password: nil)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenDownloaded in state \(state)")
        }
    }

    /// The token opened; `challenge` is the first liveness challenge (ignored when the token does not require liveness).
    mutating func faceTokenOpened(challenge: LivenessChallenge?) -> Action {
        switch state {
        case .openingToken(let details, let info):
            let capture = Capture(
                attemptsLeft: details.attemptsLeft,
                captureRetriesLeft: details.captureRetriesLeft,
                lastRetryReason: nil,
                livenessChallenge: info.livenessRequired ? challenge : nil
            )
            state = .awaitingFaceCapture(details, info, capture)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenOpened in state \(state)")
        }
    }

    mutating func faceTokenOpenFailed(_ error: FaceTokenOpenError) -> Action {
        switch state {
        case .openingToken(let details, var info):
            switch error {
            case .wrongPassword where info.passwordRequired:
                info.passwordAttemptsLeft -= 1
                if info.passwordAttemptsLeft <= 0 {
                    state = .failed(.passwordAttemptsExhausted)
                    return .abort(requestId: details.requestId, reason: .passwordAttemptsExhausted)
                }
                state = .awaitingPassword(details, info, lastError: .incorrect)
            case .passwordRequired:
                // The header said no password; the token says otherwise. Ask for it.
                info.passwordRequired = true
                state = .awaitingPassword(details, info, lastError: nil)
            case .wrongPassword, .unusable:
                state = .failed(.faceTokenUnusable)
            }
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenOpenFailed in state \(state)")
        }
    }

    /// Liveness result; `nextChallenge` is shown if the user must capture again.
    mutating func livenessChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        switch state {
        case .checkingLiveness(let details, let info, var progress, let capture):
            switch outcome {
            case .passed:
                state = .matchingFace(details, info, progress, capture)
                return .matchFace(capture)
            case .retry(let reason):
                // A liveness or capture-quality failure never spends a face-mismatch attempt; it has its own budget.
                progress.lastRetryReason = reason
                progress.livenessChallenge = nextChallenge
                state = .reportingFailure(details, info, progress, .captureRetry)
                return .reportAttempt(requestId: details.requestId, kind: .captureRetry)
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("livenessChecked in state \(state)")
        }
    }

    /// Match result; `nextChallenge` is shown if the user must capture again.
    mutating func faceMatchChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        switch state {
        case .matchingFace(let details, let info, var progress, _):
            switch outcome {
            case .passed:
                state = .preparingCompletion(details)
                return .prepareCompletion(details)
            case .retry(let reason):
                // The authority counts every failure; its answer decides whether the user may capture again.
                let kind: AttemptKind = reason.spendsAttempt ? .faceMismatch : .captureRetry
                progress.lastRetryReason = reason
                progress.livenessChallenge = info.livenessRequired ? nextChallenge : nil
                state = .reportingFailure(details, info, progress, kind)
                return .reportAttempt(requestId: details.requestId, kind: kind)
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceMatchChecked in state \(state)")
        }
    }

    /// The authority counted the failure: what the request has left. A spent budget means the authority has
    /// already denied the request, so no abort is needed.
    mutating func attemptReported(_ remaining: AttemptBudget) -> Action {
        switch state {
        case .reportingFailure(let details, let info, var progress, _):
            progress.attemptsLeft = remaining.attemptsLeft
            progress.captureRetriesLeft = remaining.captureRetriesLeft
            if let exhausted = Self.exhaustion(attemptsLeft: remaining.attemptsLeft, captureRetriesLeft: remaining.captureRetriesLeft) {
                state = .failed(exhausted.failure)
                return .none
            }
            state = .awaitingFaceCapture(details, info, progress)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("attemptReported in state \(state)")
        }
    }

    mutating func completionPrepared(_ prepared: PreparedResult) -> Action {
        switch state {
        case .preparingCompletion(let details):
            switch (mode, prepared.delivery) {
            case (.ceremony, .some(let delivery)):
                state = .delivering(details, prepared)
                return .deliver(delivery)
            case (.login, .none):
                state = .postingResult(details, prepared)
                return .postCompletion(prepared.completion)
            case (.ceremony, .none), (.login, .some):
                preconditionFailure("completionPrepared with delivery \(prepared.delivery != nil) in mode \(mode)")
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("completionPrepared in state \(state)")
        }
    }

    mutating func completionPreparationFailed(_ error: KeyOperationError) -> Action {
        switch state {
        case .preparingCompletion(let details):
            // Known only after the match; the application learns at once through the abort.
            state = .failed(Self.failureReason(for: error))
            return .abort(requestId: details.requestId, reason: .refused)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("completionPreparationFailed in state \(state)")
        }
    }

    mutating func deliveryFinished(_ outcome: DeliveryOutcome) -> Action {
        switch state {
        case .delivering(let details, let prepared):
            switch outcome {
            case .accepted:
                // Complete only after the application accepted the delivery (SPEC §4.4).
                state = .postingResult(details, prepared)
                return .postCompletion(prepared.completion)
            case .refused(let status):
                state = .deliveryFailed(details, prepared, .refused(httpStatus: status))
                return .none
            case .unreachable(let description):
                state = .deliveryFailed(details, prepared, .unreachable(description))
                return .none
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("deliveryFinished in state \(state)")
        }
    }

    /// The authority recorded the completion at `timestamp`.
    mutating func completionAccepted(timestamp: Date) -> Action {
        switch state {
        case .postingResult(let details, _):
            state = .succeeded(rpLabel: details.rpLabel, kind: details.pkiKind, timestamp: timestamp)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("completionAccepted in state \(state)")
        }
    }

    /// An authority call (details, token download, failure report or completion) failed.
    mutating func authorityFailed(_ failure: AuthorityFailure) -> Action {
        switch state {
        case .reportingFailure(let details, let info, var progress, let kind):
            guard case .transient = failure else {
                state = .failed(Self.failureReason(for: failure))
                return .none
            }
            // The report did not arrive: count on the device, and tell the authority with an abort when spent.
            switch kind {
            case .faceMismatch: progress.attemptsLeft -= 1
            case .captureRetry: progress.captureRetriesLeft -= 1
            }
            if let exhausted = Self.exhaustion(attemptsLeft: progress.attemptsLeft, captureRetriesLeft: progress.captureRetriesLeft) {
                state = .failed(exhausted.failure)
                return .abort(requestId: details.requestId, reason: exhausted.abort)
            }
            state = .awaitingFaceCapture(details, info, progress)
            return .none
        case .fetchingDetails:
            switch failure {
            case .linkRefused(let refusal):
                state = .awaitingLink(refusal: refusal)
            case .requestNotPending:
                state = .awaitingLink(refusal: .alreadyAnswered)
            case .requestExpired:
                state = .awaitingLink(refusal: .expired)
            default:
                state = .failed(Self.failureReason(for: failure))
            }
            return .none
        case .downloadingToken:
            state = .failed(Self.failureReason(for: failure))
            return .none
        case .postingResult(let details, let prepared):
            switch failure {
            case .transient(let description):
                state = .postingResultFailed(details, prepared, .transient(description))
            case .staleToken:
                state = .postingResultFailed(details, prepared, .staleToken)
            case .signing(let error):
                // A cancelled or unavailable prompt keeps the prepared result: the user may try again.
                state = .postingResultFailed(details, prepared, .userPresence(error.code))
            default:
                state = .failed(Self.failureReason(for: failure))
            }
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("authorityFailed(\(failure)) in state \(state)")
        }
    }

    // MARK: - Pure helpers

    private func refusalForOtherFlow(_ kind: LinkKind) -> LinkRefusal? {
        switch (mode, kind) {
        case (.login, .login), (.ceremony, .ceremony): nil
        case (_, .login): .isLoginLink
        case (_, .ceremony): .isPkiCeremonyLink
        case (_, .enrolment): .isEnrolmentLink
        }
    }

    private func violation(in details: RequestDetails, for link: VerifiedLink) -> String? {
        if details.requestId != link.requestId { return "request details for another request" }
        if details.attemptsMax < 1 { return "attemptsMax below 1" }
        switch mode {
        case .login:
            if details.pkiKind != nil { return "ceremony details for a sign-in link" }
        case .ceremony:
            if details.pkiKind == nil { return "sign-in details for a ceremony link" }
            if details.bindingMessage?.isEmpty ?? true { return "ceremony without a binding message" }
            if details.deliveryEndpoint == nil || (details.clientNotificationToken?.isEmpty ?? true) {
                return "ceremony without a delivery endpoint or bearer"
            }
        }
        return nil
    }

    /// Which budget is spent, if any: the face-mismatch budget first.
    static func exhaustion(attemptsLeft: Int, captureRetriesLeft: Int) -> (failure: FailureReason, abort: AbortReason)? {
        if attemptsLeft <= 0 { return (.attemptsExhausted, .attemptsExhausted) }
        if captureRetriesLeft <= 0 { return (.captureRetriesExhausted, .captureRetriesExhausted) }
        return nil
    }

    static func failureReason(for failure: AuthorityFailure) -> FailureReason {
        switch failure {
        case .linkRefused(let refusal): .protocolViolation("link refusal \(refusal.rawValue) after the link was accepted")
        case .requestNotPending: .requestNoLongerPending
        case .requestExpired: .requestExpired
        case .upgradeRequired: .upgradeRequired
        case .staleToken: .staleToken
        case .deviceKeyRevoked: .deviceKeyRevoked
        case .deviceKeyTerminated: .deviceKeyTerminated
        case .deviceKeyReplaced: .deviceKeyRevoked
        case .refused(let code, _): .authorityRefused(code: code)
        case .transient(let description): .authorityUnavailable(description)
        case .invalidResponse(let description): .protocolViolation(description)
        case .signing(let error): .userPresence(error.code)
        case .approvalPending: .protocolViolation("approval_pending outside a further device's enrolment")
        }
    }

    static func failureReason(for error: KeyOperationError) -> FailureReason {
        switch error {
        case .notPermitted: .keyOperationNotPermitted
        case .unsupportedAlgorithm: .unsupportedKeyAlgorithm
        case .invalidData: .invalidPkiData
        case .internalFailure: .faceTokenUnusable
        }
    }
}
