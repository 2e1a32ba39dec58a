import Foundation
import Testing
@testable import FaceSealSDK

/// Rotation and revocation through their drivers, and `open()`'s reconciliation of an interrupted rotation.
@Suite(.timeLimit(.minutes(1))) struct KeyManagementFlowTests {
    @Test func rotationConfirmsEveryKeyThenReplacesTheirMaterial() async throws {
        let h = Harness()
        let first = try h.preload(keyId: "key-1")
        let second = try h.preload(keyId: "key-2", identityId: "id-2", email: "bob@example.com", clientId: "beta", appLabel: "Beta")
        let third = try h.preload(keyId: "key-3", identityId: "id-3", email: "eve@example.com", clientId: "gamma", appLabel: "Gamma")
        h.authority.script.withLock { $0.revokedOnRotation = ["key-3": (terminated: false, replaced: true)] }
        let authn = try await h.open()
        let flow = try authn.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        #expect(await states.until { _ in true } == .confirming(keys: [first.key, second.key, third.key]))
        flow.approve()
        let rest = await states.rest()
        #expect(rest.contains(.awaitingUserPresence) && rest.contains(.submitting))
        let notice = RevokedKeyNotice(email: "eve@example.com", clientId: "gamma", appLabel: "Gamma", terminated: false, replaced: true)
        #expect(rest.last == .succeeded(revokedKeys: [notice]))

        let records = try h.readRecords()
        #expect(records.map(\.key.id) == ["key-1", "key-2"])
        let oldIds = Set([first, second, third].flatMap(\.allDeviceKeyIds))
        #expect(h.vault.keyIds.isDisjoint(with: oldIds), "old keys deleted, dead key dropped")
        #expect(records.allSatisfy { $0.pendingRotation == nil && $0.retiredDeviceKeyIds.isEmpty })
        #expect(records.allSatisfy { h.vault.keyIds.isSuperset(of: [$0.ambient.deviceKeyId, $0.userPresent.deviceKeyId]) })
        #expect(authn.keys.map(\.id) == ["key-1", "key-2"])
        #expect(h.vault.presence.callCount == 1)
    }

    @Test func aCancelledPromptReturnsToConfirmingAndKeepsEveryKey() async throws {
        let h = Harness()
        let record = try h.preload()
        h.vault.presence.enqueue(SignKeypairError(code: .userCancelled))
        h.vault.presence.enqueue(SignKeypairError(code: .notAvailable))
        let authn = try await h.open()
        let flow = try authn.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        flow.approve()
        _ = await states.until { $0 == .awaitingUserPresence }
        #expect(await states.until { $0 == .confirming(keys: [record.key]) } != nil)
        flow.approve()
        #expect(await states.rest().last == .failed(reason: .userPresence(.notAvailable)))
        #expect(authn.keys == [record.key])
        #expect(try h.readRecords() == [record])
    }

    @Test func aLostRotationAnswerIsReconciledByTheNextOpenAndTheDeviceStillSignsIn() async throws {
        let h = Harness()
        let record = try h.preload()
        h.authority.script.withLock {
            $0.rotationFailure = .transient("connection reset")
            $0.keyStatusFailure = .transient("connection reset")
        }
        let authn = try await h.open()
        let flow = try authn.startKeyRotationFlow()
        var states = Observed(flow.stateStream())
        flow.approve()
        #expect(await states.rest().last == .failed(reason: .authorityUnavailable("connection reset")))
        // The authority could not be asked either: the new keys stay pending, never deleted.
        let pending = try #require(try h.readRecords().first?.pendingRotation)
        #expect(!pending.registered)
        #expect(h.vault.keyIds.isSuperset(of: [pending.ambient.deviceKeyId, pending.userPresent.deviceKeyId]))

        // The authority did store the new key: the next open() promotes it and deletes the old keys.
        h.authority.script.withLock {
            $0.rotationFailure = nil
            $0.keyStatusFailure = nil
            $0.keyStatus["key-1"] = .active
        }
        let reopened = try await h.open()
        let promoted = try #require(try h.readRecords().first)
        #expect(promoted.ambient == pending.ambient && promoted.userPresent == pending.userPresent)
        #expect(!h.vault.keyIds.contains(record.ambient.deviceKeyId))
        #expect(reopened.keys.map(\.id) == ["key-1"])

        h.scriptRequest(payload: "l", requestId: "req-1", kind: nil)
        let login = reopened.startLoginFlow()
        var loginStates = Observed(login.stateStream())
        login.submitLinkPayload(payload: Array("l".utf8))
        _ = await loginStates.until { if case .awaitingFaceCapture = $0 { true } else { false } }
        login.submitFaceCapture(captureSession: capture("ada"))
        #expect(await loginStates.rest().last == .succeeded(rpLabel: "Acme", timestamp: h.authority.recordedAt))
    }

    @Test func aRotationUnknownToTheAuthorityIsSentAgainAndDiscardedOnlyWhenRefused() async throws {
        let h = Harness()
        let record = try h.preload()
        let authn = try await h.open()
        let before = h.vault.keyIds
        for failure in [AuthorityFailure.transient("timeout"), .refused(code: "invalid_request", message: "no")] {
            h.authority.script.withLock { $0.rotationFailure = failure }
            let sent = h.authority.recorded.withLock { $0.rotations.count }
            let flow = try authn.startKeyRotationFlow()
            var states = Observed(flow.stateStream())
            flow.approve()
            _ = await states.rest()
            #expect(h.authority.recorded.withLock { $0.rotations.count } > sent + 1, "the unknown rotation was sent again")
        }
        // Unknown to the authority and sent again without a definite answer, the rotation stayed pending; only the
        // authority's refusal discarded the new keys and kept the old ones.
        let kept = try #require(try h.readRecords().first)
        #expect(kept == record)
        #expect(h.vault.keyIds == before)
    }

    @Test func aCrashAfterPromotionLeavesRetiredKeysThatOpenDeletes() async throws {
        let h = Harness()
        var record = try h.preload()
        let newAmbient = try h.vault.createKey(protection: .ambient, alias: "n")
        let newUserPresent = try h.vault.createKey(protection: .userPresent, alias: "n")
        record.pendingRotation = PendingRotation(ambient: DeviceKeyRecord(newAmbient), userPresent: DeviceKeyRecord(newUserPresent), registered: true)
        let promoted = record.promotingPendingRotation(at: h.clock.now())
        try h.writeRecords([promoted])
        let authn = try await h.open()
        #expect(!h.vault.keyIds.contains(record.ambient.deviceKeyId) && !h.vault.keyIds.contains(record.userPresent.deviceKeyId))
        #expect(try h.readRecords().first?.retiredDeviceKeyIds == [])
        #expect(authn.keys.count == 1)
        #expect(authn.auditLog().contains { $0.kind == .vaultReconciled })
    }

    @Test func revokingAnUnknownIdThrowsUnknownKey() async throws {
        let h = Harness()
        try h.preload()
        let authn = try await h.open()
        #expect(throws: AuthnRuntimeError.UnknownKey("nope")) { try authn.startRevocationFlow(keyId: "nope") }
    }

    @Test func revocationRemovesTheKeyOnBothSides() async throws {
        let h = Harness()
        let record = try h.preload()
        let other = try h.preload(keyId: "key-2", identityId: "id-2")
        let authn = try await h.open()
        let flow = try authn.startRevocationFlow(keyId: "key-1")
        var states = Observed(flow.stateStream())
        #expect(await states.until { _ in true } == .confirming(key: record.key))
        flow.approve()
        #expect(await states.rest().last == .succeeded(key: record.key))
        #expect(h.authority.recorded.withLock { $0.revoked } == ["key-1"])
        #expect(authn.keys == [other.key])
        #expect(h.vault.keyIds.isDisjoint(with: record.allDeviceKeyIds))
        #expect(authn.auditLog().first?.kind == .keyRevocation)
    }

    @Test func cancellingARevocationKeepsTheKey() async throws {
        let h = Harness()
        let record = try h.preload()
        let authn = try await h.open()
        let flow = try authn.startRevocationFlow(keyId: record.key.id)
        var states = Observed(flow.stateStream())
        flow.cancel()
        #expect(await states.rest().last == .failed(reason: .cancelled))
        #expect(authn.keys == [record.key])
    }

    @Test func aKeyTheAdministratorRevokedIsRemovedAndTheDeviceCanEnrolAgain() async throws {
        let h = Harness()
        let record = try h.preload(identityId: "id-9")
        h.authority.script.withLock { $0.terminatedDeviceKeys = [record.ambient.deviceKeyId] }
        h.scriptRequest(payload: "l", requestId: "req-1", kind: nil, identityId: "id-9")
        let authn = try await h.open()
        let login = authn.startLoginFlow()
        var states = Observed(login.stateStream())
        login.submitLinkPayload(payload: Array("l".utf8))
        #expect(await states.rest().last == .failed(reason: .deviceKeyTerminated))
        #expect(authn.keys.isEmpty)

        h.scriptEnrolment(payload: "enrol", requestId: "enr-1", hasFaceToken: true)
        let enrol = authn.startRegistrationFlow()
        var enrolStates = Observed(enrol.stateStream())
        enrol.submitLinkPayload(payload: Array("enrol".utf8))
        _ = await enrolStates.until(\.isAwaitingFaceCapture)
        enrol.submitFaceCapture(captureSession: capture("grace"))
        #expect(await enrolStates.rest().last.map { if case .succeeded = $0 { true } else { false } } == true)
        #expect(authn.keys.count == 1)
    }

    @Test func rotationNeedsAKey() async throws {
        let authn = try await Harness().open()
        #expect(throws: AuthnRuntimeError.noKeys) { try authn.startKeyRotationFlow() }
    }
}
