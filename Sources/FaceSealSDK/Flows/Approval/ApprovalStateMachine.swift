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

    /// The face-capture step's progress. The budgets are the authority's counts, updated from every report.
    struct Capture: FaceCheckProgress {
        var attemptsLeft: Int
        var captureRetriesLeft: Int
        var lastRetryReason: FaceCaptureRetryReason?
        var livenessChallenge: LivenessChallenge?

        mutating func count(_ kind: AttemptKind) {
            switch kind {
            case .faceMismatch: attemptsLeft -= 1
            case .captureRetry: captureRetriesLeft -= 1
            }
        }

        mutating func absorb(_ remaining: AttemptBudget) {
            attemptsLeft = remaining.attemptsLeft
            captureRetriesLeft = remaining.captureRetriesLeft
        }

        var exhaustion: (failure: FailureReason, abort: AbortReason)? {
            ApprovalStateMachine.exhaustion(attemptsLeft: attemptsLeft, captureRetriesLeft: captureRetriesLeft)
        }
    }

    /// The shared sub-steps, embedded in `State`: the token's password (its typed form is a plain string here).
    typealias TokenUnlock = TokenUnlockStateMachine<String>
    /// The shared sub-steps, embedded in `State`: the face check, counted by the authority.
    typealias FaceCheck = FaceCheckStateMachine<Capture>

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
        /// Read the request with the ambient key of the identity `asking` → `requestDetailsReceived` /
        /// `requestDetailsRefused`.
        case fetchRequestDetails(VerifiedLink, asking: KeyRecord)
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
        case fetchingDetails(VerifiedLink, IdentitySelection)
        case downloadingToken(RequestDetails)
        /// `livenessRequired`: the header's or the tenant's (whichever asks for it).
        case unlockingToken(RequestDetails, livenessRequired: Bool, TokenUnlock)
        case checkingFace(RequestDetails, FaceCheck)
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
    /// The identity that acts for the request, once its details answered it (every later signed call is its).
    private(set) var identity: KeyRecord?

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
        case .unlockingToken(_, _, let unlock): .downloadingFaceToken(passwordRequired: unlock.prompt.passwordRequired, lastPasswordError: unlock.prompt.lastError)
        case .checkingFace(let details, let check) where check.phase == .awaitingCapture: .awaitingFaceCapture(details, check.progress)
        case .checkingFace, .preparingCompletion: .verifying
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
        guard case .unlockingToken = state else { return .none }
        return modifyTokenUnlock("submitPassword") { $0.submitPassword(password, isEmpty: password.isEmpty) }
    }

    mutating func submitFaceCapture(_ capture: CapturedFace) -> Action {
        guard case .checkingFace = state else { return .none }
        return modifyFaceCheck("submitFaceCapture") { $0.submitCapture(capture) }
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
        case .fetchingDetails(let link, _):
            state = .failed(.cancelled)
            return .abort(requestId: link.requestId, reason: .userCancelled)
        case .deliveryFailed(let details, _, _):
            state = .failed(.deliveryFailed)
            return .abort(requestId: details.requestId, reason: .deliveryFailed)
        case .postingResultFailed(_, _, .staleToken):
            // The authority already ended the request when it refused the completion.
            state = .failed(.staleToken)
            return .none
        case .downloadingToken(let details), .unlockingToken(let details, _, _), .checkingFace(let details, _),
            .preparingCompletion(let details), .delivering(let details, _),
            .postingResult(let details, _), .postingResultFailed(let details, _, _):
            state = .failed(.cancelled)
            return .abort(requestId: details.requestId, reason: .userCancelled)
        }
    }

    // MARK: - Driver results

    /// The link verified; `candidates` are the device's usable identities at its authority, most recent first.
    mutating func linkVerified(_ link: VerifiedLink, candidates: [KeyRecord]) -> Action {
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
            let (selection, action) = IdentitySelection.start(candidates)
            return lift(action, link, selection)
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

    /// The asked identity read the details; `candidates` are the usable identities at the link's authority now.
    mutating func requestDetailsReceived(_ details: RequestDetails, among candidates: [KeyRecord]) -> Action {
        switch state {
        case .fetchingDetails(let link, let selection):
            guard case .chosen(let record) = selection.answered(details, among: candidates) else {
                return detailsFailed(.linkRefused(.unknownIdentity))
            }
            identity = record
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

    /// Reading the details failed; `settled` is the asked identity's record on its new keys when the driver settled
    /// a rotation the refusal revealed.
    mutating func requestDetailsRefused(_ failure: AuthorityFailure, settled: KeyRecord?) -> Action {
        switch state {
        case .fetchingDetails(let link, var selection):
            let action = selection.refused(failure, settled: settled)
            return lift(action, link, selection)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("requestDetailsRefused in state \(state)")
        }
    }

    mutating func faceTokenDownloaded(passwordRequired: Bool, livenessRequired: Bool) -> Action {
        switch state {
        case .downloadingToken(let details):
            // Wrong passwords left before the flow gives up: the request's `attemptsMax` (checked on the device only).
            let (unlock, action) = TokenUnlock.start(passwordRequired: passwordRequired, known: nil, passwordAttempts: details.attemptsMax)
            // The stricter of the header and the tenant's current policy.
            state = .unlockingToken(details, livenessRequired: livenessRequired || details.livenessRequired, unlock)
            return lift(action, details)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenDownloaded in state \(state)")
        }
    }

    /// The token opened; `challenge` is the first liveness challenge (ignored when the token does not require liveness).
    mutating func faceTokenOpened(challenge: LivenessChallenge?) -> Action {
        switch state {
        case .unlockingToken(let details, let liveness, let unlock):
            unlock.opened()
            let capture = Capture(
                attemptsLeft: details.attemptsLeft,
                captureRetriesLeft: details.captureRetriesLeft,
                lastRetryReason: nil,
                livenessChallenge: liveness ? challenge : nil
            )
            state = .checkingFace(details, FaceCheck(livenessRequired: liveness, counting: .authority, verification: .match, progress: capture))
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenOpened in state \(state)")
        }
    }

    mutating func faceTokenOpenFailed(_ error: FaceTokenOpenError) -> Action {
        modifyTokenUnlock("faceTokenOpenFailed") { $0.openFailed(error) }
    }

    /// Liveness result; `nextChallenge` is shown if the user must capture again.
    mutating func livenessChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        modifyFaceCheck("livenessChecked") { $0.livenessChecked(outcome, nextChallenge: nextChallenge) }
    }

    /// Match result; `nextChallenge` is shown if the user must capture again.
    mutating func faceMatchChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        modifyFaceCheck("faceMatchChecked") { $0.verified(outcome, nextChallenge: nextChallenge) }
    }

    /// The authority counted the failure: what the request has left. A spent budget means the authority has
    /// already denied the request, so no abort is needed.
    mutating func attemptReported(_ remaining: AttemptBudget) -> Action {
        modifyFaceCheck("attemptReported") { $0.reported(remaining) }
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
        case .checkingFace(_, let check) where check.isReporting:
            guard case .transient = failure else {
                state = .failed(Self.failureReason(for: failure))
                return .none
            }
            return modifyFaceCheck("authorityFailed") { $0.reportFailed() }
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

    // MARK: - Sub-machines

    private mutating func lift(_ action: IdentitySelection.Action, _ link: VerifiedLink, _ selection: IdentitySelection?) -> Action {
        switch action {
        case .ask(let record):
            guard let selection else { preconditionFailure("an identity asked without a selection") }
            state = .fetchingDetails(link, selection)
            return .fetchRequestDetails(link, asking: record)
        case .chosen:
            preconditionFailure("an identity is chosen by requestDetailsReceived")
        case .failed(let failure):
            return detailsFailed(failure)
        }
    }

    /// The details could not be read with any identity: a refused or answered link waits for another one.
    private mutating func detailsFailed(_ failure: AuthorityFailure) -> Action {
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
    }

    /// Runs `event` on the embedded token unlock and lifts what it asks for. A late result after the end is dropped;
    /// one in another state traps.
    private mutating func modifyTokenUnlock(_ event: String, with body: (inout TokenUnlock) -> TokenUnlock.Action) -> Action {
        switch state {
        case .unlockingToken(let details, let liveness, var unlock):
            let action = body(&unlock)
            state = .unlockingToken(details, livenessRequired: liveness, unlock)
            return lift(action, details)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("\(event) in state \(state)")
        }
    }

    private mutating func lift(_ action: TokenUnlock.Action, _ details: RequestDetails) -> Action {
        switch action {
        case .none:
            return .none
        case .open(let password):
            return .openFaceToken(password: password)
        case .passwordAttemptsExhausted:
            state = .failed(.passwordAttemptsExhausted)
            return .abort(requestId: details.requestId, reason: .passwordAttemptsExhausted)
        case .unusable:
            state = .failed(.faceTokenUnusable)
            return .none
        }
    }

    /// Runs `event` on the embedded face check and lifts what it asks for. A late result after the end is dropped;
    /// one in another state traps.
    private mutating func modifyFaceCheck(_ event: String, with body: (inout FaceCheck) -> FaceCheck.Action) -> Action {
        switch state {
        case .checkingFace(let details, var check):
            let action = body(&check)
            state = .checkingFace(details, check)
            switch action {
            case .none:
                return .none
            case .checkLiveness(let capture, let challenge):
                return .checkLiveness(capture, challenge: challenge)
            case .verify(let capture):
                return .matchFace(capture)
            case .report(let kind):
                return .reportAttempt(requestId: details.requestId, kind: kind)
            case .passed:
                state = .preparingCompletion(details)
                return .prepareCompletion(details)
            case .exhausted(let failure, let abort):
                state = .failed(failure)
                return abort.map { .abort(requestId: details.requestId, reason: $0) } ?? .none
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("\(event) in state \(state)")
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
