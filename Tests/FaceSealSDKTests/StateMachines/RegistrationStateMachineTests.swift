import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealSDK

/// Every state × every input of the enrolment machine, with the same three outcomes as the
/// approval table: a spelled-out transition, an ignored user input / dropped late result, or a trap.
@Suite struct RegistrationStateMachineTests {
    typealias Machine = RegistrationStateMachine
    typealias Action = RegistrationStateMachine.Action
    typealias View = RegistrationStateMachine.View

    enum Stage: String, CaseIterable, Codable, Sendable {
        case awaitingLink, awaitingLinkRefused, verifyingLink, fetchingDetails
        case choosingPassword, firstCapture, firstCheckingLiveness, extractingTemplates, firstCreatingKeys, firstRegistering
        case firstStoringRecord
        case furtherCreatingKeys, furtherRegistering, awaitingApproval, awaitingApprovalPassword, provingPassword
        case awaitingTokenPassword, openingToken, openingTokenWithPassword
        case furtherCapture, furtherCheckingLiveness, matchingFace
        case storingRecord, succeeded, failed

        var isTerminal: Bool { self == .succeeded || self == .failed }
        var isFirstDevice: Bool {
            [.choosingPassword, .firstCapture, .firstCheckingLiveness, .extractingTemplates, .firstCreatingKeys, .firstRegistering,
             .firstStoringRecord].contains(self)
        }
        /// A further device whose keys are registered: every way out withdraws them.
        var isRegisteredFurther: Bool {
            [.awaitingApproval, .awaitingApprovalPassword, .provingPassword, .awaitingTokenPassword, .openingToken, .openingTokenWithPassword,
             .furtherCapture, .furtherCheckingLiveness, .matchingFace].contains(self)
        }
    }

    enum Input: String, CaseIterable, Codable, Sendable {
        case submitLink, submitPassword, submitEmptyPassword, submitFaceCapture, cancel
        case linkVerified, linkVerifiedLogin, linkVerifiedCeremony, linkRefused, detailsReceived, authorityTransient
        case faceTokenReleased, faceTokenOpened, faceTokenWrongPassword, passwordProved, passwordRefused, approvalDenied
        case livenessPassed, livenessFailed, matchPassed, matchMismatch, templatesExtracted, templatesRetry
        case keysCreated, keyCreationFailed, enrolmentRegistered, enrolmentPending, enrolmentTransient, enrolmentRefused
        case recordStored, recordStoreFailed

        var isUserInput: Bool { [.submitLink, .submitPassword, .submitEmptyPassword, .submitFaceCapture, .cancel].contains(self) }
        /// Results of the all-or-nothing steps, which cannot arrive after the end (cancel is not taken meanwhile).
        var isKeyStepResult: Bool {
            [.keysCreated, .keyCreationFailed, .enrolmentRegistered, .enrolmentPending, .enrolmentTransient, .enrolmentRefused, .recordStored,
             .recordStoreFailed].contains(self)
        }
    }

    static let payload: [UInt8] = [1, 2, 3]
    static let link = VerifiedLink(kind: .enrolment, requestId: "enr-1", issuer: "https://authority.test", expiresAtUnix: 1_800_000_600)
    static let challenge1 = LivenessChallenge(steps: [.blink])
    static let challenge2 = LivenessChallenge(steps: [.lookUp])
    static let capture = CapturedFace(sequence: 7, session: FakeCaptureSession(label: "x"))
    static let keys = Machine.DeviceKeys(
        ambient: DeviceKeyDescriptor(deviceKeyId: "dk-a", protection: .ambient, publicKey: [4]),
        userPresent: DeviceKeyDescriptor(deviceKeyId: "dk-u", protection: .userPresent, publicKey: [5])
    )
    static let key = Key(id: "key-1", identityId: "id-1", email: "ada@example.com", clientId: "acme", appLabel: "Acme", createdAt: Date(timeIntervalSince1970: 1_800_000_000))
    static let password = EnrolmentPassword(value: "secret")
    static let approval = PendingEnrolmentApproval(method: .enrolledDevice, code: "123456", expiresAtUnix: 1_800_000_700)
    static let passwordApproval = PendingEnrolmentApproval(method: .password, code: "123456", expiresAtUnix: 1_800_000_700, tokenHeader: [1])

    static func details(hasToken: Bool, passwordPolicy: Bool) -> EnrolmentDetails {
        EnrolmentDetails(
            requestId: "enr-1", identityId: "id-1", email: "ada@example.com", subject: "usr-1", tenant: "acme", clientId: "acme", appLabel: "Acme",
            branding: nil, hasFaceToken: hasToken, passwordPolicyRequiresPassword: passwordPolicy, livenessRequired: true,
            attemptsMax: 2, expiresAtUnix: 1_800_000_600, keyPolicy: ["ML-DSA-65"], minimumDeviceProtocol: 7
        )
    }

    static func details(for stage: Stage) -> EnrolmentDetails {
        if stage.isFirstDevice { return details(hasToken: false, passwordPolicy: true) }
        return details(hasToken: true, passwordPolicy: false)
    }

    static func machine(at stage: Stage) -> Machine {
        var m = Machine(deviceProtocol: 7)
        if stage == .awaitingLink { return m }
        _ = m.submitLink(payload)
        if stage == .verifyingLink { return m }
        if stage == .awaitingLinkRefused { _ = m.linkRefused(.expired); return m }
        _ = m.linkVerified(link)
        if stage == .fetchingDetails { return m }
        if stage == .failed { _ = m.cancel(); return m }
        _ = m.enrolmentDetailsReceived(details(for: stage), challenge: challenge1)
        if stage.isFirstDevice {
            if stage == .choosingPassword { return m }
            _ = m.submitPassword("secret")
            if stage == .firstCapture { return m }
            _ = m.submitFaceCapture(capture)
            if stage == .firstCheckingLiveness { return m }
            _ = m.livenessChecked(.passed, nextChallenge: nil)
            if stage == .extractingTemplates { return m }
            _ = m.templatesExtracted(retry: nil, nextChallenge: nil)
            if stage == .firstCreatingKeys { return m }
            _ = m.deviceKeysCreated(keys)
            if stage == .firstRegistering { return m }
            _ = m.enrolmentRegistered(key)
            precondition(stage == .firstStoringRecord, "unreached \(stage)")
            return m
        }
        if stage == .furtherCreatingKeys { return m }
        _ = m.deviceKeysCreated(keys)
        if stage == .furtherRegistering { return m }
        let byPassword = stage == .awaitingApprovalPassword || stage == .provingPassword
        _ = m.enrolmentPending(key, approval: byPassword ? passwordApproval : approval)
        if stage == .awaitingApproval || stage == .awaitingApprovalPassword { return m }
        if stage == .provingPassword { _ = m.submitPassword("secret"); return m }
        let withPassword = stage == .awaitingTokenPassword || stage == .openingTokenWithPassword
        _ = m.faceTokenReleased(passwordRequired: withPassword, livenessRequired: true)
        if stage == .awaitingTokenPassword { return m }
        if withPassword { _ = m.submitPassword("secret") }
        if stage == .openingToken || stage == .openingTokenWithPassword { return m }
        _ = m.faceTokenOpened(challenge: challenge1)
        if stage == .furtherCapture { return m }
        _ = m.submitFaceCapture(capture)
        if stage == .furtherCheckingLiveness { return m }
        _ = m.livenessChecked(.passed, nextChallenge: nil)
        if stage == .matchingFace { return m }
        _ = m.faceMatchChecked(.passed, nextChallenge: nil)
        if stage == .storingRecord { return m }
        _ = m.keyRecordStored()
        precondition(stage == .succeeded, "unreached \(stage)")
        return m
    }

    static func apply(_ input: Input, to m: inout Machine) -> Action {
        func linkOf(_ kind: LinkKind) -> VerifiedLink { VerifiedLink(kind: kind, requestId: "enr-1", issuer: "https://authority.test", expiresAtUnix: 1) }
        switch input {
        case .submitLink: return m.submitLink(payload)
        case .submitPassword: return m.submitPassword("secret")
        case .submitEmptyPassword: return m.submitPassword("")
        case .submitFaceCapture: return m.submitFaceCapture(capture)
        case .cancel: return m.cancel()
        case .linkVerified: return m.linkVerified(link)
        case .linkVerifiedLogin: return m.linkVerified(linkOf(.login))
        case .linkVerifiedCeremony: return m.linkVerified(linkOf(.ceremony))
        case .linkRefused: return m.linkRefused(.badSignature)
        case .detailsReceived: return m.enrolmentDetailsReceived(details(hasToken: false, passwordPolicy: false), challenge: challenge1)
        case .authorityTransient: return m.authorityFailed(.transient("down"))
        case .faceTokenReleased: return m.faceTokenReleased(passwordRequired: false, livenessRequired: true)
        case .passwordProved: return m.passwordProved(PasswordProofOutcome(accepted: true, attemptsLeft: 3))
        case .passwordRefused: return m.passwordProved(PasswordProofOutcome(accepted: false, attemptsLeft: 2))
        case .approvalDenied: return m.authorityFailed(.refused(code: "invalid_invitation", message: ""))
        case .faceTokenOpened: return m.faceTokenOpened(challenge: challenge1)
        case .faceTokenWrongPassword: return m.faceTokenOpenFailed(.wrongPassword)
        case .livenessPassed: return m.livenessChecked(.passed, nextChallenge: challenge2)
        case .livenessFailed: return m.livenessChecked(.retry(.extremeHeadPose), nextChallenge: challenge2)
        case .matchPassed: return m.faceMatchChecked(.passed, nextChallenge: challenge2)
        case .matchMismatch: return m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: challenge2)
        case .templatesExtracted: return m.templatesExtracted(retry: nil, nextChallenge: challenge2)
        case .templatesRetry: return m.templatesExtracted(retry: .faceTooSmall, nextChallenge: challenge2)
        case .keysCreated: return m.deviceKeysCreated(keys)
        case .keyCreationFailed: return m.deviceKeyCreationFailed(created: ["dk-a"], description: "enclave busy")
        case .enrolmentRegistered: return m.enrolmentRegistered(key)
        case .enrolmentPending: return m.enrolmentPending(key, approval: approval)
        case .enrolmentTransient: return m.enrolmentFailed(.transient("timeout"))
        case .enrolmentRefused: return m.enrolmentFailed(.refused(code: "invitation_used", message: ""))
        case .recordStored: return m.keyRecordStored()
        case .recordStoreFailed: return m.keyRecordStoreFailed("disk full")
        }
    }

    typealias Outcome = TransitionOutcome<View, Action>

    static func capture(_ attemptsLeft: Int = 2, _ reason: FaceCaptureRetryReason? = nil, _ challenge: LivenessChallenge? = challenge1) -> Machine.Capture {
        Machine.Capture(attemptsLeft: attemptsLeft, lastRetryReason: reason, livenessChallenge: challenge)
    }

    static func expected(_ stage: Stage, _ input: Input) -> Outcome {
        let d = details(for: stage)
        let keyStages: Set<Stage> = [.firstCreatingKeys, .furtherCreatingKeys, .firstRegistering, .furtherRegistering, .storingRecord,
                                     .firstStoringRecord]
        let withdraw = Action.withdrawEnrolment(requestId: "enr-1", keys)
        switch (stage, input) {
        case (.succeeded, let input), (.failed, let input):
            return input.isKeyStepResult ? .traps : .ignored
        case (let stage, .cancel) where stage.isRegisteredFurther:
            return .transition(.failed(reason: .cancelled), withdraw)
        case (let stage, .cancel):
            return keyStages.contains(stage) ? .ignored : .transition(.failed(reason: .cancelled), .none)

        case (.awaitingLink, .submitLink), (.awaitingLinkRefused, .submitLink):
            return .transition(.awaitingLink(refusal: nil), .verifyLink(payload: payload))
        case (.verifyingLink, .linkVerified):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil), .fetchEnrolmentDetails(link))
        case (.verifyingLink, .linkVerifiedLogin):
            return .transition(.awaitingLink(refusal: .isLoginLink), .none)
        case (.verifyingLink, .linkVerifiedCeremony):
            return .transition(.awaitingLink(refusal: .isPkiCeremonyLink), .none)
        case (.verifyingLink, .linkRefused):
            return .transition(.awaitingLink(refusal: .badSignature), .none)
        case (.fetchingDetails, .detailsReceived):
            return .transition(.awaitingFaceCapture(details(hasToken: false, passwordPolicy: false), capture()), .none)
        case (.fetchingDetails, .authorityTransient):
            return .transition(.failed(reason: .authorityUnavailable("down")), .none)
        case (.fetchingDetails, .approvalDenied):
            return .transition(.failed(reason: .authorityRefused(code: "invalid_invitation")), .none)
        case (.awaitingApproval, .authorityTransient), (.provingPassword, .authorityTransient):
            return .transition(.failed(reason: .authorityUnavailable("down")), withdraw)
        case (.awaitingApproval, .approvalDenied), (.provingPassword, .approvalDenied):
            return .transition(.failed(reason: .enrolmentFailed("the approval was denied or ran out")), withdraw)
        case (.awaitingApprovalPassword, .submitPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: nil),
                               .provePassword(requestId: "enr-1", password: password, tokenHeader: [1]))
        case (.awaitingApprovalPassword, .submitEmptyPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .empty), .none)
        case (.provingPassword, .passwordProved):
            return .transition(.awaitingApproval(passwordApproval), .awaitApproval(requestId: "enr-1"))
        case (.provingPassword, .passwordRefused):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect), .none)

        case (.choosingPassword, .submitPassword):
            return .transition(.awaitingFaceCapture(d, capture()), .none)
        case (.choosingPassword, .submitEmptyPassword):
            return .transition(.choosingPassword(lastPasswordError: .empty), .none)
        case (.awaitingApproval, .faceTokenReleased):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil), .openFaceToken(password: nil))
        case (.awaitingTokenPassword, .submitPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: nil), .openFaceToken(password: password))
        case (.awaitingTokenPassword, .submitEmptyPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .empty), .none)
        case (.openingToken, .faceTokenOpened), (.openingTokenWithPassword, .faceTokenOpened):
            return .transition(.awaitingFaceCapture(d, capture()), .none)
        case (.openingToken, .faceTokenWrongPassword):
            return .transition(.failed(reason: .faceTokenUnusable), withdraw)
        case (.openingTokenWithPassword, .faceTokenWrongPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect), .none)

        case (.firstCapture, .submitFaceCapture), (.furtherCapture, .submitFaceCapture):
            return .transition(.verifying, .checkLiveness(capture, challenge: challenge1))
        case (.firstCheckingLiveness, .livenessPassed):
            return .transition(.verifying, .extractTemplates(capture))
        case (.furtherCheckingLiveness, .livenessPassed):
            return .transition(.verifying, .matchFace(capture))
        case (.firstCheckingLiveness, .livenessFailed), (.furtherCheckingLiveness, .livenessFailed):
            return .transition(.awaitingFaceCapture(d, capture(2, .extremeHeadPose, challenge2)), .none)
        case (.matchingFace, .matchPassed):
            return .transition(.registeringKeys, .storeKeyRecord(key, keys, issuer: "https://authority.test"))
        case (.matchingFace, .matchMismatch):
            return .transition(.awaitingFaceCapture(d, capture(1, .faceMismatch, challenge2)), .none)
        case (.extractingTemplates, .templatesExtracted):
            return .transition(.registeringKeys, .createDeviceKeys(requestId: "enr-1"))
        case (.extractingTemplates, .templatesRetry):
            return .transition(.awaitingFaceCapture(d, capture(2, .faceTooSmall, challenge2)), .none)

        case (.firstCreatingKeys, .keysCreated):
            return .transition(.registeringKeys, .registerEnrolment(d, keys, firstDevicePassword: password, isFirstDevice: true))
        case (.furtherCreatingKeys, .keysCreated):
            return .transition(.registeringKeys, .registerEnrolment(d, keys, firstDevicePassword: nil, isFirstDevice: false))
        case (.firstCreatingKeys, .keyCreationFailed), (.furtherCreatingKeys, .keyCreationFailed):
            return .transition(.failed(reason: .enrolmentFailed("enclave busy")), .discardDeviceKeys(["dk-a"]))
        case (.firstRegistering, .enrolmentRegistered):
            return .transition(.registeringKeys, .storeKeyRecord(key, keys, issuer: "https://authority.test"))
        case (.furtherRegistering, .enrolmentPending):
            return .transition(.awaitingApproval(approval), .awaitApproval(requestId: "enr-1"))
        case (.firstRegistering, .enrolmentTransient), (.furtherRegistering, .enrolmentTransient):
            return .transition(.failed(reason: .enrolmentFailed("timeout")), .withdrawEnrolment(requestId: "enr-1", keys))
        case (.firstRegistering, .enrolmentRefused), (.furtherRegistering, .enrolmentRefused):
            return .transition(
                .failed(reason: .enrolmentFailed(String(describing: AuthorityFailure.refused(code: "invitation_used", message: "")))),
                .discardDeviceKeys(["dk-a", "dk-u"]))
        case (.storingRecord, .recordStored), (.firstStoringRecord, .recordStored):
            return .transition(.succeeded(key: key), .none)
        case (.storingRecord, .recordStoreFailed), (.firstStoringRecord, .recordStoreFailed):
            return .transition(.failed(reason: .enrolmentFailed("disk full")), .withdrawEnrolment(requestId: "enr-1", keys))

        case (_, let input) where input.isUserInput:
            return .ignored
        default:
            return .traps
        }
    }

    struct PairCase: Codable, Sendable, CustomTestStringConvertible {
        let stage: Stage
        let input: Input
        var testDescription: String { "\(stage.rawValue) × \(input.rawValue)" }
    }

    static func pairs(trapping: Bool) -> [PairCase] {
        Stage.allCases.flatMap { stage in
            Input.allCases.filter { (expected(stage, $0) == .traps) == trapping }.map { PairCase(stage: stage, input: $0) }
        }
    }

    @Test("every state × every non-trapping input", arguments: pairs(trapping: false))
    func transition(_ pair: PairCase) {
        var m = Self.machine(at: pair.stage)
        let before = m.view
        let action = Self.apply(pair.input, to: &m)
        expectTransition(Self.expected(pair.stage, pair.input), before: before, after: m.view, action: action, none: .none)
    }

    @Test("a driver result the machine did not ask for traps", .tags(.impossibleTransitions), arguments: pairs(trapping: true))
    func impossibleTransitionTraps(_ pair: PairCase) async {
        await #expect(processExitsWith: .failure) { [pair] in
            var m = RegistrationStateMachineTests.machine(at: pair.stage)
            _ = RegistrationStateMachineTests.apply(pair.input, to: &m)
        }
    }

    @Test func attemptsExhaustedOnAFurtherDeviceWithdrawsItsKeys() {
        var m = Self.machine(at: .matchingFace)
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: nil) == .none)
        #expect(m.submitFaceCapture(Self.capture) == .checkLiveness(Self.capture, challenge: nil))
        #expect(m.livenessChecked(.passed, nextChallenge: nil) == .matchFace(Self.capture))
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: nil) == .withdrawEnrolment(requestId: "enr-1", Self.keys))
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test func aProvenPasswordOpensTheReleasedTokenWithoutAskingAgain() {
        var m = Self.machine(at: .provingPassword)
        #expect(m.passwordProved(PasswordProofOutcome(accepted: true, attemptsLeft: 3)) == .awaitApproval(requestId: "enr-1"))
        #expect(m.faceTokenReleased(passwordRequired: true, livenessRequired: true) == .openFaceToken(password: Self.password))
    }

    @Test func theLastWrongPasswordProofEndsTheEnrolment() {
        var m = Self.machine(at: .provingPassword)
        #expect(m.passwordProved(PasswordProofOutcome(accepted: false, attemptsLeft: 0)) == .withdrawEnrolment(requestId: "enr-1", Self.keys))
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test func aProtocolTooOldForTheInvitationFails() {
        var m = Machine(deviceProtocol: 6)
        _ = m.submitLink(Self.payload)
        _ = m.linkVerified(Self.link)
        #expect(m.enrolmentDetailsReceived(Self.details(hasToken: false, passwordPolicy: false), challenge: nil) == .none)
        #expect(m.view == .failed(reason: .upgradeRequired))
    }

    @Test func keyCreationFailingBeforeAnyKeyDiscardsNothing() {
        var m = Self.machine(at: .firstCreatingKeys)
        #expect(m.deviceKeyCreationFailed(created: [], description: "no enclave") == .none)
        #expect(m.view == .failed(reason: .enrolmentFailed("no enclave")))
    }

    @Test func aPresenceFailureBeforeTheKeysAreMadeKeepsItsCodeAndDiscardsNothing() {
        var m = Self.machine(at: .firstCreatingKeys)
        #expect(m.userPresenceFailed(.userCancelled) == .none)
        #expect(m.view == .failed(reason: .userPresence(.userCancelled)))
    }
}
