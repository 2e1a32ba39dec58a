import Foundation
import Testing
@testable import FaceSealSDK

/// Named scenarios of the approval machine, in both modes, beyond the one-step table.
@Suite struct ApprovalScenarioTests {
    typealias T = ApprovalStateMachineTests

    @Test(arguments: T.Mode.allCases)
    func theLastMismatchSignsAnAttemptsExhaustedAbort(mode: T.Mode) {
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 1)
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: T.challenge2) == .abort(requestId: "req-1", reason: .attemptsExhausted))
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test(arguments: T.Mode.allCases)
    func captureQualityFailuresNeverSpendAnAttempt(mode: T.Mode) {
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 1)
        for reason in FaceCaptureRetryReason.allCases where reason != .faceMismatch {
            #expect(m.faceMatchChecked(.retry(reason), nextChallenge: T.challenge2) == .none)
            #expect(m.view == .awaitingFaceCapture(T.details(mode, attemptsMax: 1), .init(attemptsLeft: 1, lastRetryReason: reason, livenessChallenge: T.challenge2)))
            _ = m.submitFaceCapture(T.capture)
            _ = m.livenessChecked(.retry(reason), nextChallenge: T.challenge1)
            #expect(m.view == .awaitingFaceCapture(T.details(mode, attemptsMax: 1), .init(attemptsLeft: 1, lastRetryReason: reason, livenessChallenge: T.challenge1)))
            _ = m.submitFaceCapture(T.capture)
            _ = m.livenessChecked(.passed, nextChallenge: nil)
        }
    }

    @Test func withoutLivenessTheCaptureGoesStraightToTheMatch() {
        var m = ApprovalStateMachine(mode: .ceremony, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.ceremony))
        _ = m.requestDetailsReceived(T.details(.ceremony))
        _ = m.faceTokenDownloaded(passwordRequired: false, livenessRequired: false)
        _ = m.faceTokenOpened(challenge: T.challenge1)
        #expect(m.view == .awaitingFaceCapture(T.details(.ceremony), .init(attemptsLeft: 3, lastRetryReason: nil, livenessChallenge: nil)))
        #expect(m.submitFaceCapture(T.capture) == .matchFace(T.capture))
    }

    @Test func aWrongPasswordKeepsAskingAndTheRightOneOpens() {
        var m = T.machine(.ceremony, at: .awaitingPassword)
        #expect(m.submitPassword("bad") == .openFaceToken(password: "bad"))
        #expect(m.faceTokenOpenFailed(.wrongPassword) == .none)
        #expect(m.view == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect))
        #expect(m.submitPassword("good") == .openFaceToken(password: "good"))
        #expect(m.view == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil))
        #expect(m.faceTokenOpened(challenge: nil) == .none)
    }

    @Test func aTokenThatTurnsOutToNeedAPasswordAsksForIt() {
        var m = T.machine(.login, at: .openingToken)
        #expect(m.faceTokenOpenFailed(.passwordRequired) == .none)
        #expect(m.view == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil))
    }

    @Test func detailsDemandingANewerProtocolEndInUpgradeRequired() {
        var m = ApprovalStateMachine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.login))
        let newer = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil, bindingMessage: nil,
            pkiKind: nil, expiresAtUnix: 1, attemptsMax: 3, minimumDeviceProtocol: 8, keyPolicy: []
        )
        #expect(m.requestDetailsReceived(newer) == .none)
        #expect(m.view == .failed(reason: .upgradeRequired))
    }

    @Test func aCeremonyOnProtocolSixFailsAsSoonAsTheLinkIsKnown() {
        var m = ApprovalStateMachine(mode: .ceremony, deviceProtocol: 6)
        _ = m.submitLink(T.payload)
        #expect(m.linkVerified(T.link(.ceremony)) == .none)
        #expect(m.view == .failed(reason: .upgradeRequired))
        var login = ApprovalStateMachine(mode: .login, deviceProtocol: 6)
        _ = login.submitLink(T.payload)
        #expect(login.linkVerified(T.link(.ceremony)) == .none)
        #expect(login.view == .awaitingLink(refusal: .isPkiCeremonyLink), "the wrong-flow refusal comes first")
    }

    @Test(arguments: [
        (AuthorityFailure.linkRefused(.unknownIdentity), ApprovalStateMachine.View.awaitingLink(refusal: .unknownIdentity)),
        (.requestNotPending, .awaitingLink(refusal: .alreadyAnswered)),
        (.requestExpired, .awaitingLink(refusal: .expired)),
        (.deviceKeyRevoked(deviceKeyId: "dk"), .failed(reason: .deviceKeyRevoked)),
        (.deviceKeyTerminated(deviceKeyId: "dk"), .failed(reason: .deviceKeyTerminated)),
        (.upgradeRequired, .failed(reason: .upgradeRequired)),
        (.refused(code: "invalid_request", message: ""), .failed(reason: .authorityRefused(code: "invalid_request"))),
    ])
    func detailFailuresMapOntoRefusalsOrReasons(failure: AuthorityFailure, view: ApprovalStateMachine.View) {
        var m = T.machine(.ceremony, at: .fetchingDetails)
        #expect(m.authorityFailed(failure) == .none)
        #expect(m.view == view)
    }

    @Test func malformedCeremonyDetailsAreAProtocolViolation() {
        var m = T.machine(.ceremony, at: .fetchingDetails)
        let noBinding = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil, bindingMessage: nil,
            pkiKind: .sign, expiresAtUnix: 1, attemptsMax: 3, minimumDeviceProtocol: 7, keyPolicy: [],
            deliveryEndpoint: URL(string: "https://acme.test/d"), clientNotificationToken: "b"
        )
        #expect(m.requestDetailsReceived(noBinding) == .none)
        #expect(m.view == .failed(reason: .protocolViolation("ceremony without a binding message")))
    }

    @Test func postingFailuresFromThePresencePromptAreRetryableUnlessTheKeyIsInvalidated() {
        var m = T.machine(.ceremony, at: .postingResult)
        _ = m.authorityFailed(.signing(SignKeypairError(code: .notAvailable)))
        #expect(m.view == .postingResultFailed(reason: .userPresence(.notAvailable)))
        #expect(m.retry() == .postCompletion(T.completion))
        _ = m.authorityFailed(.signing(SignKeypairError(code: .keyInvalidated)))
        #expect(m.retry() == .none)
        #expect(m.cancelCeremony() == .abort(requestId: "req-1", reason: .userCancelled))
    }

    @Test func retriesReSendTheStoredBytesEveryTime() {
        var m = T.machine(.ceremony, at: .deliveryFailed)
        for _ in 0..<3 {
            #expect(m.retry() == .deliver(T.delivery))
            _ = m.deliveryFinished(.unreachable("down"))
        }
        #expect(m.view == .deliveryFailed(status: .unreachable("down")))
    }

    @Test func aPasswordNeverAppearsInATrapMessage() {
        let enrolment = RegistrationStateMachine.Enrolment.firstDevice(password: EnrolmentPassword(value: "hunter2"))
        #expect(!String(describing: enrolment).contains("hunter2"))
        #expect(!String(reflecting: enrolment).contains("hunter2"))
    }
}
