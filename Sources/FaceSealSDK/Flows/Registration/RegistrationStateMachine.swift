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
/// First device: link → details → choose a password if the policy requires one → face capture (liveness, then
/// template extraction) → both device keys created → registered with the new token → recorded.
///
/// Further device (docs/PROTOCOL.md §8.1): link → details → both keys created → registered *pending* → the approval
/// (an enrolled device's face scan, or the token's password proven to the authority, or none) → the token, released
/// once → password if it has one → opened → face capture (liveness, then the match) → recorded.
///
/// Enrolment is all-or-nothing: once the first key exists, every failure path emits an action that removes what was
/// made (locally, and on the authority once the keys may be registered), and `cancel()` is not taken while keys are in
/// flight.
struct RegistrationStateMachine: Sendable {
    /// The new device keys, once both exist.
    struct DeviceKeys: Equatable, Sendable {
        var ambient: DeviceKeyDescriptor
        var userPresent: DeviceKeyDescriptor
        var ids: [String] { [ambient.deviceKeyId, userPresent.deviceKeyId] }
    }

    /// A further device's registration: the keys the authority holds (pending, then active) and the key record to store.
    struct Registered: Equatable, Sendable {
        var key: Key
        var keys: DeviceKeys
    }

    /// How the face is verified: first enrolment (no token yet) or a further device (after its registration).
    enum Enrolment: Equatable, Sendable {
        case firstDevice(password: EnrolmentPassword?)
        case furtherDevice(livenessRequired: Bool, registered: Registered)
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
        /// Further device: wait for the approval and download the token → `faceTokenReleased` / `authorityFailed`.
        case awaitApproval(requestId: String)
        /// Further device, `password` approval: → `passwordProved` / `authorityFailed`.
        case provePassword(requestId: String, password: EnrolmentPassword, tokenHeader: [UInt8])
        /// Further device: → `faceTokenOpened` / `faceTokenOpenFailed`.
        case openFaceToken(password: EnrolmentPassword?)
        /// → `livenessChecked`.
        case checkLiveness(CapturedFace, challenge: LivenessChallenge?)
        /// Further device: → `faceMatchChecked`.
        case matchFace(CapturedFace)
        /// First device: → `templatesExtracted`.
        case extractTemplates(CapturedFace)
        /// Ask for the user, then create the ambient and the user-present key → `deviceKeysCreated` /
        /// `deviceKeyCreationFailed` / `userPresenceFailed`.
        case createDeviceKeys(requestId: String)
        /// Register both keys (first device: with a new face token sealed under `password`)
        /// → `enrolmentRegistered` / `enrolmentPending` / `enrolmentFailed`.
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
        case awaitingApproval(PendingEnrolmentApproval)
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
        case awaitingApprovalPassword(VerifiedLink, EnrolmentDetails, Registered, PendingEnrolmentApproval, lastError: PasswordError?)
        case provingPassword(VerifiedLink, EnrolmentDetails, Registered, PendingEnrolmentApproval, EnrolmentPassword)
        case awaitingApproval(VerifiedLink, EnrolmentDetails, Registered, PendingEnrolmentApproval, proven: EnrolmentPassword?)
        case awaitingTokenPassword(VerifiedLink, EnrolmentDetails, Registered, livenessRequired: Bool, lastError: PasswordError?)
        case openingToken(VerifiedLink, EnrolmentDetails, Registered, livenessRequired: Bool, passwordRequired: Bool)
        case awaitingFaceCapture(VerifiedLink, EnrolmentDetails, Enrolment, Capture)
        case checkingLiveness(VerifiedLink, EnrolmentDetails, Enrolment, Capture, CapturedFace)
        case verifyingFace(VerifiedLink, EnrolmentDetails, Enrolment, Capture)
        /// `firstDevicePassword` is `.some(password)` on a first device (the token's password, if any), `nil` on a further one.
        case creatingKeys(VerifiedLink, EnrolmentDetails, firstDevicePassword: EnrolmentPassword??)
        case registering(VerifiedLink, EnrolmentDetails, DeviceKeys, isFirstDevice: Bool)
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
        case .fetchingDetails: .downloadingFaceToken(passwordRequired: false, lastPasswordError: nil)
        case .choosingPassword(_, _, _, let error): .choosingPassword(lastPasswordError: error)
        case .awaitingApprovalPassword(_, _, _, _, let error): .downloadingFaceToken(passwordRequired: true, lastPasswordError: error)
        case .provingPassword: .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil)
        case .awaitingApproval(_, _, _, let approval, _): .awaitingApproval(approval)
        case .awaitingTokenPassword(_, _, _, _, let error): .downloadingFaceToken(passwordRequired: true, lastPasswordError: error)
        case .openingToken(_, _, _, _, let passwordRequired): .downloadingFaceToken(passwordRequired: passwordRequired, lastPasswordError: nil)
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
        case .awaitingApprovalPassword(let link, let details, let registered, let approval, _):
            guard !password.isEmpty, let header = approval.tokenHeader else {
                state = .awaitingApprovalPassword(link, details, registered, approval, lastError: .empty)
                return .none
            }
            let typed = EnrolmentPassword(value: password)
            state = .provingPassword(link, details, registered, approval, typed)
            return .provePassword(requestId: details.requestId, password: typed, tokenHeader: header)
        case .awaitingTokenPassword(let link, let details, let registered, let liveness, _):
            guard !password.isEmpty else {
                state = .awaitingTokenPassword(link, details, registered, livenessRequired: liveness, lastError: .empty)
                return .none
            }
            state = .openingToken(link, details, registered, livenessRequired: liveness, passwordRequired: true)
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
            if let registered = registered {
                // The keys are registered (pending or active): withdraw them there, then here.
                state = .failed(.cancelled)
                return .withdrawEnrolment(requestId: registered.requestId, registered.keys)
            }
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
                // A further device registers its keys first: the token is released only to them, after the approval.
                state = .creatingKeys(link, details, firstDevicePassword: nil)
                return .createDeviceKeys(requestId: details.requestId)
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

    /// Further device: the authority answered the password proof.
    mutating func passwordProved(_ outcome: PasswordProofOutcome) -> Action {
        switch state {
        case .provingPassword(let link, let details, let registered, let approval, let password):
            if outcome.accepted {
                state = .awaitingApproval(link, details, registered, approval, proven: password)
                return .awaitApproval(requestId: details.requestId)
            }
            guard outcome.attemptsLeft > 0 else {
                // The authority ended the enrolment with the last wrong proof.
                state = .failed(.attemptsExhausted)
                return .withdrawEnrolment(requestId: details.requestId, registered.keys)
            }
            state = .awaitingApprovalPassword(link, details, registered, approval, lastError: .incorrect)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("passwordProved in state \(state)")
        }
    }

    /// Further device: the approval released the token (the driver holds it); its header says what opening needs.
    mutating func faceTokenReleased(passwordRequired: Bool, livenessRequired: Bool) -> Action {
        switch state {
        case .awaitingApproval(let link, let details, let registered, _, let proven):
            let liveness = livenessRequired || details.livenessRequired
            guard passwordRequired else {
                state = .openingToken(link, details, registered, livenessRequired: liveness, passwordRequired: false)
                return .openFaceToken(password: nil)
            }
            if let proven {
                state = .openingToken(link, details, registered, livenessRequired: liveness, passwordRequired: true)
                return .openFaceToken(password: proven)
            }
            state = .awaitingTokenPassword(link, details, registered, livenessRequired: liveness, lastError: nil)
            return .none
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenReleased in state \(state)")
        }
    }

    mutating func faceTokenOpened(challenge: LivenessChallenge?) -> Action {
        switch state {
        case .openingToken(let link, let details, let registered, let liveness, _):
            state = .awaitingFaceCapture(
                link, details, .furtherDevice(livenessRequired: liveness, registered: registered),
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
        case .openingToken(let link, let details, let registered, let liveness, let passwordRequired):
            switch error {
            case .wrongPassword where passwordRequired:
                state = .awaitingTokenPassword(link, details, registered, livenessRequired: liveness, lastError: .incorrect)
            case .passwordRequired:
                state = .awaitingTokenPassword(link, details, registered, livenessRequired: liveness, lastError: nil)
            case .wrongPassword, .unusable:
                state = .failed(.faceTokenUnusable)
                return .withdrawEnrolment(requestId: details.requestId, registered.keys)
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
            guard case .furtherDevice(_, let registered) = enrolment else {
                preconditionFailure("faceMatchChecked on a first enrolment")
            }
            switch outcome {
            case .passed:
                state = .storingRecord(details, registered.key, registered.keys)
                return .storeKeyRecord(registered.key, registered.keys, issuer: link.issuer)
            case .retry(let reason):
                if reason.spendsAttempt {
                    progress.attemptsLeft -= 1
                    if progress.attemptsLeft <= 0 {
                        // The token was released to these keys: a face that does not match withdraws them.
                        state = .failed(.attemptsExhausted)
                        return .withdrawEnrolment(requestId: details.requestId, registered.keys)
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
            guard case .firstDevice(let password) = enrolment else {
                preconditionFailure("templatesExtracted on a further-device enrolment")
            }
            guard let reason else {
                state = .creatingKeys(link, details, firstDevicePassword: .some(password))
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
        guard case .creatingKeys(let link, let details, let firstDevicePassword) = state else {
            preconditionFailure("deviceKeysCreated in state \(state)")
        }
        guard keys.ambient.protection == .ambient, keys.userPresent.protection == .userPresent,
            keys.ambient.deviceKeyId != keys.userPresent.deviceKeyId
        else {
            preconditionFailure("device keys with wrong protections or a shared id: \(keys)")
        }
        let isFirst = firstDevicePassword != nil
        state = .registering(link, details, keys, isFirstDevice: isFirst)
        return .registerEnrolment(details, keys, firstDevicePassword: firstDevicePassword ?? nil, isFirstDevice: isFirst)
    }

    /// Creating the keys failed; `created` lists the ids that were made before the failure.
    mutating func deviceKeyCreationFailed(created: [String], description: String) -> Action {
        guard case .creatingKeys = state else {
            preconditionFailure("deviceKeyCreationFailed in state \(state)")
        }
        state = .failed(.enrolmentFailed(description))
        return created.isEmpty ? .none : .discardDeviceKeys(created)
    }

    /// The user was not confirmed before the keys were made (the user-present key is created under the proof): no key
    /// exists and nothing was sent; the code keeps its meaning (SPEC §6.1).
    mutating func userPresenceFailed(_ code: SignKeypairError.Code) -> Action {
        guard case .creatingKeys = state else {
            preconditionFailure("userPresenceFailed in state \(state)")
        }
        state = .failed(.userPresence(code))
        return .none
    }

    /// First device: registered and active.
    mutating func enrolmentRegistered(_ key: Key) -> Action {
        guard case .registering(let link, let details, let keys, true) = state else {
            preconditionFailure("enrolmentRegistered in state \(state)")
        }
        state = .storingRecord(details, key, keys)
        return .storeKeyRecord(key, keys, issuer: link.issuer)
    }

    /// Further device: registered pending; the approval releases the token.
    mutating func enrolmentPending(_ key: Key, approval: PendingEnrolmentApproval) -> Action {
        guard case .registering(let link, let details, let keys, false) = state else {
            preconditionFailure("enrolmentPending in state \(state)")
        }
        let registered = Registered(key: key, keys: keys)
        if approval.method == .password {
            state = .awaitingApprovalPassword(link, details, registered, approval, lastError: nil)
            return .none
        }
        state = .awaitingApproval(link, details, registered, approval, proven: nil)
        return .awaitApproval(requestId: details.requestId)
    }

    mutating func enrolmentFailed(_ failure: AuthorityFailure) -> Action {
        guard case .registering(_, let details, let keys, _) = state else {
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
        case .awaitingApproval(_, let details, let registered, _, _), .provingPassword(_, let details, let registered, _, _):
            // Denied, ran out, or the authority is gone: the keys are withdrawn there (if it still knows them) and here.
            switch failure {
            case .linkRefused, .refused(code: "invalid_invitation", message: _):
                state = .failed(.enrolmentFailed("the approval was denied or ran out"))
            default:
                state = .failed(ApprovalStateMachine.failureReason(for: failure))
            }
            return .withdrawEnrolment(requestId: details.requestId, registered.keys)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("authorityFailed(\(failure)) in state \(state)")
        }
    }

    // MARK: - Helpers

    /// A further device's registration, once the keys are registered and not yet recorded.
    private var registered: (requestId: String, keys: DeviceKeys)? {
        switch state {
        case .awaitingApprovalPassword(_, let details, let registered, _, _), .provingPassword(_, let details, let registered, _, _),
             .awaitingApproval(_, let details, let registered, _, _), .awaitingTokenPassword(_, let details, let registered, _, _),
             .openingToken(_, let details, let registered, _, _):
            return (details.requestId, registered.keys)
        case .awaitingFaceCapture(_, let details, .furtherDevice(_, let registered), _),
             .checkingLiveness(_, let details, .furtherDevice(_, let registered), _, _),
             .verifyingFace(_, let details, .furtherDevice(_, let registered), _):
            return (details.requestId, registered.keys)
        default:
            return nil
        }
    }

    private static func livenessRequired(_ details: EnrolmentDetails, _ enrolment: Enrolment) -> Bool {
        switch enrolment {
        case .firstDevice: details.livenessRequired
        case .furtherDevice(let required, _): required
        }
    }

    private static func faceAction(_ enrolment: Enrolment, _ capture: CapturedFace) -> Action {
        switch enrolment {
        case .firstDevice: .extractTemplates(capture)
        case .furtherDevice: .matchFace(capture)
        }
    }
}
