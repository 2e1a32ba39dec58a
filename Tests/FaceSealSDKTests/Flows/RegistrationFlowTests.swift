import Foundation
import Testing
@testable import FaceSealSDK

extension RegistrationFlow.State {
    var isAwaitingFaceCapture: Bool {
        if case .awaitingFaceCapture = self { return true }
        return false
    }
}

/// Enrolment driven through its driver on the fakes: two keys, all-or-nothing.
@Suite(.timeLimit(.minutes(1))) struct RegistrationFlowTests {
    @Test func aFirstEnrolmentCreatesTwoDistinctKeysAndRegistersBoth() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-1", hasFaceToken: false, passwordPolicy: true)
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        #expect(await states.until { $0 == .choosingPassword(lastPasswordError: nil) } != nil)
        flow.submitPassword(password: "")
        #expect(await states.until { $0 == .choosingPassword(lastPasswordError: .empty) } != nil)
        flow.submitPassword(password: "new-password")
        #expect(await states.until(\.isAwaitingFaceCapture) != nil)
        flow.submitFaceCapture(captureSession: capture("grace"))
        let key = Key(id: "key-enr-1", identityId: "id-9", email: "grace@example.com", clientId: "acme", appLabel: "Acme", createdAt: h.authority.recordedAt)
        #expect(await states.rest().last == .succeeded(key: key))

        #expect(authn.keys == [key])
        #expect(authn.currentKey == key)
        #expect(authn.brandingFor(keyId: key.id) == Branding(displayName: "Acme", primaryColor: "#123456"))
        let record = try #require(try h.readRecords().first)
        #expect(record.ambient.protection == .ambient && record.userPresent.protection == .userPresent)
        #expect(record.ambient.deviceKeyId != record.userPresent.deviceKeyId)
        #expect(h.authority.recorded.withLock { $0.registeredDeviceKeys } == [record.ambient.deviceKeyId, record.userPresent.deviceKeyId])
        #expect(authn.auditLog(limit: 1).first?.kind == .enrolment)
    }

    @Test func aFurtherDeviceMatchesTheExistingTokenWithItsPassword() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-2", hasFaceToken: true)
        h.authority.script.withLock { $0.passwordRequired = true }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) } != nil)
        flow.submitPassword(password: "nope")
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect) } != nil)
        flow.submitPassword(password: "pw")
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("stranger"))
        #expect(await states.until {
            if case .awaitingFaceCapture(_, _, _, _, 2, .faceMismatch, _) = $0 { true } else { false }
        } != nil)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)
        #expect(authn.keys.count == 1)
    }

    @Test func aLoginLinkIsRefusedByRegistrationAndNamed() async throws {
        let h = Harness()
        h.scriptRequest(payload: "login", requestId: "r", kind: nil)
        let flow = try await h.open().startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("login".utf8))
        #expect(await states.until { $0 == .awaitingLink(refusal: .isLoginLink) } != nil)
    }

    @Test func aFailureAfterTheFirstKeyLeavesNeitherKey() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-3", hasFaceToken: false)
        h.vault.state.withLock { $0.createBudget = 1 }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last == .failed(reason: .enrolmentFailed(String(describing: VaultError.storageFailed("secure hardware refused")))))
        await flow.waitUntilIdle()
        #expect(h.vault.keyIds.isEmpty)
        #expect(h.authority.recorded.withLock { $0.registeredDeviceKeys.isEmpty })
        #expect(authn.keys.isEmpty)
    }

    @Test func aRefusedRegistrationDeletesBothKeys() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-4", hasFaceToken: false)
        h.authority.script.withLock { $0.registrationFailure = .refused(code: "invitation_used", message: "") }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        _ = await states.rest()
        await flow.waitUntilIdle()
        #expect(h.vault.keyIds.isEmpty)
        #expect(authn.keys.isEmpty)
    }

    @Test func aLostRegistrationAnswerIsWithdrawnOnTheAuthorityAndDeletedHere() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-5", hasFaceToken: false)
        h.authority.script.withLock { $0.registrationFailure = .transient("timeout") }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last == .failed(reason: .enrolmentFailed("timeout")))
        await flow.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.withdrawn } == ["enr-5"])
        #expect(h.authority.recorded.withLock { $0.registeredDeviceKeys.isEmpty })
        #expect(h.vault.keyIds.isEmpty)
    }

    @Test func aRecordThatCannotBeStoredRollsTheEnrolmentBack() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-6", hasFaceToken: false)
        let authn = try await h.open()
        h.vault.state.withLock { $0.failWrites = true }
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        flow.submitFaceCapture(captureSession: capture("grace"))
        _ = await states.rest()
        await flow.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.withdrawn } == ["enr-6"])
        #expect(h.vault.keyIds.isEmpty)
        #expect(authn.keys.isEmpty)
    }

    @Test func aFurtherDeviceWaitsForTheApprovalWithItsUserPresentKeyAndShowsTheCode() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-7", hasFaceToken: true)
        h.authority.script.withLock { $0.approvalPendingPolls = 2 }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        #expect(await states.until { $0 == .awaitingApproval(method: .enrolledDevice, code: "123456", expiresAtUnix: 1_800_000_700) } != nil)
        _ = await states.until(\.isAwaitingFaceCapture)
        // The keys were registered before any token came, and every wait was signed with the user-present key.
        #expect(h.authority.recorded.withLock { $0.approvalPolls } == 3)
        #expect(h.authority.recorded.withLock { $0.downloadSigners } == [.userPresent, .userPresent, .userPresent])
        #expect(h.authority.recorded.withLock { $0.registeredDeviceKeys.count } == 2)
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)
        #expect(authn.keys.count == 1)
    }

    @Test func aDeniedApprovalWithdrawsTheKeysOnBothSides() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-8", hasFaceToken: true)
        h.authority.script.withLock { $0.approvalFailure = .refused(code: "invalid_invitation", message: "denied") }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        #expect(await states.rest().last == .failed(reason: .enrolmentFailed("the approval was denied or ran out")))
        await flow.waitUntilIdle()
        #expect(h.authority.recorded.withLock { $0.withdrawn } == ["enr-8"])
        #expect(h.vault.keyIds.isEmpty)
        #expect(authn.keys.isEmpty)
    }

    @Test func passwordApprovalProvesThePasswordBeforeTheTokenAndOpensItWithoutAskingAgain() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-9", hasFaceToken: true)
        h.authority.script.withLock { s in
            s.approvalMethod = .password
            s.passwordRequired = true
            s.passwordProofs = [PasswordProofOutcome(accepted: false, attemptsLeft: 2)]
        }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: nil) } != nil)
        // Nothing was downloaded yet: the password is proven to the authority first.
        #expect(h.authority.recorded.withLock { $0.approvalPolls } == 0)
        flow.submitPassword(password: "nope")
        #expect(await states.until { $0 == .downloadingFaceToken(passwordRequired: true, lastPasswordError: .incorrect) } != nil)
        flow.submitPassword(password: "pw")
        _ = await states.until(\.isAwaitingFaceCapture)
        #expect(h.authority.recorded.withLock { $0.passwordsProved } == ["nope", "pw"])
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)
    }

    @Test func cancelIsNotTakenWhileKeysAreBeingRegistered() async throws {
        var m = RegistrationStateMachineTests.machine(at: .firstRegistering)
        #expect(m.cancel() == .none)
        #expect(m.view == .registeringKeys)
    }
}
