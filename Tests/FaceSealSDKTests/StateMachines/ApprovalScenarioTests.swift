import struct FaceSealWire.AttemptBudget
import Foundation
import Testing
@testable import FaceSealSDK

/// Named scenarios of the approval machine, in both modes, beyond the one-step table.
@Suite struct ApprovalScenarioTests {
    typealias T = ApprovalStateMachineTests
    typealias Machine = ApprovalStateMachine

    @Test(arguments: T.Mode.allCases)
    func theAuthorityCountsTheLastMismatchAndHasDeniedTheRequest(mode: T.Mode) {
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 1)
        #expect(m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: T.challenge2) == .reportAttempt(requestId: "req-1", kind: .faceMismatch))
        #expect(m.view == .verifying)
        #expect(m.attemptReported(AttemptBudget(attemptsLeft: 0, captureRetriesLeft: 10)) == .none)
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test(arguments: T.Mode.allCases)
    func aReportThatDoesNotArriveIsCountedOnTheDeviceAndTheLastOneSignsAnAbort(mode: T.Mode) {
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 1)
        _ = m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: T.challenge2)
        #expect(m.authorityFailed(.transient("offline")) == .abort(requestId: "req-1", reason: .attemptsExhausted))
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test(arguments: T.Mode.allCases)
    func theAuthoritysCountReplacesTheDevicesOne(mode: T.Mode) {
        // Another flow on the same link spent one already: the authority answers what is really left.
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 3)
        _ = m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: T.challenge2)
        _ = m.attemptReported(AttemptBudget(attemptsLeft: 1, captureRetriesLeft: 10))
        #expect(m.view == .awaitingFaceCapture(T.details(mode, attemptsMax: 3), T.capture(attemptsLeft: 1, reason: .faceMismatch, challenge: T.challenge2)))
        // A report refused because the request ended elsewhere ends this flow too.
        _ = m.submitFaceCapture(T.capture)
        _ = m.livenessChecked(.passed, nextChallenge: nil)
        _ = m.faceMatchChecked(.retry(.faceMismatch), nextChallenge: T.challenge2)
        #expect(m.authorityFailed(.requestNotPending) == .none)
        #expect(m.view == .failed(reason: .requestNoLongerPending))
    }

    @Test(arguments: T.Mode.allCases)
    func captureQualityFailuresSpendTheirOwnBudgetNotAnAttempt(mode: T.Mode) {
        var m = T.machine(mode, at: .matchingFace, attemptsMax: 1)
        var left = 10
        for reason in FaceCaptureRetryReason.allCases where reason != .faceMismatch {
            #expect(m.faceMatchChecked(.retry(reason), nextChallenge: T.challenge2) == .reportAttempt(requestId: "req-1", kind: .captureRetry))
            left -= 1
            _ = m.attemptReported(AttemptBudget(attemptsLeft: 1, captureRetriesLeft: left))
            #expect(m.view == .awaitingFaceCapture(T.details(mode, attemptsMax: 1),
                                                   T.capture(attemptsLeft: 1, captureRetriesLeft: left, reason: reason, challenge: T.challenge2)))
            _ = m.submitFaceCapture(T.capture)
            #expect(m.livenessChecked(.retry(reason), nextChallenge: T.challenge1) == .reportAttempt(requestId: "req-1", kind: .captureRetry))
            left -= 1
            _ = m.attemptReported(AttemptBudget(attemptsLeft: 1, captureRetriesLeft: left))
            #expect(m.view == .awaitingFaceCapture(T.details(mode, attemptsMax: 1),
                                                   T.capture(attemptsLeft: 1, captureRetriesLeft: left, reason: reason, challenge: T.challenge1)))
            _ = m.submitFaceCapture(T.capture)
            _ = m.livenessChecked(.passed, nextChallenge: nil)
            if left <= 2 { break }
        }
        _ = m.faceMatchChecked(.retry(.lostFace), nextChallenge: T.challenge2)
        #expect(m.attemptReported(AttemptBudget(attemptsLeft: 1, captureRetriesLeft: 0)) == .none)
        #expect(m.view == .failed(reason: .captureRetriesExhausted))
    }

    @Test(arguments: T.Mode.allCases)
    func aBudgetSpentBeforeTheFlowStartedEndsItAndSaysSo(mode: T.Mode) {
        var m = T.machine(mode, at: .fetchingDetails)
        let spent = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil,
            bindingMessage: mode == .ceremony ? "Sign contract 42" : nil, pkiKind: mode == .ceremony ? .sign : nil, expiresAtUnix: 1,
            attemptsMax: 3, attemptsLeft: 0, minimumDeviceProtocol: 7, keyPolicy: [],
            deliveryEndpoint: mode == .ceremony ? URL(string: "https://acme.test/d") : nil, clientNotificationToken: mode == .ceremony ? "b" : nil)
        #expect(m.requestDetailsReceived(spent, among: T.candidates) == .abort(requestId: "req-1", reason: .attemptsExhausted))
        #expect(m.view == .failed(reason: .attemptsExhausted))
    }

    @Test func theTenantsLivenessRequirementAppliesToATokenWithoutOne() {
        var m = ApprovalStateMachine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.login), candidates: T.candidates)
        let policy = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil, bindingMessage: nil,
            pkiKind: nil, expiresAtUnix: 1, attemptsMax: 3, livenessRequired: true, minimumDeviceProtocol: 7, keyPolicy: [])
        _ = m.requestDetailsReceived(policy, among: T.candidates)
        _ = m.faceTokenDownloaded(passwordRequired: false, livenessRequired: false)
        _ = m.faceTokenOpened(challenge: T.challenge1)
        #expect(m.view == .awaitingFaceCapture(policy, T.capture(challenge: T.challenge1)))
        #expect(m.submitFaceCapture(T.capture) == .checkLiveness(T.capture, challenge: T.challenge1))
    }

    @Test(arguments: T.Mode.allCases)
    func asManyWrongPasswordsAsAttemptsSignAnAbort(mode: T.Mode) {
        var m = T.machine(mode, at: .awaitingPassword, attemptsMax: 2)
        #expect(m.submitPassword("bad") == .openFaceToken(password: "bad"))
        #expect(m.faceTokenOpenFailed(.wrongPassword) == .none)
        #expect(m.view == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect))
        _ = m.submitPassword("worse")
        #expect(m.faceTokenOpenFailed(.wrongPassword) == .abort(requestId: "req-1", reason: .passwordAttemptsExhausted))
        #expect(m.view == .failed(reason: .passwordAttemptsExhausted))
    }

    @Test func withoutLivenessTheCaptureGoesStraightToTheMatch() {
        var m = ApprovalStateMachine(mode: .ceremony, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.ceremony), candidates: T.candidates)
        _ = m.requestDetailsReceived(T.details(.ceremony), among: T.candidates)
        _ = m.faceTokenDownloaded(passwordRequired: false, livenessRequired: false)
        _ = m.faceTokenOpened(challenge: T.challenge1)
        #expect(m.view == .awaitingFaceCapture(T.details(.ceremony), T.capture(challenge: nil)))
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
        _ = m.linkVerified(T.link(.login), candidates: T.candidates)
        let newer = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil, bindingMessage: nil,
            pkiKind: nil, expiresAtUnix: 1, attemptsMax: 3, minimumDeviceProtocol: 8, keyPolicy: []
        )
        #expect(m.requestDetailsReceived(newer, among: T.candidates) == .none)
        #expect(m.view == .failed(reason: .upgradeRequired))
    }

    @Test func aCeremonyOnProtocolSixFailsAsSoonAsTheLinkIsKnown() {
        var m = ApprovalStateMachine(mode: .ceremony, deviceProtocol: 6)
        _ = m.submitLink(T.payload)
        #expect(m.linkVerified(T.link(.ceremony), candidates: T.candidates) == .none)
        #expect(m.view == .failed(reason: .upgradeRequired))
        var login = ApprovalStateMachine(mode: .login, deviceProtocol: 6)
        _ = login.submitLink(T.payload)
        #expect(login.linkVerified(T.link(.ceremony), candidates: T.candidates) == .none)
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
        var m = Machine(mode: .ceremony, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.ceremony), candidates: [T.record("key-1")])
        #expect(m.requestDetailsRefused(failure, settled: nil) == .none)
        #expect(m.view == view)
    }

    // MARK: Which identity acts

    @Test func withoutAnIdentityAtTheAuthorityTheLinkIsRefused() {
        var m = Machine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        #expect(m.linkVerified(T.link(.login), candidates: []) == .none)
        #expect(m.view == .awaitingLink(refusal: .unknownIdentity))
    }

    @Test func eachIdentityIsAskedInTurnAndTheOneAnsweredActs() {
        var m = Machine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        let (first, second, third) = (T.record("key-1"), T.record("key-2"), T.record("key-3"))
        #expect(m.linkVerified(T.link(.login), candidates: [first, second, third]) == .fetchRequestDetails(T.link(.login), asking: first))
        #expect(m.requestDetailsRefused(.linkRefused(.unknownIdentity), settled: nil) == .fetchRequestDetails(T.link(.login), asking: second))
        // An ended key says nothing about the others; one only past its rotation overlap is asked again on its new keys.
        var settled = second
        settled.ambient = DeviceKeyRecord(deviceKeyId: "key-2-a2", protection: .ambient)
        #expect(m.requestDetailsRefused(.deviceKeyRevoked(deviceKeyId: "key-2-a"), settled: settled) == .fetchRequestDetails(T.link(.login), asking: settled))
        #expect(m.identity == nil)
        #expect(m.requestDetailsReceived(T.details(.login), among: [first, settled, third]) == .downloadFaceToken(requestId: "req-1"))
        #expect(m.identity == settled)
    }

    @Test func whenEveryIdentityIsRefusedTheLastEndedKeyIsTheAnswer() {
        var m = Machine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.login), candidates: [T.record("key-1"), T.record("key-2")])
        _ = m.requestDetailsRefused(.deviceKeyTerminated(deviceKeyId: "key-1-a"), settled: nil)
        #expect(m.requestDetailsRefused(.linkRefused(.unknownIdentity), settled: nil) == .none)
        #expect(m.view == .failed(reason: .deviceKeyTerminated))
    }

    @Test func theIdentityOfTheRequestsApplicationActsNeverAnotherApplicationsKey() {
        // The answered key is of another application of the user: the record for the request's application acts.
        let other = T.record("key-1", clientId: "globex")
        let fitting = T.record("key-2")
        var m = Machine(mode: .login, deviceProtocol: 7)
        _ = m.submitLink(T.payload)
        _ = m.linkVerified(T.link(.login), candidates: [other, fitting])
        _ = m.requestDetailsReceived(T.details(.login), among: [other, fitting])
        #expect(m.identity == fitting)

        var none = Machine(mode: .login, deviceProtocol: 7)
        _ = none.submitLink(T.payload)
        _ = none.linkVerified(T.link(.login), candidates: [other])
        #expect(none.requestDetailsReceived(T.details(.login), among: [other]) == .none)
        #expect(none.identity == nil)
        #expect(none.view == .awaitingLink(refusal: .unknownIdentity))
    }

    @Test func malformedCeremonyDetailsAreAProtocolViolation() {
        var m = T.machine(.ceremony, at: .fetchingDetails)
        let noBinding = RequestDetails(
            requestId: "req-1", identityId: "id-1", clientId: "acme", rpLabel: "Acme", branding: nil, bindingMessage: nil,
            pkiKind: .sign, expiresAtUnix: 1, attemptsMax: 3, minimumDeviceProtocol: 7, keyPolicy: [],
            deliveryEndpoint: URL(string: "https://acme.test/d"), clientNotificationToken: "b"
        )
        #expect(m.requestDetailsReceived(noBinding, among: T.candidates) == .none)
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
