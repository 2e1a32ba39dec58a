import struct FaceSealWire.AttemptBudget
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

    /// The face-capture step's progress: only face mismatches are counted (SPEC §5.4), on the device.
    struct Capture: FaceCheckProgress {
        var attemptsLeft: Int
        var lastRetryReason: FaceCaptureRetryReason?
        var livenessChallenge: LivenessChallenge?

        mutating func count(_ kind: AttemptKind) {
            if kind == .faceMismatch { attemptsLeft -= 1 }
        }

        mutating func absorb(_ remaining: AttemptBudget) { attemptsLeft = remaining.attemptsLeft }

        var exhaustion: (failure: FailureReason, abort: AbortReason)? {
            attemptsLeft <= 0 ? (.attemptsExhausted, .attemptsExhausted) : nil
        }
    }

    /// The shared sub-steps, embedded in `State`: the released token's password.
    typealias TokenUnlock = TokenUnlockStateMachine<EnrolmentPassword>
    /// The shared sub-steps, embedded in `State`: the face check, counted on the device.
    typealias FaceCheck = FaceCheckStateMachine<Capture>

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
        case unlockingToken(VerifiedLink, EnrolmentDetails, Registered, livenessRequired: Bool, TokenUnlock)
        case checkingFace(VerifiedLink, EnrolmentDetails, Enrolment, FaceCheck)
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
        case .unlockingToken(_, _, _, _, let unlock):
            .downloadingFaceToken(passwordRequired: unlock.prompt.passwordRequired, lastPasswordError: unlock.prompt.lastError)
        case .checkingFace(_, let details, _, let check) where check.phase == .awaitingCapture: .awaitingFaceCapture(details, check.progress)
        case .checkingFace: .verifying
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
            state = Self.checkingFace(link, details, .firstDevice(password: EnrolmentPassword(value: password)), challenge: challenge)
            return .none
        case .awaitingApprovalPassword(let link, let details, let registered, let approval, _):
            guard !password.isEmpty, let header = approval.tokenHeader else {
                state = .awaitingApprovalPassword(link, details, registered, approval, lastError: .empty)
                return .none
            }
            let typed = EnrolmentPassword(value: password)
            state = .provingPassword(link, details, registered, approval, typed)
            return .provePassword(requestId: details.requestId, password: typed, tokenHeader: header)
        case .unlockingToken:
            return modifyTokenUnlock("submitPassword") { $0.submitPassword(EnrolmentPassword(value: password), isEmpty: password.isEmpty) }
        default:
            return .none
        }
    }

    mutating func submitFaceCapture(_ capture: CapturedFace) -> Action {
        guard case .checkingFace = state else { return .none }
        return modifyFaceCheck("submitFaceCapture") { $0.submitCapture(capture) }
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
            state = Self.checkingFace(link, details, .firstDevice(password: nil), challenge: challenge)
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
            // A password proven for the approval opens the token; the device sets no limit of its own on wrong ones.
            let (unlock, action) = TokenUnlock.start(passwordRequired: passwordRequired, known: proven, passwordAttempts: nil)
            state = .unlockingToken(link, details, registered, livenessRequired: livenessRequired || details.livenessRequired, unlock)
            return lift(action, details, registered)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("faceTokenReleased in state \(state)")
        }
    }

    mutating func faceTokenOpened(challenge: LivenessChallenge?) -> Action {
        switch state {
        case .unlockingToken(let link, let details, let registered, let liveness, let unlock):
            unlock.opened()
            state = Self.checkingFace(link, details, .furtherDevice(livenessRequired: liveness, registered: registered), challenge: challenge)
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

    mutating func livenessChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        modifyFaceCheck("livenessChecked") { $0.livenessChecked(outcome, nextChallenge: nextChallenge) }
    }

    /// Further device: the match result.
    mutating func faceMatchChecked(_ outcome: FaceCheckOutcome, nextChallenge: LivenessChallenge?) -> Action {
        if case .checkingFace(_, _, .firstDevice, _) = state { preconditionFailure("faceMatchChecked on a first enrolment") }
        return modifyFaceCheck("faceMatchChecked") { $0.verified(outcome, nextChallenge: nextChallenge) }
    }

    /// First device: templates were extracted (`nil` reason) or the capture must be repeated.
    mutating func templatesExtracted(retry reason: FaceCaptureRetryReason?, nextChallenge: LivenessChallenge?) -> Action {
        if case .checkingFace(_, _, .furtherDevice, _) = state { preconditionFailure("templatesExtracted on a further-device enrolment") }
        return modifyFaceCheck("templatesExtracted") { $0.verified(reason.map { .retry($0) } ?? .passed, nextChallenge: nextChallenge) }
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

    // MARK: - Sub-machines

    /// The face check of `enrolment`: a first enrolment extracts templates, a further device matches them.
    private static func checkingFace(_ link: VerifiedLink, _ details: EnrolmentDetails, _ enrolment: Enrolment,
                                     challenge: LivenessChallenge?) -> State {
        let liveness = livenessRequired(details, enrolment)
        let verification: FaceCheck.Verification = if case .firstDevice = enrolment { .extraction } else { .match }
        let capture = Capture(attemptsLeft: details.attemptsMax, lastRetryReason: nil, livenessChallenge: liveness ? challenge : nil)
        return .checkingFace(link, details, enrolment,
                             FaceCheck(livenessRequired: liveness, counting: .device, verification: verification, progress: capture))
    }

    /// Runs `event` on the embedded token unlock and lifts what it asks for. A late result after the end is dropped;
    /// one in another state traps.
    private mutating func modifyTokenUnlock(_ event: String, with body: (inout TokenUnlock) -> TokenUnlock.Action) -> Action {
        switch state {
        case .unlockingToken(let link, let details, let registered, let liveness, var unlock):
            let action = body(&unlock)
            state = .unlockingToken(link, details, registered, livenessRequired: liveness, unlock)
            return lift(action, details, registered)
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("\(event) in state \(state)")
        }
    }

    private mutating func lift(_ action: TokenUnlock.Action, _ details: EnrolmentDetails, _ registered: Registered) -> Action {
        switch action {
        case .none:
            return .none
        case .open(let password):
            return .openFaceToken(password: password)
        case .passwordAttemptsExhausted, .unusable:
            // The token was released to these keys: a token they cannot open withdraws them.
            state = .failed(.faceTokenUnusable)
            return .withdrawEnrolment(requestId: details.requestId, registered.keys)
        }
    }

    /// Runs `event` on the embedded face check and lifts what it asks for. A late result after the end is dropped;
    /// one in another state traps.
    private mutating func modifyFaceCheck(_ event: String, with body: (inout FaceCheck) -> FaceCheck.Action) -> Action {
        switch state {
        case .checkingFace(let link, let details, let enrolment, var check):
            let action = body(&check)
            state = .checkingFace(link, details, enrolment, check)
            switch (action, enrolment) {
            case (.none, _):
                return .none
            case (.checkLiveness(let capture, let challenge), _):
                return .checkLiveness(capture, challenge: challenge)
            case (.verify(let capture), .firstDevice):
                return .extractTemplates(capture)
            case (.verify(let capture), .furtherDevice):
                return .matchFace(capture)
            case (.report, _):
                preconditionFailure("an enrolment's face check counts on the device")
            case (.passed, .firstDevice(let password)):
                state = .creatingKeys(link, details, firstDevicePassword: .some(password))
                return .createDeviceKeys(requestId: details.requestId)
            case (.passed, .furtherDevice(_, let registered)):
                state = .storingRecord(details, registered.key, registered.keys)
                return .storeKeyRecord(registered.key, registered.keys, issuer: link.issuer)
            case (.exhausted(let failure, _), .firstDevice):
                state = .failed(failure)
                return .none
            case (.exhausted(let failure, _), .furtherDevice(_, let registered)):
                // The token was released to these keys: a face that does not match withdraws them.
                state = .failed(failure)
                return .withdrawEnrolment(requestId: details.requestId, registered.keys)
            }
        case .succeeded, .failed:
            return .none
        default:
            preconditionFailure("\(event) in state \(state)")
        }
    }

    // MARK: - Helpers

    /// A further device's registration, once the keys are registered and not yet recorded.
    private var registered: (requestId: String, keys: DeviceKeys)? {
        switch state {
        case .awaitingApprovalPassword(_, let details, let registered, _, _), .provingPassword(_, let details, let registered, _, _),
             .awaitingApproval(_, let details, let registered, _, _), .unlockingToken(_, let details, let registered, _, _),
             .checkingFace(_, let details, .furtherDevice(_, let registered), _):
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
}
