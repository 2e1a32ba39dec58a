import struct FaceSealWire.AttemptBudget
import FaceSealTestSupport
import Foundation
import Testing
@testable import FaceSealSDK

/// Every state × every input of the machine behind `PkiCeremonyFlow` and `LoginFlow`.
///
/// The table `expected(_:_:_:)` spells out every accepted transition; every other pair is either a
/// user input that must be ignored (state and action unchanged), a late driver result after the
/// end (dropped), or a driver result the machine never asked for, which must trap (checked in a
/// child process).
@Suite struct ApprovalStateMachineTests {
    typealias Machine = ApprovalStateMachine
    typealias Action = ApprovalStateMachine.Action
    typealias View = ApprovalStateMachine.View

    /// The states of the machine, each reached by driving events from the start.
    enum Stage: String, CaseIterable, Codable, Sendable {
        case awaitingLink, awaitingLinkRefused, verifyingLink, fetchingDetails, downloadingToken
        case awaitingPassword, openingTokenWithPassword, openingToken, awaitingFaceCapture
        case checkingLiveness, matchingFace, reportingFailure, preparingCompletion, delivering, deliveryFailed
        case postingResult, postingResultFailedTransient, postingResultFailedStale
        case succeeded, failed

        var isTerminal: Bool { self == .succeeded || self == .failed }
        var existsInLogin: Bool { self != .delivering && self != .deliveryFailed }
    }

    /// Every input: the user's calls and every driver result.
    enum Input: String, CaseIterable, Codable, Sendable {
        case submitLink, submitPassword, submitEmptyPassword, submitFaceCapture, retry, cancel, cancelCeremony
        case linkVerified, linkVerifiedOtherFlow, linkRefused, requestDetailsReceived, detailsRefusedUnknownIdentity
        case detailsRefusedTransient, authorityTransient
        case faceTokenDownloaded, faceTokenOpened, faceTokenWrongPassword
        case livenessPassed, livenessFailed, matchPassed, matchMismatch, matchNoFace, attemptReported
        case completionPrepared, completionPreparationFailed, deliveryAccepted, deliveryRefused, completionAccepted

        var isUserInput: Bool {
            switch self {
            case .submitLink, .submitPassword, .submitEmptyPassword, .submitFaceCapture, .retry, .cancel, .cancelCeremony: true
            default: false
            }
        }
    }

    enum Mode: String, CaseIterable, Codable, Sendable {
        case login, ceremony
        var machineMode: Machine.Mode { self == .login ? .login : .ceremony }
        var linkKind: LinkKind { self == .login ? .login : .ceremony }
    }

    // MARK: Fixtures

    static let payload: [UInt8] = Array("link".utf8)
    static let challenge1 = LivenessChallenge(steps: [.blink, .turnLeft])
    static let challenge2 = LivenessChallenge(steps: [.turnRight])
    static let capture = CapturedFace(sequence: 1, session: FakeCaptureSession(label: "c1"))
    static let timestamp = Date(timeIntervalSince1970: 1_800_000_000)

    /// An identity of the device at the link's authority.
    static func record(_ id: String, clientId: String = "acme") -> KeyRecord {
        KeyRecord(key: Key(id: id, identityId: "id-1", email: "ada@example.com", clientId: clientId, appLabel: "Acme", createdAt: timestamp),
                  issuer: "https://authority.test", ambient: DeviceKeyRecord(deviceKeyId: id + "-a", protection: .ambient),
                  userPresent: DeviceKeyRecord(deviceKeyId: id + "-u", protection: .userPresent))
    }

    /// Two identities at the authority: the first is asked first.
    static let candidates = [record("key-1"), record("key-2")]

    static func link(_ mode: Mode) -> VerifiedLink {
        VerifiedLink(kind: mode.linkKind, requestId: "req-1", issuer: "https://authority.test", expiresAtUnix: 1_800_000_300)
    }

    static func details(_ mode: Mode, attemptsMax: Int = 3) -> RequestDetails {
        RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme",
            branding: Branding(displayName: "Acme", primaryColor: "#112233"),
            bindingMessage: mode == .ceremony ? "Sign contract 42" : nil,
            pkiKind: mode == .ceremony ? .sign : nil, expiresAtUnix: 1_800_000_300, attemptsMax: attemptsMax,
            minimumDeviceProtocol: 7, keyPolicy: ["ML-DSA-65", "ML-KEM-768"], pkiContext: [1], pkiData: [2, 3],
            deliveryEndpoint: mode == .ceremony ? URL(string: "https://acme.test/deliver") : nil,
            clientNotificationToken: mode == .ceremony ? "bearer-1" : nil
        )
    }

    static let delivery = DeliveryRequest(endpoint: URL(string: "https://acme.test/deliver")!, bearer: "bearer-1", body: [9, 9, 9], signature: "sig")
    static let completion = CompletionSubmission(requestId: "req-1", resultSHA256: [7], rotatedToken: [5, 5], downloadedGeneration: 4)

    static func prepared(_ mode: Mode) -> Machine.PreparedResult {
        Machine.PreparedResult(delivery: mode == .ceremony ? delivery : nil, completion: completion)
    }

    /// Drives a fresh machine into `stage`. `livenessRequired` decides whether capture goes through liveness.
    static func machine(_ mode: Mode, at stage: Stage, passwordRequired: Bool = false, attemptsMax: Int = 3) -> Machine {
        var m = Machine(mode: mode.machineMode, deviceProtocol: 7)
        func step(_ action: Action) { _ = action }
        if stage == .awaitingLink { return m }
        step(m.submitLink(payload))
        if stage == .verifyingLink { return m }
        if stage == .awaitingLinkRefused { step(m.linkRefused(.malformed)); return m }
        step(m.linkVerified(link(mode), candidates: candidates))
        if stage == .fetchingDetails { return m }
        step(m.requestDetailsReceived(details(mode, attemptsMax: attemptsMax), among: candidates))
        if stage == .downloadingToken { return m }
        if stage == .failed { step(m.cancel()); return m }
        let needsPassword = passwordRequired || stage == .awaitingPassword || stage == .openingTokenWithPassword
        step(m.faceTokenDownloaded(passwordRequired: needsPassword, livenessRequired: true))
        if stage == .awaitingPassword { return m }
        if needsPassword { step(m.submitPassword("secret")) }
        if stage == .openingToken || stage == .openingTokenWithPassword { return m }
        step(m.faceTokenOpened(challenge: challenge1))
        if stage == .awaitingFaceCapture { return m }
        step(m.submitFaceCapture(capture))
        if stage == .checkingLiveness { return m }
        step(m.livenessChecked(.passed, nextChallenge: nil))
        if stage == .matchingFace { return m }
        if stage == .reportingFailure { step(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: challenge2)); return m }
        step(m.faceMatchChecked(.passed, nextChallenge: nil))
        if stage == .preparingCompletion { return m }
        step(m.completionPrepared(prepared(mode)))
        if stage == .delivering { return m }
        if stage == .deliveryFailed { step(m.deliveryFinished(.refused(httpStatus: 409))); return m }
        if mode == .ceremony { step(m.deliveryFinished(.accepted)) }
        if stage == .postingResult { return m }
        if stage == .postingResultFailedTransient { step(m.authorityFailed(.transient("503"))); return m }
        if stage == .postingResultFailedStale { step(m.authorityFailed(.staleToken)); return m }
        step(m.completionAccepted(timestamp: timestamp))
        precondition(stage == .succeeded, "unreached stage \(stage)")
        return m
    }

    static func apply(_ input: Input, to m: inout Machine, mode: Mode) -> Action {
        switch input {
        case .submitLink: m.submitLink(payload)
        case .submitPassword: m.submitPassword("secret")
        case .submitEmptyPassword: m.submitPassword("")
        case .submitFaceCapture: m.submitFaceCapture(capture)
        case .retry: m.retry()
        case .cancel: m.cancel()
        case .cancelCeremony: m.cancelCeremony()
        case .linkVerified: m.linkVerified(link(mode), candidates: candidates)
        case .linkVerifiedOtherFlow:
            m.linkVerified(VerifiedLink(kind: mode == .login ? .ceremony : .login, requestId: "req-1", issuer: "https://authority.test", expiresAtUnix: 1),
                           candidates: candidates)
        case .linkRefused: m.linkRefused(.badSignature)
        case .requestDetailsReceived: m.requestDetailsReceived(details(mode), among: candidates)
        case .detailsRefusedUnknownIdentity: m.requestDetailsRefused(.linkRefused(.unknownIdentity), settled: nil)
        case .detailsRefusedTransient: m.requestDetailsRefused(.transient("503"), settled: nil)
        case .authorityTransient: m.authorityFailed(.transient("503"))
        case .faceTokenDownloaded: m.faceTokenDownloaded(passwordRequired: false, livenessRequired: true)
        case .faceTokenOpened: m.faceTokenOpened(challenge: challenge1)
        case .faceTokenWrongPassword: m.faceTokenOpenFailed(.wrongPassword)
        case .livenessPassed: m.livenessChecked(.passed, nextChallenge: challenge2)
        case .livenessFailed: m.livenessChecked(.retry(.livenessFailed), nextChallenge: challenge2)
        case .matchPassed: m.faceMatchChecked(.passed, nextChallenge: challenge2)
        case .matchMismatch: m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: challenge2)
        case .matchNoFace: m.faceMatchChecked(.retry(.noFaceDetected), nextChallenge: challenge2)
        case .attemptReported: m.attemptReported(AttemptBudget(attemptsLeft: 2, captureRetriesLeft: 10))
        case .completionPrepared: m.completionPrepared(prepared(mode))
        case .completionPreparationFailed: m.completionPreparationFailed(.notPermitted)
        case .deliveryAccepted: m.deliveryFinished(.accepted)
        case .deliveryRefused: m.deliveryFinished(.refused(httpStatus: 422))
        case .completionAccepted: m.completionAccepted(timestamp: timestamp)
        }
    }

    typealias Outcome = TransitionOutcome<View, Action>

    static func capture(attemptsLeft: Int = 3, captureRetriesLeft: Int = 10, reason: FaceCaptureRetryReason? = nil,
                        challenge: LivenessChallenge? = challenge1) -> Machine.Capture {
        Machine.Capture(attemptsLeft: attemptsLeft, captureRetriesLeft: captureRetriesLeft, lastRetryReason: reason, livenessChallenge: challenge)
    }

    /// The whole transition table.
    static func expected(_ mode: Mode, _ stage: Stage, _ input: Input) -> Outcome {
        let d = details(mode)
        let requestAbort = Action.abort(requestId: "req-1", reason: .userCancelled)
        let cancelled = View.failed(reason: .cancelled)
        let verifying = View.verifying
        switch (stage, input) {
        // Terminal: everything is dropped.
        case (.succeeded, _), (.failed, _):
            return .ignored

        // Cancelling, from every live state.
        case (.postingResultFailedStale, .cancel), (.postingResultFailedStale, .cancelCeremony):
            return .transition(.failed(reason: .staleToken), .none)
        case (_, .cancel):
            return .transition(cancelled, .none)
        case (.awaitingLink, .cancelCeremony), (.awaitingLinkRefused, .cancelCeremony), (.verifyingLink, .cancelCeremony):
            return .transition(cancelled, .none)
        case (.deliveryFailed, .cancelCeremony):
            return .transition(.failed(reason: .deliveryFailed), .abort(requestId: "req-1", reason: .deliveryFailed))
        case (_, .cancelCeremony):
            return .transition(cancelled, requestAbort)

        // Link.
        case (.awaitingLink, .submitLink), (.awaitingLinkRefused, .submitLink):
            return .transition(.awaitingLink(refusal: nil), .verifyLink(payload: payload))
        case (.verifyingLink, .linkVerified):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil),
                               .fetchRequestDetails(link(mode), asking: candidates[0]))
        case (.verifyingLink, .linkVerifiedOtherFlow):
            return .transition(.awaitingLink(refusal: mode == .login ? .isPkiCeremonyLink : .isLoginLink), .none)
        case (.verifyingLink, .linkRefused):
            return .transition(.awaitingLink(refusal: .badSignature), .none)

        // Details and token.
        case (.fetchingDetails, .requestDetailsReceived):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil), .downloadFaceToken(requestId: "req-1"))
        case (.fetchingDetails, .detailsRefusedUnknownIdentity):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil),
                               .fetchRequestDetails(link(mode), asking: candidates[1]))
        case (.fetchingDetails, .detailsRefusedTransient), (.downloadingToken, .authorityTransient):
            return .transition(.failed(reason: .authorityUnavailable("503")), .none)
        case (.downloadingToken, .faceTokenDownloaded):
            return .transition(.downloadingFaceToken(passwordRequired: false, lastPasswordError: nil), .openFaceToken(password: nil))
        case (.awaitingPassword, .submitPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: nil), .openFaceToken(password: "secret"))
        case (.awaitingPassword, .submitEmptyPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .empty), .none)
        case (.openingTokenWithPassword, .faceTokenWrongPassword):
            return .transition(.downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect), .none)
        case (.openingToken, .faceTokenWrongPassword):
            return .transition(.failed(reason: .faceTokenUnusable), .none)
        case (.openingToken, .faceTokenOpened), (.openingTokenWithPassword, .faceTokenOpened):
            return .transition(.awaitingFaceCapture(d, capture()), .none)

        // Face.
        case (.awaitingFaceCapture, .submitFaceCapture):
            return .transition(verifying, .checkLiveness(Self.capture, challenge: challenge1))
        case (.checkingLiveness, .livenessPassed):
            return .transition(verifying, .matchFace(Self.capture))
        case (.checkingLiveness, .livenessFailed), (.matchingFace, .matchNoFace):
            return .transition(verifying, .reportAttempt(requestId: "req-1", kind: .captureRetry))
        case (.matchingFace, .matchPassed):
            return .transition(verifying, .prepareCompletion(d))
        case (.matchingFace, .matchMismatch):
            return .transition(verifying, .reportAttempt(requestId: "req-1", kind: .faceMismatch))
        // The authority's count comes back; without an answer the device counts.
        case (.reportingFailure, .attemptReported), (.reportingFailure, .authorityTransient):
            return .transition(.awaitingFaceCapture(d, capture(attemptsLeft: 2, reason: .faceMismatch, challenge: challenge2)), .none)

        // After the match.
        case (.preparingCompletion, .completionPrepared):
            return mode == .ceremony
                ? .transition(.deliveringResult, .deliver(delivery))
                : .transition(.postingResult, .postCompletion(completion))
        case (.preparingCompletion, .completionPreparationFailed):
            return .transition(.failed(reason: .keyOperationNotPermitted), .abort(requestId: "req-1", reason: .refused))
        case (.delivering, .deliveryAccepted):
            return .transition(.postingResult, .postCompletion(completion))
        case (.delivering, .deliveryRefused):
            return .transition(.deliveryFailed(status: .refused(httpStatus: 422)), .none)
        case (.deliveryFailed, .retry):
            return .transition(.deliveringResult, .deliver(delivery))
        case (.postingResult, .completionAccepted):
            return .transition(.succeeded(rpLabel: "Acme", kind: mode == .ceremony ? .sign : nil, timestamp: timestamp), .none)
        case (.postingResult, .authorityTransient):
            return .transition(.postingResultFailed(reason: .transient("503")), .none)
        case (.postingResultFailedTransient, .retry):
            return .transition(.postingResult, .postCompletion(completion))

        case (_, let input) where input.isUserInput:
            return .ignored
        default:
            return .traps
        }
    }

    static func pairs(trapping: Bool) -> [PairCase] {
        var result: [PairCase] = []
        for mode in Mode.allCases {
            for stage in Stage.allCases where mode == .ceremony || stage.existsInLogin {
                for input in Input.allCases where (expected(mode, stage, input) == .traps) == trapping {
                    result.append(PairCase(mode: mode, stage: stage, input: input))
                }
            }
        }
        return result
    }

    struct PairCase: Codable, Sendable, CustomTestStringConvertible {
        let mode: Mode
        let stage: Stage
        let input: Input
        var testDescription: String { "\(mode.rawValue): \(stage.rawValue) × \(input.rawValue)" }
    }

    // MARK: Tests

    @Test("every state × every non-trapping input", arguments: pairs(trapping: false))
    func transition(_ pair: PairCase) {
        var m = Self.machine(pair.mode, at: pair.stage)
        let before = m.view
        let action = Self.apply(pair.input, to: &m, mode: pair.mode)
        expectTransition(Self.expected(pair.mode, pair.stage, pair.input), before: before, after: m.view, action: action, none: .none)
    }

    @Test("a driver result the machine did not ask for traps", .tags(.impossibleTransitions), arguments: pairs(trapping: true))
    func impossibleTransitionTraps(_ pair: PairCase) async {
        await #expect(processExitsWith: .failure) { [pair] in
            var m = ApprovalStateMachineTests.machine(pair.mode, at: pair.stage)
            _ = ApprovalStateMachineTests.apply(pair.input, to: &m, mode: pair.mode)
        }
    }

    @Test func tableCoversBothKindsOfPairs() {
        #expect(Self.pairs(trapping: false).count > 200)
        #expect(Self.pairs(trapping: true).count > 100)
    }
}
