public import Foundation

/// Approves a CIBA sign-in: the ceremony flow without the key operation and the delivery.
public final class LoginFlow: Sendable {
    /// The sign-in's states.
    public enum State: Sendable, Hashable {
        /// Waiting for a link; `refusal` says why the last one was refused (it may name the other flow).
        case awaitingLink(refusal: LinkRefusal?)
        /// Reading the request and the face token; when `passwordRequired`, call `submitPassword(password:)`.
        case downloadingFaceToken(passwordRequired: Bool, lastPasswordError: PasswordError?)
        /// Show who asks, then run a face capture and call `submitFaceCapture(captureSession:)`.
        case awaitingFaceCapture(
            bindingMessage: String?, rpLabel: String, branding: Branding?, expiresAtUnix: Int64,
            attemptsLeft: Int, lastRetryReason: FaceCaptureRetryReason?, livenessChallenge: LivenessChallenge?
        )
        /// Liveness and match in progress.
        case verifying
        /// POSTing the completion to the authority.
        case postingResult
        /// The completion failed. Not terminal when `reason.isRetryable`: `retry()` re-posts; otherwise (a stale token)
        /// offer only cancel.
        case postingResultFailed(reason: CompletionFailureReason)
        /// Signed in. Terminal.
        case succeeded(rpLabel: String, timestamp: Date)
        /// Ended without success. Terminal.
        case failed(reason: FailureReason)

        /// True for `succeeded` and `failed`.
        public var isTerminal: Bool {
            switch self {
            case .succeeded, .failed: true
            default: false
            }
        }

        init(_ view: ApprovalStateMachine.View) {
            switch view {
            case .awaitingLink(let refusal):
                self = .awaitingLink(refusal: refusal)
            case .downloadingFaceToken(let required, let error):
                self = .downloadingFaceToken(passwordRequired: required, lastPasswordError: error)
            case .awaitingFaceCapture(let details, let capture):
                self = .awaitingFaceCapture(
                    bindingMessage: details.bindingMessage, rpLabel: details.rpLabel, branding: details.branding,
                    expiresAtUnix: details.expiresAtUnix, attemptsLeft: capture.attemptsLeft,
                    lastRetryReason: capture.lastRetryReason, livenessChallenge: capture.livenessChallenge
                )
            case .verifying:
                self = .verifying
            case .deliveringResult, .deliveryFailed:
                preconditionFailure("a sign-in has no delivery")
            case .postingResult:
                self = .postingResult
            case .postingResultFailed(let reason):
                self = .postingResultFailed(reason: reason)
            case .succeeded(let label, _, let timestamp):
                self = .succeeded(rpLabel: label, timestamp: timestamp)
            case .failed(let reason):
                self = .failed(reason: reason)
            }
        }
    }

    private let broadcaster: StateBroadcaster<State>
    private let driver: ApprovalDriver

    init(ring: KeyRing) {
        let broadcaster = StateBroadcaster<State>(.awaitingLink(refusal: nil))
        self.broadcaster = broadcaster
        driver = ApprovalDriver(mode: .login, ring: ring) { view, terminal in
            broadcaster.publish(State(view), terminal: terminal)
        }
    }

    /// The current state first, then every change; finishes after a terminal state. Any number of subscribers.
    public func stateStream() -> AsyncStream<State> { broadcaster.stream() }

    /// The current state.
    public var state: State { broadcaster.current }

    /// Submits the raw link bytes.
    public func submitLinkPayload(payload: [UInt8]) { driver.submitLink(payload) }

    /// Submits the raw link bytes.
    public func submitLinkPayload(payload: Data) { driver.submitLink(Array(payload)) }

    /// Submits the face token's password (when `downloadingFaceToken.passwordRequired`).
    public func submitPassword(password: String) { driver.submitPassword(password) }

    /// Submits a finished face capture session.
    public func submitFaceCapture(captureSession: any FaceCaptureSession) { driver.submitFaceCapture(captureSession) }

    /// Re-posts the completion (`postingResultFailed`, retryable).
    public func retry() { driver.retry() }

    /// Ends the flow locally; the application learns when the request expires.
    public func cancel() { driver.cancel() }

    /// Ends the flow and signs an abort (`user_cancelled`), so the application's token request answers `access_denied`
    /// at once: the sign-in counterpart of `PkiCeremonyFlow.cancelCeremony()`. Prefer it for a user's "Decline".
    /// The flow does the same by itself when the attempts or the password tries are spent.
    public func cancelLogin() { driver.cancelCeremony() }

    /// Waits until the flow's background work has finished, including a fire-and-forget abort or
    /// rollback after the flow ended. For hosts that exit after a flow (the `faceseal device` CLI).
    public func waitUntilIdle() async { await driver.waitUntilIdle() }
}
