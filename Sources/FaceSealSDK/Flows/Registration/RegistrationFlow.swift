public import Foundation

/// Enrols this device for an identity at an application: from the enrolment link to two device
/// keys (ambient and user-present) registered with the authority — both or neither.
///
/// On a first enrolment the user's face token is created from the capture. A further device registers its keys
/// first, waits for the user's approval (an enrolled device's face scan, or the token's password), and then matches
/// the capture against the token released to it.
public final class RegistrationFlow: Sendable {
    /// The enrolment's states.
    public enum State: Sendable, Hashable {
        /// Waiting for an enrolment link; `refusal` says why the last one was refused.
        case awaitingLink(refusal: LinkRefusal?)
        /// Reading the invitation and (further device) the existing face token; when
        /// `passwordRequired`, call `submitPassword(password:)` with the token's password (under `password` approval
        /// before the token is released: the authority checks it and counts the failures).
        case downloadingFaceToken(passwordRequired: Bool, lastPasswordError: PasswordError?)
        /// A further device: its keys are registered and wait for the user's approval (docs/PROTOCOL.md §8.1). Under
        /// `.enrolledDevice`, show `code`: the approval request on the user's enrolled device names the same one, and
        /// the face scan there releases the face token to this device. Nothing to call; `cancel()` withdraws.
        case awaitingApproval(method: FurtherDeviceApproval, code: String, expiresAtUnix: Int64)
        /// First enrolment under a policy that requires a password: call `submitPassword(password:)` with a new one.
        case choosingPassword(lastPasswordError: PasswordError?)
        /// Run a face capture and call `submitFaceCapture(captureSession:)`.
        case awaitingFaceCapture(
            email: String, appLabel: String, branding: Branding?, expiresAtUnix: Int64,
            attemptsLeft: Int, lastRetryReason: FaceCaptureRetryReason?, livenessChallenge: LivenessChallenge?
        )
        /// Liveness and match (or template extraction) in progress.
        case verifying
        /// Creating and registering the two device keys. Cannot be cancelled.
        case registeringKeys
        /// Enrolled. Terminal.
        case succeeded(key: Key)
        /// Ended without an enrolment; no key remains on either side. Terminal.
        case failed(reason: FailureReason)

        /// True for `succeeded` and `failed`.
        public var isTerminal: Bool {
            switch self {
            case .succeeded, .failed: true
            default: false
            }
        }

        init(_ view: RegistrationStateMachine.View) {
            switch view {
            case .awaitingLink(let refusal): self = .awaitingLink(refusal: refusal)
            case .downloadingFaceToken(let required, let error): self = .downloadingFaceToken(passwordRequired: required, lastPasswordError: error)
            case .choosingPassword(let error): self = .choosingPassword(lastPasswordError: error)
            case .awaitingApproval(let approval):
                self = .awaitingApproval(method: approval.method, code: approval.code, expiresAtUnix: approval.expiresAtUnix)
            case .awaitingFaceCapture(let details, let capture):
                self = .awaitingFaceCapture(
                    email: details.email, appLabel: details.appLabel, branding: details.branding, expiresAtUnix: details.expiresAtUnix,
                    attemptsLeft: capture.attemptsLeft, lastRetryReason: capture.lastRetryReason, livenessChallenge: capture.livenessChallenge
                )
            case .verifying: self = .verifying
            case .registeringKeys: self = .registeringKeys
            case .succeeded(let key): self = .succeeded(key: key)
            case .failed(let reason): self = .failed(reason: reason)
            }
        }
    }

    private let broadcaster: StateBroadcaster<State>
    private let driver: RegistrationDriver

    init(ring: KeyRing) {
        let broadcaster = StateBroadcaster<State>(.awaitingLink(refusal: nil))
        self.broadcaster = broadcaster
        driver = RegistrationDriver(ring: ring) { view, terminal in broadcaster.publish(State(view), terminal: terminal) }
    }

    /// The current state first, then every change; finishes after a terminal state.
    public func stateStream() -> AsyncStream<State> { broadcaster.stream() }

    /// The current state.
    public var state: State { broadcaster.current }

    /// Submits the raw enrolment link bytes.
    public func submitLinkPayload(payload: [UInt8]) { driver.submitLink(payload) }

    /// Submits the raw enrolment link bytes.
    public func submitLinkPayload(payload: Data) { driver.submitLink(Array(payload)) }

    /// Submits the existing token's password, or a new password on a first enrolment.
    public func submitPassword(password: String) { driver.submitPassword(password) }

    /// Submits a finished face capture session.
    public func submitFaceCapture(captureSession: any FaceCaptureSession) { driver.submitFaceCapture(captureSession) }

    /// Ends the flow locally (not taken while the keys are being registered).
    public func cancel() { driver.cancel() }

    /// Waits until the flow's background work has finished, including a fire-and-forget abort or
    /// rollback after the flow ended. For hosts that exit after a flow (the `faceseal device` CLI).
    public func waitUntilIdle() async { await driver.waitUntilIdle() }
}
