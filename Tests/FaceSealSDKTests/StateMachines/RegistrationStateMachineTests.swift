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
        case downloadingToken, awaitingTokenPassword, openingToken, openingTokenWithPassword
        case furtherCapture, furtherCheckingLiveness, matchingFace, furtherCreatingKeys, furtherRegistering
        case storingRecord, succeeded, failed

        var isTerminal: Bool { self == .succeeded || self == .failed }
        var isFirstDevice: Bool {
            [.choosingPassword, .firstCapture, .firstCheckingLiveness, .extractingTemplates, .firstCreatingKeys, .firstRegistering].contains(self)
        }
    }

    enum Input: String, CaseIterable, Codable, Sendable {
        case submitLink, submitPassword, submitEmptyPassword, submitFaceCapture, cancel
        case linkVerified, linkVerifiedLogin, linkVerifiedCeremony, linkRefused, detailsReceived, authorityTransient
        case faceTokenDownloaded, faceTokenOpened, faceTokenWrongPassword
        case livenessPassed, livenessFailed, matchPassed, matchMismatch, templatesExtracted, templatesRetry
        case keysCreated, keyCreationFailed, enrolmentRegistered, enrolmentTransient, enrolmentRefused
        case recordStored, recordStoreFailed

        var isUserInput: Bool { [.submitLink, .submitPassword, .submitEmptyPassword, .submitFaceCapture, .cancel].contains(self) }
        /// Results of the all-or-nothing steps, which cannot arrive after the end (cancel is not taken meanwhile).
        var isKeyStepResult: Bool {
            [.keysCreated, .keyCreationFailed, .enrolmentRegistered, .enrolmentTransient, .enrolmentRefused, .recordStored, .recordStoreFailed].contains(self)
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
        } else {
            if stage == .downloadingToken { return m }
            let withPassword = stage == .awaitingTokenPassword || stage == .openingTokenWithPassword
            _ = m.faceTokenDownloaded(passwordRequired: withPassword, livenessRequired: true)
            if stage == .awaitingTokenPassword { return m }
            if withPassword { _ = m.submitPassword("secret") }
            if stage == .openingToken || stage == .openingTokenWithPassword { return m }
            _ = m.faceTokenOpened(challenge: challenge1)
        }
        if stage == .firstCapture || stage == .furtherCapture { return m }
        _ = m.submitFaceCapture(capture)
        if stage == .firstCheckingLiveness || stage == .furtherCheckingLiveness { return m }
        _ = m.livenessChecked(.passed, nextChallenge: nil)
        if stage == .extractingTemplates || stage == .matchingFace { return m }
        if stage.isFirstDevice {
            _ = m.templatesExtracted(retry: nil, nextChallenge: nil)
        } else {
            _ = m.faceMatchChecked(.passed, nextChallenge: nil)
        }
        if stage == .firstCreatingKeys || stage == .furtherCreatingKeys { return m }
        _ = m.deviceKeysCreated(keys)
        if stage == .firstRegistering || stage == .furtherRegistering { return m }
        _ = m.enrolmentRegistered(key)
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
        case .faceTokenDownloaded: return m.faceTokenDownloaded(passwordRequired: false, livenessRequired: true)
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
        let keyStages: Set<Stage> = [.firstCreatingKeys, .furtherCreatingKeys, .firstRegistering, .furtherRegistering, .storingRecord]
        switch (stage, input) {
        case (.succeeded, let input), (.failed, let input):
            return input.isKeyStepResult ? .traps : .ignored
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
        case (.fetchingDetails, .authorityTransient), (.downloadingToken, .authorityTransient):
            return .transition(.failed(reason: .authorityUnavailable("down")), .none)

        case (.choosingPassword, .submitPassword):
            return .transition(.awaitingFaceCapture(d, capture()), .none)
        case (.choosingPassword, .submitEmptyPassword):
            return .transition(.choosingPassword(lastPasswordError: .empty), .none)
        case (.downloadingToken, .faceTokenDownloaded):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil), .openFaceToken(password: nil))
        case (.awaitingTokenPassword, .submitPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: nil), .openFaceToken(password: password))
        case (.awaitingTokenPassword, .submitEmptyPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .empty), .none)
        case (.openingToken, .faceTokenOpened), (.openingTokenWithPassword, .faceTokenOpened):
            return .transition(.awaitingFaceCapture(d, capture()), .none)
        case (.openingToken, .faceTokenWrongPassword):
            return .transition(.failed(reason: .faceTokenUnusable), .none)
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
            return .transition(.registeringKeys, .createDeviceKeys(requestId: "enr-1"))
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
        case (.firstRegistering, .enrolmentRegistered), (.furtherRegistering, .enrolmentRegistered):
            return .transition(.registeringKeys, .storeKeyRecord(key, keys, issuer: "https://authority.test"))
        case (.firstRegistering, .enrolmentTransient), (.furtherRegistering, .enrolmentTransient):
            return .transition(.failed(reason: .enrolmentFailed("timeout")), .withdrawEnrolment(requestId: "enr-1", keys))
        case (.firstRegistering, .enrolmentRefused), (.furtherRegistering, .enrolmentRefused):
            return .transition(
                .failed(reason: .enrolmentFailed(String(describing: AuthorityFailure.refused(code: "invitation_used", message: "")))),
                .discardDeviceKeys(["dk-a", "dk-u"]))
        case (.storingRecord, .recordStored):
            return .transition(.succeeded(key: key), .none)
        case (.storingRecord, .recordStoreFailed):
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

    @Test func attemptsExhaustedOnAFurtherDeviceEndsWithoutKeys() {
        var m = Self.machine(at: .matchingFace)
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: nil) == .none)
        #expect(m.submitFaceCapture(Self.capture) == .checkLiveness(Self.capture, challenge: nil))
        #expect(m.livenessChecked(.passed, nextChallenge: nil) == .matchFace(Self.capture))
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: nil) == .none)
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
