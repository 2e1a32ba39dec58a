import Foundation
import Testing
@testable import FaceSealSDK

/// Promises of the reference documents kept by `Authenticator` and its flows, on the fakes (issue 11 items 2, 3, 5, 6);
/// the live counterparts are in EndToEnd (DocumentPromiseLiveTests, RotationConvergenceTests).
@Suite(.timeLimit(.minutes(1))) struct DocumentPromiseTests {
    // MARK: Item 2 — branding sync covers every key

    @Test func brandingSyncAsksAboutEveryKeyWithItsOwnKeyAndRefreshesEveryIdentity() async throws {
        let h = Harness()
        let ada = try h.preload(keyId: "key-1")
        let bob = try h.preload(keyId: "key-2", identityId: "id-2", email: "bob@example.com", clientId: "beta", appLabel: "Beta")
        h.authority.script.withLock {
            $0.branding = ["key-1": Branding(displayName: "Acme", primaryColor: "#000001"), "key-2": Branding(displayName: "Beta", primaryColor: "#000002")]
        }
        let authn = try await h.open()
        let summary = try await authn.syncBranding()
        #expect(Set(summary.updatedKeyIds) == ["key-1", "key-2"])
        #expect(authn.brandingFor(keyId: "key-2")?.primaryColor == "#000002", "the second identity's branding is refreshed")
        #expect(h.authority.recorded.withLock { $0.brandingSigners } == [[ada.ambient.deviceKeyId], [bob.ambient.deviceKeyId]])
    }

    @Test(arguments: [(false, false), (true, false), (false, true)])
    func aDeadSigningKeyIsReportedWithItsFlagsNotThrown(terminated: Bool, replaced: Bool) async throws {
        let h = Harness()
        let dead = try h.preload(keyId: "key-1")
        try h.preload(keyId: "key-2", identityId: "id-2", email: "bob@example.com", clientId: "beta", appLabel: "Beta")
        h.authority.script.withLock {
            switch (terminated, replaced) {
            case (true, _): $0.terminatedDeviceKeys = [dead.ambient.deviceKeyId]
            case (_, true): $0.replacedDeviceKeys = [dead.ambient.deviceKeyId]
            default: $0.revokedDeviceKeys = [dead.ambient.deviceKeyId]
            }
            $0.branding = ["key-2": Branding(displayName: "Beta", primaryColor: "#000002")]
        }
        let authn = try await h.open()
        let summary = try await authn.syncBranding()
        #expect(summary.replacedKeys == [RevokedKeyNotice(key: dead.key, terminated: terminated, replaced: replaced)])
        #expect(summary.updatedKeyIds == ["key-2"])
        #expect(authn.keys.map(\.id) == ["key-2"])
        #expect(h.vault.keyIds.isDisjoint(with: dead.allDeviceKeyIds))
    }

    // MARK: Item 3 — presence errors keep their three meanings; keyInvalidated has a way back

    @Test func aMissingUserPresentKeyIsKeyInvalidatedNotARetryableNotAvailable() async throws {
        let h = Harness()
        let record = try h.preload()
        h.vault.wipe(record.userPresent.deviceKeyId)
        h.scriptRequest(payload: "l", requestId: "req-1", kind: nil)
        let authn = try await h.open()
        #expect(authn.keys.isEmpty && authn.unusableKeys == [record.key])
        let flow = authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("l".utf8))
        #expect(await states.rest().last == .failed(reason: .userPresence(.keyInvalidated)))
        #expect(KeyRing.signingFailure(for: .keyNotFound("x")) == .signing(SignKeypairError(code: .keyInvalidated, message: String(describing: VaultError.keyNotFound("x")))))
        #expect(KeyRing.signingFailure(for: .storageFailed("busy")) == .signing(SignKeypairError(code: .notAvailable, message: String(describing: VaultError.storageFailed("busy")))))
    }

    @Test(arguments: SignKeypairError.Code.allCases)
    func aPresenceFailureAtEnrolmentKeepsItsCode(code: SignKeypairError.Code) async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-1", hasFaceToken: false)
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await states.until(\.isAwaitingFaceCapture)
        h.vault.presence.enqueue(SignKeypairError(code: code))
        flow.submitFaceCapture(captureSession: capture("grace"))
        #expect(await states.rest().last == .failed(reason: .userPresence(code)))
        await flow.waitUntilIdle()
        #expect(h.vault.keyIds.isEmpty, "all-or-nothing: neither key remains")
    }

    @Test func anInvalidatedKeyIsRemovedLocallyByItsRevocationFlow() async throws {
        let h = Harness()
        let record = try h.preload()
        h.vault.changeBiometricEnrolment()
        let authn = try await h.open()
        let flow = try authn.startRevocationFlow(keyId: record.key.id)
        var states = Observed(flow.stateStream())
        flow.approve()
        #expect(await states.rest().last == .succeeded(key: record.key))
        #expect(authn.unusableKeys.isEmpty && authn.keys.isEmpty)
        #expect(h.vault.keyIds.isEmpty)
    }

    // MARK: Item 4 — the tenant's current policy reaches the flow

    @Test func aFurtherDeviceRunsLivenessWhenThePolicyAsksAndTheHeaderDoesNot() async throws {
        let h = Harness()
        h.scriptEnrolment(payload: "enrol", requestId: "enr-2", hasFaceToken: true)
        h.authority.script.withLock { $0.livenessRequired = false }
        let authn = try await h.open()
        let flow = authn.startRegistrationFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("enrol".utf8))
        guard case .awaitingFaceCapture(_, _, _, _, _, _, let challenge)? = await states.until(\.isAwaitingFaceCapture) else {
            Issue.record("\(states.seen)")
            return
        }
        #expect(challenge != nil)
        flow.submitFaceCapture(captureSession: capture("spoof"))
        #expect(await states.until { if case .awaitingFaceCapture(_, _, _, _, _, .livenessFailed, _) = $0 { true } else { false } } != nil)
        #expect(h.verifier.livenessCalls == 1)
    }

    // MARK: Item 5 — the audit log survives a restart

    @Test func theAuditLogIsPersistedSealedAndBoundedAcrossRestarts() async throws {
        let h = Harness()
        var environment = h.environment
        environment.auditCapacity = 3
        let authn = try await Authenticator.open(environment: environment)
        for index in 0..<5 {
            h.clock.advance(1)
            authn.keyRing().audit(.signIn, identityId: "id-\(index)", note: "entry \(index) " + String(repeating: "x", count: 1_000))
        }
        let sealed = try #require(h.vault.state.withLock { $0.auditFile })
        #expect(sealed.starts(with: FakeSealer.magic))
        let reopened = try await Authenticator.open(environment: environment)
        let entries = reopened.auditLog()
        #expect(entries.map(\.identityId) == ["id-4", "id-3", "id-2"])
        #expect(entries.allSatisfy { $0.note.count <= AuditLog.maximumNoteLength })
        #expect(entries.first?.timestamp == h.clock.now())
    }

    @Test func anUnreadableAuditFileDoesNotStopOpen() async throws {
        let h = Harness()
        h.vault.state.withLock { $0.auditFile = Array("garbage".utf8) }
        let authn = try await h.open()
        #expect(authn.auditLog(limit: 1).first?.note.contains("activity file could not be read") == true)
    }

    @Test func openKeepsTheNoticeOfAKeyItFoundDeadForTheNextBrandingSync() async throws {
        let h = Harness()
        var record = try h.preload()
        let newAmbient = try h.vault.createKey(protection: .ambient, alias: "n")
        let newUserPresent = try h.vault.createKey(protection: .userPresent, alias: "n")
        record.pendingRotation = PendingRotation(ambient: DeviceKeyRecord(newAmbient), userPresent: DeviceKeyRecord(newUserPresent), registered: false)
        try h.writeRecords([record])
        h.authority.script.withLock { $0.keyStatus["key-1"] = .revoked(terminated: false, replaced: true) }
        let authn = try await h.open()
        #expect(authn.keys.isEmpty)
        let notice = RevokedKeyNotice(key: record.key, terminated: false, replaced: true)
        // Kept across a restart, reported once.
        let reopened = try await h.open()
        #expect(try await reopened.syncBranding().replacedKeys == [notice])
        await #expect(throws: AuthnRuntimeError.noKeys) { try await reopened.syncBranding() }
    }

    @Test func aKeyAFlowFoundDeadIsReportedByTheNextBrandingSyncWithReplacedSet() async throws {
        let h = Harness()
        let record = try h.preload()
        h.scriptRequest(payload: "l", requestId: "req-1", kind: nil)
        h.authority.script.withLock { $0.replacedDeviceKeys = [record.ambient.deviceKeyId] }
        let authn = try await h.open()
        let flow = authn.startLoginFlow()
        var states = Observed(flow.stateStream())
        flow.submitLinkPayload(payload: Array("l".utf8))
        #expect(await states.rest().last == .failed(reason: .deviceKeyRevoked))
        #expect(try await authn.syncBranding().replacedKeys == [RevokedKeyNotice(key: record.key, terminated: false, replaced: true)])
    }

    // MARK: Item 6 — the rotation hint is never lost

    @Test func aHintOnAnErrorAnswerIsTaken() async throws {
        let h = Harness()
        try h.preload()
        let authn = try await h.open()
        h.authority.script.withLock { $0.hintOnError = true }
        #expect(authn.takeKeyRotationHint())
        #expect(!authn.takeKeyRotationHint())
    }
}
