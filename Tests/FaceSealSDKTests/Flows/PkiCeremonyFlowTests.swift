import Foundation
import Testing
@testable import FaceSealSDK

extension PkiCeremonyFlow.State {
    var isAwaitingFaceCapture: Bool {
        if case .awaitingFaceCapture = self { return true }
        return false
    }

    var attemptsLeft: Int? {
        if case .awaitingFaceCapture(_, _, _, _, _, let left, _, _) = self { return left }
        return nil
    }

    var lastRetryReason: FaceCaptureRetryReason? {
        if case .awaitingFaceCapture(_, _, _, _, _, _, let reason, _) = self { return reason }
        return nil
    }

    var isDeliveryFailed: Bool {
        if case .deliveryFailed = self { return true }
        return false
    }

    var isPostingResultFailed: Bool {
        if case .postingResultFailed = self { return true }
        return false
    }
}

/// The ceremony flow driven end to end through its driver, on the fakes of the seams.
@Suite(.timeLimit(.minutes(1))) struct PkiCeremonyFlowTests {
    @Test func aCeremonySucceedsAndDeliversBeforeItCompletes() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "ceremony-1", requestId: "req-1", kind: .sign)
        let authn = try await h.open()
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        #expect(await states.until { _ in true } == .awaitingLink(refusal: nil))

        flow.submitLinkPayload(payload: Array("ceremony-1".utf8))
        let approval = await states.until(\.isAwaitingFaceCapture)
        #expect(approval == .awaitingFaceCapture(
            bindingMessage: "Sign order 42", kind: .sign, rpLabel: "Acme", branding: Branding(displayName: "Acme"),
            expiresAtUnix: 1_800_000_300, attemptsLeft: 3, lastRetryReason: nil,
            livenessChallenge: LivenessChallenge(steps: [LivenessChallenge.Step.allCases[1], .blink])
        ))

        flow.submitFaceCapture(captureSession: capture("ada"))
        let rest = await states.rest()
        #expect(rest.last == .succeeded(rpLabel: "Acme", kind: .sign, timestamp: h.authority.recordedAt))
        #expect(rest.contains(.verifying) && rest.contains(.deliveringResult) && rest.contains(.postingResult))
        #expect(h.log.all == ["details", "token", "deliver", "complete"])

        // The completion carries the receipt of exactly the delivered bytes and the rotated token.
        let delivered = try #require(h.delivery.deliveries.first)
        #expect(delivered.bearer == "bearer-req-1")
        #expect(delivered.endpoint.absoluteString == "https://acme.test/faceseal/deliver")
        let completion = try #require(h.authority.recorded.withLock { $0.completions.first })
        #expect(completion.resultSHA256 == delivered.body.reduce(into: [UInt8](repeating: 0, count: 4)) { $0[Int($1) % 4] &+= $1 })
        #expect(completion.rotatedToken == [5] && completion.downloadedGeneration == 4)
        #expect(h.authority.recorded.withLock { $0.completionSigners } == [.userPresent])
        #expect(authn.auditLog(limit: 1).first?.kind == .ceremony)
    }

    @Test func eachFlowRefusesTheOtherFlowsLinkAndNamesIt() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "login-1", requestId: "req-login", kind: nil)
        h.scriptRequest(payload: "ceremony-1", requestId: "req-cer", kind: .publicKeys)
        let authn = try await h.open()

        let ceremony = authn.startPkiCeremonyFlow()
        var ceremonyStates = Observed(ceremony.stateStream())
        ceremony.submitLinkPayload(payload: Array("login-1".utf8))
        #expect(await ceremonyStates.until { $0 == .awaitingLink(refusal: .isLoginLink) } != nil)

        let login = authn.startLoginFlow()
        var loginStates = Observed(login.stateStream())
        login.submitLinkPayload(payload: Array("ceremony-1".utf8))
        #expect(await loginStates.until { $0 == .awaitingLink(refusal: .isPkiCeremonyLink) } != nil)

        // Re-submitted to the right flows, both proceed.
        login.submitLinkPayload(payload: Array("login-1".utf8))
        #expect(await loginStates.until { if case .awaitingFaceCapture = $0 { true } else { false } } != nil)
        login.submitFaceCapture(captureSession: capture("ada"))
        #expect(await loginStates.rest().last == .succeeded(rpLabel: "Acme", timestamp: h.authority.recordedAt))

        ceremony.submitLinkPayload(payload: Array("ceremony-1".utf8))
        #expect(await ceremonyStates.until(\.isAwaitingFaceCapture) != nil)
        #expect(h.delivery.deliveries.isEmpty, "a sign-in never delivers")
    }

    @Test(arguments: [("garbage", LinkRefusal.malformed), ("forged", .badSignature), ("expired", .expired)])
    func badLinksStayOnAwaitingLinkWithTheirRefusal(payload: String, refusal: LinkRefusal) async throws {
        let h = Harness()
        try h.preload()
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array(payload.utf8))
        #expect(await states.until { $0 == .awaitingLink(refusal: refusal) } != nil)
    }

    @Test func aLinkOfAnUnknownIdentityOrAnAnsweredRequestIsRefused() async throws {
        let h = Harness()
        try h.preload(identityId: "id-1")
        h.scriptRequest(payload: "other-user", requestId: "req-x", kind: .sign, identityId: "id-2")
        h.authority.script.withLock {
            $0.links["answered"] = VerifiedLink(kind: .ceremony, requestId: "req-gone", issuer: Harness.issuer, expiresAtUnix: 1)
            $0.links["foreign"] = VerifiedLink(kind: .ceremony, requestId: "req-f", issuer: "https://elsewhere.test", expiresAtUnix: 1)
        }
        let authn = try await h.open()
        for (payload, refusal) in [("other-user", LinkRefusal.unknownIdentity), ("answered", .alreadyAnswered), ("foreign", .unknownIdentity)] {
            let flow = authn.startPkiCeremonyFlow()
            var states = Observed(flow.stateStream())
            flow.submitLinkPayload(payload: Array(payload.utf8))
            #expect(await states.until { $0 == .awaitingLink(refusal: refusal) } != nil, "\(payload)")
        }
    }

    @Test func aWrongPasswordKeepsTheStepAndTheRightOneProceeds() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .publicKeys)
        h.authority.script.withLock { $0.passwordRequired = true }
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) } != nil)
        flow.submitPassword(password: "wrong")
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect) } != nil)
        flow.submitPassword(password: "pw")
        #expect(await states.until(\.isAwaitingFaceCapture) != nil)
    }

    @Test func livenessFailuresSpendNoAttemptMismatchesSpendOneAndExhaustionAborts() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign, attemptsMax: 2)
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        #expect(await states.until(\.isAwaitingFaceCapture)?.attemptsLeft == 2)

        flow.submitFaceCapture(captureSession: capture("spoof"))
        let afterSpoof = await states.until { $0.lastRetryReason == .livenessFailed }
        #expect(afterSpoof?.attemptsLeft == 2)
        #expect(h.verifier.matchCalls == 0, "liveness runs before the match")

        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.until { $0.lastRetryReason == .faceMismatch }?.attemptsLeft == 1)

        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.rest().last == .failed(reason: .attemptsExhausted))
        await flow.waitUntilIdle()
        // Every failure was reported; the authority counted the last mismatch and denied the request itself.
        let recorded = h.authority.recorded.withLock { $0 }
        #expect(recorded.reports == [.captureRetry, .faceMismatch, .faceMismatch])
        #expect(recorded.aborts.isEmpty)
    }

    @Test func aRefusedDeliveryIsRetriedWithTheSameBytesAndNoSecondScan() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .decapsulate, pkiData: [1, 2, 3, 4])
        h.delivery.enqueue(.refused(httpStatus: 409))
        h.delivery.enqueue(.unreachable("connection refused"))
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isDeliveryFailed) == .deliveryFailed(status: .refused(httpStatus: 409)))
        flow.retry()
        #expect(await states.until(\.isDeliveryFailed) == .deliveryFailed(status: .unreachable("connection refused")))
        flow.retry()
        #expect(await states.rest().last == .succeeded(rpLabel: "Acme", kind: .decapsulate, timestamp: h.authority.recordedAt))
        let sent = h.delivery.deliveries
        #expect(sent.count == 3 && sent.allSatisfy { $0 == sent[0] }, "byte-identical re-sends")
        #expect(h.verifier.livenessCalls == 1 && h.verifier.matchCalls == 1)
        #expect(h.log.all.firstIndex(of: "complete")! > h.log.all.lastIndex(of: "deliver")!)
    }

    @Test func cancelCeremonyAfterARefusedDeliverySignsADeliveryFailedAbort() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.delivery.enqueue(.refused(httpStatus: 400))
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        _ = await states.until(\.isDeliveryFailed)
        flow.cancelCeremony()
        #expect(await states.rest().last == .failed(reason: .deliveryFailed))
        await flow.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.aborts.map(\.reason) } == [.deliveryFailed])
        #expect(h.authority.recorded.withLock { $0.completions.isEmpty })
    }

    @Test func aTransientCompletionFailureIsRetried() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.authority.script.withLock { $0.completionResults = [.transient("503")] }
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isPostingResultFailed) == .postingResultFailed(reason: .transient("503")))
        flow.retry()
        #expect(await states.rest().last == .succeeded(rpLabel: "Acme", kind: .sign, timestamp: h.authority.recordedAt))
        let completions = h.authority.recorded.withLock { $0.completions }
        #expect(completions.count == 2 && completions[0] == completions[1])
        #expect(h.delivery.deliveries.count == 1, "the application already holds the result")
    }

    @Test func aStaleTokenIsNotRetryableAndOnlyCancelEndsIt() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.authority.script.withLock { $0.completionResults = [.staleToken] }
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.until(\.isPostingResultFailed) == .postingResultFailed(reason: .staleToken))
        flow.retry()
        await flow.waitUntilIdle()
        #expect(flow.state == .postingResultFailed(reason: .staleToken))
        #expect(h.authority.recorded.withLock { $0.completions.count } == 1)
        flow.cancel()
        #expect(await states.rest().last == .failed(reason: .staleToken))
    }

    @Test func cancelEndsLocallyWhileCancelCeremonyAbortsAtOnce() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "a", requestId: "req-a", kind: .sign)
        h.scriptRequest(payload: "b", requestId: "req-b", kind: .sign)
        let authn = try await h.open()

        let local = authn.startPkiCeremonyFlow()
        var localStates = Observed(local.stateStream())
        local.submitLinkPayload(payload: Array("a".utf8))
        _ = await localStates.until(\.isAwaitingFaceCapture)
        local.cancel()
        #expect(await localStates.rest().last == .failed(reason: .cancelled))
        await local.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.aborts.isEmpty })

        let told = authn.startPkiCeremonyFlow()
        var toldStates = Observed(told.stateStream())
        told.submitLinkPayload(payload: Array("b".utf8))
        _ = await toldStates.until(\.isAwaitingFaceCapture)
        told.cancelCeremony()
        #expect(await toldStates.rest().last == .failed(reason: .cancelled))
        await told.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.aborts.map { "\($0.requestId):\($0.reason.rawValue)" } } == ["req-b:user_cancelled"])
    }

    @Test func anSDKOnProtocolSixIsRefusedACeremony() async throws {
        let h = Harness(deviceProtocol: 6)
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.scriptRequest(payload: "l", requestId: "req-2", kind: nil, minimumDeviceProtocol: 6)
        let authn = try await h.open()
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        #expect(await states.rest().last == .failed(reason: .upgradeRequired))
        #expect(h.log.all.isEmpty, "refused before any request is read")

        // A sign-in that allows protocol 6 still works on it.
        let login = authn.startLoginFlow()
        var loginStates = Observed(login.stateStream())
        login.submitLinkPayload(payload: Array("l".utf8))
        #expect(await loginStates.until { if case .awaitingFaceCapture = $0 { true } else { false } } != nil)
    }

    @Test func aKeyOperationRefusedAfterTheMatchEndsWithAFacePKIReason() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .decapsulate, pkiData: [1])
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.rest().last == .failed(reason: .invalidPkiData))
        await flow.waitUntilIdle()
        #expect(h.delivery.deliveries.isEmpty)
        #expect(h.authority.recorded.withLock { $0.aborts.map(\.reason) } == [.refused])
    }

    @Test func aRevokedDeviceKeyFailsTheFlowAndRemovesTheKey() async throws {
        let h = Harness()
        let record = try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.authority.script.withLock { $0.revokedDeviceKeys = [record.ambient.deviceKeyId] }
        let authn = try await h.open()
        #expect(authn.keys.map(\.id) == ["key-1"])
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        #expect(await states.rest().last == .failed(reason: .deviceKeyRevoked))
        #expect(authn.keys.isEmpty)
        #expect(h.vault.keyIds.isDisjoint(with: [record.ambient.deviceKeyId, record.userPresent.deviceKeyId]))
        #expect(authn.auditLog().contains { $0.kind == .keyRemovedByAuthority })
    }

    @Test func aBiometricChangeFailsOnlyTheUserPresentStepAndKeepsTheKey() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        let authn = try await h.open()
        h.vault.changeBiometricEnrolment()
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        // Reads with the ambient key still work after the change; the token goes only to the user-present key.
        #expect(await states.rest().last == .failed(reason: .userPresence(.keyInvalidated)))
        #expect(h.log.all == ["details"])
        #expect(authn.keys.count == 1, "an invalidated key is not a reason to sign out")
    }

    @Test func aCancelledPresencePromptReleasesNothingAndTheLinkCanBeTriedAgain() async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        h.vault.presence.enqueue(SignKeypairError(code: .userCancelled))
        let authn = try await h.open()
        let flow = authn.startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        #expect(await states.rest().last == .failed(reason: .userPresence(.userCancelled)))
        #expect(h.authority.recorded.withLock { $0.downloadSigners }.isEmpty)
        let again = authn.startPkiCeremonyFlow()
        var againStates = Observed(again.stateStream())
        again.submitLinkPayload(payload: Array("c".utf8))
        _ = await againStates.until(\.isAwaitingFaceCapture)
        again.submitFaceCapture(captureSession: capture("ada"))
        #expect(await againStates.rest().last == .succeeded(rpLabel: "Acme", kind: .sign, timestamp: h.authority.recordedAt))
    }

    @Test(arguments: [false, true])
    func oneUserPresencePromptCoversTheDownloadTheReportsAndTheCompletion(ceremony: Bool) async throws {
        let h = Harness()
        try h.preload()
        h.scriptRequest(payload: "c", requestId: "req-1", kind: ceremony ? .sign : nil)
        let authn = try await h.open()
        if ceremony {
            let flow = authn.startPkiCeremonyFlow()
            var states = Observed(flow.stateStream())
            flow.submitLinkPayload(payload: Array("c".utf8))
            _ = await states.until(\.isAwaitingFaceCapture)
            flow.submitFaceCapture(captureSession: capture("stranger"))
            _ = await states.until { if case .awaitingFaceCapture(_, _, _, _, _, 2, .faceMismatch, _) = $0 { true } else { false } }
            flow.submitFaceCapture(captureSession: capture("ada"))
            #expect(await states.rest().last == .succeeded(rpLabel: "Acme", kind: .sign, timestamp: h.authority.recordedAt))
        } else {
            let flow = authn.startLoginFlow()
            var states = Observed(flow.stateStream())
            flow.submitLinkPayload(payload: Array("c".utf8))
            _ = await states.until { if case .awaitingFaceCapture = $0 { true } else { false } }
            flow.submitFaceCapture(captureSession: capture("stranger"))
            _ = await states.until { if case .awaitingFaceCapture(_, _, _, _, 2, .faceMismatch, _) = $0 { true } else { false } }
            flow.submitFaceCapture(captureSession: capture("ada"))
            #expect(await states.rest().last == .succeeded(rpLabel: "Acme", timestamp: h.authority.recordedAt))
        }
        #expect(h.vault.presence.callCount == 1)
        let recorded = h.authority.recorded.withLock { $0 }
        #expect(recorded.downloadSigners == [.userPresent])
        #expect(recorded.reports == [.faceMismatch])
        #expect(recorded.completionSigners == [.userPresent])
    }

    @Test func theKeyOfTheRequestsApplicationActsNotTheNewestOfTheUser() async throws {
        let h = Harness()
        let own = try h.preload(keyId: "key-acme", clientId: "acme", createdAt: Date(timeIntervalSince1970: 1_700_000_000))
        try h.preload(keyId: "key-other", clientId: "other", appLabel: "Other", createdAt: Date(timeIntervalSince1970: 1_750_000_000))
        h.scriptRequest(payload: "c", requestId: "req-1", kind: .sign)
        let flow = try await h.open().startPkiCeremonyFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("c".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("ada"))
        #expect(await states.rest().last == .succeeded(rpLabel: "Acme", kind: .sign, timestamp: h.authority.recordedAt))
        #expect(h.authority.recorded.withLock { $0.completionKeyIds } == [own.userPresent.deviceKeyId])
    }

    @Test func severalSubscribersEachGetTheCurrentStateFirst() async throws {
        let h = Harness()
        try h.preload()
        let flow = try await h.open().startPkiCeremonyFlow()
        var first = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("garbage".utf8))
        #expect(await first.until { $0 == .awaitingLink(refusal: .malformed) } != nil)
        var second = Observed(flow.stateStream())
        #expect(await second.until { _ in true } == .awaitingLink(refusal: .malformed))
        flow.cancel()
        #expect(await first.rest() == [.failed(reason: .cancelled)])
        #expect(await second.rest() == [.failed(reason: .cancelled)])
        var late = Observed(flow.stateStream())
        #expect(await late.rest() == [.failed(reason: .cancelled)])
    }
}
