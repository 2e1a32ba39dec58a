public import Foundation

/// Answers an application's face-PKI request: its public keys, a signature or a shared secret.
///
/// Start one per link with `Authenticator.startPkiCeremonyFlow()`, observe ``stateStream()``,
/// and feed the user's inputs. Every input method returns at once; the outcome shows in the state.
/// After the face match the SDK delivers the signed result to the application, then posts the
/// completion to the authority — never in the other order.
public final class PkiCeremonyFlow: Sendable {
    /// The ceremony's states.
    public enum State: Sendable, Hashable {
        /// Waiting for a link; `refusal` says why the last one was refused (it may name the other flow).
        case awaitingLink(refusal: LinkRefusal?)
        /// Reading the request and the face token; when `passwordRequired`, call `submitPassword(password:)`.
        case downloadingFaceToken(passwordRequired: Bool, lastPasswordError: PasswordError?)
        /// Show the approval screen, then run a face capture and call `submitFaceCapture(captureSession:)`.
        case awaitingFaceCapture(
            bindingMessage: String, kind: PkiCeremonyKind, rpLabel: String, branding: Branding?, expiresAtUnix: Int64,
            attemptsLeft: Int, lastRetryReason: FaceCaptureRetryReason?, livenessChallenge: LivenessChallenge?
        )
        /// Liveness, match and key operation in progress.
        case verifying
        /// POSTing the signed result to the application.
        case deliveringResult
        /// The application refused the result or could not be reached. Not terminal: `retry()`
        /// re-sends the same bytes, `cancelCeremony()` gives up.
        case deliveryFailed(status: DeliveryFailureStatus)
        /// POSTing the completion to the authority.
        case postingResult
        /// The completion failed. Not terminal when `reason.isRetryable`: `retry()` re-posts; otherwise (a stale token)
        /// offer only cancel.
        case postingResultFailed(reason: CompletionFailureReason)
        /// Done. Terminal.
        case succeeded(rpLabel: String, kind: PkiCeremonyKind, timestamp: Date)
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
                guard let kind = details.pkiKind, let message = details.bindingMessage else {
                    preconditionFailure("ceremony capture state without a kind or binding message")
                }
                self = .awaitingFaceCapture(
                    bindingMessage: message, kind: kind, rpLabel: details.rpLabel, branding: details.branding,
                    expiresAtUnix: details.expiresAtUnix, attemptsLeft: capture.attemptsLeft,
                    lastRetryReason: capture.lastRetryReason, livenessChallenge: capture.livenessChallenge
                )
            case .verifying:
                self = .verifying
            case .deliveringResult:
                self = .deliveringResult
            case .deliveryFailed(let status):
                self = .deliveryFailed(status: status)
            case .postingResult:
                self = .postingResult
            case .postingResultFailed(let reason):
                self = .postingResultFailed(reason: reason)
            case .succeeded(let label, let kind, let timestamp):
                guard let kind else { preconditionFailure("ceremony succeeded without a kind") }
                self = .succeeded(rpLabel: label, kind: kind, timestamp: timestamp)
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
        driver = ApprovalDriver(mode: .ceremony, ring: ring) { view, terminal in
            broadcaster.publish(State(view), terminal: terminal)
        }
    }

    /// The current state first, then every change; finishes after a terminal state. Any number of subscribers.
    public func stateStream() -> AsyncStream<State> { broadcaster.stream() }

    /// The current state.
    public var state: State { broadcaster.current }

    /// Submits the raw link bytes (push payload, universal link or QR code).
    public func submitLinkPayload(payload: [UInt8]) { driver.submitLink(payload) }

    /// Submits the raw link bytes.
    public func submitLinkPayload(payload: Data) { driver.submitLink(Array(payload)) }

    /// Submits the face token's password (when `downloadingFaceToken.passwordRequired`).
    public func submitPassword(password: String) { driver.submitPassword(password) }

    /// Submits a finished face capture session.
    public func submitFaceCapture(captureSession: any FaceCaptureSession) { driver.submitFaceCapture(captureSession) }

    /// Re-sends the same delivery (`deliveryFailed`) or re-posts the completion (`postingResultFailed`, retryable).
    public func retry() { driver.retry() }

    /// Ends the flow locally; the authority and the application learn only when the request expires.
    public func cancel() { driver.cancel() }

    /// Ends the flow and signs an abort, so the application learns at once. Prefer it for a user action.
    public func cancelCeremony() { driver.cancelCeremony() }

    /// Waits until the flow's background work has finished, including a fire-and-forget abort or
    /// rollback after the flow ended. For hosts that exit after a flow (the `faceseal device` CLI).
    public func waitUntilIdle() async { await driver.waitUntilIdle() }
}
