import Foundation

/// A password chosen or typed during enrolment. Its description is redacted so that a trap message
/// or a log line never shows it.
struct EnrolmentPassword: Equatable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let value: String
    var description: String { "EnrolmentPassword(redacted)" }
    var debugDescription: String { description }
}

/// The pure state machine behind `RegistrationFlow` (SPEC §6.1, §7).
///
/// Link → details → (first device: choose a password if the policy requires one; further device:
/// download the existing token, password if it has one, open it) → face capture (liveness, then a
/// match on a further device or template extraction on the first) → both device keys created →
/// registered → recorded. Enrolment is all-or-nothing: once the first key exists, every failure
/// path emits an action that removes what was made (locally, and on the authority when the
/// registration's outcome is unknown), and `cancel()` is not taken while keys are in flight.
struct RegistrationStateMachine: Sendable {
    /// The new device keys, once both exist.
    struct DeviceKeys: Equatable, Sendable {
        var ambient: DeviceKeyDescriptor
        var userPresent: DeviceKeyDescriptor
        var ids: [String] { [ambient.deviceKeyId, userPresent.deviceKeyId] }
    }

    /// How the face is verified: first enrolment (no token yet) or a further device.
    enum Enrolment: Equatable, Sendable {
        case firstDevice(password: EnrolmentPassword?)
        case furtherDevice(livenessRequired: Bool)
    }

    struct Capture: Equatable, Sendable {
        var attemptsLeft: Int
        var lastRetryReason: FaceCaptureRetryReason?
        var livenessChallenge: LivenessChallenge?
    }

    enum Action: Equatable, Sendable {
        case none
        /// → `linkVerified` / `linkRefused`.
        case verifyLink(payload: [UInt8])
        /// → `enrolmentDetailsReceived` / `authorityFailed`.
        case fetchEnrolmentDetails(VerifiedLink)
        /// Further device: → `faceTokenDownloaded` / `authorityFailed`.
        case downloadFaceToken(requestId: String)
        /// Further device: → `faceTokenOpened` / `faceTokenOpenFailed`.
        case openFaceToken(password: EnrolmentPassword?)
        /// → `livenessChecked`.
        case checkLiveness(CapturedFace, challenge: LivenessChallenge?)
        /// Further device: → `faceMatchChecked`.
        case matchFace(CapturedFace)
        /// First device: → `templatesExtracted`.
        case extractTemplates(CapturedFace)
        /// Create the ambient and the user-present key → `deviceKeysCreated` / `deviceKeyCreationFailed`.
        case createDeviceKeys(requestId: String)
        /// Register both keys (first device: with a new face token sealed under `password`)
        /// → `enrolmentRegistered` / `enrolmentFailed`.
        case registerEnrolment(EnrolmentDetails, DeviceKeys, firstDevicePassword: EnrolmentPassword?, isFirstDevice: Bool)
        /// Persist the key record → `keyRecordStored` / `keyRecordStoreFailed`.
        case storeKeyRecord(Key, DeviceKeys, issuer: String)
        /// Delete these local device keys (all-or-nothing rollback; fire and forget).
        case discardDeviceKeys([String])
        /// Withdraw the registration on the authority, then delete the local keys (fire and forget).
        case withdrawEnrolment(requestId: String, DeviceKeys)
    }

    enum View: Equatable, Sendable {
        case awaitingLink(refusal: LinkRefusal?)
        case downloadingFaceToken(passwordRequired: Bool, lastPasswordError: PasswordError?)
        case choosingPassword(lastPasswordError: PasswordError?)
        case awaitingFaceCapture(EnrolmentDetails, Capture)
        case verifying
        case registeringKeys
        case succeeded(key: Key)
        case failed(reason: FailureReason)
    }

    private enum State: Equatable {
        case awaitingLink(refusal: LinkRefusal?)
        case verifyingLink
        case fetchingDetails(VerifiedLink)
        case choosingPassword(VerifiedLink, EnrolmentDetails, challenge: LivenessChallenge?, lastError: PasswordError?)
        case downloadingToken(VerifiedLink, EnrolmentDetails)
        case awaitingTokenPassword(VerifiedLink, EnrolmentDetails, livenessRequired: Bool, lastError: PasswordError?)
        case openingToken(VerifiedLink, EnrolmentDetails, livenessRequired: Bool, passwordRequired: Bool)
        case awaitingFaceCapture(VerifiedLink, EnrolmentDetails, Enrolment, Capture)
        case checkingLiveness(VerifiedLink, EnrolmentDetails, Enrolment, Capture, CapturedFace)
        case verifyingFace(VerifiedLink, EnrolmentDetails, Enrolment, Capture)
        case creatingKeys(VerifiedLink, EnrolmentDetails, Enrolment)
        case registering(VerifiedLink, EnrolmentDetails, DeviceKeys)
        case storingRecord(EnrolmentDetails, Key, DeviceKeys)
        case succeeded(Key)
        case failed(FailureReason)
    }

    /// The device protocol this SDK speaks.
    let deviceProtocol: Int
    private var state: State = .awaitingLink(refusal: nil)

    init(deviceProtocol: Int) {
        self.deviceProtocol = deviceProtocol
    }

    var isTerminal: Bool {
        switch state {
        case .succeeded, .failed: true
        default: false
        }
    }

    var view: View {
        switch state {
        case .awaitingLink(let refusal): .awaitingLink(refusal: refusal)
        case .verifyingLink: .awaitingLink(refusal: nil)
        case .fetchingDetails, .downloadingToken: .downloadingFaceToken(passwordRequired: false, lastPasswordError: nil)
        case .choosingPassword(_, _, _, let error): .choosingPassword(lastPasswordError: error)
        case .awaitingTokenPassword(_, _, _, let error): .downloadingFaceToken(passwordRequired: true, lastPasswordError: error)
        case .openingToken(_, _, _, let passwordRequired): .downloadingFaceToken(passwordRequired: passwordRequired, lastPasswordError: nil)
        case .awaitingFaceCapture(_, let details, _, let capture): .awaitingFaceCapture(details, capture)
        case .checkingLiveness, .verifyingFace: .verifying
        case .creatingKeys, .registering, .storingRecord: .registeringKeys
        case .succeeded(let key): .succeeded(key: key)
        case .failed(let reason): .failed(reason: reason)
        }
    }

    // MARK: - User inputs

    mutating func submitLink(_ payload: [UInt8]) -> Action {
        guard case .awaitingLink = state else { return .none }
        state = .verifyingLink
        return .verifyLink(payload: payload)
    }

    mutating func submitPassword(_ password: String) -> Action {
        switch state {
        case .choosingPassword(let link, let details, let challenge, _):
            guard !password.isEmpty else {
                state = .choosingPassword(link, details, challenge: challenge, lastError: .empty)
                return .none
            }
            state = .awaitingFaceCapture(
                link, details, .firstDevice(password: EnrolmentPassword(value: password)),
                Capture(attemptsLeft: details.attemptsMax, lastRetryReason: nil, livenessChallenge: details.livenessRequired ? challenge : nil)
            )
            return .none
        case .awaitingTokenPassword(let link, let details, let liveness, _):
            guard !password.isEmpty else {
                state = .awaitingTokenPassword(link, details, livenessRequired: liveness, lastError: .empty)
                return .none
            }
            state = .openingToken(link, details, livenessRequired: liveness, passwordRequired: true)
            return .openFaceToken(password: EnrolmentPassword(value: password))
        default:
            return .none
        }
    }

    mutating func submitFaceCapture(_ capture: CapturedFace) -> Action {
        guard case .awaitingFaceCapture(let link, let details, let enrolment, let progress) = state else { return .none }
        if Self.livenessRequired(details, enrolment) {
            state = .checkingLiveness(link, details, enrolment, progress, capture)
            return .checkLiveness(capture, challenge: progress.livenessChallenge)
        }
        state = .verifyingFace(link, details, enrolment, progress)
        return Self.faceAction(enrolment, capture)
    }

    /// Ends the flow locally. Not taken while device keys are being created or registered: that
    /// step finishes or rolls back on its own, so no half-made enrolment can be left behind.
    mutating func cancel() -> Action {
        switch state {
        case .succeeded, .failed, .creatingKeys, .registering, .storingRecord:
            return .none
        default:
            state = .failed(.cancelled)
            return .none
        }
    }

    // MARK: - Driver results

    mutating func linkVerified(_ link: VerifiedLink) -> Action {
        switch state {
        case .verifyingLink:
            switch link.kind {
            case .login:
                state = .awaitingLink(refusal: .isLoginLink)
                return .none
            case .ceremony:
                state = .awaitingLink(refusal: .isPkiCeremonyLink)
                return .none
            case .enrolment:
                state = .fetchingDetails(link)
                return .fetchEnrolmentDetails(link)
            }
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

    /// Details arrived; `challenge` is the first liveness challenge (used on a first enrolment).
    mutating func enrolmentDetailsReceived(_ details: EnrolmentDetails, challenge: LivenessChallenge?) -> Action {
        switch state {
        case .fetchingDetails(let link):
            if details.requestId != link.requestId || details.attemptsMax < 1 {
                state = .failed(.protocolViolation("enrolment details do not fit the link"))
                return .none
            }
            if details.minimumDeviceProtocol > deviceProtocol {
                state = .failed(.upgradeRequired)
                return .none
            }
            if details.hasFaceToken {
                state = .downloadingToken(link, details)
                return .downloadFaceToken(requestId: details.requestId)
            }
            if details.passwordPolicyRequiresPassword {
                state = .choosingPassword(link, details, challenge: challenge, lastError: nil)
                return .none
            }
            state = .awaitingFaceCapture(
                link, details, .firstDevice(password: nil),
                Capture(attemptsLeft: details.attemptsMax, lastRetryReason: nil, livenessChallenge: details.livenessRequired ? challenge : nil)
            )
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("enrolmentDetailsReceived in state \(state)")
        }
    }

    mutating func faceTokenDownloaded(passwordRequired: Bool, livenessRequired: Bool) -> Action {
        switch state {
        case .downloadingToken(let link, let details):
            // The stricter of the token header and the tenant's current policy, as for an approval.
            let livenessRequired = livenessRequired || details.livenessRequired
            if passwordRequired {
                state = .awaitingTokenPassword(link, details, livenessRequired: livenessRequired, lastError: nil)
                return .none
            }
            state = .openingToken(link, details, livenessRequired: livenessRequired, passwordRequired: false)
            return .openFaceToken(password: nil)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenDownloaded in state \(state)")
        }
    }

    mutating func faceTokenOpened(challenge: LivenessChallenge?) -> Action {
        switch state {
        case .openingToken(let link, let details, let liveness, _):
            state = .awaitingFaceCapture(
                link, details, .furtherDevice(livenessRequired: liveness),
                Capture(attemptsLeft: details.attemptsMax, lastRetryReason: nil, livenessChallenge: liveness ? challenge : nil)
            )
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenOpened in state \(state)")
        }
    }

    mutating func faceTokenOpenFailed(_ error: FaceTokenOpenError) -> Action {
        switch state {
        case .openingToken(let link, let details, let liveness, let passwordRequired):
            switch error {
            case .wrongPassword where passwordRequired:
                state = .awaitingTokenPassword(link, details, livenessRequired: liveness, lastError: .incorrect)
            case .passwordRequired:
                state = .awaitingTokenPassword(link, details, livenessRequired: liveness, lastError: nil)
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

    mutating func livenessChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        switch state {
        case .checkingLiveness(let link, let details, let enrolment, var progress, let capture):
            switch outcome {
            case .passed:
                state = .verifyingFace(link, details, enrolment, progress)
                return Self.faceAction(enrolment, capture)
            case .retry(let reason):
                progress.lastRetryReason = reason
                progress.livenessChallenge = nextChallenge
                state = .awaitingFaceCapture(link, details, enrolment, progress)
                return .none
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("livenessChecked in state \(state)")
        }
    }

    /// Further device: the match result.
    mutating func faceMatchChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        switch state {
        case .verifyingFace(let link, let details, let enrolment, var progress):
            guard case .furtherDevice = enrolment else {
                preconditionFailure("faceMatchChecked on a first enrolment")
            }
            switch outcome {
            case .passed:
                state = .creatingKeys(link, details, enrolment)
                return .createDeviceKeys(requestId: details.requestId)
            case .retry(let reason):
                if reason.spendsAttempt {
                    progress.attemptsLeft -= 1
                    if progress.attemptsLeft <= 0 {
                        state = .failed(.attemptsExhausted)
                        return .none
                    }
                }
                progress.lastRetryReason = reason
                progress.livenessChallenge = Self.livenessRequired(details, enrolment) ? nextChallenge : nil
                state = .awaitingFaceCapture(link, details, enrolment, progress)
                return .none
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceMatchChecked in state \(state)")
        }
    }

    /// First device: templates were extracted (`nil` reason) or the capture must be repeated.
    mutating func templatesExtracted(retry reason: FaceCaptureRetryReason?, nextChallenge: LivenessChallenge?) -> Action {
        switch state {
        case .verifyingFace(let link, let details, let enrolment, var progress):
            guard case .firstDevice = enrolment else {
                preconditionFailure("templatesExtracted on a further-device enrolment")
            }
            guard let reason else {
                state = .creatingKeys(link, details, enrolment)
                return .createDeviceKeys(requestId: details.requestId)
            }
            progress.lastRetryReason = reason
            progress.livenessChallenge = details.livenessRequired ? nextChallenge : nil
            state = .awaitingFaceCapture(link, details, enrolment, progress)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("templatesExtracted in state \(state)")
        }
    }

    mutating func deviceKeysCreated(_ keys: DeviceKeys) -> Action {
        guard case .creatingKeys(let link, let details, let enrolment) = state else {
            preconditionFailure("deviceKeysCreated in state \(state)")
        }
        guard keys.ambient.protection == .ambient, keys.userPresent.protection == .userPresent,
            keys.ambient.deviceKeyId != keys.userPresent.deviceKeyId
        else {
            preconditionFailure("device keys with wrong protections or a shared id: \(keys)")
        }
        state = .registering(link, details, keys)
        let password: EnrolmentPassword?
        let isFirst: Bool
        switch enrolment {
        case .firstDevice(let chosen):
            password = chosen
            isFirst = true
        case .furtherDevice:
            password = nil
            isFirst = false
        }
        return .registerEnrolment(details, keys, firstDevicePassword: password, isFirstDevice: isFirst)
    }

    /// Creating the keys failed; `created` lists the ids that were made before the failure.
    mutating func deviceKeyCreationFailed(created: [String], description: String) -> Action {
        guard case .creatingKeys = state else {
            preconditionFailure("deviceKeyCreationFailed in state \(state)")
        }
        state = .failed(.enrolmentFailed(description))
        return created.isEmpty ? .none : .discardDeviceKeys(created)
    }

    mutating func enrolmentRegistered(_ key: Key) -> Action {
        guard case .registering(let link, let details, let keys) = state else {
            preconditionFailure("enrolmentRegistered in state \(state)")
        }
        state = .storingRecord(details, key, keys)
        return .storeKeyRecord(key, keys, issuer: link.issuer)
    }

    mutating func enrolmentFailed(_ failure: AuthorityFailure) -> Action {
        guard case .registering(_, let details, let keys) = state else {
            preconditionFailure("enrolmentFailed in state \(state)")
        }
        switch failure {
        case .transient(let description), .invalidResponse(let description):
            // The authority may have stored the keys: withdraw them there before deleting them here.
            state = .failed(.enrolmentFailed(description))
            return .withdrawEnrolment(requestId: details.requestId, keys)
        case .upgradeRequired:
            state = .failed(.upgradeRequired)
            return .discardDeviceKeys(keys.ids)
        case .signing(let error):
            // Nothing was sent (the prompt and the signatures come first); the code keeps its meaning (SPEC §6.1).
            state = .failed(.userPresence(error.code))
            return .discardDeviceKeys(keys.ids)
        default:
            state = .failed(.enrolmentFailed(String(describing: failure)))
            return .discardDeviceKeys(keys.ids)
        }
    }

    mutating func keyRecordStored() -> Action {
        guard case .storingRecord(_, let key, _) = state else {
            preconditionFailure("keyRecordStored in state \(state)")
        }
        state = .succeeded(key)
        return .none
    }

    mutating func keyRecordStoreFailed(_ description: String) -> Action {
        guard case .storingRecord(let details, _, let keys) = state else {
            preconditionFailure("keyRecordStoreFailed in state \(state)")
        }
        state = .failed(.enrolmentFailed(description))
        return .withdrawEnrolment(requestId: details.requestId, keys)
    }

    /// An authority read (details, token download) failed.
    mutating func authorityFailed(_ failure: AuthorityFailure) -> Action {
        switch state {
        case .fetchingDetails:
            switch failure {
            case .linkRefused(let refusal): state = .awaitingLink(refusal: refusal)
            case .requestNotPending: state = .awaitingLink(refusal: .alreadyAnswered)
            case .requestExpired: state = .awaitingLink(refusal: .expired)
            default: state = .failed(ApprovalStateMachine.failureReason(for: failure))
            }
            return .none
        case .downloadingToken:
            state = .failed(ApprovalStateMachine.failureReason(for: failure))
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("authorityFailed(\(failure)) in state \(state)")
        }
    }

    // MARK: - Helpers

    private static func livenessRequired(_ details: EnrolmentDetails, _ enrolment: Enrolment) -> Bool {
        switch enrolment {
        case .firstDevice: details.livenessRequired
        case .furtherDevice(let required): required
        }
    }

    private static func faceAction(_ enrolment: Enrolment, _ capture: CapturedFace) -> Action {
        switch enrolment {
        case .firstDevice: .extractTemplates(capture)
        case .furtherDevice: .matchFace(capture)
        }
    }
}
